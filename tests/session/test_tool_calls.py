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


def _large_output(extra: object) -> dict:
    # Over 256 KiB of JSON: the pure store keeps such a value as its JSON text.
    hits = [
        {"path": f"src/m{i}.rs", "line": i, "score": i / 7, "text": f'hit {i} \\ "q" é 😀\t'}
        for i in range(6_000)
    ]
    return {"matches": hits, "extra": extra, "neg": -0.0, "none": None, "flag": True}


@pytest.mark.parametrize(
    ("extra", "raw_text"),
    [
        ("plain", None),
        # Values orjson cannot write back as they read (beyond 64 bits, infinity): kept as
        # decoded.
        (2**70, "1180591620717411303424"),
        (float("inf"), "1e400"),
    ],
)
def test_a_large_opaque_value_reads_back_as_sent(backend, extra, raw_text):
    import json

    value = _large_output("@")
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": SID,
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c1",
                    "rawOutput": value,
                    "rawInput": [value["matches"][:2]],
                },
            },
        }
    )
    literal = raw_text if raw_text is not None else json.dumps(extra)
    line = body.replace('"extra": "@"', f'"extra": {literal}').encode("utf-8", "surrogatepass")
    assert len(line) > 512 * 1024
    # Whole, and in pieces as a stream brings it.
    for pieces in ([line + b"\n"], [line[i : i + 65536] for i in range(0, len(line), 65536)]):
        store = backend.Sessions()
        for piece in pieces:
            store.feed(piece)
        store.feed(b"\n")
        assert store.errors == []
        got = store[SID].snapshot()["toolCalls"]["c1"]
        assert got["rawOutput"] == {**value, "extra": extra}
        assert json.dumps(got["rawOutput"]["neg"]) == "-0.0"
        assert got["rawInput"] == [value["matches"][:2]]
        assert store[SID].tool_call("c1") == got
