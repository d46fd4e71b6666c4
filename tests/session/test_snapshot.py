"""The store's API and snapshots: copies, nulls left out of stored entities."""

from __future__ import annotations

import copy
import io
import json

import pytest

from session_builders import (
    SID,
    ndjson,
    store_of,
    text,
    upd,
)


def test_store_api(backend, tmp_path):
    data = ndjson(
        [
            upd(
                {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("a")},
                sid=s,
            )
            for s in ("b", "a")
        ]
    )
    store = backend.Sessions()
    store.feed(data)
    assert store.ids() == ["b", "a"] and len(store) == 2 and "a" in store and "zz" not in store
    with pytest.raises(KeyError):
        store["zz"]
    path = tmp_path / "trace.ndjson"
    path.write_bytes(data[:-1])  # no final newline: replay finishes the stream
    for source in (path, str(path), io.BytesIO(data[:-1])):
        replayed = backend.reduce_ndjson(source)
        assert replayed.ids() == ["b", "a"] and replayed["a"].message_text("m") == "a"
    with pytest.raises(TypeError):
        store.apply({"jsonrpc": "2.0", "method": "x", "params": {"bad": object()}})


def test_snapshot_is_a_copy(backend):
    store = store_of(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c",
                    "content": [{"type": "content", "content": text("a")}],
                }
            )
        ],
    )
    first = store[SID].snapshot()
    kept = copy.deepcopy(first)
    first["toolCalls"]["c"]["content"].append("junk")
    store.apply(
        upd(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "c",
                "content": {"type": "content", "content": text("b")},
            }
        )
    )
    assert kept["toolCalls"]["c"]["content"] == [{"type": "content", "content": text("a")}]
    assert len(store[SID].snapshot()["toolCalls"]["c"]["content"]) == 2
    json.dumps(store[SID].snapshot())
