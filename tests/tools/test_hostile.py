"""check, stats and replay on hostile traces: generated from a real session with control
characters in every string, a wrong type in every field, deep nesting and raw records, plain
and recorded. Every command and format exits 0, 1 or 2, raises nothing, and writes no control
character but newline, tab and the ANSI styling the tool itself writes."""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import acpwire

SAMPLE = Path(str(resources.files("acpwire") / "data" / "sample-v2.ndjson"))
DRIVER = Path(__file__).with_name("hostile_driver.py")
ROOT = Path(__file__).resolve().parents[2]
# The package the test run imports (installed, or the checkout\'s with PYTHONPATH=python),
# which the commands run here must import too.
PACKAGE_ROOT = Path(acpwire.__file__).resolve().parents[1]

HOSTILE = "c\x1b1\x1b]52;c;ZXZpbA==\x07\x1b]0;title\x07\x1b[2J\x9b2J\x85\r\x00\x7f"
WRONG = [[1], {"a": 1}, None, 1, 1.5, True, HOSTILE, [], {}]
# The styling `replay --format ansi` writes: SGR, and OSC 8 links to safe addresses.
OWN_STYLING = re.compile(rb"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b\x07]*\x1b\\")
C0_OR_C1 = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value = copy.deepcopy(value)
    target = value
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return value


def _hostile_strings(value: Any) -> Any:
    if isinstance(value, str):
        return value + HOSTILE
    if isinstance(value, dict):
        return {k: _hostile_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hostile_strings(v) for v in value]
    return value


def _nested(depth: int) -> dict[str, Any]:
    """A message ``depth`` levels deep (the message object is the first)."""
    inner: Any = 1
    for _ in range(depth - 2):
        inner = [inner]
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"deep": inner}}


