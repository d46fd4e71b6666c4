"""Unknown and malformed input: unknown variants and fields kept raw, malformed known
variants and messages recorded as errors."""

from __future__ import annotations

import pytest

from session_builders import (
    SID,
    rpc_request,
    snap,
    store_of,
    text,
    upd,
)


def test_unknown_variants_are_kept_raw(backend):
    weird = {"sessionUpdate": "_vendor_thing", "payload": {"deep": [1, None, 2.5]}}
    future = {"sessionUpdate": "hologram", "x": 1}
    store = store_of(
        backend,
        [
            upd(weird),
            upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("a")}),
            upd(future),
        ],
        version=2,
    )
    s = store[SID].snapshot()
    assert s["other"] == [weird, future]
    assert s["timeline"] == [
        {"type": "other", "id": "0"},
        {"type": "message", "id": "m", "role": "agent"},
        {"type": "other", "id": "1"},
    ]
    assert store.errors == []


def test_unknown_fields_on_known_variants_are_kept(backend):
    s = snap(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c",
                    "title": "t",
                    "x-future": {"a": 1},
                }
            ),
            upd(
                {
                    "sessionUpdate": "agent_message",
                    "messageId": "m",
                    "content": [text("a"), {"type": "_blob", "z": 1}],
                    "mood": "calm",
                }
            ),
            upd({"sessionUpdate": "terminal_update", "terminalId": "t", "pid": 42}),
            upd({"sessionUpdate": "session_info_update", "branch": "main"}),
        ],
        version=2,
    )
    assert s["toolCalls"]["c"]["x-future"] == {"a": 1}
    assert s["messages"][0]["mood"] == "calm" and s["messages"][0]["content"][1] == {
        "type": "_blob",
        "z": 1,
    }
    assert s["terminals"]["t"]["pid"] == 42 and s["info"] == {"branch": "main"}


def test_unknown_content_and_plan_types_stay_raw(backend):
    s = snap(
        backend,
        [
            upd({"sessionUpdate": "plan_update", "plan": {"type": "_x", "planId": "p"}}),
            upd(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": {"type": "_y"},
                }
            ),
            upd({"sessionUpdate": "usage_update", "used": 2**64 - 1, "size": 0}),
        ],
        2,
    )
    assert s["plans"] == {"p": {"type": "_x", "planId": "p"}} and s["errors"] == []
    assert s["messages"][0]["content"] == [{"type": "_y"}]


def test_fields_named_like_a_key_cannot_rename_an_entity(backend):
    # A message is keyed by (role, messageId) and a v1 plan is "main" of type "items": fields
    # of an update named `id`, `role`, `type` or `planId` are not kept over them.
    store = store_of(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "agent_message",
                    "messageId": "m1",
                    "content": [text("hi")],
                    "role": "user",
                    "id": "m2",
                    "mood": "calm",
                }
            ),
            upd({"sessionUpdate": "user_message", "messageId": "m2", "content": [text("u")]}),
        ],
        version=2,
    )
    s = store[SID].snapshot()
    assert s["messages"] == [
        {"id": "m1", "role": "agent", "content": [text("hi")], "mood": "calm"},
        {"id": "m2", "role": "user", "content": [text("u")]},
    ]
    assert [(e["id"], e.get("role")) for e in s["timeline"]] == [("m1", "agent"), ("m2", "user")]
    assert store[SID].message_text("m1") == "hi" and store.errors == []
    v1 = store_of(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "plan",
                    "entries": [],
                    "planId": "other",
                    "type": "markdown",
                    "note": "kept",
                }
            ),
        ],
        version=1,
    )
    assert v1[SID].snapshot()["plans"] == {
        "main": {"type": "items", "planId": "main", "entries": [], "note": "kept"}
    }


def test_params_named_like_an_entrys_own_keys_are_not_kept(backend):
    forged = {
        "requestId": "x",
        "response": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        "error": {"code": 1},
        "cancelRequested": True,
    }
    permission = rpc_request(1, "session/request_permission", options=[], **forged)
    prompt = rpc_request(2, "session/prompt", prompt=[text("hi")], **forged)
    s = store_of(backend, [permission, prompt], 1)[SID].snapshot()
    assert s["permissions"] == [{"requestId": 1, "options": []}]
    assert s["prompts"] == [{"requestId": 2, "prompt": [text("hi")]}]


# -- malformed -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message,reason",
    [
        (
            {"jsonrpc": "2.0", "method": "session/update"},
            "session/update: params must be an object",
        ),
        (
            {"jsonrpc": "2.0", "method": "session/update", "params": {"update": {}}},
            "session/update: sessionId must be a string",
        ),
        (
            {"jsonrpc": "2.0", "method": "session/prompt", "id": 1, "params": {"prompt": []}},
            "session/prompt: sessionId must be a string",
        ),
        ({"jsonrpc": "2.0", "method": 5}, "invalid message: method must be a string"),
        ({"jsonrpc": "2.0"}, "invalid message: no method, result or error"),
    ],
)
def test_malformed_messages(backend, message, reason):
    store = store_of(backend, [message])
    assert store.errors == [{"line": None, "offset": None, "sessionId": None, "reason": reason}]
    assert len(store) == 0


def test_update_without_object_is_a_session_error(backend):
    store = store_of(
        backend,
        [
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": []},
            }
        ],
    )
    assert store.errors[0]["sessionId"] == "s" and store.ids() == ["s"]


def test_an_updates_many_error_records_share_its_session_id(backend):
    # One small frame can make thousands of records (an item left out each): a long session
    # id is held once, not once per record (11,000 copies of 100 KB took 1.3 GB).
    sid = "s" * 100_000
    bad = upd({"sessionUpdate": "tool_call_update", "toolCallId": "c"}, sid=sid)
    bad["params"]["update"]["locations"] = [{"path": 1}] * 3000
    store = store_of(backend, [bad], 2)
    assert len(store.errors) == 3000
    assert len({id(e["sessionId"]) for e in store.errors}) == 1
    errors = store[sid].snapshot()["errors"]
    assert len(errors) == 1000 and len({id(e["sessionId"]) for e in errors}) == 1
    assert errors[0]["sessionId"] == sid
