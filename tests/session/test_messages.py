"""Messages: upserts, chunks, ids (real and anonymous), roles, and how the version decides."""

from __future__ import annotations

import json

import pytest

from session_builders import (
    SID,
    prompt_request,
    rpc_result,
    snap,
    store_of,
    text,
    upd,
)
from session_streams import (
    chunk_json,
)


def test_seed_sequence_upsert_chunk_upsert(backend):
    """agent_message [A] + chunk B = [A, B]; agent_message [C] = [C]; later chunks append."""
    store = store_of(
        backend,
        [upd({"sessionUpdate": "agent_message", "messageId": "m", "content": [text("A")]})],
        version=2,
    )
    s = store[SID]
    store.apply(
        upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("B")})
    )
    assert s.snapshot()["messages"][0]["content"] == [text("A"), text("B")]
    store.apply(upd({"sessionUpdate": "agent_message", "messageId": "m", "content": [text("C")]}))
    assert s.snapshot()["messages"][0]["content"] == [text("C")]
    store.apply(
        upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("D")})
    )
    assert s.snapshot()["messages"] == [
        {"id": "m", "role": "agent", "content": [text("C"), text("D")]}
    ]
    assert s.message_text("m") == "CD"


@pytest.mark.parametrize(
    "kind,role",
    [("user_message", "user"), ("agent_message", "agent"), ("agent_thought", "thought")],
)
def test_message_content_omitted_null_empty(backend, kind, role):
    store = store_of(
        backend,
        [upd({"sessionUpdate": kind, "messageId": "m", "content": [text("x")], "_meta": {"a": 1}})],
        version=2,
    )
    s = store[SID]
    store.apply(upd({"sessionUpdate": kind, "messageId": "m"}))  # omitted: unchanged
    assert s.snapshot()["messages"][0] == {
        "id": "m",
        "role": role,
        "content": [text("x")],
        "_meta": {"a": 1},
    }
    store.apply(upd({"sessionUpdate": kind, "messageId": "m", "content": None}))
    assert s.snapshot()["messages"][0] == {"id": "m", "role": role, "_meta": {"a": 1}}
    store.apply(
        upd({"sessionUpdate": kind, "messageId": "m", "content": [text("y")], "_meta": None})
    )
    assert s.snapshot()["messages"][0] == {"id": "m", "role": role, "content": [text("y")]}
    store.apply(upd({"sessionUpdate": kind, "messageId": "m", "content": []}))
    assert s.snapshot()["messages"][0] == {"id": "m", "role": role}
    assert s.message_text("m", role) == ""
    assert s.message_text("nope", role) is None


def test_shared_message_id_gives_two_messages(backend):
    s = snap(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "agent_thought_chunk",
                    "messageId": "m1",
                    "content": text("think"),
                }
            ),
            upd(
                {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("say")}
            ),
            upd({"sessionUpdate": "agent_thought_chunk", "messageId": "m1", "content": text("!")}),
        ],
        version=2,
    )
    assert [(m["id"], m["role"], m["content"]) for m in s["messages"]] == [
        ("m1", "thought", [text("think"), text("!")]),
        ("m1", "agent", [text("say")]),
    ]
    assert s["timeline"] == [
        {"type": "message", "id": "m1", "role": "thought"},
        {"type": "message", "id": "m1", "role": "agent"},
    ]


def test_v1_chunks_without_id_join_current_message(backend):
    chunks = [
        ("agent_message_chunk", None, "a"),
        ("agent_message_chunk", None, "b"),
        ("agent_thought_chunk", None, "t"),
        ("agent_message_chunk", None, "c"),
        ("agent_message_chunk", "m9", "d"),
        ("agent_message_chunk", None, "e"),
        ("user_message_chunk", None, "u"),
    ]
    msgs = []
    for kind, mid, t in chunks:
        u = {"sessionUpdate": kind, "content": text(t)}
        if mid:
            u["messageId"] = mid
        msgs.append(upd(u))
    store = store_of(backend, msgs, version=1)
    s = store[SID].snapshot()
    assert [
        (m["id"], m["role"], store[SID].message_text(m["id"], m["role"])) for m in s["messages"]
    ] == [
        ("~1", "agent", "ab"),
        ("~2", "thought", "t"),
        ("~3", "agent", "c"),
        ("m9", "agent", "de"),
        ("~4", "user", "u"),
    ]
    assert store.errors == []


