"""Session-level updates: state, usage, info, modes, setup results, notices, subagents."""

from __future__ import annotations

import pytest

from session_builders import (
    SID,
    snap,
    store_of,
    text,
    upd,
)


def test_session_level_updates(backend):
    store = store_of(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "session_info_update",
                    "title": "T",
                    "updatedAt": "2026-01-01T00:00:00Z",
                    "_meta": {"a": 1},
                }
            ),
            upd({"sessionUpdate": "session_info_update", "title": None}),
            upd({"sessionUpdate": "usage_update", "used": 1, "size": 10}),
            upd(
                {
                    "sessionUpdate": "usage_update",
                    "used": 53000,
                    "size": 200000,
                    "cost": {"amount": 0.045, "currency": "USD"},
                }
            ),
            upd(
                {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [{"name": "test", "description": "Run the tests"}],
                    "_meta": {"m": 2},
                }
            ),
            upd(
                {
                    "sessionUpdate": "config_option_update",
                    "configOptions": [{"configId": "mode", "name": "Mode"}],
                }
            ),
            upd(
                {
                    "sessionUpdate": "state_update",
                    "state": "idle",
                    "stopReason": "_custom",
                    "usage": {"totalTokens": 3, "inputTokens": 1, "outputTokens": 2},
                }
            ),
        ],
        version=2,
    )
    s = store[SID]
    snapshot = s.snapshot()
    assert snapshot["info"] == {"updatedAt": "2026-01-01T00:00:00Z", "_meta": {"a": 1}}
    assert snapshot["usage"] == {
        "used": 53000,
        "size": 200000,
        "cost": {"amount": 0.045, "currency": "USD"},
    }
    assert snapshot["availableCommands"] == [{"name": "test", "description": "Run the tests"}]
    assert snapshot["configOptions"] == [{"configId": "mode", "name": "Mode"}]
    assert snapshot["updateExtras"] == {
        "available_commands_update": {"_meta": {"m": 2}},
        "state_update": {"usage": {"totalTokens": 3, "inputTokens": 1, "outputTokens": 2}},
    }
    assert (s.state, s.stop_reason) == ("idle", "_custom")
    store.apply(upd({"sessionUpdate": "state_update", "state": "_thinking_hard"}))
    assert (s.state, s.stop_reason) == ("_thinking_hard", None)
    assert "state_update" not in s.snapshot()["updateExtras"]


def test_v1_current_mode_and_session_new_response(backend):
    store = store_of(
        backend,
        [
            {"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "/"}},
            {
                "jsonrpc": "2.0",
                "id": 7,
                "result": {
                    "sessionId": "s1",
                    "modes": {"currentModeId": "ask", "availableModes": []},
                    "configOptions": [{"id": "x", "name": "X"}],
                },
            },
            upd({"sessionUpdate": "current_mode_update", "currentModeId": "code"}, sid="s1"),
        ],
        version=1,
    )
    s = store["s1"].snapshot()
    assert (s["currentModeId"], s["configOptions"]) == ("code", [{"id": "x", "name": "X"}])


@pytest.mark.parametrize("version", [1, 2])
def test_a_v1_set_mode_answered_with_a_result_makes_its_mode_current(backend, version):
    def set_mode(rid, mode_id, sid="s1"):
        params = {"sessionId": sid, "modeId": mode_id}
        return {"jsonrpc": "2.0", "id": rid, "method": "session/set_mode", "params": params}

    store = store_of(
        backend,
        [
            upd(
                {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("hi")},
                sid="s1",
            )
        ],
        version,
    )
    store.changes()
    store.apply(set_mode(4, "code"))
    # Pending until answered: an error answer changes nothing, nor a malformed request's.
    assert store["s1"].snapshot().get("currentModeId") is None
    store.apply({"jsonrpc": "2.0", "id": 4, "error": {"code": -32603, "message": "no"}})
    store.apply(
        {"jsonrpc": "2.0", "id": 5, "method": "session/set_mode", "params": {"sessionId": "s1"}}
    )
    store.apply({"jsonrpc": "2.0", "id": 5, "result": {}})
    assert store["s1"].snapshot().get("currentModeId") is None
    assert store.changes() == []
    store.apply(set_mode(6, "architect"))
    store.apply({"jsonrpc": "2.0", "id": 6, "result": {}})
    # v2 has no modes (its current_mode_update is kept raw): the answer changes nothing.
    expected = "architect" if version == 1 else None
    assert store["s1"].snapshot().get("currentModeId") == expected
    assert store.changes() == ([("s1", "session", "currentModeId")] if version == 1 else [])
    # A later current_mode_update still wins, and a later answer after it too.
    if version == 1:
        store.apply(set_mode("x", "ask"))
        store.apply(
            upd({"sessionUpdate": "current_mode_update", "currentModeId": "code"}, sid="s1")
        )
        assert store["s1"].snapshot()["currentModeId"] == "code"
        store.apply({"jsonrpc": "2.0", "id": "x", "result": None})
        assert store["s1"].snapshot()["currentModeId"] == "ask"


@pytest.mark.parametrize("version", [1, 2])
def test_session_setup_results_are_read_as_the_schemas_say(backend, version):
    key = "id" if version == 1 else "configId"
    good = {key: "m", "name": "Model"}
    new = {"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "/"}}
    result = {
        "sessionId": "s1",
        "configOptions": [5, good, {key: "e", "name": "Effort", "category": 3}],
        "modes": {"currentModeId": 5},
    }
    store = store_of(backend, [new, {"jsonrpc": "2.0", "id": 7, "result": result}], version)
    s = store["s1"].snapshot()
    # As a config_option_update reads them: items that cannot be read are left out, optional
    # members of the wrong type too, and modes without a current mode id are ignored.
    assert s["configOptions"] == [good, {key: "e", "name": "Effort"}]
    assert "currentModeId" not in s or s["currentModeId"] is None
    assert [e["reason"] for e in s["errors"]] == [
        "session/new: result.configOptions[0] must be an object (item dropped)",
        "session/new: result.configOptions[2].category must be a string or null (ignored)",
        "session/new: result.modes.currentModeId must be a string (modes ignored)",
    ]
    # A set_config_option result whose options are not an array changes nothing.
    store.apply(
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "session/set_config_option",
            "params": {"sessionId": "s1", "configId": "m", "value": "x"},
        }
    )
    store.apply({"jsonrpc": "2.0", "id": 8, "result": {"configOptions": {"m": 1}}})
    s = store["s1"].snapshot()
    assert s["configOptions"] == [good, {key: "e", "name": "Effort"}]
    assert s["errors"][-1]["reason"] == (
        "session/set_config_option: result.configOptions must be an array or null (ignored)"
    )


def test_notices_are_a_bounded_ring(backend):
    msgs = [
        upd({"sessionUpdate": "notice", "severity": "info", "title": f"n{i}"}) for i in range(130)
    ]
    s = snap(backend, msgs, version=2)
    assert len(s["notices"]) == 100 and s["notices"][0] == {"severity": "info", "title": "n30"}
    assert s["timeline"] == []


def test_subagents(backend):
    s = snap(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "subagent_update",
                    "subagentSessionId": "child",
                    "name": "explorer",
                    "state": "running",
                }
            ),
            upd(
                {
                    "sessionUpdate": "subagent_update",
                    "subagentSessionId": "child",
                    "name": None,
                    "task": "look",
                }
            ),
        ],
        version=2,
    )
    assert s["subagents"] == {
        "child": {"subagentSessionId": "child", "state": "running", "task": "look"}
    }