def v1_session(sid: str = "s\x1b]0;x\x07") -> list[dict[str, Any]]:
    """A v1 session as agents in use send it, made hostile: a tool call id, a terminal id and
    a plan holding control characters, a resource given as a string, a client terminal."""

    def update(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": sid, "update": body},
        }

    tool = "c\x1b1"
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}},
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": sid}},
        {
            "jsonrpc": "2.0",
            "id": [1],
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go\x1b[2J"}]},
        },
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "<b>x</b> [a](javascript:alert(1))"},
            }
        ),
        update(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "p\x1b[2J", "status": "pending", "priority": "high"}],
            }
        ),
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": tool,
                "status": "pending",
                "kind": "execute",
                "content": [
                    {"type": "content", "content": {"type": "resource", "resource": "oops"}},
                    {"type": "content", "content": {"type": "resource", "resource": [1]}},
                    {"type": "terminal", "terminalId": "t\x1b1"},
                    {"type": "diff", "path": "/a\x1b", "oldText": "x\n", "newText": "y\n"},
                ],
            }
        ),
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "terminal/create",
            "params": {"sessionId": sid, "command": "ls\x1b[2J", "args": ["-l", 1]},
        },
        {"jsonrpc": "2.0", "id": 7, "result": {"terminalId": "t\x1b1"}},
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "terminal/output",
            "params": {"sessionId": sid, "terminalId": "t\x1b1"},
        },
        {
            "jsonrpc": "2.0",
            "id": 8,
            "result": {
                "output": "\x1b[31mred\x1b[0m\x1b]52;c;eA==\x07",
                "truncated": False,
                "exitStatus": {"exitCode": 0},
            },
        },
        update({"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "completed"}),
        {"jsonrpc": "2.0", "id": {"a": 1}, "error": {"code": -1, "message": "\x1b[2J"}},
        {"jsonrpc": "2.0", "id": [1], "result": {"stopReason": "end_turn\x1b"}},
    ]


def _sender(message: dict[str, Any]) -> str:
    method = message.get("method")
    client_methods = ("initialize", "session/new", "session/prompt", "session/cancel")
    if isinstance(method, str):
        return "client" if method in client_methods else "agent"
    return "agent"


def _write(path: Path, messages: list[Any], recorded: bool, extra: list[bytes] = ()) -> Path:
    lines = []
    for i, message in enumerate(messages):
        if recorded:
            sender = _sender(message) if isinstance(message, dict) else "agent"
            message = {"t": i / 100, "dir": sender, "msg": message}
        lines.append(json.dumps(message).encode())
    path.write_bytes(b"\n".join([*lines, *extra]) + b"\n")
    return path


def hostile_traces(directory: Path) -> list[Path]:
    sample = [json.loads(line) for line in SAMPLE.read_bytes().splitlines()]
    paths = [_paths(message) for message in sample]
    traces = []
    for recorded in (False, True):
        mode = "rec" if recorded else "plain"
        traces.append(
            _write(directory / f"controls-{mode}.ndjson", _hostile_strings(sample), recorded)
        )
        traces.append(_write(directory / f"v1-{mode}.ndjson", v1_session(), recorded))
        deep = [*sample[:5], _nested(200), _nested(201), *sample[5:]]
        traces.append(
            _write(directory / f"deep-{mode}.ndjson", deep, recorded, [b"{broken", b"[]"])
        )
    # Every field of every message given a wrong type, one field per message per trace;
    # plain and recorded traces in turn.
    for k in range(max(len(p) for p in paths)):
        mutated = [
            _replace(message, p[k], WRONG[(i + k) % len(WRONG)]) if k < len(p) else message
            for i, (message, p) in enumerate(zip(sample, paths, strict=True))
        ]
        traces.append(_write(directory / f"wrong-{k}.ndjson", mutated, recorded=k % 2 == 1))
    # Records of every wrong shape: raw, raw of a wrong type, a reason the framing never
    # gives, a time and a sender of wrong types, a message that is no object.
    records = [
        {"t": 0, "dir": "client", "raw": "{oops\x1b[2J"},
        {"t": 0, "dir": "client", "raw": [1]},
        {"t": 0, "dir": "client", "raw": "x", "error": "\x1b]0;evil\x07"},
        {"t": "0", "dir": ["agent"], "msg": sample[0]},
        {"t": None, "dir": "agent\x1b", "msg": 5},
        {"t": 1, "dir": "agent", "msg": []},
        {"t": 1, "dir": "agent", "msg": [[], 1, "x"]},
    ]
    raw = directory / "records.ndjson"
    raw.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    traces.append(raw)
    return traces


def _backend_name(backend: Any) -> str:
    return "native" if backend.__name__.endswith("_native") else "pure"


def test_no_command_or_format_crashes_or_lets_a_control_character_through(tmp_path, backend):
    traces = hostile_traces(tmp_path)
    env = {
        **os.environ,
        "ACPWIRE_BACKEND": _backend_name(backend),
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(DRIVER), *map(str, traces)],
        capture_output=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    runs = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(runs) == len(traces) * 10
    problems = []
    for run in runs:
        where = " ".join(run["args"])
        if run["crash"] is not None:
            problems.append(f"{where}: raised\n{run['crash']}")
            continue
        if run["status"] not in (0, 1, 2):
            problems.append(f"{where}: exit status {run['status']}")
        for stream in ("stdout", "stderr"):
            data = base64.b64decode(run[stream])
            if b"Traceback" in data:
                problems.append(f"{where}: a traceback on {stream}")
            found = C0_OR_C1.search(OWN_STYLING.sub(b"", data))
            if found:
                context = data[max(0, found.start() - 40) : found.end() + 40]
                problems.append(f"{where}: {stream} holds {found.group()!r}: {context!r}")
    assert not problems, "\n".join(problems[:20])
    # The runs did read the traces: bad frames were found where there are some.
    statuses: dict[tuple[str, str], set[int]] = {}
    for r in runs:
        if "--session" not in r["args"]:
            statuses.setdefault((Path(r["args"][1]).name, r["args"][0]), set()).add(r["status"])
    for command in ("check", "stats", "replay"):
        # Every format agrees, and every command: the 201-deep frame, the broken line and
        # the empty batch (and the raw records) are bad frames.
        assert statuses[("deep-plain.ndjson", command)] == {1}
        assert statuses[("deep-rec.ndjson", command)] == {1}
        assert statuses[("records.ndjson", command)] == {1}
        assert statuses[("controls-plain.ndjson", command)] == {0}
    # --session of an id no trace holds: refused, the known ids shown escaped.
    refused = [r for r in runs if "--session" in r["args"]]
    assert all(r["status"] == 2 for r in refused)
