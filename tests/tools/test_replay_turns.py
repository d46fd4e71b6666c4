"""replay of a real-shaped v1 session through the reducer: turns in order with the user's
prompt and how each ended, messages placed around tool calls as they came, and the client's
terminal with its output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import acpwire

# The package the test run imports (the worktree's, with PYTHONPATH=python).
PACKAGE_ROOT = Path(acpwire.__file__).resolve().parents[1]
SID = "sess_v1"


def _update(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SID, "update": body},
    }


def _chunk(text: str) -> dict[str, Any]:
    # v1 agents in use send chunks without a messageId.
    return _update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    )


def _prompt(rid: int, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "session/prompt",
        "params": {"sessionId": SID, "prompt": [{"type": "text", "text": text}]},
    }


def v1_trace() -> list[tuple[str, dict[str, Any]]]:
    """(sender, message) of three v1 turns: one that ran a command in a client terminal and
    ended, one cancelled, one answered with an error."""
    return [
        (
            "client",
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        ),
        ("agent", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        (
            "client",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": "/w", "mcpServers": []},
            },
        ),
        ("agent", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SID}}),
        ("client", _prompt(2, "list the files")),
        ("agent", _chunk("I will make a plan.")),
        (
            "agent",
            _update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "call_1",
                    "title": "ls -la",
                    "kind": "execute",
                    "status": "in_progress",
                }
            ),
        ),
        (
            "agent",
            {
                "jsonrpc": "2.0",
                "id": 10,
                "method": "terminal/create",
                "params": {"sessionId": SID, "command": "ls", "args": ["-la"], "cwd": "/w"},
            },
        ),
        ("client", {"jsonrpc": "2.0", "id": 10, "result": {"terminalId": "term_1"}}),
        (
            "agent",
            _update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "call_1",
                    "content": [{"type": "terminal", "terminalId": "term_1"}],
                }
            ),
        ),
        (
            "agent",
            {
                "jsonrpc": "2.0",
                "id": 11,
                "method": "terminal/wait_for_exit",
                "params": {"sessionId": SID, "terminalId": "term_1"},
            },
        ),
        ("client", {"jsonrpc": "2.0", "id": 11, "result": {"exitCode": 0}}),
        (
            "agent",
            {
                "jsonrpc": "2.0",
                "id": 12,
                "method": "terminal/output",
                "params": {"sessionId": SID, "terminalId": "term_1"},
            },
        ),
        (
            "client",
            {
                "jsonrpc": "2.0",
                "id": 12,
                "result": {
                    "output": "total 0\r\n\x1b[34mfile.txt\x1b[0m\r\n",
                    "truncated": False,
                    "exitStatus": {"exitCode": 0},
                },
            },
        ),
        (
            "agent",
            _update(
                {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed"}
            ),
        ),
        ("agent", _chunk("All done.")),
        ("agent", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
        ("client", _prompt(3, "now something long")),
        ("agent", _chunk("Starting")),
        ("client", {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}),
        ("agent", {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}),
        ("client", _prompt(4, "try again")),
        (
            "agent",
            {"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "model overloaded"}},
        ),
    ]


def _write(path: Path, recorded: bool) -> Path:
    lines = []
    for i, (sender, message) in enumerate(v1_trace()):
        value = {"t": i / 10, "dir": sender, "msg": message} if recorded else message
        lines.append(json.dumps(value))
    path.write_text("\n".join(lines) + "\n")
    return path


def _replay(trace: Path, fmt: str) -> str:
    path = os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "acpwire", "replay", str(trace), "--format", fmt],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def _in_order(text: str, *pieces: str) -> None:
    positions = [text.find(piece) for piece in pieces]
    assert -1 not in positions, [p for p, at in zip(pieces, positions, strict=True) if at < 0]
    assert positions == sorted(positions), text


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_v1_session_replays_as_turns(tmp_path, recorded, fmt):
    out = _replay(_write(tmp_path / "v1.ndjson", recorded), fmt)
    _in_order(
        out,
        "Turn 1",
        "list the files",
        "I will make a plan.",
        "ls -la",
        "total 0",
        "file.txt",
        "All done.",
        "end_turn",
        "Turn 2",
        "now something long",
        "Starting",
        "cancelled",
        "Turn 3",
        "try again",
        "failed",
        "model overloaded",
    )
    # The client terminal is shown once, inside its tool call, with its exit status.
    assert out.count("total 0") == 1 and "exit 0" in out and "client terminal" in out


def test_a_v1_session_page_has_every_turn_and_the_recorded_times(tmp_path):
    page = _replay(_write(tmp_path / "v1.ndjson", True), "html")
    for number in (1, 2, 3):
        assert f"Turn {number}" in page
    assert '<time class="t">0.400 s</time>' in page  # the first prompt's record
    assert "<script" not in page
