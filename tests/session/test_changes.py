"""Changes: what moved since they were last taken, deduplicated in first-change order."""

from __future__ import annotations

import pytest

from session_builders import (
    SID,
    init,
    prompt_request,
    rpc_result,
    store_of,
    upd,
)


@pytest.mark.parametrize(
    ("version", "before", "after", "keys"),
    [
        (
            2,
            [upd({"sessionUpdate": "state_update", "state": "running"})],
            [
                upd(
                    {
                        "sessionUpdate": "state_update",
                        "state": "idle",
                        "stopReason": "end_turn",
                        "usage": {"totalTokens": 1, "inputTokens": 1, "outputTokens": 0},
                    }
                )
            ],
            ["state", "stopReason", "updateExtras"],
        ),
        (
            1,
            [prompt_request(1)],
            [rpc_result(1, {"stopReason": "end_turn"})],
            ["state", "stopReason", "prompts", "turns"],
        ),
        (
            1,
            [prompt_request(1), rpc_result(1, {"stopReason": "end_turn"})],
            [prompt_request(2)],
            ["state", "stopReason", "prompts", "turns"],
        ),
        (
            2,
            [prompt_request(1), rpc_result(1, {"messageId": "u1"})],
            [
                upd(
                    {
                        "sessionUpdate": "state_update",
                        "state": "idle",
                        "stopReason": "refusal",
                    }
                )
            ],
            ["state", "stopReason", "turns"],
        ),
        (
            2,
            [],
            [
                upd(
                    {
                        "sessionUpdate": "available_commands_update",
                        "availableCommands": [],
                        "_meta": {"a": 1},
                    }
                )
            ],
            ["availableCommands", "updateExtras"],
        ),
        (
            2,
            [upd({"sessionUpdate": "config_option_update", "configOptions": [], "x": 1})],
            [upd({"sessionUpdate": "config_option_update", "configOptions": []})],
            ["configOptions", "updateExtras"],
        ),
    ],
)
def test_changes_report_every_session_key_that_moved(backend, version, before, after, keys):
    store = store_of(
        backend, [upd({"sessionUpdate": "agent_message", "messageId": "m"}), *before], version
    )
    old = store[SID].snapshot()
    store.changes()
    for m in after:
        store.apply(m)
    new = store[SID].snapshot()
    moved = {k for k in new if new[k] != old[k]}
    reported = [c[2] for c in store.changes() if c[1] == "session"]
    # A new turn is placed on the timeline, as a new entity of any type is, and named by
    # the entity ("turns") rather than by the timeline.
    placed = {"timeline"} if "turns" in keys else set()
    assert reported == keys and moved <= set(keys) | placed


def test_changes_name_a_stop_reason_set_to_the_value_it_had(backend):
    idle = upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
    store = store_of(backend, [idle], 2)
    store.changes()
    store.apply(idle)
    assert store.changes() == [(SID, "session", "state"), (SID, "session", "stopReason")]
    # A v1 prompt's response likewise.
    store = store_of(backend, [prompt_request(1), rpc_result(1, {"stopReason": "end_turn"})], 1)
    store.apply(prompt_request(2))
    store.changes()
    store.apply(rpc_result(2, {"stopReason": "end_turn"}))
    assert (SID, "session", "stopReason") in store.changes()
    # Nothing to name when there was none and none is set.
    store = store_of(backend, [], 2)
    store.apply(upd({"sessionUpdate": "state_update", "state": "running"}))
    assert (SID, "session", "stopReason") not in store.changes()


def test_an_initialize_that_repeats_the_version_changes_nothing(backend):
    # Each new version names every session; the same one again is not a change.
    store = store_of(backend, [upd({"sessionUpdate": "x"}, sid=str(i)) for i in range(50)], 2)
    store.changes()
    for m in init(2):
        store.apply(m)
    assert store.changes() == []
    store.apply(init(1)[0])
    assert store.changes() == [(str(i), "session", "protocolVersion") for i in range(50)]
