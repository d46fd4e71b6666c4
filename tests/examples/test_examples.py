"""The examples run against ``acpwire fake-agent``, on each backend, and show what a replay of
the same messages holds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

import acpwire

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAKE_AGENT = [sys.executable, "-m", "acpwire", "fake-agent"]
HEADER = re.compile(r"--- (term_\S+) cargo test: (running|exit \S+)")


def run_example(backend: ModuleType, name: str, *args: str) -> str:
    env = {**os.environ, "ACPWIRE_BACKEND": backend.__name__.rpartition("_")[2]}
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def messages(trace: Path) -> list[dict]:
    return [json.loads(line) for line in trace.read_bytes().splitlines() if line.strip()]


def test_live_client_shows_the_turn_as_a_replay_holds_it(backend, tmp_path):
    trace = tmp_path / "live.ndjson"
    agent = [*FAKE_AGENT, "--permission", "--tokens", "40", "--rate", "0"]
    out = run_example(backend, "live_client.py", "--save", str(trace), "--", *agent)
    lines = out.splitlines()
    assert lines[-1] == "[turn] end_turn"
    store = acpwire.replay(trace)
    (session_id,) = store.ids()
    snapshot = store[session_id].snapshot()
    agent_ids = [m["id"] for m in snapshot["messages"] if m["role"] == "agent"]
    shown = "".join(line.removeprefix("[agent] ") for line in lines if line.startswith("[agent] "))
    assert shown == "".join(store[session_id].message_text(i) or "" for i in agent_ids) != ""
    # Every tool call is drawn reaching its last status; the edit needed the permission granted.
    last = {}
    for line in lines:
        if line.startswith("[tool] "):
            title, _, status = line.removeprefix("[tool] ").rpartition(": ")
            last[title] = status
    assert last == {c["title"]: c["status"] for c in snapshot["toolCalls"].values()}
    assert set(last.values()) == {"completed"} and len(last) == 3
    granted = [m for m in messages(trace) if "result" in m and "outcome" in m["result"]]
    assert [g["result"]["outcome"]["outcome"] for g in granted] == ["selected"]


def synthetic_trace(sessions: dict[str, list[str]]) -> list[dict]:
    """A v1 trace: per session, one prompt per tool call, each call ending in the given status."""
    out: list[dict] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}},
    ]
    next_id = 1
    for session_id, statuses in sessions.items():
        for n, status in enumerate(statuses):
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": f"go {n}"}]}
            out.append(
                {"jsonrpc": "2.0", "id": next_id, "method": "session/prompt", "params": prompt}
            )
            for update in (
                {"sessionUpdate": "tool_call", "toolCallId": f"c{n}", "title": "t", "kind": "read"},
                {"sessionUpdate": "tool_call_update", "toolCallId": f"c{n}", "status": status},
            ):
                params = {"sessionId": session_id, "update": update}
                out.append({"jsonrpc": "2.0", "method": "session/update", "params": params})
            out.append({"jsonrpc": "2.0", "id": next_id, "result": {"stopReason": "end_turn"}})
            next_id += 1
    return out


def test_traces_table_has_a_row_per_session_of_every_trace(backend, tmp_path):
    first = {"sess_a": ["completed", "failed", "completed"], "sess_b": ["completed"]}
    second = {"sess_c": ["failed", "failed"]}
    (tmp_path / "first.ndjson").write_text(
        "".join(json.dumps(m) + "\n" for m in synthetic_trace(first))
    )
    # The second as `acpwire record` writes a trace, in a subdirectory.
    (tmp_path / "recorded").mkdir()
    recorded = [
        {"t": i / 10, "dir": "client" if "method" in m and "id" in m else "agent", "msg": m}
        for i, m in enumerate(synthetic_trace(second))
    ]
    (tmp_path / "recorded" / "second.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in recorded)
    )
    (tmp_path / "notes.txt").write_text("not a trace")
    rows = json.loads(run_example(backend, "traces_table.py", str(tmp_path), "--json"))

    expected = [("first.ndjson", s, v) for s, v in first.items()]
    expected += [("recorded/second.jsonl", s, v) for s, v in second.items()]
    assert [(row["trace"], row["session"]) for row in rows] == [(t, s) for t, s, _ in expected]
    for row, (_, _, statuses) in zip(rows, expected, strict=True):
        assert row["turns"] == len(statuses)
        assert row["tool calls"] == Counter(statuses)
        assert row["messages"] == {}  # a v1 prompt is no message; chunks make them
        assert (row["state"], row["stop"], row["errors"]) == ("idle", "end_turn", 0)
    text = run_example(backend, "traces_table.py", str(tmp_path)).splitlines()
    assert text[0].split() == [
        "trace",
        "session",
        "state",
        "stop",
        "turns",
        "messages",
        "tool",
        "calls",
        "terminal",
        "bytes",
        "errors",
    ]
    assert text[1].split()[:5] == ["first.ndjson", "sess_a", "idle", "end_turn", "3"]
    assert "completed:2 failed:1" in text[1] and len(text) == 4


def test_terminal_view_ends_on_the_terminal_a_replay_renders(backend, tmp_path):
    trace = tmp_path / "term.ndjson"
    agent = [*FAKE_AGENT, "--tool-calls", "3", "--terminal-bytes", "6000", "--rate", "0"]
    args = ["--rows", "6", "--cols", "60", "--save", str(trace), "--", *agent]
    out = run_example(backend, "terminal_view.py", *args).split("\n")
    # Each draw is a header line, then the terminal's last rows.
    headers = [i for i, line in enumerate(out) if HEADER.fullmatch(line)]
    assert headers and headers[0] == 0
    terminal_ids = {HEADER.fullmatch(out[i]).group(1) for i in headers}
    assert len(terminal_ids) == 1, terminal_ids
    (terminal_id,) = terminal_ids
    assert HEADER.fullmatch(out[headers[-1]]).group(2) == "exit 0"
    shown = out[headers[-1] + 1 : -1]
    store = acpwire.replay(trace, terminal_cols=60)
    (session_id,) = store.ids()
    terminal = store[session_id].terminal(terminal_id)
    assert terminal is not None and terminal.text
    assert shown == terminal.text.split("\n")[-6:]


@pytest.mark.parametrize("name", ["live_client.py", "traces_table.py", "terminal_view.py"])
def test_examples_explain_themselves(name):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and "usage:" in result.stdout