def test_v2_chunk_without_message_id_is_an_error(backend):
    store = store_of(
        backend, [upd({"sessionUpdate": "agent_message_chunk", "content": text("x")})], version=2
    )
    assert store.errors == [
        {
            "line": None,
            "offset": None,
            "sessionId": SID,
            "reason": "agent_message_chunk: messageId must be a string",
        }
    ]
    assert store[SID].snapshot()["messages"] == []


def test_session_messages(backend):
    s = snap(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "session_message_chunk",
                    "messageId": "r1",
                    "senderSessionId": "parent",
                    "recipientSessionId": "child",
                    "content": text("Please investigate "),
                }
            ),
            upd(
                {
                    "sessionUpdate": "session_message_chunk",
                    "messageId": "r1",
                    "senderSessionId": None,
                    "content": text("the bug"),
                }
            ),
            upd(
                {
                    "sessionUpdate": "session_message",
                    "messageId": "r1",
                    "recipientSessionId": None,
                    "_meta": {"k": 1},
                }
            ),
        ],
    )
    assert s["messages"] == [
        {
            "id": "r1",
            "role": "session",
            "content": [text("Please investigate "), text("the bug")],
            "senderSessionId": "parent",
            "recipientSessionId": "child",
            "_meta": {"k": 1},
        }
    ]


# -- v1 anonymous messages -------------------------------------------------------------------------


def test_v1_prompt_turns_give_separate_anonymous_messages(backend):
    chunk = lambda t: upd({"sessionUpdate": "agent_message_chunk", "content": text(t)})  # noqa: E731
    done = {"stopReason": "end_turn"}
    s = snap(
        backend,
        [
            prompt_request(1),
            chunk("Hello."),
            rpc_result(1, done),
            prompt_request(2),
            chunk("Bye."),
            rpc_result(2, done),
        ],
        1,
    )
    assert [(m["id"], m["content"]) for m in s["messages"]] == [
        ("~1", [text("Hello.")]),
        ("~2", [text("Bye.")]),
    ]


def test_v1_anonymous_ids_never_merge_with_real_ones(backend):
    def chunk(kind: str, t: str, mid: str | None = None) -> dict:
        u = {"sessionUpdate": kind, "content": text(t)}
        if mid is not None:
            u["messageId"] = mid
        return upd(u)

    store = store_of(
        backend,
        [
            chunk("agent_message_chunk", "real ", "~1"),
            chunk("agent_thought_chunk", "think", "t"),
            chunk("agent_message_chunk", "anonymous"),
            chunk("agent_thought_chunk", "more", "t"),
            chunk("agent_message_chunk", "real two", "~2"),
            chunk("agent_message_chunk", "tail"),
        ],
        1,
    )
    s = store[SID].snapshot()
    assert [(m["id"], m["content"]) for m in s["messages"]] == [
        ("~1", [text("real ")]),
        ("t", [text("think"), text("more")]),
        ("~2", [text("anonymous")]),
        ("~2", [text("real two"), text("tail")]),
    ]
    assert store[SID].message_text("~1") == "real "
    assert store[SID].message_text("~2") == "real twotail"


# -- many chunks -----------------------------------------------------------------------------------


def test_many_chunks_append_in_place(backend):
    n = 100_000
    line = (
        json.dumps(
            upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("ab")})
        ).encode()
        + b"\n"
    )
    store = backend.Sessions()
    assert store.feed(line * n) == n
    assert store[SID].message_text("m") == "ab" * n
    assert store.changes() == [(SID, "session", "sessionId"), (SID, "message", "m")]


def test_chunks_after_an_upsert_append_to_its_content(backend):
    upsert = upd(
        {"sessionUpdate": "agent_message", "messageId": "m", "content": [text("new ")]}, sid="s"
    )
    lines = [
        chunk_json(b'"a"'),
        json.dumps(upsert).encode(),
        chunk_json(b'"b"'),
        chunk_json(b'"c"'),
    ]
    store = backend.Sessions()
    store.feed(b"\n".join(lines) + b"\n")
    assert store["s"].message_text("m") == "new bc"
    store.changes()
    store.feed(chunk_json(b'"d"') + b"\n")
    assert store.changes() == [("s", "message", "m")]
    assert store["s"].message_text("m") == "new bcd"
