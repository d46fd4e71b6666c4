"""Random streams, split at random offsets: both backends give exactly what json gives."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import BACKENDS, load_backend
from strategies import messages


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, last = [], 0
    for point in points:
        pieces.append(data[last:point])
        last = point
    pieces.append(data[last:])
    return pieces


def run(backend, pieces, **options):
    decoder = backend.FrameDecoder(**options)
    out = []
    for piece in pieces:
        out.extend(decoder.feed(piece))
    out.extend(decoder.finish())
    return out, [(e.reason, e.line, e.offset, e.excerpt) for e in decoder.take_errors()]


@settings(max_examples=150, deadline=None)
@given(
    batch=st.lists(messages, max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
    crlf=st.booleans(),
)
def test_dumped_messages_split_anywhere_decode_like_json(batch, cuts, crlf):
    for name in BACKENDS:
        backend = load_backend(name)
        lines = [backend.dumps(m) for m in batch]
        for line in lines:
            assert line.endswith(b"\n") and line.count(b"\n") == 1
        if crlf:
            lines = [line[:-1] + b"\r\n" for line in lines]
        data = b"".join(lines)
        got, errors = run(backend, split_at(data, cuts))
        assert errors == []
        assert got == [json.loads(line) for line in lines]


# Lines that mix good frames with every kind of bad one.
frame_lines = st.one_of(
    messages.map(lambda m: json.dumps(m, ensure_ascii=False).encode()),
    st.binary(max_size=30),
    st.sampled_from([b"", b"  ", b"[]", b"{", b'{"a":1}x', b"01", b"\xff", b"[1,2]", b"\r"]),
)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(frame_lines, max_size=10),
    cuts=st.lists(st.integers(min_value=0, max_value=2_000), max_size=6),
    cap=st.integers(min_value=1, max_value=200),
    raw=st.booleans(),
)
def test_backends_agree_on_arbitrary_streams(lines, cuts, cap, raw):
    if BACKENDS != ["native", "pure"]:
        return
    native, pure = load_backend("native"), load_backend("pure")
    data = b"\n".join(lines)
    expected = run(native, [data], max_frame_bytes=cap, raw=raw)
    assert run(native, split_at(data, cuts), max_frame_bytes=cap, raw=raw) == expected
    assert run(pure, split_at(data, cuts), max_frame_bytes=cap, raw=raw) == expected


# Fragments that make near-JSON: numbers at their edges, escapes, literals, structure.
_FRAGMENTS = [
    "0",
    "1",
    "9",
    "-",
    "+",
    ".",
    "e",
    "E",
    " ",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    '"',
    "a",
    "\\",
    "u",
    "n",
    "t",
    "true",
    "null",
    "false",
    "1e400",
    '"x"',
    "\t",
    "\r",
    "\\u00e9",
    "\\ud83d",
    "\\ude00",
    "\\ud800",
    "é",
    "\x01",
    "12345678901234567890",
    "-0",
    "0.5",
]


@settings(max_examples=1500, deadline=None)
@given(pieces=st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=10))
def test_backends_agree_on_near_json(pieces):
    """Both backends accept the same documents, with the same values and error reasons."""
    if BACKENDS != ["native", "pure"]:
        return
    text = "".join(pieces)
    outcomes = []
    for name in ("native", "pure"):
        backend = load_backend(name)
        try:
            value = backend.loads(text.encode())
            outcomes.append(("ok", repr(value)))
        except backend.DecodeError:
            outcomes.append(("error", None))
        decoder = backend.FrameDecoder()
        frames = decoder.feed(text.encode() + b"\n")
        outcomes.append((repr(frames), [e.reason for e in decoder.errors]))
    assert outcomes[:2] == outcomes[2:]
    if outcomes[0][0] == "ok":
        import json

        assert outcomes[0][1] == repr(json.loads(text))
