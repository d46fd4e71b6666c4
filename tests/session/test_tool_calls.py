"""Tool calls: patches (null against omitted), content chunks, and the version's rules."""

from __future__ import annotations

import pytest

from session_builders import (
    SID,
    snap,
    store_of,
    text,
    upd,
)


@pytest.mark.parametrize("kind", ["tool_call_update", "session_info_update"])
def test_patches_with_many_fields_keep_dict_semantics(backend, kind):
    # Enough fields that the native reducer patches through a key index rather than by scanning:
    # the result must still be a dict's, order included (kept keys stay in place, new and
    # re-added keys go last, null removes).
    def update(fields: dict) -> dict:
        head = {"sessionUpdate": kind}
        if kind == "tool_call_update":
            head["toolCallId"] = "c1"
        return upd({**head, **fields})

    def entity(store) -> dict:
        snapshot = store[SID].snapshot()
        return snapshot["toolCalls"]["c1"] if kind == "tool_call_update" else snapshot["info"]

    fields = {f"f{i}": i for i in range(400)}
    patch = {f"f{i}": None for i in range(0, 400, 3)}
    patch.update({f"f{i}": -i for i in range(1, 400, 3)})
    patch.update({f"g{i}": i for i in range(50)})
    patch["absent"] = None
    again = {"f0": "back", "f3": "back", "f1": "kept in place"}
    store = store_of(backend, [update(fields), update(patch), update(again)], version=2)
    expected = {"toolCallId": "c1"} if kind == "tool_call_update" else {}
    expected.update(fields)
    for changes in (patch, again):
        for k, v in changes.items():
            if v is None:
                expected.pop(k, None)
            else:
                expected[k] = v
    got = entity(store)
    assert got == expected
    assert list(got) == list(expected)


def test_tool_call_content_chunks_then_replace(backend):
    msgs = [
        upd(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "title": "t",
                "content": [{"type": "content", "content": text("0")}],
            }
        ),
        upd(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "c",
                "content": {"type": "content", "content": text("1")},
            }
        ),
        upd(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "c",
                "content": {"type": "_custom", "x": [1]},
                "_meta": {"chunk": True},
            }
        ),
    ]
    store = store_of(backend, msgs, version=2)
    s = store[SID]
    assert [c.get("content", c) for c in s.snapshot()["toolCalls"]["c"]["content"]] == [
        text("0"),
        text("1"),
        {"type": "_custom", "x": [1]},
    ]
    store.apply(
        upd(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "content": [{"type": "diff", "changes": []}],
            }
        )
    )
    assert s.snapshot()["toolCalls"]["c"]["content"] == [{"type": "diff", "changes": []}]
    store.apply(
        upd(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "c",
                "content": {"type": "terminal", "terminalId": "t1"},
            }
        )
    )
    assert len(s.snapshot()["toolCalls"]["c"]["content"]) == 2
    store.apply(upd({"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": []}))
    assert "content" not in s.snapshot()["toolCalls"]["c"]


def test_v1_tool_call_replaces_and_keeps_position(backend):
    s = snap(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "a",
                    "title": "A",
                    "kind": "read",
                    "extra": 1,
                }
            ),
            upd({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "B"}),
            upd({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A2"}),
        ],
        version=1,
    )
    assert s["toolCalls"] == {
        "a": {"toolCallId": "a", "title": "A2"},
        "b": {"toolCallId": "b", "title": "B"},
    }
    assert [t["id"] for t in s["timeline"]] == ["a", "b"]


def test_version_decides_known_variants(backend):
    v1_in_v2 = snap(
        backend, [upd({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A"})], version=2
    )
    assert v1_in_v2["toolCalls"] == {} and v1_in_v2["other"][0]["sessionUpdate"] == "tool_call"
    v2_in_v1 = snap(
        backend, [upd({"sessionUpdate": "state_update", "state": "running"})], version=1
    )
    assert v2_in_v1["state"] is None and v2_in_v1["other"] == [
        {"sessionUpdate": "state_update", "state": "running"}
    ]
    both = snap(
        backend,
        [
            upd({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A"}),
            upd({"sessionUpdate": "state_update", "state": "running"}),
        ],
    )
    assert (
        both["protocolVersion"] is None and "a" in both["toolCalls"] and both["state"] == "running"
    )
