"""Session behaviour cases kept as data under ``tests/cases/session/`` and run by both
languages: here on each backend, and by ``cargo test`` (``src/session/cases.rs``). Each case
is run twice, its frames fed as NDJSON and applied one by one; ``tests/cases/session/README.md``
describes the format. A malformed case file fails the collection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CASES = Path(__file__).resolve().parent.parent / "cases" / "session"

CASE_KEYS = {"name", "about", "config", "version", "session", "via", "steps"}
STEP_KEYS = {
    "about",
    "frames",
    "unterminated",
    "finish",
    "session",
    "snapshot",
    "snapshots",
    "absent",
    "texts",
    "message_count",
    "state",
    "stop_reason",
    "terminals",
    "no_terminals",
    "errors",
    "session_errors",
    "changes",
    "take_changes",
    "same_as",
    "protocol_version",
    "ids",
    "evicted_sessions",
}
CONFIG_KEYS = {
    "max_frame_bytes",
    "terminal_cols",
    "scrollback",
    "max_terminal_bytes",
    "max_bytes",
    "max_payload_bytes",
    "max_message_bytes",
}
ERROR_KEYS = {"reason", "line", "offset", "sessionId"}
MODES = ("feed", "apply")


class MalformedCase(ValueError):
    pass


def _check(condition: bool, where: str, what: str) -> None:
    if not condition:
        raise MalformedCase(f"{where}: {what}")


def _check_frames(frames: Any, where: str) -> None:
    _check(isinstance(frames, list), where, "frames must be a list")
    for frame in frames:
        _check(
            isinstance(frame, (str, dict, list)), where, f"a frame must be a message, not {frame!r}"
        )


def _validate(case: Any, where: str) -> None:
    _check(isinstance(case, dict), where, "a case must be an object")
    _check(isinstance(case.get("name"), str) and case["name"], where, "a case needs a name")
    where = f"{where} {case['name']}"
    _check(not set(case) - CASE_KEYS, where, f"unknown keys {sorted(set(case) - CASE_KEYS)}")
    config = case.get("config", {})
    _check(isinstance(config, dict) and not set(config) - CONFIG_KEYS, where, "bad config")
    for value in config.values():
        _check(value is None or type(value) is int, where, "a config value is an int or null")
    _check(case.get("version") in (None, 1, 2), where, "version must be 1 or 2")
    via = case.get("via", list(MODES))
    _check(isinstance(via, list) and via and set(via) <= set(MODES), where, "bad via")
    steps = case.get("steps")
    _check(isinstance(steps, list) and steps, where, "steps must be a non-empty list")
    for i, step in enumerate(steps):
        at = f"{where} step {i}"
        _check(isinstance(step, dict), at, "a step must be an object")
        _check(not set(step) - STEP_KEYS, at, f"unknown keys {sorted(set(step) - STEP_KEYS)}")
        _check_frames(step.get("frames", []), at)
        for key in ("ids",):
            ids = step.get(key, [])
            _check(isinstance(ids, list) and all(isinstance(i, str) for i in ids), at, "bad ids")
        count = step.get("evicted_sessions", 0)
        _check(isinstance(count, int) and not isinstance(count, bool), at, "bad evicted_sessions")
        for record in [*step.get("errors", []), *step.get("session_errors", [])]:
            _check(isinstance(record, dict) and "reason" in record, at, "an error needs a reason")
            _check(not set(record) - ERROR_KEYS, at, f"bad error record {record!r}")
        for change in step.get("changes", []):
            _check(isinstance(change, list) and len(change) == 3, at, "a change is [sid, kind, id]")
        if "same_as" in step:
            reference = step["same_as"]
            _check(isinstance(reference, dict), at, "same_as must be an object")
            _check(not set(reference) - {"version", "frames"}, at, "bad same_as")
            _check_frames(reference.get("frames", []), at)


def load_cases() -> list:
    files = sorted(CASES.glob("*.json"))
    if not files:
        raise MalformedCase(f"no case files in {CASES}")
    params, names = [], set()
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        _check(
            isinstance(data, dict) and isinstance(data.get("cases"), list), path.name, "no cases"
        )
        _check(not set(data) - {"about", "cases"}, path.name, "unknown top-level keys")
        for case in data["cases"]:
            _validate(case, path.name)
            case_id = f"{path.stem}:{case['name']}"
            _check(case_id not in names, path.name, f"{case['name']} twice")
            names.add(case_id)
            for mode in case.get("via", MODES):
                params.append(pytest.param(case, mode, id=f"{case_id}:{mode}"))
    return params


def _init(version: int) -> list[dict]:
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version}},
    ]


def _line(frame: str | dict | list) -> bytes:
    """A frame's line: as written when it is text, else the message as compact JSON text."""
    if isinstance(frame, str):
        return frame.encode()
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode()


