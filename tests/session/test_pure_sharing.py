"""A pure session's rare parts (terminals, plans, compactions, subagents, updateExtras,
permissions, other updates) start as shared empty containers and are made on first write: no
write may reach the shared ones, and one session's parts never show in another's."""

from __future__ import annotations

import json
from pathlib import Path

from acpwire._pure.session import model

CASES = Path(__file__).resolve().parent.parent / "cases" / "session"
RARE = ("plans", "compactions", "subagents", "updateExtras", "permissions", "other", "terminals")


def _update(sid: str, update: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": sid, "update": update},
    }


def _every_rare_part(sid: str) -> list[dict]:
    return [
        _update(
            sid,
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "c", "priority": "low", "status": "pending"}],
            },
        ),
        _update(
            sid, {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed"}
        ),
        _update(sid, {"sessionUpdate": "subagent_update", "subagentSessionId": "sub", "name": "n"}),
        _update(sid, {"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"}),
        _update(
            sid, {"sessionUpdate": "current_mode_update", "currentModeId": "m", "_meta": {"x": 1}}
        ),
        _update(sid, {"sessionUpdate": "no_such_update", "x": 1}),
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "session/request_permission",
            "params": {"sessionId": sid, "toolCall": {"toolCallId": "c"}, "options": []},
        },
    ]


def _ndjson(frames: list) -> bytes:
    return b"".join(
        (f if isinstance(f, str) else json.dumps(f, separators=(",", ":"))).encode() + b"\n"
        for f in frames
    )


def _assert_shared_untouched() -> None:
    assert model._NO_ENTRIES == {} and type(model._NO_ENTRIES) is dict
    assert model._NO_ITEMS == [] and type(model._NO_ITEMS) is list


def test_one_sessions_rare_parts_stay_its_own(backend) -> None:
    store = backend.Sessions()
    store.feed(
        _ndjson([*_every_rare_part("a"), _update("b", {"sessionUpdate": "session_info_update"})])
    )
    full, empty = store["a"].snapshot(), store["b"].snapshot()
    for key in RARE:
        assert full[key], key
        assert not empty[key], key
    if backend.__name__.endswith("_pure"):
        _assert_shared_untouched()


def test_no_shared_case_writes_the_shared_containers() -> None:
    from acpwire import _pure

    fed = 0
    for path in sorted(CASES.glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            store = _pure.Sessions()
            for step in case["steps"]:
                frames = step.get("frames", [])
                store.feed(_ndjson(frames))
                fed += len(frames)
            store.finish()
    assert fed > 100
    _assert_shared_untouched()
