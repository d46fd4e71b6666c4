"""Sessions on both backends against each other: random streams split anywhere, chunk
shapes, workloads, apply, and the terminals' store bound."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_builders import (
    SID,
    b64,
    init,
    ndjson,
    output_chunk,
    upd,
)
from session_streams import (
    CHUNK_SHAPES,
    CHUNK_SHAPES_SHORT_DIGITS,
    PTY_PIECES,
    bulk_run,
    random_stream,
    split_run,
    store_state,
)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), cuts=st.lists(st.floats(0, 1), max_size=4))
def test_native_and_pure_agree(both, seed, cuts):
    native, pure = both
    data = ndjson(random_stream(random.Random(seed), n=80))
    at = [int(c * len(data)) for c in cuts]
    assert split_run(native, data, at) == split_run(pure, data, at)


@pytest.mark.parametrize("shapes", [CHUNK_SHAPES, CHUNK_SHAPES_SHORT_DIGITS])
@pytest.mark.parametrize("cap", [None, 150])
def test_chunk_shapes_agree_however_split(both, shapes, cap):
    data = b"\n".join(shapes) + b"\n"
    options = {} if cap is None else {"max_frame_bytes": cap}
    native, pure = both
    whole = bulk_run(native, data, [], **options)
    assert bulk_run(pure, data, [], **options) == whole
    ends = [i + 1 for i, b in enumerate(data) if b == 10]
    rng = random.Random(7)
    for cuts in (ends, [e - 3 for e in ends], [rng.randrange(len(data)) for _ in range(12)]):
        assert bulk_run(native, data, cuts, **options) == bulk_run(pure, data, cuts, **options)
    # Line by line, and with no newline before finish.
    assert bulk_run(pure, data[:-1], ends[:-1], **options) == bulk_run(
        native, data[:-1], ends[:-1], **options
    )


def test_native_and_pure_agree_on_workloads(both):
    from acpwire.workloads.sessions import heavy_terminal, mixed_sessions, token_stream

    for data in (
        token_stream(3000),
        heavy_terminal(300_000),
        mixed_sessions(updates=5000),
        mixed_sessions(updates=5000, version=1, seed=1),
    ):
        assert split_run(both[0], data, [len(data) // 3]) == split_run(
            both[1], data, [len(data) // 3]
        )


def test_native_and_pure_agree_on_apply(both):
    for seed in range(40):
        messages = [m for m in random_stream(random.Random(seed)) if not isinstance(m, bytes)]
        stores = []
        for backend in both:
            store = backend.Sessions()
            for m in messages:
                store.apply(m)
            stores.append((store_state(store), store.changes()))
        assert stores[0] == stores[1], seed


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    cuts=st.lists(st.floats(0, 1), max_size=4),
    budget=st.integers(0, 300),
)
def test_native_and_pure_agree_on_clearing_terminals_past_the_store_bound(both, seed, cuts, budget):
    # Six terminals over two sessions, 20 columns wide, under a bound they soon pass.
    native, pure = both
    data = ndjson(random_stream(random.Random(seed), n=80))
    at = [int(c * len(data)) for c in cuts]
    options = {"terminal_cols": 20, "max_terminal_bytes": budget}
    split = bulk_run(native, data, at, **options)
    assert bulk_run(pure, data, at, **options) == split
    assert bulk_run(native, data, [], **options)[0] == split[0]


@settings(max_examples=150, deadline=None)
@given(
    programs=st.lists(
        st.tuples(
            st.sampled_from(["s1", "s2"]),
            st.sampled_from(["a", "b", "c"]),
            st.lists(st.sampled_from(PTY_PIECES), min_size=1, max_size=12),
            st.sampled_from(["chunk", "chunk", "chunk", "output", "null"]),
        ),
        max_size=14,
    ),
    budget=st.integers(0, 3000),
    cols=st.sampled_from([None, 5, 20]),
    changes_at=st.sets(st.integers(0, 14)),
)
def test_what_terminals_hold_is_counted_alike_on_both_backends(
    both, programs, budget, cols, changes_at
):
    # Which terminals a bound clears depends on what each holds (scrollback, both screens,
    # wrapped rows, styles, clusters): any difference in the counting shows as a different
    # terminal cleared.
    messages = []
    for sid, tid, pieces, how in programs:
        data = b"".join(pieces)
        if how == "chunk":
            messages.append(output_chunk(tid, data, sid=sid))
        else:
            output = None if how == "null" else {"data": b64(data)}
            messages.append(
                upd(
                    {"sessionUpdate": "terminal_update", "terminalId": tid, "output": output},
                    sid=sid,
                )
            )
    results = []
    for backend in both:
        store = backend.Sessions(max_terminal_bytes=budget, terminal_cols=cols, scrollback=5)
        seen = []
        for i, m in enumerate(messages):
            store.apply(m)
            if i in changes_at:
                seen.append(store.changes())
        results.append((store_state(store), seen, store.changes()))
    assert results[0] == results[1]


def _v1_chunk_line(rng: random.Random) -> dict:
    """A message chunk as v1 agents write it: mostly without messageId, now and then with
    `_meta` (an object, null, or a type the general path repairs), another role, another
    session, or a block that is not plain text."""
    update: dict = {
        "sessionUpdate": rng.choice(
            ["agent_message_chunk"] * 4 + ["agent_thought_chunk", "user_message_chunk"]
        ),
        "content": rng.choice(
            [{"type": "text", "text": rng.choice(["a", "bé", "", "\n"])}] * 6
            + [{"text": "r", "type": "text"}, {"type": "image", "data": "AA=="}]
        ),
    }
    pick = rng.random()
    if pick < 0.1:
        update["messageId"] = rng.choice(["m1", "~1", None])
    elif pick < 0.3:
        update["_meta"] = rng.choice([{}, {"k": [1]}, None, "x", [1]])
    elif pick < 0.35:
        update["extra"] = 1
    return upd(update, sid=rng.choice(["s"] * 5 + ["t"]))


def _between_chunks(rng: random.Random) -> dict:
    """What ends a v1 message: a tool call, a plan, a terminal."""
    return rng.choice(
        [
            upd(
                {"sessionUpdate": "tool_call", "toolCallId": f"c{rng.randint(0, 3)}", "title": "t"},
                sid="s",
            ),
            upd({"sessionUpdate": "plan", "entries": []}, sid="s"),
            upd(
                {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"x")},
                sid="s",
            ),
        ]
    )


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    version=st.sampled_from([None, 1, 2]),
    cuts=st.lists(st.floats(0, 1), max_size=4),
)
def test_v1_chunks_agree_however_split(both, seed, version, cuts):
    # The streaming paths of both backends take v1 chunks without messageId and chunks with
    # `_meta`: they must place each chunk where the general path would, whatever came between.
    native, pure = both
    rng = random.Random(seed)
    messages = [] if version is None else init(version)
    for _ in range(60):
        messages.append(_v1_chunk_line(rng) if rng.random() < 0.85 else _between_chunks(rng))
    data = ndjson(messages)
    at = [int(c * len(data)) for c in cuts]
    assert split_run(native, data, at) == split_run(pure, data, at)
    # And as the general path alone reduces them, one message at a time.
    applied = pure.Sessions()
    for m in messages:
        applied.apply(m)
    fed = pure.Sessions()
    fed.feed(data)
    fed.finish()
    assert _positionless(fed) == _positionless(applied)


def _positionless(store) -> dict:
    """Every session's snapshot, its error records without line and offset (`apply` has no
    stream position)."""
    out = {}
    for sid in store.ids():
        snapshot = store[sid].snapshot()
        for error in snapshot["errors"]:
            error.pop("line", None)
            error.pop("offset", None)
        out[sid] = snapshot
    return out


_OTHER_BLOCKS = [
    {"type": "resource_link", "name": "main.rs", "uri": "file:///src/main.rs"},
    {"uri": "file:///a b", "type": "resource_link", "name": 'é\n"q"', "size": 12},
    {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo=" * 40},
    {"type": "resource", "resource": {"uri": "u", "text": "t", "n": [1, -2.5, 2**70, None]}},
    {"type": "audio", "data": "AAAA", "_meta": {"k": {"deep": [True]}}},
    {"type": "image", "text": "not text"},
]


def _block_chunk_line(rng: random.Random) -> bytes:
    """A v2 chunk whose content is a block of another type (now and then plain text, a text
    block with more members, or a repeated key written into the JSON text)."""
    pick = rng.random()
    if pick < 0.2:
        content = {"type": "text", "text": rng.choice(["a", "bé", ""])}
    elif pick < 0.25:
        content = {"type": "text", "text": "x", "annotations": None}
    else:
        content = rng.choice(_OTHER_BLOCKS)
    update = {
        "sessionUpdate": rng.choice(["agent_message_chunk"] * 3 + ["user_message_chunk"]),
        "messageId": rng.choice(["m1", "m2", "m3"]),
        "content": content,
    }
    line = ndjson([upd(update, sid=rng.choice(["s", "s", "t"]))])
    if rng.random() < 0.1:
        # A key repeated inside the block: the last value, in the first key's place.
        line = line.replace(b'"type":"image",', b'"type":"image","data":"x",', 1)
    return line


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), cuts=st.lists(st.floats(0, 1), max_size=4))
def test_chunks_of_other_blocks_agree_however_split(both, seed, cuts):
    # The native streaming path keeps a block that is not text as its JSON text: it must show
    # and cost what the general path's tree does, on both backends.
    native, pure = both
    rng = random.Random(seed)
    data = ndjson(init(2)) + b"".join(_block_chunk_line(rng) for _ in range(40))
    at = [int(c * len(data)) for c in cuts]
    assert split_run(native, data, at) == split_run(pure, data, at)
    retained = []
    for backend in both:
        fed = backend.Sessions()
        fed.feed(data)
        fed.finish()
        applied = backend.Sessions()
        for line in data.splitlines():
            applied.apply(backend.loads(line))
        assert _positionless(fed) == _positionless(applied)
        assert fed.retained_bytes == applied.retained_bytes
        retained.append(fed.retained_bytes)
    assert retained[0] == retained[1]


# Values each field of a tool call may take in a patch: ones the native store keeps typed (a
# title, a kind or status the schemas name) and ones it must keep as sent, and nulls.
_TOOL_CALL_VALUES = {
    "title": ["t", "Read file", 5, None, ["x"]],
    "kind": ["read", "switch_mode", "weird", None, 3],
    "status": ["pending", "completed", "cancelled", "waiting", None, {}],
    "rawInput": [{"a": 1}, None],
    "content": [[{"type": "text", "text": "x"}], [], None],
    "_meta": [{"m": 1}, None],
    "extra": [1, None],
}


def _tool_call_patches(rng: random.Random, version: int) -> list[dict]:
    out = init(version)
    for _ in range(40):
        variant = rng.choice(
            ["tool_call", "tool_call_update", "tool_call_update", "tool_call_content_chunk"]
        )
        update: dict = {"sessionUpdate": variant, "toolCallId": rng.choice("abc")}
        if variant == "tool_call_content_chunk":
            update["content"] = {"type": "text", "text": "y"}
        else:
            for key in rng.sample(list(_TOOL_CALL_VALUES), rng.randint(0, 5)):
                update[key] = rng.choice(_TOOL_CALL_VALUES[key])
            if variant == "tool_call" and rng.random() < 0.8:
                update["title"] = "T"
        out.append(upd(update))
    return out


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("seed", range(12))
def test_tool_call_fields_agree_in_order(both, version, seed):
    """A tool call's fields, typed or not, set again, cleared and back, come out in the same
    order on both backends (dicts compare regardless of order, so compare the JSON text)."""
    data = ndjson(_tool_call_patches(random.Random(seed), version))
    texts = []
    for backend in both:
        store = backend.Sessions()
        store.feed(data)
        store.finish()
        texts.append((json.dumps(store[SID].snapshot()["toolCalls"]), store.errors))
    assert texts[0] == texts[1]
    assert texts[0][0] != "{}"


@pytest.mark.parametrize("max_payload_bytes", [None, 64 << 20, 300_000])
def test_large_opaque_values_cost_alike(both, max_payload_bytes):
    """A payload kept as JSON text (pure, from 256 KiB frames) costs what the decoded value
    costs, and a stub replaces it past max_payload_bytes, on both backends."""
    hits = [{"path": f"p{i}", "line": i, "text": f"t{i} \\ é"} for i in range(8_000)]
    data = ndjson(
        [
            *init(2),
            upd({"sessionUpdate": "tool_call_update", "toolCallId": "c", "rawOutput": hits}),
            upd({"sessionUpdate": "tool_call_update", "toolCallId": "d", "rawInput": {"h": hits}}),
        ]
    )
    found = []
    for backend in both:
        store = backend.Sessions(max_payload_bytes=max_payload_bytes)
        for at in range(0, len(data), 65536):
            store.feed(data[at : at + 65536])
        found.append((store.retained_bytes, store[SID].snapshot(), store.errors))
    assert found[0] == found[1]
    calls = found[0][1]["toolCalls"]
    stubbed = max_payload_bytes == 300_000
    assert (calls["c"]["rawOutput"] == hits) is not stubbed
    assert (calls["d"]["rawInput"] == {"h": hits}) is not stubbed


def _payload_lines(rng: random.Random) -> list[dict]:
    """Frames long enough that the pure reducer checks their block as payloads: a long text
    or data member pads each, and some hold an integer beyond 64 bits where a store keeps it,
    where it does not (a chunk's `_meta`), or nest past the decoder's depth."""
    pad = "x" * 500
    big = 123456789012345678901234567
    out: list[dict] = []
    for i in range(30):
        pick = rng.randrange(7)
        mid = f"m{i % 3}"
        if pick == 0:
            out.append(
                upd(
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": mid,
                        "content": {"type": "text", "text": pad},
                        "_meta": {"n": big},
                    }
                )
            )
        elif pick == 1:
            out.append(
                upd(
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": mid,
                        "content": {
                            "type": "image",
                            "mimeType": "image/png",
                            "data": pad,
                            "annotations": {"priority": big},
                        },
                    }
                )
            )
        elif pick == 2:
            out.append(
                upd(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": f"c{i}",
                        "title": pad,
                        "rawInput": {"n": big, "m": -big},
                    }
                )
            )
        elif pick == 3:
            out.append(
                upd(
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": mid,
                        "content": {"type": "image", "mimeType": "image/png", "data": pad},
                    }
                )
            )
        elif pick == 4:
            out.append(
                upd(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": f"c{i}",
                        "rawOutput": [[{"a": [i]}] * 3] * 10,
                        "title": pad,
                    }
                )
            )
        elif pick == 5:
            deep: object = i
            for _ in range(201):
                deep = [deep]
            out.append(
                upd(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "c",
                        "rawOutput": deep,
                        "title": pad,
                    }
                )
            )
        else:
            out.append(
                {
                    "jsonrpc": "2.0",
                    "id": big,
                    "method": "session/update",
                    "params": {
                        "sessionId": SID,
                        "update": {
                            "sessionUpdate": "agent_message_chunk",
                            "messageId": mid,
                            "content": {"type": "text", "text": pad},
                        },
                    },
                }
            )
    return out


@pytest.mark.parametrize("seed", range(8))
def test_payload_blocks_keep_long_integers_and_depth_alike(both, seed):
    """Integers beyond 64 bits read back exact wherever a store keeps them, and a frame nested
    past the depth limit is refused, in blocks of long lines as in short ones (compared as
    JSON text: 10**24 == 1e24 in Python)."""
    rng = random.Random(seed)
    data = ndjson([*init(2), *_payload_lines(rng)])
    ends = [i + 1 for i, b in enumerate(data) if b == 10]
    seen = []
    for backend in both:
        for cuts in ([], ends[::7], [rng.randrange(len(data)) for _ in range(5)]):
            store = backend.Sessions()
            at = 0
            for cut in sorted(cuts):
                store.feed(data[at:cut])
                at = max(at, cut)
            store.feed(data[at:])
            store.finish()
            snap = store[SID].snapshot()
            seen.append(
                (json.dumps(snap, sort_keys=True), json.dumps(store.errors, sort_keys=True))
            )
    assert all(s == seen[0] for s in seen)
    assert "123456789012345678901234567" in seen[0][0]
    assert "invalid JSON" in seen[0][1]
