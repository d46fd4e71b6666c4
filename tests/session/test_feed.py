"""Feeding bytes: batches, frame errors, splits anywhere, and the bulk path of message chunks,
which must reduce every shape as the general path does."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_builders import (
    SEEDED,
    SID,
    init,
    ndjson,
    store_of,
    text,
    upd,
)
from session_streams import (
    CHUNK_SHAPES,
    CHUNK_SHAPES_SHORT_DIGITS,
    chunk_json,
    random_stream,
    split_run,
    store_state,
)


def test_batches_and_frame_errors(backend):
    data = ndjson(
        [
            [
                upd(
                    {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("a")}
                ),
                upd(
                    {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("b")}
                ),
            ],
            b"{not json",
            b"[]",
            b'"just a string"',
            upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("c")}),
        ]
    )
    store = backend.Sessions()
    assert store.feed(data) == 5
    assert store[SID].message_text("m") == "abc"
    offsets = [0] + [i + 1 for i, b in enumerate(data) if b == 10]
    assert store.errors == [
        {"line": 2, "offset": offsets[1], "sessionId": None, "reason": "invalid JSON"},
        {"line": 3, "offset": offsets[2], "sessionId": None, "reason": "empty batch"},
        {
            "line": 4,
            "offset": offsets[3],
            "sessionId": None,
            "reason": "invalid message: not a JSON object",
        },
    ]
    assert store.take_errors()[0]["reason"] == "invalid JSON" and store.errors == []


def test_feed_finish_and_too_long(backend):
    store = backend.Sessions(max_frame_bytes=300)
    line = json.dumps(
        upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("x")})
    ).encode()
    assert store.feed(line[:50]) == 0
    assert store.feed(line[50:] + b"\n" + b"[" * 400 + b"\n" + line) == 2
    assert store.finish() == 1
    assert store[SID].message_text("m") == "xx"
    assert [e["reason"] for e in store.errors] == ["frame exceeds max_frame_bytes"]


def test_apply_of_an_empty_batch_is_recorded_as_feed_does(backend):
    store = backend.Sessions()
    store.apply([])
    store.apply(())
    fed = backend.Sessions()
    fed.feed(b"[]\n")
    assert (
        store.errors
        == [{"line": None, "offset": None, "sessionId": None, "reason": "empty batch"}] * 2
    )
    assert fed.errors[0]["reason"] == "empty batch"


def test_sample_trace(backend):
    path = Path(__file__).resolve().parents[2] / "python" / "acpwire" / "data" / "sample-v2.ndjson"
    if not path.is_file():
        pytest.skip("sample trace absent")
    store = backend.reduce_ndjson(path)
    assert store.errors == []
    (sid,) = store.ids()
    s = store[sid]
    assert s.state == "idle" and s.snapshot()["protocolVersion"] == 2


def test_interleaved_chunks_in_one_feed(backend):
    # Chunks of messages in several sessions interleave within one feed, with an upsert that
    # replaces a message's content and other messages made current in between.
    def chunk(mid: str, t: str, sid: str, kind: str = "agent_message_chunk") -> dict:
        return upd({"sessionUpdate": kind, "messageId": mid, "content": text(t)}, sid)

    messages = [
        *init(2),
        chunk("m1", "a", "s1"),
        chunk("m1", "b", "s2"),
        chunk("m1", "c", "s1"),
        upd({"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("X")]}, "s1"),
        chunk("m1", "d", "s1"),
        chunk("m1", "t", "s1", "agent_thought_chunk"),
        chunk("m1", "e", "s1"),
        upd({"sessionUpdate": "agent_message", "messageId": "m1", "content": []}, "s2"),
        chunk("m1", "f", "s2"),
        chunk("m2", "g", "s2"),
        chunk("m1", "h", "s2"),
    ]
    store = backend.Sessions()
    store.feed(ndjson(messages))
    assert store["s1"].message_text("m1") == "Xde"
    assert store["s1"].message_text("m1", "thought") == "t"
    assert store["s2"].message_text("m1") == "fh"
    assert store["s2"].message_text("m2") == "g"
    assert store.changes() == [
        ("s1", "session", "sessionId"),
        ("s1", "agentMessage", "m1"),
        ("s2", "session", "sessionId"),
        ("s2", "agentMessage", "m1"),
        # The thought of the same id is its own entity, named by its role.
        ("s1", "thought", "m1"),
        ("s2", "agentMessage", "m2"),
    ]
    store.feed(ndjson([chunk("m1", "i", "s1")]))
    assert store.changes() == [("s1", "agentMessage", "m1")]
    reference = store_of(backend, [*messages, chunk("m1", "i", "s1")])
    for sid in ("s1", "s2"):
        assert store[sid].snapshot() == reference[sid].snapshot()


# -- message chunks in bulk ------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [CHUNK_SHAPES, CHUNK_SHAPES_SHORT_DIGITS])
def test_chunk_shapes_reduce_as_the_general_path(backend, shapes):
    data = b"\n".join(shapes) + b"\n"
    fed = backend.Sessions()
    fed.feed(data)
    one_by_one = backend.Sessions()
    for line in shapes:
        one_by_one.feed(line[:5])
        one_by_one.feed(line[5:] + b"\n")
    assert store_state(fed) == store_state(one_by_one)
    assert fed.changes() == one_by_one.changes()


def test_chunk_errors_keep_line_and_offset(backend):
    good = chunk_json(b'"a"')
    bad = (
        b'{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":[1],'
        b'"messageId":"m","content":{"type":"text","text":"x"}}}}'
    )
    lines = [good + b"\r", good, b"", bad, good, b"{oops", good]
    data = b"\n".join(lines) + b"\n"
    offsets = [0] + [i + 1 for i, b in enumerate(data) if b == 10]
    store = backend.Sessions()
    assert store.feed(data) == 6
    assert store["s"].message_text("m") == "aaaa"
    assert store.errors == [
        {
            "line": 4,
            "offset": offsets[3],
            "sessionId": "s",
            "reason": "session/update: sessionUpdate must be a string",
        },
        {"line": 6, "offset": offsets[5], "sessionId": None, "reason": "invalid JSON"},
    ]
    assert store.changes() == [
        ("s", "session", "sessionId"),
        ("s", "agentMessage", "m"),
        ("s", "session", "errors"),
    ]


# -- random streams, split anywhere ----------------------------------------------------------------


@SEEDED
@given(seed=st.integers(0, 2**32), cuts=st.lists(st.floats(0, 1), max_size=6))
def test_split_feeding_gives_identical_state(backend, seed, cuts):
    data = ndjson(random_stream(random.Random(seed)))
    whole, whole_changes = split_run(backend, data, [])
    split, split_changes = split_run(backend, data, [int(c * len(data)) for c in cuts])
    assert whole == split
    # Change sets differ by batch boundaries only in grouping, never in content.
    assert {c for cs in whole_changes for c in cs} == {c for cs in split_changes for c in cs}


@SEEDED
@given(seed=st.integers(0, 2**32))
def test_apply_equals_feed(backend, seed):
    messages = random_stream(random.Random(seed))
    fed = backend.Sessions()
    fed.feed(ndjson(messages))
    applied = backend.Sessions()
    for m in messages:
        if not isinstance(m, bytes):
            applied.apply(m)
    strip = lambda e: [{**x, "line": None, "offset": None} for x in e]  # noqa: E731
    a, b = store_state(fed), store_state(applied)
    # Raw malformed frames exist only in the fed stream; everything else matches.
    a["errors"] = [e for e in strip(a["errors"]) if e["sessionId"] is not None]
    b["errors"] = [e for e in strip(b["errors"]) if e["sessionId"] is not None]
    for sid in a["sessions"]:
        a["sessions"][sid][0]["errors"] = strip(a["sessions"][sid][0]["errors"])
    assert a == b


def test_a_batch_of_many_small_entries_is_reduced_without_holding_them_decoded():
    # Native memory: a 32 MiB batch of 16 million `0` entries once took 939 MB decoded whole.
    # The peak is measured from just before the feed (Linux resets it through clear_refs).
    pytest.importorskip("acpwire._native")
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("needs Linux's /proc/self/clear_refs to reset the peak")
    code = (
        "import acpwire._native as n\n"
        "def peak():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            return int(line.split()[1]) * 1024\n"
        "frame = b'[' + b'0,' * (16 * 1024 * 1024 - 3) + b'0]\\n'\n"
        "store = n.Sessions()\n"
        "open('/proc/self/clear_refs', 'w').write('5')\n"
        "before = peak()\n"
        "store.feed(frame)\n"
        "print(peak() - before, len(store.errors), store.errors_dropped)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    grown, kept, dropped = map(int, done.stdout.split())
    # Each entry is applied (and refused: not a message); the last 10,000 records are kept.
    assert kept + dropped == 16 * 1024 * 1024 - 2
    assert grown < 64 * (1 << 20), grown


@pytest.mark.parametrize("module", ["acpwire._native", "acpwire._pure"])
def test_a_frame_of_megabytes_leaves_resident_what_the_store_keeps(module):
    # A 16 MB tool call output fed in 64 KiB pieces once left the native process about 3.7
    # times its size resident (the frame's buffers, freed but kept by the allocator); the
    # store returns them once such a frame is done.
    pytest.importorskip(module)
    code = (
        f"import json, {module} as n\n"
        "def rss():\n"
        "    with open('/proc/self/statm') as fp:\n"
        "        return int(fp.read().split()[1]) * 4096\n"
        "log = ''.join('line %d \\\\ \"quoted\" \\t tab\\n' % i for i in range(500_000))\n"
        "frame = json.dumps({'jsonrpc': '2.0', 'method': 'session/update', 'params': {\n"
        "    'sessionId': 's', 'update': {'sessionUpdate': 'tool_call_update',\n"
        "    'toolCallId': 'c', 'rawOutput': {'log': log}}}}).encode() + b'\\n'\n"
        "pieces = [frame[i:i + 65536] for i in range(0, len(frame), 65536)]\n"
        "store = n.Sessions()\n"
        "before = rss()\n"
        "for piece in pieces:\n"
        "    store.feed(piece)\n"
        "print(rss() - before, len(frame))\n"
    )
    if not Path("/proc/self/statm").exists():
        pytest.skip("needs /proc")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    grown, size = map(int, done.stdout.split())
    assert size > 14_000_000
    # What the store keeps is the value's JSON text (about its wire size).
    assert grown < 2 * size, (grown, size)
