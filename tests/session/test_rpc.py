"""JSON-RPC: requests of both sides, the responses matched to them, prompt turns and cancel."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from session_builders import (
    SID,
    init,
    ndjson,
    prompt_request,
    rpc_error,
    rpc_request,
    rpc_result,
    snap,
    store_of,
    text,
    upd,
)

# -- initialize and prompt turns -------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, 65536, 2**70, 2.0, "2", None, True, [2]])
def test_initialize_protocol_version_outside_uint16_is_an_error_and_keeps_the_rules(backend, bad):
    store = backend.Sessions()
    for m in [*init(2), upd({"sessionUpdate": "plan", "entries": []})]:
        store.apply(m)
    assert store.errors == [] and store[SID].snapshot()["other"] != []  # v1 `plan`: v2 other
    for m in init(bad, rid=5):
        store.apply(m)
    reasons = [e["reason"] for e in store.take_errors()]
    assert reasons == [
        f"initialize: {part}.protocolVersion must be an integer from 0 to 65535"
        for part in ("params", "result")
    ]
    assert store[SID].snapshot()["protocolVersion"] == 2
    store.apply(upd({"sessionUpdate": "plan", "entries": []}))
    assert len(store[SID].snapshot()["other"]) == 2 and store.errors == []
    # Absent is not an error, and the bounds themselves are versions.
    for message in [
        {"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {}},
        *init(65535, rid=7),
        *init(0, rid=8),
    ]:
        store.apply(message)
    assert store.errors == [] and store[SID].snapshot()["protocolVersion"] == 0


def test_v2_prompt_response_message_id_and_cancel(backend):
    store = store_of(
        backend,
        [
            {
                "jsonrpc": "2.0",
                "id": "p1",
                "method": "session/prompt",
                "params": {"sessionId": SID, "prompt": [text("go")]},
            },
            {"jsonrpc": "2.0", "id": "p1", "result": {"messageId": "msg_user_8f7a1"}},
            upd({"sessionUpdate": "state_update", "state": "running"}),
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}},
            upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}),
        ],
        version=2,
    )
    s = store[SID]
    assert s.snapshot()["prompts"] == [
        {
            "requestId": "p1",
            "prompt": [text("go")],
            "response": {"messageId": "msg_user_8f7a1"},
            "cancelRequested": True,
        }
    ]
    assert (s.state, s.stop_reason) == ("idle", "cancelled")


# -- pending requests and matching -----------------------------------------------------------------


def test_pending_requests_forget_the_oldest_past_ten_thousand(backend):
    # 10,005 prompts without answers, then prompt 1 sent again: the six oldest (0-5, the first
    # prompt 1 among them) are forgotten, so responses to them match nothing; the second
    # prompt 1 is the newest and is answered.
    n = 10_005
    messages = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "session/prompt",
            "params": {"sessionId": SID, "prompt": [text(str(i))]},
        }
        for i in (*range(n), 1)
    ]
    responses = [
        {"jsonrpc": "2.0", "id": i, "result": {"stopReason": "end_turn"}}
        for i in (0, 1, 2, 5, 6, n - 1)
    ]
    s = snap(backend, messages + responses, version=1)
    answered = [(k, p["requestId"]) for k, p in enumerate(s["prompts"]) if "response" in p]
    assert answered == [(6, 6), (n - 1, n - 1), (n, 1)]


def test_request_ids_written_with_a_fraction_are_matched_by_value(backend):
    prompt = {
        "jsonrpc": "2.0",
        "id": 1.5,
        "method": "session/prompt",
        "params": {"sessionId": SID, "prompt": [text("hi")]},
    }
    permission = {
        "jsonrpc": "2.0",
        "id": 2.0,
        "method": "session/request_permission",
        "params": {"sessionId": SID, "toolCall": {"toolCallId": "c"}, "options": []},
    }
    outcome = {"outcome": {"outcome": "cancelled"}}
    store = store_of(
        backend,
        [
            prompt,
            permission,
            # 2 is not 2.0: this answers nothing.
            {"jsonrpc": "2.0", "id": 2, "result": outcome},
            {"jsonrpc": "2.0", "id": 2.0, "result": outcome},
            {"jsonrpc": "2.0", "id": 1.5, "result": {"stopReason": "end_turn"}},
        ],
        version=1,
    )
    s = store[SID].snapshot()
    assert s["prompts"][0]["response"] == {"stopReason": "end_turn"}
    assert s["permissions"][0]["response"] == outcome
    assert s["state"] == "idle" and s["stopReason"] == "end_turn" and store.errors == []
    # The same through the framer (1e0 is a float to both JSON parsers; 1 is not).
    fed = backend.Sessions()
    fed.feed(ndjson(init(1)))
    fed.feed(
        (
            '{"jsonrpc":"2.0","id":1e0,"method":"session/prompt",'
            f'"params":{{"sessionId":"{SID}","prompt":[]}}}}\n'
            '{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}\n'
            '{"jsonrpc":"2.0","id":1.0,"result":{"stopReason":"end_turn"}}\n'
        ).encode()
    )
    assert fed[SID].stop_reason == "end_turn" and fed.errors == []


def test_error_response_and_unmatched_responses(backend):
    store = store_of(
        backend,
        [
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/prompt",
                "params": {"sessionId": SID, "prompt": []},
            },
            {"jsonrpc": "2.0", "id": 99, "result": {"stopReason": "end_turn"}},
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
            {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "boom"}},
            {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "end_turn"}},  # already answered
        ],
        version=1,
    )
    s = store[SID]
    assert s.snapshot()["prompts"][0]["error"] == {"code": -32603, "message": "boom"}
    assert (s.state, s.stop_reason) == ("idle", None) and store.errors == []


def test_response_ids_match_by_type(backend):
    # 1, "1", 1.0 and true are different ids: only the exact one answers a request.
    def prompt(rid: Any, sid: str) -> dict:
        params = {"sessionId": sid, "prompt": [text("hi")]}
        return {"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": params}

    def reply(rid: Any, reason: str) -> dict:
        return {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": reason}}

    store = store_of(
        backend,
        [
            prompt(1, "a"),
            prompt("1", "b"),
            reply(True, "bool"),
            reply(1.0, "float"),
            reply("1", "str"),
            reply(1, "int"),
        ],
        version=1,
    )
    assert store["a"].snapshot()["prompts"][0]["response"] == {"stopReason": "int"}
    assert store["b"].snapshot()["prompts"][0]["response"] == {"stopReason": "str"}


@pytest.mark.parametrize(
    ("request_", "answer"),
    [
        (rpc_request(2, "fs/read_text_file", path="/a"), {"content": "file text"}),
        (rpc_request(2, "terminal/create", command="ls"), {"terminalId": "t1"}),
        (rpc_request(2, "terminal/output", terminalId="t1"), {"output": "", "truncated": False}),
    ],
)
def test_a_shared_id_goes_to_the_request_whose_response_shape_fits(backend, request_, answer):
    store = store_of(
        backend,
        [
            prompt_request(2),
            request_,
            rpc_result(2, answer),
            rpc_result(2, {"stopReason": "end_turn"}),
        ],
        1,
    )
    s = store[SID].snapshot()
    assert s["prompts"][0]["response"] == {"stopReason": "end_turn"}
    assert (s["state"], s["stopReason"]) == ("idle", "end_turn")
    # The other way round: the agent answers first, the client's answer goes to the agent's.
    store = store_of(
        backend,
        [
            prompt_request(2),
            request_,
            rpc_result(2, {"stopReason": "end_turn"}),
            rpc_result(2, answer),
        ],
        1,
    )
    assert store[SID].snapshot()["prompts"][0]["response"] == {"stopReason": "end_turn"}


def test_a_shared_id_undecided_by_shape_keeps_the_outcome_rule(backend):
    permission = rpc_request(2, "session/request_permission", options=[])
    # v2: a prompt's response has a messageId, so {"messageId"} fits the prompt only...
    store = store_of(
        backend, [prompt_request(2), permission, rpc_result(2, {"messageId": "u1"})], 2
    )
    s = store[SID].snapshot()
    assert s["prompts"][0]["response"] == {"messageId": "u1"}
    assert "response" not in s["permissions"][0]
    # ...and an outcome fits both: the outcome rule gives it to the agent's request.
    outcome = {"outcome": {"outcome": "cancelled"}}
    store = store_of(backend, [prompt_request(2), permission, rpc_result(2, outcome)], 2)
    s = store[SID].snapshot()
    assert s["permissions"][0]["response"] == outcome and "response" not in s["prompts"][0]
    # An error fits neither: the client's request takes it, unless the sender is named.
    store = store_of(
        backend,
        [prompt_request(2), rpc_request(2, "fs/read_text_file", path="/a"), rpc_error(2)],
        1,
    )
    assert "error" in store[SID].snapshot()["prompts"][0]
    store = store_of(
        backend, [prompt_request(2), rpc_request(2, "fs/read_text_file", path="/a")], 1
    )
    store.apply(rpc_error(2), sender="client")
    s = store[SID].snapshot()
    assert "error" not in s["prompts"][0] and s["state"] == "running"
    store.apply(rpc_result(2, {"stopReason": "cancelled"}), sender="agent")
    assert store[SID].snapshot()["prompts"][0]["response"] == {"stopReason": "cancelled"}


def test_a_type_that_requires_keys_the_result_has_wins_over_one_that_requires_none(backend):
    # v1: a session/load (its response requires nothing) and the agent's fs/read_text_file
    # (requires content) share id 1; the file's contents answer the read, not the load.
    load = rpc_request(1, "session/load", cwd="/", mcpServers=[])
    read = rpc_request(1, "fs/read_text_file", path="/a")
    modes = {"modes": {"currentModeId": "ask", "availableModes": []}}
    for answers in ([{"content": "text"}, modes], [modes, {"content": "text"}]):
        store = store_of(backend, [load, read, *(rpc_result(1, a) for a in answers)], 1)
        assert store[SID].snapshot()["currentModeId"] == "ask"
    # v2: a prompt (messageId) and the agent's elicitation/create (action) share id 1.
    elicit = rpc_request(1, "elicitation/create", message="ok?")
    for first, second in [
        ({"action": "accept"}, {"messageId": "u1"}),
        ({"messageId": "u1"}, {"action": "accept"}),
    ]:
        store = store_of(
            backend, [prompt_request(1), elicit, rpc_result(1, first), rpc_result(1, second)], 2
        )
        assert store[SID].snapshot()["prompts"][0]["response"] == {"messageId": "u1"}


@pytest.mark.parametrize(
    "carrier",
    [
        {"jsonrpc": "2.0", "id": 5, "method": "session/cancel", "params": {"sessionId": SID}},
        {"jsonrpc": "2.0", "id": 5, "method": "session/cancel", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"prompt": []}},
    ],
)
def test_a_client_request_sent_with_any_method_keeps_its_response(backend, carrier):
    # The agent's permission request 5 is pending when the client sends its own request 5
    # (even a notification given an id, or one refused for its params): the agent's reply
    # to that must not answer the permission.
    permission = rpc_request(5, "session/request_permission", toolCall={}, options=[])
    outcome = {"outcome": {"outcome": "cancelled"}}
    store = store_of(backend, [permission, carrier, rpc_result(5, {}), rpc_result(5, outcome)], 2)
    assert store[SID].snapshot()["permissions"][0]["response"] == outcome


def test_an_update_sent_with_an_id_keeps_its_response_from_answering_a_prompt(backend):
    chunk = upd({"sessionUpdate": "agent_message_chunk", "content": text("hi")})
    for message in (chunk, {**chunk, "id": 5}):
        # Also through the fast paths of a fed stream.
        for how in ("apply", "feed"):
            store = backend.Sessions()
            sequence = [*init(1), prompt_request(5), {**message, "id": 5}, rpc_result(5, {})]
            sequence.append(rpc_result(5, {"stopReason": "end_turn"}))
            if how == "apply":
                for m in sequence:
                    store.apply(m)
            else:
                store.feed(ndjson(sequence))
            s = store[SID].snapshot()
            assert s["prompts"][0]["response"] == {"stopReason": "end_turn"}, how
            assert (s["state"], s["stopReason"], s["errors"]) == ("idle", "end_turn", []), how
            assert [m["content"] for m in s["messages"]] == [[text("hi")]]


def test_notifications_sent_with_ids_nothing_answers_keep_no_request_from_its_response(backend):
    # Tracked only while the other side has a request of that id pending: thousands of them
    # do not push the prompt out of the table of pending requests.
    chunk = upd({"sessionUpdate": "agent_message_chunk", "content": text("x")})
    store = store_of(backend, [prompt_request("p")], 1)
    for i in range(10_050):
        store.apply({**chunk, "id": i})
    cancel = {"jsonrpc": "2.0", "id": 3, "method": "session/cancel", "params": {"sessionId": SID}}
    store.apply(cancel)
    store.apply(rpc_result("p", {"stopReason": "end_turn"}))
    s = store[SID].snapshot()
    assert (s["state"], s["stopReason"]) == ("idle", "end_turn")


def test_before_initialize_a_prompt_takes_a_result_of_either_version(backend):
    write = rpc_request(0, "fs/write_text_file", path="/a", content="x")
    answers = [rpc_result(0, {"messageId": "m1"}), rpc_result(0, None)]
    store = store_of(backend, [prompt_request(0), write, *answers])
    s = store[SID].snapshot()
    assert s["prompts"][0]["response"] == {"messageId": "m1"}
    assert (s["state"], s["errors"]) == ("running", [])


def test_before_initialize_a_prompt_result_is_read_by_its_shape(backend):
    # A trace that starts after `initialize`: the version is not known.
    running = upd({"sessionUpdate": "state_update", "state": "running"})
    store = store_of(backend, [prompt_request(1), running, rpc_result(1, {"messageId": "u1"})])
    s = store[SID].snapshot()
    # A v2 acknowledgement: the turn goes on.
    assert (s["protocolVersion"], s["state"], s["errors"]) == (None, "running", [])
    assert s["prompts"][0]["response"] == {"messageId": "u1"}
    store.apply(upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
    assert store[SID].snapshot()["state"] == "idle"
    # A stop reason ends the turn as in v1; a result with neither is v1's malformed one.
    s = store_of(backend, [prompt_request(1), rpc_result(1, {"stopReason": "cancelled"})])[
        SID
    ].snapshot()
    assert (s["state"], s["stopReason"], s["errors"]) == ("idle", "cancelled", [])
    s = store_of(backend, [prompt_request(1), rpc_result(1, {})])[SID].snapshot()
    assert s["state"] == "idle"
    assert [e["reason"] for e in s["errors"]] == [
        "session/prompt: result.stopReason must be a string"
    ]


def test_a_v1_answer_to_an_earlier_prompt_leaves_the_latest_turn_going(backend):
    store = store_of(
        backend,
        [prompt_request(1), prompt_request(2), rpc_result(1, {"stopReason": "cancelled"})],
        1,
    )
    s = store[SID].snapshot()
    assert s["prompts"][0]["response"] == {"stopReason": "cancelled"}
    assert (s["state"], s["stopReason"]) == ("running", None)
    store.apply(rpc_result(2, {"stopReason": "end_turn"}))
    s = store[SID].snapshot()
    assert (s["state"], s["stopReason"]) == ("idle", "end_turn")


def test_a_response_with_both_result_and_error_is_an_error_record(backend):
    both = {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}, "error": {"code": 1}}
    store = store_of(backend, [prompt_request(1), both], 1)
    s = store[SID].snapshot()
    assert "response" not in s["prompts"][0] and "error" not in s["prompts"][0]
    assert s["state"] == "running"
    assert [e["reason"] for e in store.errors] == [
        "invalid message: a response has both result and error"
    ]
    # The request still waits for its answer.
    store.apply(rpc_result(1, {"stopReason": "end_turn"}))
    assert store[SID].snapshot()["state"] == "idle"


def test_apply_sender_is_checked_and_tracks_methods_of_either_side(backend):
    store = backend.Sessions()
    for bad in ("Client", "", 1, b"agent"):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            store.apply(prompt_request(1), sender=bad)
    assert store.ids() == [] and store.errors == []
    store.apply(prompt_request(1), sender=None)
    # A response from the client cannot answer the client's own prompt.
    store.apply(rpc_result(1, {"stopReason": "end_turn"}), sender="client")
    assert "response" not in store[SID].snapshot()["prompts"][0]
    store.apply(rpc_result(1, {"stopReason": "end_turn"}), sender="agent")
    assert store[SID].snapshot()["prompts"][0]["response"] == {"stopReason": "end_turn"}
    # A method neither side is known to handle is tracked when the sender is named.
    store.apply(prompt_request(5), sender="client")
    store.apply({"jsonrpc": "2.0", "id": 5, "method": "_vendor/ping"}, sender="agent")
    store.apply(rpc_result(5, {}), sender="client")
    store.apply(rpc_result(5, {"stopReason": "end_turn"}))
    assert store[SID].snapshot()["prompts"][1]["response"] == {"stopReason": "end_turn"}


# -- prompt results and cancel ---------------------------------------------------------------------


_CANCEL = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}}


@pytest.mark.parametrize("result", [{}, None, {"stopReason": 5}, {"stopReason": None}])
def test_a_v1_prompt_result_without_a_stop_reason_is_an_error_and_ends_the_turn(backend, result):
    store = store_of(backend, [prompt_request()], 1)
    assert store[SID].state == "running"
    store.changes()
    store.apply({"jsonrpc": "2.0", "id": 2, "result": result})
    s = store[SID].snapshot()
    assert [e["reason"] for e in s["errors"]] == [
        "session/prompt: result.stopReason must be a string"
    ]
    assert (s["state"], s["stopReason"]) == ("idle", None)
    assert s["prompts"][0]["response"] == result
    assert ("sess_abc123def456", "session", "state") in store.changes()
    # A v2 result only acknowledges the prompt: it needs no stop reason.
    ack = {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u1"}}
    store = store_of(backend, [prompt_request(), ack], 2)
    assert store.errors == [] and store[SID].state is None


@pytest.mark.parametrize("result", [{}, None, {"messageId": None}, {"messageId": 7}])
def test_a_v2_prompt_result_without_a_message_id_is_an_error_recorded_as_it_came(backend, result):
    # The prompt lifecycle: "a required, non-null string; omission and explicit null are
    # invalid". The acknowledgement is kept as it came, and the turn goes on.
    store = store_of(backend, [prompt_request()], 2)
    store.apply({"jsonrpc": "2.0", "id": 2, "result": result})
    s = store[SID].snapshot()
    assert [e["reason"] for e in s["errors"]] == [
        "session/prompt: result.messageId must be a string"
    ]
    assert s["prompts"][0]["response"] == result and s["state"] is None
    # Before initialize a result is read by its shape: a null messageId and no stop reason
    # make a v2 acknowledgement, which names no message.
    store = store_of(
        backend, [prompt_request(), {"jsonrpc": "2.0", "id": 2, "result": {"messageId": None}}]
    )
    assert [e["reason"] for e in store.errors] == [
        "session/prompt: result.messageId must be a string"
    ]
    # An error answer is no acknowledgement: nothing is missing from it.
    store = store_of(
        backend,
        [prompt_request(), {"jsonrpc": "2.0", "id": 2, "error": {"code": 1, "message": "x"}}],
        2,
    )
    assert store.errors == []


def test_a_set_config_option_result_replaces_the_config_options(backend):
    old = [
        {"configId": "mode", "name": "Mode", "type": "select", "currentValue": "ask", "options": []}
    ]
    new = [dict(old[0], currentValue="code")]
    for sender in (None, "client"):
        store = backend.Sessions()
        for m in init(2):
            store.apply(m)
        store.apply({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
        store.apply({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SID, "configOptions": old}})
        store.apply(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/set_config_option",
                "params": {"sessionId": SID, "configId": "mode", "value": "code"},
            },
            **({"sender": sender} if sender else {}),
        )
        assert store[SID].snapshot()["configOptions"] == old
        store.changes()
        store.apply(
            {"jsonrpc": "2.0", "id": 2, "result": {"configOptions": new}},
            **({"sender": "agent"} if sender else {}),
        )
        assert store[SID].snapshot()["configOptions"] == new
        assert store.changes() == [(SID, "session", "configOptions")]
        # An error response, or one without the options, leaves them as they are.
        for answer in ({"error": {"code": -32603, "message": "no"}}, {"result": {}}):
            store.apply(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "session/set_config_option",
                    "params": {"sessionId": SID, "configId": "mode", "value": "x"},
                }
            )
            store.apply({"jsonrpc": "2.0", "id": 3, **answer})
            assert store[SID].snapshot()["configOptions"] == new and store.errors == []


@pytest.mark.parametrize("version", [1, 2, None])
def test_requests_lacking_required_params_are_error_records_and_kept(backend, version):
    def request(rid, method, **params):
        params = {"sessionId": SID, **params}
        return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}

    good = {1: {"toolCall": {"toolCallId": "c"}}, 2: {"title": "Edit?"}, None: {}}[version]
    messages = [
        request(2, "session/prompt", prompt=[text("go")]),
        request(3, "session/request_permission", options=[], **good),
        request(4, "session/prompt", prompt="go"),
        request(5, "session/request_permission"),
        {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}},
    ]
    store = store_of(backend, messages, version)
    # Each missing member of the schema's required params, of the version in use (before
    # initialize, only those both versions require).
    lacking = {1: ["toolCall must be an object"], 2: ["title must be a string"], None: []}
    assert [e["reason"] for e in store.errors] == [
        "session/prompt: params.prompt must be an array",
        *(f"session/request_permission: params.{m}" for m in lacking[version]),
        "session/request_permission: params.options must be an array",
    ]
    # Kept as they came, and answered as any other.
    snapshot = store[SID].snapshot()
    assert [p["prompt"] for p in snapshot["prompts"]] == [[text("go")], "go"]
    assert snapshot["permissions"][1] == {
        "requestId": 5,
        "response": {"outcome": {"outcome": "cancelled"}},
    }


def test_a_cancel_after_the_turn_ended_marks_nothing(backend):
    # v1: the prompt's response ends the turn (a result or an error).
    for answer in ({"result": {"stopReason": "end_turn"}}, {"error": {"code": 1, "message": "x"}}):
        store = store_of(backend, [prompt_request(), {"jsonrpc": "2.0", "id": 2, **answer}], 1)
        store.changes()
        store.apply(_CANCEL)
        assert "cancelRequested" not in store[SID].snapshot()["prompts"][0]
        assert store.changes() == []
    # v1, during the turn: marked.
    store = store_of(backend, [prompt_request(), _CANCEL], 1)
    assert store[SID].snapshot()["prompts"][0]["cancelRequested"] is True
    # v2: the result only acknowledges; the turn runs until idle.
    ack = {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u1"}}
    idle = upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
    store = store_of(backend, [prompt_request(), ack, _CANCEL], 2)
    assert store[SID].snapshot()["prompts"][0]["cancelRequested"] is True
    store = store_of(backend, [prompt_request(), ack, idle, _CANCEL], 2)
    assert "cancelRequested" not in store[SID].snapshot()["prompts"][0]
    # A new prompt opens a new turn.
    store = store_of(backend, [prompt_request(), ack, idle, prompt_request(3), _CANCEL], 2)
    prompts = store[SID].snapshot()["prompts"]
    assert "cancelRequested" not in prompts[0] and prompts[1]["cancelRequested"] is True


def test_a_prompt_answer_is_read_by_the_rules_in_force_when_it_was_sent(backend):
    # A v1 prompt answered after the connection was initialized again as v2: its stop reason
    # still ends its turn, and is no malformed v2 acknowledgement.
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    store = store_of(backend, [prompt_request(), *init(2, rid=9), answer], 1)
    s = store[SID].snapshot()
    assert store.errors == [] and (s["state"], s["stopReason"]) == ("idle", "end_turn")
    # And the other way: a v2 prompt's acknowledgement under v1 rules ends nothing.
    ack = {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u1"}}
    store = store_of(backend, [prompt_request(), *init(1, rid=9), ack], 2)
    assert store.errors == [] and store[SID].snapshot()["state"] is None
    # Sent before initialize, it is read by the rules in force when answered.
    store = store_of(backend, [prompt_request(), *init(2, rid=9), {**ack, "result": {}}])
    assert [e["reason"] for e in store.errors] == [
        "session/prompt: result.messageId must be a string"
    ]


def test_a_v2_cancel_marks_every_prompt_of_the_work_going_on(backend):
    # v2: a prompt sent while the work runs contributes to it, and a cancel stops that work:
    # every prompt of the turn is marked, but one already answered with an error.
    ack = {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "u1"}}
    running = upd({"sessionUpdate": "state_update", "state": "running"})
    failed = {"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "x"}}
    idle = upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
    messages = [
        prompt_request(),
        ack,
        running,
        prompt_request(3),
        failed,
        prompt_request(4),
        _CANCEL,
    ]
    store = store_of(backend, messages, 2)
    marked = ["cancelRequested" in p for p in store[SID].snapshot()["prompts"]]
    assert marked == [True, False, True]
    # After the idle update the next prompt starts a turn of its own.
    store.apply(idle)
    store.apply(prompt_request(5))
    store.apply(_CANCEL)
    marked = ["cancelRequested" in p for p in store[SID].snapshot()["prompts"]]
    assert marked == [True, False, True, True]
    # A turn whose prompts were all refused with an error is over: a cancel marks nothing.
    refused = [{"jsonrpc": "2.0", "id": i, "error": {"code": 1, "message": "x"}} for i in (6, 7)]
    store = store_of(
        backend, [*messages[:2], idle, prompt_request(6), prompt_request(7), *refused, _CANCEL], 2
    )
    marked = ["cancelRequested" in p for p in store[SID].snapshot()["prompts"]]
    assert marked == [False, False, False]
    # v1: one prompt per turn, however they are sent; only the last is going on.
    store = store_of(backend, [prompt_request(), prompt_request(3), _CANCEL], 1)
    marked = ["cancelRequested" in p for p in store[SID].snapshot()["prompts"]]
    assert marked == [False, True]


# -- methods by side -------------------------------------------------------------------------------


def test_method_sides_follow_the_schemas_meta(shared):
    """The pure store's tables of who handles each method are those of `meta.json` and
    `meta.unstable.json` of v1 and v2, less the one method both sides handle (`mcp/message`,
    never tracked by side). The native tables are checked against the same files by
    `cargo test`."""
    from acpwire._pure import session as pure_session

    agent: set[str] = set()
    client: set[str] = set()
    for version in (1, 2):
        for name in ("meta.json", "meta.unstable.json"):
            meta = json.loads((shared / "acp-schema" / f"v{version}" / name).read_text())
            agent |= set(meta["agentMethods"].values())
            client |= set(meta["clientMethods"].values())
    assert agent & client == {"mcp/message"}
    assert agent - client == pure_session._AGENT_METHODS
    assert client - agent == pure_session._CLIENT_METHODS
