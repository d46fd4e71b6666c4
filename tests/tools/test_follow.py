"""replay --follow as a person sees it: appending only what changed to a file or pipe, waiting
for a trace that does not exist yet, and redrawing in place on a terminal (under tmux)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

import acpwire

SAMPLE = Path(str(resources.files("acpwire") / "data" / "sample-v2.ndjson"))
ROOT = Path(__file__).resolve().parents[2]
# The package the test run imports (installed, or the checkout\'s with PYTHONPATH=python),
# which the commands run here must import too.
PACKAGE_ROOT = Path(acpwire.__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


@pytest.mark.parametrize("fmt", ["text", "markdown", "ansi"])
def test_following_to_a_file_appends_only_what_changed(tmp_path, monkeypatch, fmt):
    from acpwire.cli import replay as commands

    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    trace = tmp_path / "live.ndjson"
    trace.write_bytes(lines[0])
    pending = iter(lines[1:])

    def next_line(seconds: float) -> None:
        # Each poll sees one more line of the session, as an agent writes it.
        line = next(pending, None)
        if line is None:
            raise KeyboardInterrupt
        with trace.open("ab") as fp:
            fp.write(line)

    monkeypatch.setattr(commands.time, "sleep", next_line)
    out = tmp_path / f"out.{fmt}"
    status = commands.replay_command(
        str(trace),
        fmt=fmt,
        session=None,
        out=str(out),
        thoughts=True,
        follow=True,
        terminal_cols=None,
        color="always",
    )
    assert status == 0
    written = out.read_text()
    if fmt == "ansi":
        written = re.sub("\x1b\\[[0-9;]*m|\x1b\\]8;[^\x1b]*\x1b\\\\", "", written)
    final = commands._View(fmt, None, True, fmt == "ansi", None).document(
        __import__("acpwire").replay(SAMPLE)
    )
    # Everything is there, in order; what grew is not written again each time: the output
    # is linear in the trace (a full rendering per update would be some 60 times as long).
    for piece in ("Session sess_7f3c9a1e2b4d", "index-out-of-bounds", "8 tests run"):
        assert piece in written, piece
    assert len(written) < 3 * len(final), (len(written), len(final))


def test_following_a_trace_that_does_not_exist_yet_waits_for_it(tmp_path):
    trace = tmp_path / "later.ndjson"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acpwire", "replay", str(trace), "--format", "text", "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    try:
        time.sleep(1.5)
        assert proc.poll() is None  # still waiting, not exit 2
        trace.write_bytes(SAMPLE.read_bytes())
        seen = b""
        os.set_blocking(proc.stdout.fileno(), False)
        deadline = time.time() + 30
        while time.time() < deadline and b"8 tests run" not in seen:
            seen += proc.stdout.read() or b""
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert b"8 tests run" in seen
    assert f"waiting for {trace}".encode() in proc.stderr.read()


def _tmux(*args: str) -> str:
    return subprocess.run(
        ["tmux", "-L", "acpwire-test", *args], capture_output=True, check=True, text=True
    ).stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_following_on_a_terminal_redraws_in_place_under_tmux(tmp_path):
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    trace = tmp_path / "live.ndjson"
    trace.write_bytes(b"".join(lines[:10]))
    command = (
        f"cd {ROOT} && PYTHONPATH={PACKAGE_ROOT} {sys.executable} -m acpwire replay "
        f"{trace} --follow --format ansi; sleep 30"
    )
    _tmux("-f", "/dev/null", "new-session", "-d", "-s", "follow", "-x", "100", "-y", "30", command)
    try:
        screen = ""
        deadline = time.time() + 30
        while time.time() < deadline and "User:" not in screen:
            time.sleep(0.3)
            screen = _tmux("capture-pane", "-p", "-t", "follow")
        assert "Session sess_7f3c9a1e2b4d" in screen and "User:" in screen
        # Lines appended one by one: each change redraws the screen, none scrolls it.
        for line in lines[10:]:
            with trace.open("ab") as fp:
                fp.write(line)
            time.sleep(0.05)
        deadline = time.time() + 30
        while time.time() < deadline and "8 tests pass" not in screen:
            time.sleep(0.3)
            screen = _tmux("capture-pane", "-p", "-t", "follow")
        assert "8 tests pass" in screen  # the end of the rendering is what is on screen
        assert _tmux("display-message", "-p", "-t", "follow", "#{history_size}").strip() == "0"
        assert _tmux("display-message", "-p", "-t", "follow", "#{alternate_on}").strip() == "1"
        _tmux("send-keys", "-t", "follow", "C-c")
        deadline = time.time() + 30
        history = ""
        while time.time() < deadline and "Session sess_7f3c9a1e2b4d" not in history:
            time.sleep(0.3)
            history = _tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", "follow")
        # Stopped, the last rendering is left once in the scrollback, not one per redraw.
        assert history.count("Session sess_7f3c9a1e2b4d") == 1
        assert history.count("8 tests pass") == 1
    finally:
        subprocess.run(["tmux", "-L", "acpwire-test", "kill-server"], check=False)


def test_following_json_to_a_pipe_writes_a_line_per_change_of_the_sessions_that_changed(
    tmp_path, monkeypatch, capfd
):
    import json

    from acpwire.cli import replay as commands

    def update(sid: str, text: str) -> bytes:
        body = {"sessionUpdate": "agent_message_chunk", "messageId": "m",
                "content": {"type": "text", "text": text}}  # fmt: skip
        message = {"jsonrpc": "2.0", "method": "session/update",
                   "params": {"sessionId": sid, "update": body}}  # fmt: skip
        return json.dumps(message).encode() + b"\n"

    trace = tmp_path / "live.ndjson"
    trace.write_bytes(update("a", "one") + update("b", "two"))
    pending = iter([update("b", " more"), update("a", " again") + update("b", "!")])

    def next_lines(seconds: float) -> None:
        lines = next(pending, None)
        if lines is None:
            raise KeyboardInterrupt
        with trace.open("ab") as fp:
            fp.write(lines)

    monkeypatch.setattr(commands.time, "sleep", next_lines)
    status = commands.replay_command(
        str(trace), fmt="json", session=None, out=None, thoughts=True, follow=True,
        terminal_cols=None,
    )  # fmt: skip
    assert status == 0
    lines = [json.loads(line) for line in capfd.readouterr().out.splitlines()]
    assert [sorted(line) for line in lines] == [["a", "b"], ["b"], ["a", "b"]]
    content = lines[1]["b"]["messages"][0]["content"]
    assert "".join(block["text"] for block in content) == "two more"
