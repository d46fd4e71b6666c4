"""Messages: upserts, chunks, ids (real and anonymous), roles, and how the version decides."""

from __future__ import annotations

import json

import pytest

from session_builders import (
    SID,
    init,
    snap,
    store_of,
    text,
    upd,
)
from session_streams import (
    chunk_json,
)


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
        ("m1", "thought", [text("think!")]),
        ("m1", "agent", [text("say")]),
    ]
    assert s["timeline"] == [
        {"type": "message", "id": "m1", "role": "thought"},
        {"type": "message", "id": "m1", "role": "agent"},
    ]


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
            "content": [text("Please investigate the bug")],
            "senderSessionId": "parent",
            "recipientSessionId": "child",
            "_meta": {"k": 1},
        }
    ]


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
    assert store.changes() == [(SID, "session", "sessionId"), (SID, "agentMessage", "m")]


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
    assert store.changes() == [("s", "agentMessage", "m")]
    assert store["s"].message_text("m") == "new bcd"


# -- how the snapshot shows content ----------------------------------------------------------------


def test_a_run_of_plain_text_blocks_shows_as_one(backend):
    # Chunk boundaries carry no meaning: adjacent text blocks with no member but type and text
    # show as one block (in any key order); blocks with annotations or _meta, and other blocks,
    # stay as sent and end a run. `_message_blocks` (for acpwire.sdk) keeps every block.
    image = {"type": "image", "mimeType": "image/png", "data": "AA=="}
    annotated = {"type": "text", "text": "d", "annotations": {"priority": 1}}
    with_meta = {"type": "text", "text": "h", "_meta": {"x": 1}}
    blocks = [
        text("a"),
        text("b"),
        {"text": "c", "type": "text"},
        annotated,
        text("e"),
        image,
        text("f"),
        text("g"),
        with_meta,
    ]
    chunks = [
        upd({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": b})
        for b in blocks
    ]
    upsert = upd(
        {"sessionUpdate": "agent_message", "messageId": "m2", "content": [text("x"), text("y")]}
    )
    applied = store_of(backend, [*chunks, upsert], version=2)
    fed = backend.Sessions()
    for m in init(2):
        fed.apply(m)
    fed.feed(b"".join(json.dumps(m).encode() + b"\n" for m in [*chunks, upsert]))
    for store in (applied, fed):
        session = store[SID]
        messages = session.snapshot()["messages"]
        assert messages[0]["content"] == [
            text("abc"),
            annotated,
            text("e"),
            image,
            text("fg"),
            with_meta,
        ]
        assert messages[1]["content"] == [text("xy")]
        assert session.message("agent", "m1") == messages[0]
        assert session.message_text("m1") == "abcdefgh"
        assert session._message_blocks(0) == blocks
        assert session._message_blocks(1) == [text("x"), text("y")]
        assert session._message_blocks(2) is None
        assert session._message_blocks(-1) is None
        with pytest.raises(TypeError):
            session._message_blocks("0")


def test_messages_are_found_by_id_and_role_past_the_first_few(backend):
    # Twelve anonymous v1 messages (each ended by a tool call), then real ids: one id under
    # three roles, and a real id spelled as an anonymous one. Past a few messages a session
    # indexes them; each chunk must still reach its own message.
    lines = []
    for k in range(1, 13):
        lines.append(upd({"sessionUpdate": "agent_message_chunk", "content": text(f"a{k}")}))
        lines.append(upd({"sessionUpdate": "tool_call", "toolCallId": f"t{k}", "title": "x"}))
    for kind, mid, body in [
        ("agent_message_chunk", "m", "x"),
        ("agent_thought_chunk", "m", "y"),
        ("user_message_chunk", "m", "z"),
        ("agent_message_chunk", "~3", "r"),
        ("agent_message_chunk", "m", "x2"),
        ("agent_thought_chunk", "m", "y2"),
        ("agent_message_chunk", "~3", "r2"),
    ]:
        lines.append(upd({"sessionUpdate": kind, "messageId": mid, "content": text(body)}))
    store = store_of(backend, lines, version=1)
    s = store[SID]
    got = [(m["id"], m["role"], m["content"]) for m in s.snapshot()["messages"]]
    assert got == [
        *[(f"~{k}", "agent", [text(f"a{k}")]) for k in range(1, 13)],
        ("m", "agent", [text("xx2")]),
        ("m", "thought", [text("yy2")]),
        ("m", "user", [text("z")]),
        ("~3", "agent", [text("rr2")]),
    ]
    # A real id is found before an anonymous one spelled alike; other anonymous ones by name.
    assert s.message_text("~3", "agent") == "rr2"
    assert s.message_text("~4", "agent") == "a4"
    assert s.message_text("m", "user") == "z"
    assert s.message_text("m", "session") is None
