"""A pure session's rare parts (terminals, plans, compactions, subagents, updateExtras,
permissions, other updates), and a pure message's fields, start as shared empty containers and
are made on first write: no write may reach the shared ones, and one session's or message's
parts never show in another's."""

from __future__ import annotations

from test_session_cases import _init, _line, load_cases

from acpwire import _pure
from acpwire._pure.session import model
from session_builders import SID, ndjson, upd

RARE = ("plans", "compactions", "subagents", "updateExtras", "permissions", "other", "terminals")


def _every_rare_part(sid: str) -> list[dict]:
    return [
        upd(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "c", "priority": "low", "status": "pending"}],
            },
            sid,
        ),
        upd(
            {"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed"}, sid
        ),
        upd({"sessionUpdate": "subagent_update", "subagentSessionId": "sub", "name": "n"}, sid),
        upd({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"}, sid),
        upd({"sessionUpdate": "current_mode_update", "currentModeId": "m", "_meta": {"x": 1}}, sid),
        upd({"sessionUpdate": "no_such_update", "x": 1}, sid),
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "session/request_permission",
            "params": {"sessionId": sid, "toolCall": {"toolCallId": "c"}, "options": []},
        },
    ]


def _assert_shared_untouched() -> None:
    assert model._NO_ENTRIES == {} and type(model._NO_ENTRIES) is dict
    assert model._NO_ITEMS == [] and type(model._NO_ITEMS) is list
    assert model._NO_FIELDS == {} and type(model._NO_FIELDS) is dict


def test_one_sessions_rare_parts_stay_its_own(backend) -> None:
    store = backend.Sessions()
    store.feed(ndjson([*_every_rare_part("a"), upd({"sessionUpdate": "session_info_update"}, "b")]))
    full, empty = store["a"].snapshot(), store["b"].snapshot()
    for key in RARE:
        assert full[key], key
        assert not empty[key], key
    if backend.__name__.endswith("_pure"):
        _assert_shared_untouched()


def test_one_messages_fields_stay_its_own(backend) -> None:
    store = backend.Sessions()
    store.feed(
        ndjson(
            [
                *_init(2),
                upd(
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": "plain",
                        "content": {"type": "text", "text": "a"},
                    }
                ),
                upd(
                    {
                        "sessionUpdate": "agent_message",
                        "messageId": "rich",
                        "_meta": {"k": 1},
                        "content": [{"type": "text", "text": "b"}],
                    }
                ),
                upd(
                    {
                        "sessionUpdate": "session_message_chunk",
                        "messageId": "sent",
                        "senderSessionId": "s2",
                        "content": {"type": "text", "text": "c"},
                    }
                ),
                upd(
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": "later",
                        "content": {"type": "text", "text": "d"},
                    }
                ),
            ]
        )
    )
    store.feed(
        ndjson(
            [
                upd(
                    {
                        "sessionUpdate": "session_message",
                        "messageId": "whole",
                        "recipientSessionId": "s3",
                        "content": [],
                    }
                )
            ]
        )
    )
    by_id = {m["id"]: m for m in store[SID].snapshot()["messages"]}
    assert by_id["whole"]["recipientSessionId"] == "s3"
    assert by_id["rich"]["_meta"] == {"k": 1}
    assert by_id["sent"]["senderSessionId"] == "s2"
    assert set(by_id["plain"]) == set(by_id["later"]) == {"id", "role", "content"}
    if backend.__name__.endswith("_pure"):
        _assert_shared_untouched()


def test_no_shared_case_writes_the_shared_containers() -> None:
    # Each case once (load_cases gives one parameter per mode), with its config and version.
    cases = {id(param.values[0]): param.values[0] for param in load_cases()}.values()
    fed = 0
    for case in cases:
        store = _pure.Sessions(**case.get("config", {}))
        frames = _init(case["version"]) if case.get("version") else []
        for step in case["steps"]:
            frames = frames + step.get("frames", [])
        store.feed(b"".join(_line(frame) + b"\n" for frame in frames))
        store.finish()
        fed += len(frames)
    assert fed > 100
    _assert_shared_untouched()
