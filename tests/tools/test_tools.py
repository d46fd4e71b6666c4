"""acpwire bench, replay and stats: output checked, not just exit codes."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import acpwire

SAMPLE = Path(str(resources.files("acpwire") / "data" / "sample-v2.ndjson"))


def cli(*args: str, stdin: bytes | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "acpwire", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=300,
    )


def chunk_message(text: str, sid: str = "s") -> dict:
    """An `agent_message_chunk` of message "m" in session ``sid``."""
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": sid,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": text},
            },
        },
    }


def records_of(path: Path, out: Path) -> Path:
    """The sample as `acpwire record` writes it: timestamped, with directions."""
    agent_methods = {"initialize", "session/new", "session/prompt", "session/cancel"}
    lines = []
    for i, line in enumerate(path.read_bytes().splitlines()):
        message = json.loads(line)
        method = message.get("method")
        if method is not None:
            sender = "client" if method in agent_methods else "agent"
        else:
            sender = "agent" if "outcome" not in json.dumps(message.get("result")) else "client"
        record = {"t": round(0.01 * i, 3), "dir": sender, "msg": message}
        lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


# -- bench ----------------------------------------------------------------------------------


def test_bench_reports_every_contender_and_agreeing_states(tmp_path):
    out = tmp_path / "bench.json"
    result = cli(
        "bench",
        "--scale",
        "0.01",
        "--rounds",
        "2",
        "--no-progress",
        "--only",
        "native,pure,dict",
        "--json",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    for workload in ("token stream", "heavy terminal", "mixed sessions"):
        assert workload in text
    assert "native and pure reached the same final state" in text
    report = json.loads(out.read_bytes())
    rows = report["results"]
    assert {r["contender"] for r in rows} == {"native", "pure", "dict"}
    assert all(len(r["seconds"]) == 2 and r["mb_per_s"] > 0 for r in rows)
    assert report["mismatches"] == []
    # Which build was measured: the release wheels are profile-guided, a source build is not.
    build = report["native_build"]
    assert re.fullmatch(r"(release|debug|[\w-]+), (plain|profile-guided|instrumented)", build)
    assert f"acpwire native build: {build}" in text
    digests = {(r["workload"], r["contender"]): r["check"] for r in rows}
    for workload in ("token stream", "heavy terminal", "mixed sessions"):
        assert digests[(workload, "native")] == digests[(workload, "pure")]
        assert digests[(workload, "native")].startswith("snapshot digest")


def test_bench_on_a_trace_with_a_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "bench.png"
    result = cli(
        "bench",
        "--trace",
        str(SAMPLE),
        "--rounds",
        "1",
        "--no-progress",
        "--only",
        "native,pure",
        "--plot",
        str(png),
    )
    assert result.returncode == 0, result.stderr
    assert str(SAMPLE) in result.stdout.decode()
    assert png.read_bytes().startswith(b"\x89PNG")


def test_check_counts_the_messages_of_a_recorded_trace(tmp_path):
    recorded = tmp_path / "recorded.ndjson"
    lines = SAMPLE.read_text().splitlines()
    with recorded.open("w") as fp:
        for i, line in enumerate(lines):
            fp.write(json.dumps({"t": i / 100, "dir": "agent", "msg": json.loads(line)}) + "\n")
        # A batch recorded as one frame, and a frame that was not JSON.
        batch = [json.loads(lines[0]), json.loads(lines[1])]
        fp.write(json.dumps({"t": 1.0, "dir": "client", "msg": batch}) + "\n")
        fp.write(json.dumps({"t": 1.1, "dir": "client", "raw": "{oops"}) + "\n")
    plain = json.loads(cli("check", "--json", str(SAMPLE)).stdout)
    result = cli("check", "--json", str(recorded))
    # The raw record is the bad frame `stats` and `replay` report too, at its line.
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    first, second = (cli_kind(json.loads(line)) for line in lines[:2])
    expected = dict(plain["methods"])
    for kind in (first, second):
        expected[kind] = expected.get(kind, 0) + 1
    assert report["methods"] == expected
    assert report["messages"] == plain["messages"] + 2
    assert report["recorded"] is True and report["frames"] == len(lines) + 2
    [error] = report["errors"]
    assert (error["line"], error["reason"], error["excerpt"]) == (
        len(lines) + 2,
        "invalid JSON",
        "{oops",
    )
    assert cli("stats", str(recorded)).returncode == 1
    assert cli("replay", str(recorded)).returncode == 1


def cli_kind(message: dict) -> str:
    from acpwire.cli.check import _kind

    return _kind(message)[0]


def test_bench_on_a_trace_a_baseline_cannot_read_times_the_others(tmp_path):
    trace = tmp_path / "bad.ndjson"
    trace.write_bytes(SAMPLE.read_bytes() + b"{broken\n")
    out = tmp_path / "bench.json"
    only = "native,pure,dict"
    result = cli("bench", "--trace", str(trace), "--rounds", "2", "--no-progress", "--only", only)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert "orjson + dict reducer" in text and "not comparable: could not reduce it:" in text
    result = cli(
        "bench", "--trace", str(trace), "--rounds", "1", "--no-progress", "--only", only,
        "--json", str(out),
    )  # fmt: skip
    rows = {r["contender"]: r for r in json.loads(out.read_bytes())["results"]}
    assert rows["dict"]["excluded"] and rows["dict"]["mb_per_s"] is None
    assert rows["native"]["mb_per_s"] > 0 and rows["native"]["check"] == rows["pure"]["check"]


def test_bench_on_a_recorded_trace_times_the_messages_it_holds(tmp_path):
    recorded = tmp_path / "recorded.ndjson"
    with recorded.open("w") as fp:
        for i, line in enumerate(SAMPLE.read_text().splitlines()):
            record = {"t": i / 100, "dir": "agent", "msg": json.loads(line)}
            fp.write(json.dumps(record) + "\n")
    digests = []
    for trace in (SAMPLE, recorded):
        out = tmp_path / "bench.json"
        args = ("--trace", str(trace), "--rounds", "1", "--no-progress", "--only", "native,pure")
        result = cli("bench", *args, "--json", str(out))
        assert result.returncode == 0, result.stderr
        rows = json.loads(out.read_bytes())["results"]
        digests.append({r["check"] for r in rows})
    assert "(its recorded messages)" in result.stdout.decode()
    # The same messages: the same final state as the plain trace's.
    assert digests[0] == digests[1] and len(digests[0]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--rounds", "0"), b"argument --rounds: must be at least 1, not 0"),
        (("--scale", "0"), b"argument --scale: must be a finite number above 0.0, not 0"),
        (("--scale", "inf"), b"argument --scale: must be a finite number above 0.0, not inf"),
        (("--scale", "nan"), b"argument --scale: must be a finite number above 0.0, not nan"),
        (("--trace", "/nonexistent/trace"), b"cannot read"),
        (("--trace", os.devnull), b"holds no frames to reduce"),
        (("--only", "nobody"), b"no contender"),
        # Checked before the run, which would otherwise be lost.
        (("--json", "/nonexistent/dir/out.json"), b"cannot write /nonexistent/dir/out.json"),
    ],
)
def test_bench_errors(args, message):
    result = cli("bench", "--no-progress", "--scale", "0.01", *args)
    assert result.returncode == 2
    assert message in result.stderr


# -- replay ---------------------------------------------------------------------------------


def test_replay_text_shows_the_conversation():
    result = cli("replay", str(SAMPLE), "--format", "text")
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert 'User: `tally parse-duration ""` panics' in text
    assert "Thought: An index-out-of-bounds" in text
    assert "Agent: Fixed. `parse_duration` now returns `ParseError::Empty`" in text
    assert "✔ cargo nextest run [execute, completed]" in text
    assert "+    let Some(&first) = s.as_bytes().first() else {" in text
    assert "[x] Run the test suite" in text
    # The terminal is rendered: the progress bar collapsed to its last state, no escapes.
    assert "Summary [   0.029s] 8 tests run: 8 passed" in text
    assert "\x1b" not in text and "Building [" not in text
    hidden = cli("replay", str(SAMPLE), "--format", "text", "--hide-thoughts").stdout.decode()
    assert "Thought:" not in hidden and "Agent: Fixed." in hidden


def test_replay_to_a_terminal_that_cannot_show_unicode(tmp_path):
    ascii_out = {"PYTHONIOENCODING": "ascii"}
    for fmt in ("json", "html"):
        # Documents are UTF-8 whatever the terminal's encoding.
        out = tmp_path / f"out.{fmt}"
        assert cli("replay", str(SAMPLE), "--format", fmt, "--out", str(out)).returncode == 0
        result = cli("replay", str(SAMPLE), "--format", fmt, env=ascii_out)
        assert result.returncode == 0, result.stderr
        assert result.stdout == out.read_bytes()
    # Text shows what the encoding can, the rest replaced rather than a traceback.
    utf8 = cli("replay", str(SAMPLE), "--format", "text").stdout.decode()
    assert any(ord(c) > 127 for c in utf8)
    result = cli("replay", str(SAMPLE), "--format", "text", env=ascii_out)
    assert result.returncode == 0, result.stderr
    assert result.stdout == utf8.encode("ascii", "replace")


def test_replay_formats(tmp_path):
    ansi = cli("replay", str(SAMPLE), "--format", "ansi").stdout.decode()
    assert "\x1b[1;32mAgent:\x1b[0m" in ansi
    # The terminal keeps its colours (cargo's bold bright green), the agent's Markdown is
    # drawn (inline code styled, no backticks left).
    assert "\x1b[1;92m   Compiling\x1b[0m" in ansi
    assert "`parse_duration`" not in ansi and "parse_duration\x1b[0m now returns" in ansi
    markdown = cli("replay", str(SAMPLE), "--format", "markdown").stdout.decode()
    assert markdown.startswith("## Session sess_7f3c9a1e2b4d")
    assert "```diff" in markdown and "```console" in markdown and "**User:**" in markdown
    out = tmp_path / "snap.json"
    result = cli("replay", str(SAMPLE), "--format", "json", "--out", str(out))
    assert result.returncode == 0 and result.stdout == b""
    expected = acpwire.replay(SAMPLE)["sess_7f3c9a1e2b4d"].snapshot()
    assert json.loads(out.read_bytes()) == {"sess_7f3c9a1e2b4d": expected}


def test_replay_of_a_recorded_trace_matches_the_plain_one(tmp_path):
    recorded = records_of(SAMPLE, tmp_path / "rec.ndjson")
    plain = cli("replay", str(SAMPLE), "--format", "json").stdout
    assert cli("replay", str(recorded), "--format", "json").stdout == plain


def test_replay_shows_an_agents_control_characters_and_links_only_safely(tmp_path):
    # An agent's text may hold escape sequences (a clipboard write, a screen clear); printed
    # on the reader's terminal they must show as text. A terminal's OSC 8 link becomes a
    # clickable link in the page only for a web, mail or file address.
    def update(body):
        return {"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": "s", "update": body}}  # fmt: skip

    def chunk(data: bytes):
        return update({"sessionUpdate": "terminal_output_chunk", "terminalId": "t",
                       "data": base64.b64encode(data).decode()})  # fmt: skip

    text = "hi \x1b]52;c;ZXZpbA==\x07 \x1b[2J\x9b2J there\r\nnext\rover"
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}},
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": text},
            }
        ),
        chunk(b"\x1b]8;;javascript:alert(1)\x07click\x1b]8;;\x07 "),
        chunk(b"\x1b]8;;https://example.com/a?b=1&c=2\x07docs\x1b]8;;\x07\r\n"),
    ]
    trace = tmp_path / "t.ndjson"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for fmt in ("text", "ansi", "markdown"):
        out = cli("replay", str(trace), "--format", fmt).stdout
        if fmt == "ansi":
            # The one OSC the tool writes itself: the link to the web address, made
            # clickable; the javascript: one is text.
            link = b"\x1b]8;id="
            assert out.count(link) == 1 and b";https://example.com/a?b=1&c=2\x1b\\docs" in out
            out = re.sub(rb"\x1b\]8;[^\x1b]*\x1b\\", b"", out)
        assert b"\x1b]" not in out and b"\x1b[2J" not in out and b"\x07" not in out, fmt
        assert b"\xc2\x9b" not in out and b"\r" not in out, fmt
        # Drawn as Markdown on a terminal, the line break is a soft one (a space).
        joined = " " if fmt == "ansi" else "\n"
        expected = f"hi ^[]52;c;ZXZpbA==^G ^[[2J\ufffd2J there{joined}next^Mover"
        assert expected.encode() in out, fmt
    page = cli("replay", str(trace), "--format", "html").stdout.decode()
    assert "javascript:" not in page.split("click")[0].rsplit("<pre", 1)[-1]
    assert '<a href="javascript' not in page
    assert 'rel="noopener noreferrer" href="https://example.com/a?b=1&amp;c=2">docs</a>' in page
    # The JSON snapshot stays exact: it is data, not display.
    snapshot = json.loads(cli("replay", str(trace), "--format", "json").stdout)
    assert snapshot["s"]["messages"][0]["content"][0]["text"] == text


def test_check_and_stats_print_a_traces_strings_without_their_control_characters(tmp_path):
    lines = [
        {"jsonrpc": "2.0", "method": "x\x1b[2Jy", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s\x1b]0;t\x07", "update": {"sessionUpdate": "k\x1b[2J"}},
        },
    ]
    trace = tmp_path / "t.ndjson"
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    checked = cli("check", str(trace)).stdout
    assert b"\x1b" not in checked and b"x^[[2Jy" in checked and b"k^[[2J" in checked
    stats = cli("stats", str(trace)).stdout
    assert b"\x1b" not in stats and b"\x07" not in stats and b"session s^[]0;t^G" in stats
    # --json keeps the strings exact: it is data, not display.
    report = json.loads(cli("check", str(trace), "--json").stdout)
    assert report["methods"]["x\x1b[2Jy"] == 1
    assert "s\x1b]0;t\x07" in json.loads(cli("stats", str(trace), "--json").stdout)["sessions"]


def test_replay_errors(tmp_path):
    result = cli("replay", str(SAMPLE), "--session", "nope")
    assert result.returncode == 2 and b"no session 'nope'" in result.stderr
    assert b"sess_7f3c9a1e2b4d" in result.stderr
    assert cli("replay", str(tmp_path / "missing")).returncode == 2
    binary = tmp_path / "binary.bin"
    binary.write_bytes(b"\x00\x01garbage\nmore garbage\n")
    result = cli("replay", str(binary))
    assert result.returncode == 2 and b"not an NDJSON trace" in result.stderr
    bad = tmp_path / "bad.ndjson"
    bad.write_bytes(SAMPLE.read_bytes() + b"{broken\n")
    result = cli("replay", str(bad), "--format", "text")
    assert result.returncode == 1
    # A bad frame belongs to no session, so no rendering shows it: it is named on stderr.
    lines = SAMPLE.read_bytes().count(b"\n")
    offset = len(SAMPLE.read_bytes())
    assert f"line {lines + 1}, byte {offset}: invalid JSON".encode() in result.stderr
    # One line without a newline is a trace of one bad frame, not a refusal.
    one = tmp_path / "one.txt"
    one.write_bytes(b"garbage")
    result = cli("replay", str(one))
    assert result.returncode == 1 and b"line 1, byte 0: invalid JSON" in result.stderr
    many = tmp_path / "many.ndjson"
    many.write_bytes(SAMPLE.read_bytes() + b"{broken\n" * 25)
    result = cli("replay", str(many), "--format", "text")
    assert result.returncode == 1 and result.stderr.count(b"invalid JSON") == 20
    assert b"... and 5 more" in result.stderr


def test_replay_follow_rerenders_as_the_trace_grows(tmp_path):
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    trace = tmp_path / "live.ndjson"
    trace.write_bytes(b"".join(lines[:10]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "acpwire", "replay", str(trace), "--format", "text", "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(1.5)
        with trace.open("ab") as fp:
            fp.write(b"".join(lines[10:]))
        deadline = time.time() + 20
        seen = b""
        os.set_blocking(proc.stdout.fileno(), False)
        while time.time() < deadline and b"8 tests pass" not in seen:
            chunk = proc.stdout.read()
            seen += chunk or b""
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert b"Thought: An index" in seen  # the first render
    assert b"8 tests pass" in seen  # the re-render after the trace grew


def test_replay_follow_reports_a_trace_it_can_no_longer_read(tmp_path, monkeypatch, capsys):
    import errno

    from acpwire.cli import replay as commands
    from acpwire.cli import traces

    def unreadable(self):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(traces.Following, "poll", unreadable)
    monkeypatch.setattr(commands.time, "sleep", lambda seconds: None)
    status = commands.replay_command(
        str(SAMPLE),
        fmt="text",
        session=None,
        out=str(tmp_path / "out.txt"),
        thoughts=True,
        follow=True,
        terminal_cols=None,
    )
    assert status == 2
    assert f"acpwire replay: cannot read {SAMPLE}: Input/output error" in capsys.readouterr().err


def test_replay_html_in_headless_chromium(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    page = tmp_path / "replay.html"
    assert cli("replay", str(SAMPLE), "--format", "html", "--out", str(page)).returncode == 0
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    ).stdout.decode()
    assert "<title>acpwire replay</title>" in dom
    # The agent's Markdown is rendered: its inline code as code.
    assert "Fixed. <code>parse_duration</code> now returns" in dom
    assert '<pre class="terminal">' in dom
    # Terminal colours survive as styles: cargo's bold bright green "Compiling".
    assert 'style="color:#00ff00;font-weight:bold">   Compiling</span>' in dom
    screenshot = tmp_path / "shot.png"
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1000,2000",
            f"--screenshot={screenshot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert screenshot.read_bytes().startswith(b"\x89PNG")


# -- stats ----------------------------------------------------------------------------------


def test_stats_counts_what_happened():
    result = cli("stats", str(SAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    session = report["sessions"]["sess_7f3c9a1e2b4d"]
    lines = [json.loads(line) for line in SAMPLE.read_bytes().splitlines()]
    updates = [m["params"]["update"] for m in lines if m.get("method") == "session/update"]
    assert session["turns"] == 1
    assert session["stopReasons"] == {"end_turn": 1}
    assert session["chunks"]["agent_message_chunk"] == sum(
        u["sessionUpdate"] == "agent_message_chunk" for u in updates
    )
    assert session["toolCalls"]["byKind"] == {"read": 1, "search": 1, "edit": 1, "execute": 1}
    assert session["toolCalls"]["byStatus"] == {"completed": 4}
    import base64

    fed = sum(
        len(base64.b64decode(u["data"]))
        for u in updates
        if u["sessionUpdate"] == "terminal_output_chunk"
    )
    assert session["terminals"]["bytesIn"] == fed
    assert 0 < session["terminals"]["bytesRetained"] < fed
    assert session["usage"]["cost"] == {"amount": 0.0637, "currency": "USD"}
    assert report["timed"] is False and "timing" not in session
    text = cli("stats", str(SAMPLE)).stdout.decode()
    assert "turns: 1   stop reasons: end_turn ×1" in text
    assert "tool calls: read 1, search 1, edit 1, execute 1" in text


def test_stats_timing_from_a_recorded_trace(tmp_path):
    recorded = records_of(SAMPLE, tmp_path / "rec.ndjson")
    report = json.loads(cli("stats", str(recorded), "--json").stdout)
    assert report["timed"] is True
    [turn] = report["sessions"]["sess_7f3c9a1e2b4d"]["timing"]
    # The prompt is line 6 (t=0.05), the first update after it line 8 (t=0.07).
    assert turn["firstUpdateSeconds"] == pytest.approx(0.02)
    assert turn["updates"] > 50 and turn["updatesPerSecond"] == pytest.approx(100, rel=0.05)
    assert "first update after 20.0 ms" in cli("stats", str(recorded)).stdout.decode()


def test_stats_of_a_recorded_trace_reports_its_raw_records_and_senders(tmp_path):
    # A raw record is the bad frame a plain trace would show; and with both sides' requests
    # pending under id 2, the client's error answers the agent's permission request (the
    # record says who sent it), so the prompt is still running, as `replay` has it.
    sid = "sess_1"
    messages = [
        (
            "client",
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        ),
        ("agent", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        ("client", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}),
        ("agent", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": sid}}),
        (
            "client",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": []},
            },
        ),
        (
            "agent",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/request_permission",
                "params": {"sessionId": sid, "toolCall": {}, "options": []},
            },
        ),
        ("client", {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "no"}}),
    ]
    lines = [json.dumps({"t": 0.01 * i, "dir": d, "msg": m}) for i, (d, m) in enumerate(messages)]
    lines.insert(2, json.dumps({"t": 0.015, "dir": "agent", "raw": "this is not json"}))
    trace = tmp_path / "rec.ndjson"
    trace.write_text("\n".join(lines) + "\n")
    result = cli("stats", str(trace), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    offset = len(lines[0]) + len(lines[1]) + 2
    assert report["frameErrors"] == [{"line": 3, "offset": offset, "reason": "invalid JSON"}]
    assert report["sessions"][sid]["state"] == "running"
    replayed = json.loads(cli("replay", str(trace), "--format", "json").stdout)
    assert replayed[sid]["state"] == "running"


def test_stats_errors(tmp_path):
    assert cli("stats", str(tmp_path / "missing")).returncode == 2
    bad = tmp_path / "bad.ndjson"
    bad.write_bytes(SAMPLE.read_bytes() + b"[]\n")
    result = cli("stats", str(bad))
    assert result.returncode == 1 and b"empty batch" in result.stdout


def _bench_script(name: str, *args: str) -> subprocess.CompletedProcess:
    """Runs ``benches/scripts/<name>`` with ``args`` in this interpreter, its output captured."""
    script = Path(__file__).resolve().parents[2] / "benches" / "scripts" / name
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, check=False, timeout=300
    )


def test_the_profile_guided_builds_training_run_works_on_a_small_scale():
    # .ci/pgo-wheel runs it against an instrumented build; an API it calls going away must
    # show here, not in a release.
    pytest.importorskip("acpwire._native")
    done = _bench_script("pgo_train.py", "--scale", "0.01")
    assert done.returncode == 0, done.stderr.decode()
    refused = _bench_script("pgo_train.py", "--scale", "0")
    assert refused.returncode == 2
    assert b"--scale must be positive" in refused.stderr


def test_a_plain_trace_read_line_by_line_keeps_the_framings_cap(tmp_path):
    # stats and recorded-trace replay read traces line by line; on a plain trace they must
    # refuse what the framing refuses, at the same lines and offsets, and hold no more.
    from acpwire.cli import traces

    cap = 64

    def message(size):
        line = b'{"jsonrpc":"2.0","method":"x","params":{"p":"'
        return line + b"a" * (size - len(line) - 3) + b'"}}'

    lines = [
        message(cap),  # at the cap
        message(cap + 1),  # one over
        message(cap) + b"\r",  # at the cap, then the CR the framing drops
        message(cap + 1) + b"\r",
        b" " * (cap + 1),  # blank, but over the cap
        b" " * cap,
        message(40 * cap),  # far over: skipped without being held
        message(10),
    ]
    path = tmp_path / "plain.ndjson"
    path.write_bytes(b"\n".join(lines) + b"\n")
    decoder = acpwire.FrameDecoder(max_frame_bytes=cap)
    decoder.feed(path.read_bytes())
    expected = [(e.line, e.offset, e.reason) for e in decoder.take_errors()]
    seen = list(traces.iter_trace(path, max_frame_bytes=cap))
    assert [(e.line, e.offset, e.error) for e in seen if e.error] == expected
    assert [e.line for e in seen if e.error is None] == [1, 3, 8]
    assert len(expected) == 4

    # A recorded trace may hold a frame under the cap in a longer record line, but a plain
    # line in it is still capped.
    record = json.dumps({"t": 0.5, "dir": "agent", "msg": json.loads(message(cap))}).encode()
    assert len(record) > cap
    mixed = tmp_path / "recorded.ndjson"
    mixed.write_bytes(record + b"\n" + message(cap + 1) + b"\n")
    seen = list(traces.iter_trace(mixed, max_frame_bytes=cap))
    assert [(e.line, e.error) for e in seen] == [(1, None), (2, "frame exceeds max_frame_bytes")]
    assert seen[0].sender == "agent"


def test_the_two_build_comparison_runs_every_workload(tmp_path):
    # benches/scripts/ab_builds.py loads two builds side by side; here the installed one twice.
    native = pytest.importorskip("acpwire._native")
    library = Path(native.__file__)
    # A library under another name loads all the same, and so does a wheel (its stub beside).
    renamed = tmp_path / f"plain{library.name}"
    renamed.write_bytes(library.read_bytes())
    wheel = tmp_path / "acpwire-0-cp3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("acpwire/_native.pyi", "")
        archive.writestr(f"acpwire/{library.name}", library.read_bytes())
    done = _bench_script(
        "ab_builds.py", str(wheel), str(renamed), "--rounds", "2", "--scale", "0.005"
    )
    assert done.returncode == 0, done.stderr.decode()
    rows = done.stdout.decode().splitlines()
    assert rows[0].startswith("A: ") and native._build in rows[0]
    for name in ("text", "spans", "screen 200x50", "heavy", "token", "mixed", "raw framing"):
        assert any(re.match(rf"{re.escape(name)} +\d+ +\d+ +\d+\.\d\dx$", row) for row in rows), (
            name
        )
    refused = _bench_script("ab_builds.py", str(library), str(library), "--only", "nope")
    assert refused.returncode == 2 and b"unknown workloads: nope" in refused.stderr


def test_replay_takes_its_source_by_the_name_the_stubs_give():
    store = acpwire.replay(source=SAMPLE)
    assert store.errors == [] and len(store) == 1


def _closed_stdin(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "acpwire", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=300,
        # Standard input closed in the child, as `acpwire replay - <&-` does.
        preexec_fn=lambda: os.close(0),
    )


@pytest.mark.skipif(os.name != "posix", reason="closes the child's standard input")
def test_commands_reading_a_closed_standard_input_exit_2_without_a_traceback():
    for command, message in (
        (("replay", "-"), b"acpwire replay: cannot read -: standard input is closed"),
        (("stats", "-"), b"acpwire stats: cannot read -: standard input is closed"),
        (("fake-agent",), b"acpwire fake-agent: standard input or output is closed"),
    ):
        result = _closed_stdin(*command)
        assert result.returncode == 2, (command, result.stderr)
        assert message in result.stderr and b"Traceback" not in result.stderr


def _with_stdout(stdout: Any, *args: str, closed: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "acpwire", *args],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        check=False,
        timeout=300,
        # Standard output closed in the child, as `acpwire check >&-` does.
        preexec_fn=(lambda: os.close(1)) if closed else None,
    )


@pytest.mark.skipif(os.name != "posix", reason="closes the child's standard output")
def test_commands_with_a_closed_standard_output_exit_2_without_a_traceback(tmp_path):
    for command in (("check", "--json"), ("stats", "--json", str(SAMPLE)), ("replay", str(SAMPLE))):
        result = _with_stdout(subprocess.DEVNULL, *command, closed=True)
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr == b"acpwire: standard output is closed\n", command
    # `replay --out` does not need it.
    out = tmp_path / "out.txt"
    result = _with_stdout(subprocess.DEVNULL, "replay", str(SAMPLE), "--out", str(out), closed=True)
    assert result.returncode == 0 and out.stat().st_size > 0
    # The recorder would open its trace in standard output's place.
    trace = tmp_path / "t.ndjson"
    agent = [sys.executable, "-m", "acpwire", "fake-agent"]
    result = _with_stdout(
        subprocess.DEVNULL, "record", "--out", str(trace), "--", *agent, closed=True
    )
    assert result.returncode == 2
    assert b"standard input or output is closed" in result.stderr and not trace.exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_commands_whose_standard_output_fails_exit_2_and_say_so():
    with open("/dev/full", "wb") as full:
        for command in (("check",), ("check", "--json"), ("stats", "--json", str(SAMPLE))):
            result = _with_stdout(full, *command)
            assert result.returncode == 2, (command, result.stderr)
            assert result.stderr == (
                b"acpwire: cannot write standard output: No space left on device\n"
            ), command
        result = _with_stdout(full, "replay", str(SAMPLE))
        assert result.returncode == 2 and result.stderr == (
            b"acpwire replay: cannot write standard output: No space left on device\n"
        )


@pytest.mark.skipif(sys.platform != "linux", reason="needs file names of any bytes")
def test_check_json_names_a_trace_whose_path_is_not_utf8(tmp_path):
    name = os.fsdecode(bytes(tmp_path) + b"/bad\xffname.ndjson")
    shutil.copy(SAMPLE, name)
    result = cli("check", "--json", name)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["trace"].endswith("/bad\\xffname.ndjson")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("replay", str(SAMPLE), "--terminal-cols", "70000"), b"must be at most 65535"),
        (("replay", "-", "--follow"), b"--follow needs a trace file, not standard input"),
        (("fake-agent", "--rate", "nan"), b"must be a finite number at least 0.0, not nan"),
        (("fake-agent", "--rate", "-1"), b"must be a finite number at least 0.0, not -1"),
    ],
)
def test_usage_errors_exit_2(args, message):
    result = cli(*args, stdin=b"")
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and b"Traceback" not in result.stderr


def test_ctrl_c_ends_a_command_with_status_130_and_no_traceback(monkeypatch, capsys):
    from acpwire import __main__ as entry
    from acpwire.cli import check as commands

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "check", interrupted)
    assert entry.main(["check"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_check_lists_every_bad_frame_in_bounded_memory(tmp_path):
    # Each bad frame is written out as it comes (to disk past the first MiB), not kept: a
    # trace of 200,000 bad lines once held about 1 KB of memory per line.
    trace = tmp_path / "bad.ndjson"
    trace.write_bytes(b'{"jsonrpc":"2.0","method":"a"}\n' + b"x\n" * 200_000)
    code = (
        "import resource, sys\n"
        "from acpwire.cli import check as cli\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "status = cli.check(sys.argv[1], max_frame_bytes=1 << 20, as_json=sys.argv[2] == 'json')\n"
        "sys.stdout.flush()\n"
        "grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "print(status, grown, file=sys.stderr)\n"
    )
    for form in ("text", "json"):
        done = subprocess.run(
            [sys.executable, "-c", code, str(trace), form],
            capture_output=True,
            check=True,
            timeout=300,
        )
        status, grown_kib = map(int, done.stderr.split())
        assert status == 1
        assert grown_kib < 64 * 1024, grown_kib  # 200 MB before
        if form == "json":
            report = json.loads(done.stdout)
            assert len(report["errors"]) == 200_000 and report["messages"] == 1
            assert report["errors"][-1] == {
                "line": 200_001,
                "offset": 31 + 2 * 199_999,
                "reason": "invalid JSON",
                "detail": "expected value at line 1 column 1",
                "excerpt": "x",
            }
        else:
            listed = done.stdout.split(b"\n200000 bad frame(s):\n")[1].splitlines()
            assert len(listed) == 200_000
            assert listed[0] == (
                b"  line 2, byte 31: invalid JSON (expected value at line 1 column 1): 'x'"
            )


def test_stats_counts_a_batchs_entries_and_refuses_a_byte_order_mark(tmp_path):
    chunk = chunk_message
    trace = tmp_path / "batch.ndjson"
    trace.write_bytes(
        json.dumps(chunk("a")).encode()
        + b"\n"
        + json.dumps([chunk("b"), chunk("c")]).encode()
        + b"\n\xef\xbb\xbf"
        + json.dumps(chunk("d")).encode()
        + b"\n"
    )
    result = cli("stats", str(trace), "--json")
    report = json.loads(result.stdout)
    # As `check` counts them, and as the store applies them.
    assert report["sessions"]["s"]["chunks"] == {"agent_message_chunk": 3}
    assert report["frameErrors"] == [
        {"line": 3, "offset": trace.read_bytes().index(b"\xef"), "reason": "invalid JSON"}
    ]
    assert result.returncode == 1
    check = cli("check", str(trace), "--json")
    assert json.loads(check.stdout)["session_updates"] == {"agent_message_chunk": 3}


def test_replay_reads_a_recorded_trace_whose_first_record_is_over_a_mib(tmp_path):
    big = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    big["params"] = {"protocolVersion": 2, "_meta": {"pad": "y" * 1_200_000}}
    chunk = chunk_message("hi")
    trace = tmp_path / "rec.ndjson"
    records = [{"t": 0.0, "dir": "client", "msg": big}, {"t": 0.1, "dir": "agent", "msg": chunk}]
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    store = acpwire.replay(trace)
    assert store.ids() == ["s"] and store.errors == []
    assert store["s"].snapshot()["protocolVersion"] == 2


def test_replay_exits_0_when_only_a_sessions_own_updates_are_malformed(tmp_path):
    # As `check` and `stats`: only bad frames fail the run.
    trace = tmp_path / "t.ndjson"
    bad_update = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": 5},
        },
    }
    trace.write_bytes(SAMPLE.read_bytes() + json.dumps(bad_update).encode() + b"\n")
    result = cli("replay", str(trace), "--format", "text")
    assert result.returncode == 0, result.stderr
    lines = SAMPLE.read_bytes().count(b"\n")
    where = f"line {lines + 1}, byte {len(SAMPLE.read_bytes())}, session s: tool_call_update"
    assert where.encode() in result.stderr  # listed, as no rendering shows it
    errors = acpwire.replay(trace)["s"].snapshot()["errors"]
    assert errors[0]["reason"].startswith("tool_call_update: content")


def _chunk_line(text: str, sid: str = "s", recorded: bool = False) -> bytes:
    message = chunk_message(text, sid)
    if recorded:
        message = {"t": 0.5, "dir": "agent", "msg": message}
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize("recorded", [False, True])
def test_following_a_trace_reduces_whole_lines_as_they_are_appended(tmp_path, recorded):
    from acpwire.cli.traces import Following

    trace = tmp_path / "live.ndjson"
    second = _chunk_line(" TWO", recorded=recorded)
    # Caught while the second line is being written: it waits for its newline.
    trace.write_bytes(_chunk_line("ONE", recorded=recorded) + second[:25])
    following = Following(str(trace))
    assert following.recorded is recorded
    assert following.store["s"].message_text("m") == "ONE" and following.store.errors == []
    assert not following.poll()
    with trace.open("ab") as fp:
        fp.write(second[25:] + b"{broken\n")
    assert following.poll()
    assert following.store["s"].message_text("m") == "ONE TWO"
    # Appended lines keep their places in the trace.
    (error,) = following.store.errors
    size = len(_chunk_line("ONE", recorded=recorded)) + len(second)
    assert (error["line"], error["offset"]) == (3, size)
    # A file replaced by another is reduced again from its start.
    fresh = tmp_path / "fresh.ndjson"
    fresh.write_bytes(_chunk_line("NEW", sid="t", recorded=recorded))
    os.replace(fresh, trace)
    assert following.poll()
    assert following.store.ids() == ["t"] and following.store.errors == []
    # So is one cut short.
    trace.write_bytes(b"")
    following.poll()
    assert following.store.ids() == []
    trace.write_bytes(_chunk_line("BACK", recorded=recorded))
    assert following.poll() and following.store["s"].message_text("m") == "BACK"


@pytest.mark.parametrize("recorded", [False, True])
def test_following_reads_a_burst_a_window_at_a_time(tmp_path, monkeypatch, recorded):
    from acpwire.cli import traces

    monkeypatch.setattr(traces, "_PLAIN_WINDOW", 100)
    # A recorded trace's window is the longest record line its store's cap allows.
    options = {"max_frame_bytes": 300} if recorded else {}
    trace = tmp_path / "live.ndjson"
    trace.write_bytes(_chunk_line("0", recorded=recorded))
    following = traces.Following(str(trace), **options)
    with trace.open("ab") as fp:
        fp.write(b"".join(_chunk_line(str(i), recorded=recorded) for i in range(1, 100)))
    polls = 0
    while following.position < trace.stat().st_size:
        following.poll()
        polls += 1
    assert polls > 5  # more than one window's worth, read bit by bit
    text = "".join(str(i) for i in range(100))
    assert following.store["s"].message_text("m") == text and following.store.errors == []


def test_following_skips_a_record_line_over_the_limit_as_a_whole_replay_does(tmp_path, monkeypatch):
    from acpwire.cli import traces

    # Records of frames up to 100 bytes: a record line may take 6 * 100 + 1024 bytes; one
    # longer is passed over as soon as that much of it has no newline.
    Following = traces.Following
    options = {"max_frame_bytes": 100}
    trace = tmp_path / "live.ndjson"
    first = _chunk_line("before", recorded=True)
    trace.write_bytes(first)
    following = Following(str(trace), **options)
    huge = b'{"t": 0.6, "dir": "agent", "msg": "' + b"x" * 5000 + b'"}\n'
    with trace.open("ab") as fp:
        # Written in pieces, each polled: the line is reported once and never held whole.
        for i in range(0, len(huge) - 1, 700):
            fp.write(huge[i : min(i + 700, len(huge) - 1)])
            fp.flush()
            following.poll()
            assert following.position <= trace.stat().st_size
        # Passed over before its newline came: no more than a window of it was read at once.
        assert following.position == trace.stat().st_size
        fp.write(b"\n")
        fp.write(_chunk_line("after", recorded=True))
    following.poll()
    assert following.position == trace.stat().st_size
    assert following.store["s"].message_text("m") == "beforeafter"
    whole = acpwire.replay(str(trace), **options)
    assert following.store.errors == whole.errors
    (error,) = whole.errors
    assert (error["line"], error["offset"]) == (2, len(first))


def test_following_reads_a_record_line_written_slowly_once(tmp_path, monkeypatch):
    from acpwire.cli import traces

    trace = tmp_path / "live.ndjson"
    trace.write_bytes(_chunk_line("before", recorded=True))
    following = traces.Following(str(trace))
    read = []

    class Counting(io.FileIO):
        def read(self, size=-1):
            data = super().read(size)
            read.append(len(data))
            return data

    monkeypatch.setattr(traces, "open", lambda path, mode: Counting(path, "r"), raising=False)
    line = _chunk_line("x" * 200_000, recorded=True)
    with trace.open("ab") as fp:
        for i in range(0, len(line), 2_000):
            fp.write(line[i : i + 2_000])
            fp.flush()
            following.poll()
    # Each poll reads what was appended since the last, and the 64 bytes before it that tell
    # an append from a rewrite: not the whole unfinished line again.
    polls = -(-len(line) // 2_000)
    assert sum(read) <= len(line) + 64 * polls
    assert following.store["s"].message_text("m") == "before" + "x" * 200_000
    assert following.position == trace.stat().st_size
    # Rewritten under the held part of the line: told from an append, reduced again.
    with trace.open("ab") as fp:
        fp.write(line[:1000])
    following.poll()
    with trace.open("r+b") as fp:
        fp.seek(trace.stat().st_size - 10)
        fp.write(b"y" * 10)
        fp.seek(0, os.SEEK_END)
        fp.write(line[1000:].replace(b"x", b"z"))
    assert following.poll()
    whole = acpwire.replay(str(trace))
    assert following.store["s"].snapshot() == whole["s"].snapshot()
    assert following.store.errors == whole.errors
    # Cut back to where the held part of a line starts, then written anew: the held bytes
    # are not the file's any more.
    monkeypatch.undo()
    trace.write_bytes(_chunk_line("A", recorded=True))
    following = traces.Following(str(trace))
    with trace.open("ab") as fp:
        fp.write(_chunk_line("X" * 300, recorded=True)[:400])
    following.poll()
    with trace.open("r+b") as fp:
        fp.truncate(following.position)
    following.poll()
    with trace.open("ab") as fp:
        fp.write(_chunk_line("Y" * 10 + "X" * 290, recorded=True))
    following.poll()
    assert following.store["s"].message_text("m") == "A" + "Y" * 10 + "X" * 290


def test_following_tells_a_trace_by_its_first_line_that_is_not_blank(tmp_path):
    from acpwire.cli.traces import Following

    trace = tmp_path / "live.ndjson"
    record = _chunk_line("ONE", recorded=True)
    trace.write_bytes(b"\n \r\n" + record[:20])
    following = Following(str(trace))
    assert following.position == 0 and not following.poll()
    with trace.open("ab") as fp:
        fp.write(record[20:] + _chunk_line("TWO", recorded=True))
    assert following.poll() and following.recorded
    assert following.store["s"].message_text("m") == "ONETWO"
    assert following.store.errors == acpwire.replay(str(trace)).errors == []


def test_following_a_first_line_cut_short_and_written_again(tmp_path):
    from acpwire.cli.traces import Following

    trace = tmp_path / "live.ndjson"
    trace.write_bytes(b'{"t": 0.5, "dir": "agent", "msg": "' + b"x" * 200_000)
    following = Following(str(trace))
    assert not following.poll()  # searched to its end: no line has ended
    # The recorder run again over the same file: cut short, then written anew.
    with trace.open("r+b") as fp:
        fp.truncate(0)
        fp.write(_chunk_line("NEW", recorded=True))
    assert following.poll() and following.store["s"].message_text("m") == "NEW"
    # Cut short and written past where the search stopped between two polls: the bytes
    # before there are not the ones searched.
    trace.write_bytes(b'{"t": 0.5, "dir": "agent", "msg": "' + b"x" * 200_000)
    following = Following(str(trace))
    assert not following.poll()
    lines = [_chunk_line(str(i % 10)) for i in range(3000)]
    trace.write_bytes(b"".join(lines))
    assert trace.stat().st_size > 200_000
    assert following.poll() and following.store["s"].message_text("m").startswith("0123")


def test_following_reduces_again_a_trace_rewritten_in_place(tmp_path):
    from acpwire.cli.traces import Following

    trace = tmp_path / "live.ndjson"
    trace.write_bytes(_chunk_line("ONE"))
    following = Following(str(trace))
    # Cut short and written again past the old end between two polls, in the same file.
    with trace.open("r+b") as fp:
        fp.truncate(0)
        fp.write(_chunk_line("NEW", sid="t") + _chunk_line("MORE", sid="t"))
    assert following.poll()
    assert following.store.ids() == ["t"]
    assert following.store["t"].message_text("m") == "NEWMORE"
    # Appending after that is an append again.
    with trace.open("ab") as fp:
        fp.write(_chunk_line("!", sid="t"))
    assert following.poll() and following.store["t"].message_text("m") == "NEWMORE!"


def test_following_waits_for_a_first_line_longer_than_a_read(tmp_path, monkeypatch):
    from acpwire.cli import traces

    monkeypatch.setattr(traces, "CHUNK", 16)
    trace = tmp_path / "live.ndjson"
    line = _chunk_line("FIRST")
    trace.write_bytes(b"")
    following = traces.Following(str(trace))
    body = line[:-1]
    for i in range(0, len(body), 10):
        with trace.open("ab") as fp:
            fp.write(body[i : i + 10])
        assert not following.poll() and following.position == 0
    with trace.open("ab") as fp:
        fp.write(b"\n")
    assert following.poll()
    assert following.store["s"].message_text("m") == "FIRST"


def test_replay_lists_frame_errors_before_session_errors_and_fails_only_for_bad_frames(tmp_path):
    malformed = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update"}},
    }
    trace = tmp_path / "t.ndjson"
    # A valid frame that is no message is the store's error, not the trace's: exit 0.
    trace.write_bytes(b'{"a":1}\n')
    result = cli("replay", str(trace), "--format", "text")
    assert result.returncode == 0 and b"line 1, byte 0: invalid message" in result.stderr
    # 25 malformed updates, then a bad frame: the bad frame is listed first, and fails the run.
    trace.write_bytes((json.dumps(malformed) + "\n").encode() * 25 + b"bad frame\n")
    result = cli("replay", str(trace), "--format", "text")
    assert result.returncode == 1
    listed = result.stderr.decode().splitlines()
    assert listed[0].endswith(f"line 26, byte {trace.stat().st_size - 10}: invalid JSON")
    assert sum("session s: tool_call_update" in line for line in listed) == 20
    assert listed[-1] == "acpwire replay: ... and 5 more"


def test_the_machine_state_benchmark_reports_nominal_rounds():
    # benches/scripts/machine_state.py times references around each round; a tiny run, for its
    # shape.
    pytest.importorskip("acpwire._native")
    done = _bench_script("machine_state.py", "3", "0.3")
    assert done.returncode == 0, done.stderr.decode()
    rows = done.stdout.decode().splitlines()
    assert re.fullmatch(r"0\.3 MB of PTY output, 3 rounds, build: release, [a-z-]+", rows[0])
    for name in ("interp", "hash"):
        assert any(re.match(rf"reference {name}: best \d+\.\d\d ms, rounds up to", r) for r in rows)
    assert re.fullmatch(r"all rounds: text [\d,]+ MB/s median, [\d,]+ best \(3 rounds\)", rows[3])
    # On a busy machine no round may count as nominal: the line then says so.
    assert re.fullmatch(
        r"nominal speed \(references within 1\.15x of best\): "
        r"(text [\d,]+ MB/s median, [\d,]+ best \([123] rounds\)|no rounds)",
        rows[4],
    )


def test_the_machine_state_benchmark_times_another_build():
    # --build loads a wheel or a _native library as ab_builds.py does: here the installed one,
    # from its file, which must then report its own build.
    native = pytest.importorskip("acpwire._native")
    done = _bench_script("machine_state.py", "1", "0.1", "--build", native.__file__)
    assert done.returncode == 0, done.stderr.decode()
    first = done.stdout.decode().splitlines()[0]
    assert first == f"0.1 MB of PTY output, 1 rounds, build: {native._build}"
    refused = _bench_script("machine_state.py", "0")
    assert refused.returncode == 2
    assert b"ROUNDS must be at least 1" in refused.stderr


def test_the_terminal_costs_benchmark_times_the_corpus_and_its_variants():
    # benches/scripts/terminal_costs.py; a tiny run, for its shape and its variants' sizes.
    pytest.importorskip("acpwire._native")
    done = _bench_script("terminal_costs.py", "1", "0.2")
    assert done.returncode == 0, done.stderr.decode()
    rows = done.stdout.decode().splitlines()
    assert rows[0].startswith("stream ")
    sizes = {}
    for row in rows[1:]:
        found = re.fullmatch(r"(.+?) +(\d+\.\d\d) +(\d+\.\d\d)  (\d\.\d{3})", row)
        assert found, row
        sizes[found[1]] = float(found[2])
    assert list(sizes) == ["corpus", "without SGRs", "ASCII only"]
    # The corpus is coloured and holds characters of two to four bytes: both variants shrink it.
    assert sizes["corpus"] == 0.2
    assert sizes["without SGRs"] < sizes["corpus"]
    assert sizes["ASCII only"] < sizes["corpus"]
    assert rows[1].endswith("  1.000")
    refused = _bench_script("terminal_costs.py", "1", "0")
    assert refused.returncode == 2
    assert b"SLICE_MB must be positive" in refused.stderr


def test_the_performance_table_script_writes_ratios_between_its_markers():
    # It rewrites README.md and docs/performance.md; --print-only leaves them alone, so this
    # checks what it prints and that the files' markers are there for it to find.
    pytest.importorskip("acpwire._native")
    pytest.importorskip("pyte")
    done = _bench_script("performance_table.py", "--rounds", "1", "--scale", "0.02", "--print-only")
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    rows = [line for line in out.splitlines() if line.startswith("| ") and "×" in line]
    assert any(row.startswith("| `loads` | `orjson.loads` |") for row in rows)
    assert any("token stream: acpwire native" in row for row in rows)
    assert not any("MB/s" in line for line in out.splitlines())
    root = Path(__file__).resolve().parents[2]
    for doc in ("README.md", "docs/performance.md"):
        text = (root / doc).read_text(encoding="utf-8")
        assert text.count("<!-- performance-table: start") == 1, doc
        assert text.count("<!-- performance-table: end -->") == 1, doc