def _reduce(backend, store, frames: list[str], mode: str, unterminated: bool = False) -> None:
    if mode == "feed":
        for i, frame in enumerate(frames):
            last = unterminated and i == len(frames) - 1
            store.feed(_line(frame) + (b"" if last else b"\n"))
    else:
        for frame in frames:
            store.apply(backend.loads(_line(frame)))


def _store(backend, case: dict, version: int | None, mode: str):
    store = backend.Sessions(**case.get("config", {}))
    if version is not None:
        _reduce(backend, store, _init(version), mode)
    return store


def _at(value: Any, path: str) -> Any:
    for key in path.split("/") if path else []:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def _has(value: Any, path: str) -> bool:
    try:
        _at(value, path)
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    return True


def _match_errors(records: list[dict], expected: list[dict], mode: str) -> None:
    """``records`` are ``expected``, compared on the keys each expected record names; applied
    messages have no stream position."""
    expected = [
        {
            key: (None if mode == "apply" and key in ("line", "offset") else value)
            for key, value in record.items()
        }
        for record in expected
    ]
    assert len(records) == len(expected), records
    assert [{key: r[key] for key in want} for r, want in zip(records, expected, strict=True)] == (
        expected
    )


def _run_step(backend, case: dict, store, step: dict, mode: str) -> None:
    _reduce(backend, store, step.get("frames", []), mode, step.get("unterminated", False))
    if step.get("finish"):
        store.finish()
    sid = step.get("session", case.get("session", "s1"))
    snapshots = dict(step.get("snapshots", {}))
    if "snapshot" in step:
        snapshots[sid] = step["snapshot"]
    for session_id, parts in snapshots.items():
        snapshot = store[session_id].snapshot()
        for path, expected in parts.items():
            assert _at(snapshot, path) == expected, (session_id, path)
    if "absent" in step:
        snapshot = store[sid].snapshot()
        for path in step["absent"]:
            assert not _has(snapshot, path), path
    session = store[sid] if sid in store.ids() else None
    for message_id, role, expected in step.get("texts", []):
        assert session.message_text(message_id, role) == expected, (message_id, role)
    if "message_count" in step:
        assert len(session.snapshot()["messages"]) == step["message_count"]
    if "state" in step:
        assert session.state == step["state"]
    if "stop_reason" in step:
        assert session.stop_reason == step["stop_reason"]
    for terminal_id, expected in step.get("terminals", {}).items():
        terminal = session.terminal(terminal_id)
        assert terminal is not None, terminal_id
        if "text" in expected:
            assert terminal.text == expected["text"], terminal_id
        if "truncated" in expected:
            assert terminal.truncated == expected["truncated"], terminal_id
    for terminal_id in step.get("no_terminals", []):
        assert session.terminal(terminal_id) is None, terminal_id
    if "protocol_version" in step:
        assert store.protocol_version == step["protocol_version"]
    if "ids" in step:
        assert store.ids() == step["ids"]
    if "evicted_sessions" in step:
        assert store.evicted_sessions == step["evicted_sessions"]
    if "session_errors" in step:
        _match_errors(store[sid].snapshot()["errors"], step["session_errors"], mode)
    if "errors" in step:
        _match_errors(store.take_errors(), step["errors"], mode)
    if "changes" in step:
        assert store.changes() == [tuple(change) for change in step["changes"]]
    elif step.get("take_changes"):
        store.changes()
    if "same_as" in step:
        reference = step["same_as"]
        other = _store(backend, case, reference.get("version"), mode)
        _reduce(backend, other, reference.get("frames", []), mode)
        assert other.take_errors() == []
        want = other[sid].snapshot()
        got = store[sid].snapshot()
        del want["errors"], got["errors"]
        assert got == want


@pytest.mark.parametrize(("case", "mode"), load_cases())
def test_session_case(backend, case, mode):
    store = _store(backend, case, case.get("version"), mode)
    for step in case["steps"]:
        _run_step(backend, case, store, step, mode)
