"""Prompt turns and v1 client terminals, beyond the data cases: where a turn's indices point
once removed plans are compacted out of the timeline, the invariants of turns over random
streams, message changes named by role, and client terminals under the store's bound."""

from __future__ import annotations

import json
import random

import pytest

from session_builders import (
    SID,
    ndjson,
    prompt_request,
    rpc_request,
    rpc_result,
    store_of,
    text,
    upd,
)
from session_streams import random_stream


def _plan(pid: str) -> dict:
    return upd(
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": pid, "content": "step"},
        }
    )


def _idle(stop: str = "end_turn") -> dict:
    return upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": stop})


def _check_turns(snapshot: dict) -> None:
    """Each turn's start is its own timeline entry and its end lies after it."""
    timeline = snapshot["timeline"]
    starts = [t["start"] for t in snapshot["turns"]]
    assert starts == sorted(starts)
    assert [e for e in timeline if e["type"] == "turn"] == [
        {"type": "turn", "id": t["requestId"]} for t in snapshot["turns"]
    ]
    for turn in snapshot["turns"]:
        assert timeline[turn["start"]] == {"type": "turn", "id": turn["requestId"]}
        if turn["end"] is not None:
            assert turn["start"] < turn["end"] <= len(timeline)


def test_turn_indices_follow_the_timeline_when_removed_plans_are_compacted(backend):
    plans = [f"p{k}" for k in range(80)]
    messages = [
        prompt_request(1),
        *(_plan(pid) for pid in plans[:40]),
        _idle(),
        prompt_request(2),
        *(_plan(pid) for pid in plans[40:]),
        _idle(),
        prompt_request(3),
    ]
    store = store_of(backend, messages, 2)
    before = store[SID].snapshot()
    assert [(t["start"], t["end"]) for t in before["turns"]] == [(0, 41), (41, 82), (82, None)]
    # Removing the plans leaves holes, compacted once they outnumber the rest (more than once
    # here): the turns' indices are those of the timeline the snapshot shows.
    for pid in plans[::-1]:
        store.apply(upd({"sessionUpdate": "plan_removed", "planId": pid}))
    after = store[SID].snapshot()
    assert after["timeline"] == [
        {"type": "turn", "id": 1},
        {"type": "turn", "id": 2},
        {"type": "turn", "id": 3},
    ]
    assert [(t["start"], t["end"]) for t in after["turns"]] == [(0, 1), (1, 2), (2, None)]
    store.apply(_plan("late"))
    store.apply(_idle("refusal"))
    final = store[SID].snapshot()
    assert final["turns"][2]["end"] == 4 and final["turns"][2]["stopReason"] == "refusal"
    _check_turns(final)


def test_some_plans_removed_inside_a_turn_shift_only_what_follows(backend):
    messages = [
        prompt_request(1),
        _plan("a"),
        _plan("b"),
        _idle(),
        prompt_request(2),
        _plan("c"),
        upd({"sessionUpdate": "plan_removed", "planId": "a"}),
        _idle(),
    ]
    snapshot = store_of(backend, messages, 2)[SID].snapshot()
    assert [(t["start"], t["end"]) for t in snapshot["turns"]] == [(0, 2), (2, 4)]
    _check_turns(snapshot)


@pytest.mark.parametrize("seed", range(40))
def test_turns_hold_their_invariants_on_random_streams(backend, seed):
    store = backend.Sessions()
    for message in random_stream(random.Random(seed), n=120):
        store.feed(message + b"\n" if isinstance(message, bytes) else ndjson([message]))
    for sid in store.ids():
        _check_turns(store[sid].snapshot())


def test_a_change_names_the_role_that_message_text_reads(backend):
    # An agent message and a thought sharing an id (as some agents send them) are two
    # entities: each change says which, so each text can be read.
    store = store_of(
        backend,
        [
            upd({"sessionUpdate": "agent_thought_chunk", "messageId": "m", "content": text("hm")}),
            upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("hi")}),
            upd({"sessionUpdate": "user_message", "messageId": "u", "content": [text("q")]}),
        ],
        2,
    )
    roles = {"thought": "thought", "agentMessage": "agent", "userMessage": "user"}
    changes = [c for c in store.changes() if c[1] in roles]
    assert changes == [(SID, "thought", "m"), (SID, "agentMessage", "m"), (SID, "userMessage", "u")]
    texts = [store[SID].message_text(mid, roles[kind]) for _, kind, mid in changes]
    assert texts == ["hm", "hi", "q"]


def _client_terminal(rid: int, tid: str, output: str) -> list[dict]:
    return [
        rpc_request(rid, "terminal/create", command="make"),
        rpc_result(rid, {"terminalId": tid}),
        rpc_request(rid + 1, "terminal/output", terminalId=tid),
        rpc_result(rid + 1, {"output": output, "truncated": False}),
    ]


def test_client_terminals_count_against_the_store_bound(backend):
    big = ("\x1b[33m" + "x" * 200 + "\x1b[0m\n") * 20
    store = store_of(
        backend,
        [*_client_terminal(1, "a", big), *_client_terminal(3, "b", big)],
        1,
        max_terminal_bytes=6000,
    )
    terminals = store[SID].snapshot()["terminals"]
    # The one written least recently is cleared; the other shows its output, colours rendered
    # as styles rather than passed through.
    assert (terminals["a"]["text"], terminals["a"]["truncated"]) == ("", True)
    assert terminals["b"]["text"] == "\n".join(["x" * 200] * 20)
    assert "\x1b" not in json.dumps(terminals)
    spans = store[SID].terminal("b").spans()
    assert (spans[0][0].text, spans[0][0].fg) == ("x" * 200, 3)


def test_each_output_response_replaces_what_a_client_terminal_shows(backend):
    store = store_of(
        backend,
        [
            *_client_terminal(1, "t", "one\ntwo\n"),
            rpc_request(9, "terminal/output", terminalId="t"),
            rpc_result(9, {"output": "two\nthree\n", "truncated": True}),
        ],
        1,
    )
    terminal = store[SID].snapshot()["terminals"]["t"]
    assert (terminal["text"], terminal["bytes"], terminal["truncated"]) == ("two\nthree", 10, True)
    assert store[SID].terminal("t").text == "two\nthree"
