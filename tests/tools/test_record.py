"""acpwire record: a real session through the proxy, byte-exact forwarding, the trace, exits."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import acpwire

RECORD = (sys.executable, "-m", "acpwire.record")
FAKE_AGENT = (
    f"{sys.executable} -m acpwire fake-agent --tokens 30 --terminal-bytes 3000 --permission"
)


def _frames(data: bytes) -> list[bytes]:
    """Non-blank lines, as the trace counts frames (a trailing partial line included)."""
    lines = data.split(b"\n")
    return [line[:-1] if line.endswith(b"\r") else line for line in lines if line.strip()]


def _read_trace(path) -> list[tuple[dict, bytes]]:
    """Each trace line decoded, with the exact bytes it embeds under "msg" (or None)."""
    out = []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        embedded = None
        if "msg" in record:
            embedded = line[line.index(b'"msg":') + len(b'"msg":') : -1]
        out.append((record, embedded))
    return out


async def _drive(proc: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
    """A v1 client session with a permission round trip and two bad frames; returns the bytes
    it sent and the bytes it received."""
    sent = bytearray()
    received = bytearray()
    decoder = acpwire.FrameDecoder()

    async def send(data: bytes) -> None:
        sent.extend(data)
        proc.stdin.write(data)
        await proc.stdin.drain()

    async def until(predicate) -> dict:
        while True:
            chunk = await asyncio.wait_for(proc.stdout.read(65536), timeout=30)
            assert chunk, "proxy closed its output early"
            received.extend(chunk)
            for message in decoder.feed(chunk):
                if message.get("method") == "session/request_permission" and "id" in message:
                    await send(
                        acpwire.dumps(
                            {
                                "jsonrpc": "2.0",
                                "id": message["id"],
                                "result": {
                                    "outcome": {"outcome": "selected", "optionId": "allow-once"}
                                },
                            }
                        )
                    )
                if predicate(message):
                    return message

    await send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    await until(lambda m: m.get("id") == 1)
    # Not JSON, and not UTF-8: the agent reports and skips them; the trace keeps them raw.
    await send(b"this is not json\n\xff\xfe broken\r\n")
    await send(
        b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}\n'
    )
    await until(lambda m: m.get("id") == 2)
    await send(
        b'{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess_0001",'
        b'"prompt":[{"type":"text","text":"go"}]}}\n'
    )
    await until(lambda m: m.get("id") == 3 and "result" in m)
    proc.stdin.close()
    received.extend(await asyncio.wait_for(proc.stdout.read(), timeout=30))
    return bytes(sent), bytes(received)


@pytest.mark.skipif(shutil.which("tee") is None, reason="needs tee")
async def test_a_recorded_session_is_byte_exact_and_fully_traced(tmp_path):
    trace = tmp_path / "trace.ndjson"
    at_agent_in = tmp_path / "agent_in.bin"
    at_agent_out = tmp_path / "agent_out.bin"
    # tee on both sides of the agent captures exactly what it read and what it wrote.
    agent = f"tee {at_agent_in} | {FAKE_AGENT} | tee {at_agent_out}"
    proc = await asyncio.create_subprocess_exec(
        *RECORD,
        "--out",
        str(trace),
        "--",
        "sh",
        "-c",
        agent,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    sent, received = await _drive(proc)
    assert await asyncio.wait_for(proc.wait(), timeout=30) == 0

    assert at_agent_in.read_bytes() == sent
    assert at_agent_out.read_bytes() == received

    records = _read_trace(trace)
    times = [r["t"] for r, _ in records]
    assert times == sorted(times) and times[0] >= 0
    for direction, data in (("client", sent), ("agent", received)):
        frames = _frames(data)
        mine = [(r, e) for r, e in records if r["dir"] == direction]
        assert len(mine) == len(frames)
        for (record, embedded), frame in zip(mine, frames, strict=True):
            if embedded is not None:
                assert embedded == frame  # byte for byte
            else:
                assert record["raw"] == frame.decode("utf-8", "replace")
    raws = [r["raw"] for r, _ in records if "raw" in r]
    assert raws == ["this is not json", "\ufffd\ufffd broken"]
    # The text of a frame that is not UTF-8 no longer shows why: the record says it.
    assert [r.get("error") for r, _ in records if "raw" in r] == [None, "invalid UTF-8"]
    assert all(r["dir"] == "client" for r, _ in records if "raw" in r)

    # Causality across directions: each request comes before its response.
    order = [(r["dir"], json.loads(e)) for r, e in records if e is not None]
    position = {}
    for index, (direction, message) in enumerate(order):
        if "method" in message and "id" in message:
            position[(direction, message["id"])] = index
    for index, (direction, message) in enumerate(order):
        if "method" not in message and "id" in message:
            asker = "agent" if direction == "client" else "client"
            assert position[(asker, message["id"])] < index


def _run(args: list[str], data: bytes = b"", timeout: float = 8) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*RECORD, *args], input=data, capture_output=True, timeout=timeout, check=False
    )


def test_exit_code_eof_and_a_partial_last_frame(tmp_path):
    trace = tmp_path / "t.ndjson"
    data = b'{"a":1}\n\n  \n{"b": [1, 2]}\r\n{"c"'
    result = _run(["--out", str(trace), "--", "sh", "-c", "cat; exit 7"], data)
    assert result.returncode == 7
    assert result.stdout == data  # EOF reached the agent, and its EOF reached us
    records = _read_trace(trace)
    # The two directions interleave in arrival order (the client's last frame is only known
    # at its EOF, which may come after the agent's echo): each direction keeps its own order.
    client = [(r, e) for r, e in records if r["dir"] == "client"]
    agent = [(r, e) for r, e in records if r["dir"] == "agent"]
    assert len(client) == len(agent) == 3
    assert [e for _, e in client] == [b'{"a":1}', b'{"b": [1, 2]}', None]
    assert client[2][0]["raw"] == '{"c"'


def test_agent_killed_by_a_signal(tmp_path):
    result = _run(["--out", str(tmp_path / "t.ndjson"), "--", "sh", "-c", "kill -9 $$"])
    assert result.returncode == 128 + 9


def test_agent_dying_mid_session_ends_the_proxy(tmp_path):
    trace = tmp_path / "t.ndjson"
    script = (
        'import sys; sys.stdin.readline(); print(\'{"id":1,"result":{}}\', flush=True); sys.exit(3)'
    )
    proc = subprocess.Popen(
        [*RECORD, "--out", str(trace), "--", sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    proc.stdin.write(b'{"id":1,"method":"initialize"}\n')
    proc.stdin.flush()
    # The client keeps its end open: the agent's exit alone must end the proxy.
    assert proc.stdout.read() == b'{"id":1,"result":{}}\n'
    assert proc.wait(timeout=30) == 3
    proc.stdin.close()
    assert [r["dir"] for r, _ in _read_trace(trace)] == ["client", "agent"]


def test_an_oversized_frame_is_forwarded_whole_and_traced_as_an_excerpt(tmp_path):
    trace = tmp_path / "t.ndjson"
    big = b'{"x":"' + b"y" * 5000 + b'"}\n'
    result = _run(["--out", str(trace), "--max-frame-bytes", "1000", "--", "cat"], big + b"[1]\n")
    assert result.returncode == 0 and result.stdout == big + b"[1]\n"
    records = [r for r, _ in _read_trace(trace) if r["dir"] == "agent"]
    assert records[0]["error"] == "frame exceeds max_frame_bytes"
    assert records[0]["raw"].startswith('{"x":"yyy')
    assert records[1]["msg"] == [1]


def test_a_frame_with_a_byte_order_mark_is_recorded_raw(tmp_path):
    # `loads` skips a BOM in bytes, but a frame holding one is refused by the framing, and
    # embedded as a record's "msg" it would make the trace line invalid JSON.
    trace = tmp_path / "t.ndjson"
    frame = b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"x"}\n'
    result = _run(["--out", str(trace), "--", "cat"], frame)
    assert result.returncode == 0 and result.stdout == frame
    lines = trace.read_bytes().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["dir"] for r in records] == ["client", "agent"]
    assert all(r["raw"] == '\ufeff{"jsonrpc":"2.0","method":"x"}' for r in records)
    assert [e["reason"] for e in acpwire.replay(trace).errors] == ["invalid JSON"] * 2


def test_an_unwritable_trace_is_a_clear_error(tmp_path):
    result = _run(["--out", str(tmp_path / "missing" / "t.ndjson"), "--", "cat"])
    assert result.returncode == 2
    assert b"cannot write the trace" in result.stderr
    result = _run(["--out", str(tmp_path), "--", "cat"])
    assert result.returncode == 2
    assert b"Is a directory" in result.stderr


def test_a_missing_command_is_a_clear_error(tmp_path):
    result = _run(["--out", str(tmp_path / "t.ndjson"), "--", "no-such-agent-xyz"])
    assert result.returncode == 127
    assert b"cannot run 'no-such-agent-xyz'" in result.stderr
    result = _run(["--out", str(tmp_path / "t.ndjson")])
    assert result.returncode == 2
    assert b"missing the agent command" in result.stderr


def test_help_names_the_trace_format():
    result = _run(["--help"])
    assert result.returncode == 0
    assert b"acpwire record" in result.stdout and b'"dir"' in result.stdout


def test_main_is_callable_for_the_cli(tmp_path):
    from acpwire.cli.record import build_parser

    args = build_parser().parse_args(["--out", "x", "--", "agent", "--flag"])
    assert args.out == "x" and args.command[-2:] == ["agent", "--flag"]


def test_a_frame_that_is_not_utf8_replays_with_the_framings_reason(tmp_path):
    plain = b'{"jsonrpc":"2.0","method":"a"}\n\xff\n1 \xfe\n'
    trace = tmp_path / "t.ndjson"
    result = _run(["--out", str(trace), "--", "cat"], plain)
    assert result.returncode == 0 and result.stdout == plain
    expected = [e.reason for e in _framing_errors(plain)]
    assert expected == ["invalid UTF-8"] * 2
    assert [e["reason"] for e in acpwire.replay(trace).errors] == expected * 2  # both ways


def _framing_errors(data: bytes) -> list:
    decoder = acpwire.FrameDecoder()
    decoder.feed(data)
    return decoder.take_errors()


_RECORD = [sys.executable, "-m", "acpwire", "record"]
_POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and pipes")


@_POSIX
def test_the_agents_last_output_reaches_a_client_that_reads_it_late(tmp_path):
    # The agent writes more than the pipes hold and exits at once; the client starts reading
    # after more than the 5 s the proxy allows a grandchild holding the agent's stdout.
    trace = tmp_path / "t.ndjson"
    frame = b'{"x":"' + b"y" * 300_000 + b'"}\n'
    agent = "import sys; sys.stdout.buffer.write(b'{\"x\":\"' + b'y' * 300_000 + b'\"}\\n')"
    proc = subprocess.Popen(
        [*_RECORD, "--out", str(trace), "--", sys.executable, "-c", agent],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    time.sleep(6)
    assert proc.stdout.read() == frame
    assert proc.wait(timeout=30) == 0
    assert len(trace.read_bytes().splitlines()) == 1


@_POSIX
def test_a_signal_to_the_terminals_foreground_group_reaches_the_agent_once(tmp_path):
    counter = (
        "import signal, sys, time\n"
        "seen = []\n"
        "signal.signal(signal.SIGINT, lambda *a: seen.append(1))\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "end = time.time() + 1.5\n"
        "while time.time() < end: time.sleep(0.02)\n"
        "sys.stderr.write(f'agent saw {len(seen)} SIGINT\\n')\n"
    )
    proc = subprocess.Popen(
        [*_RECORD, "--out", str(tmp_path / "t.ndjson"), "--", sys.executable, "-c", counter],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the proxy leads a group, as a shell's foreground job does
    )
    assert proc.stdout.readline() == b"ready\n"
    os.killpg(proc.pid, signal.SIGINT)  # one Ctrl-C at the terminal
    _, stderr = proc.communicate(timeout=30)
    assert b"agent saw 1 SIGINT" in stderr


@_POSIX
def test_a_non_blocking_standard_input_waits_for_the_client(tmp_path):
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    trace = tmp_path / "t.ndjson"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acpwire", "record", "--out", str(trace), "--", "cat"],
        stdin=read_end,
        stdout=subprocess.PIPE,
    )
    os.close(read_end)
    time.sleep(1)  # the client is slow to send its first request
    request = b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n'
    os.write(write_end, request)
    os.close(write_end)
    assert proc.stdout.read() == request and proc.wait(timeout=30) == 0
    assert [json.loads(line)["dir"] for line in trace.read_bytes().splitlines()] == [
        "client",
        "agent",
    ]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_trace_that_cannot_be_written_is_reported_once(capsys):
    from acpwire.cli.record import Recorder

    recorder = Recorder(open("/dev/full", "wb"))  # noqa: SIM115 (closed by the Recorder)
    recorder.feed("client", b'{"a":1}\n')
    recorder.flush()
    recorder.close()
    assert capsys.readouterr().err.count("writing the trace failed") == 1


# An agent that never stops writing frames unless a write fails: as a real agent streaming a long
# turn to a client that has gone.
_CHATTY = (
    "import sys\n"
    'line = b\'{"jsonrpc":"2.0","method":"session/update","params":{}}\\n\'\n'
    "while True:\n"
    "    sys.stdout.buffer.write(line * 100)\n"
    "    sys.stdout.buffer.flush()\n"
)


def _wait(proc: subprocess.Popen) -> tuple[int, float]:
    start = time.monotonic()
    status = proc.wait(timeout=30)
    return status, time.monotonic() - start


@_POSIX
def test_a_client_that_stops_reading_makes_the_agents_writes_fail(tmp_path):
    trace = tmp_path / "t.ndjson"
    marker = tmp_path / "agent-saw"
    agent = _CHATTY.replace(
        "while True:\n",
        "try:\n  while True:\n",
    ).replace("    sys.stdout", "      sys.stdout") + (
        f"except BrokenPipeError:\n  open({str(marker)!r}, 'w').write('broken pipe')\n"
    )
    proc = subprocess.Popen(
        [*_RECORD, "--out", str(trace), "--", sys.executable, "-c", agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout.read(4096)  # the stream is flowing
    proc.stdout.close()  # the client goes away without closing its input
    status, took = _wait(proc)
    assert took < 5
    # The agent saw a broken pipe, as it would have without the proxy, and stopped by itself.
    assert marker.read_text() == "broken pipe"
    assert status == 0
    records = [json.loads(line) for line in trace.read_bytes().splitlines()]
    # Everything read up to the failed write, the frame it cut short as a raw last record.
    *whole, last = records
    assert whole and all(r["dir"] == "agent" and "msg" in r for r in whole)
    assert last["dir"] == "agent" and ("msg" in last or last["raw"])
    proc.stdin.close()


@_POSIX
def test_an_agent_that_ignores_the_client_going_away_is_stopped_within_5_s(tmp_path):
    trace = tmp_path / "t.ndjson"
    # It ignores SIGPIPE's error and the end of its input, and never exits by itself.
    agent = (
        "import sys, time\n"
        'sys.stdout.buffer.write(b\'{"id":1,"result":{}}\\n\'); sys.stdout.buffer.flush()\n'
        "while True:\n"
        "    try:\n"
        "        sys.stdout.buffer.write(b'{\"a\":1}\\n' * 1000); sys.stdout.buffer.flush()\n"
        "    except OSError:\n"
        "        time.sleep(0.05)\n"
    )
    proc = subprocess.Popen(
        [*_RECORD, "--out", str(trace), "--", sys.executable, "-c", agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout.readline() == b'{"id":1,"result":{}}\n'
    proc.stdout.close()
    proc.stdin.close()
    status, took = _wait(proc)
    assert took < 5 and status == 128 + signal.SIGTERM
    lines = trace.read_bytes().splitlines()
    assert json.loads(lines[0]) == {
        "t": json.loads(lines[0])["t"],
        "dir": "agent",
        "msg": {"id": 1, "result": {}},
    }
    assert all(json.loads(line)["dir"] == "agent" for line in lines)


@_POSIX
def test_a_client_that_goes_away_while_the_agent_is_quiet_ends_the_proxy(tmp_path):
    trace = tmp_path / "t.ndjson"
    # The agent answers one request, then waits for input forever without writing.
    agent = (
        "import sys\n"
        "sys.stdin.readline()\n"
        'sys.stdout.write(\'{"id":1,"result":{}}\\n\'); sys.stdout.flush()\n'
        "for line in sys.stdin: pass\n"
        "open(sys.argv[1], 'w').write('eof')\n"
    )
    marker = tmp_path / "agent-saw"
    proc = subprocess.Popen(
        [*_RECORD, "--out", str(trace), "--", sys.executable, "-c", agent, str(marker)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    proc.stdin.write(b'{"id":1,"method":"initialize"}\n')
    proc.stdin.flush()
    assert proc.stdout.readline() == b'{"id":1,"result":{}}\n'
    proc.stdout.close()  # gone, though its input stays open
    status, took = _wait(proc)
    assert took < 5 and status == 0
    assert marker.read_text() == "eof"  # the agent saw the end of its input
    assert [json.loads(line)["dir"] for line in trace.read_bytes().splitlines()] == [
        "client",
        "agent",
    ]
    proc.stdin.close()
