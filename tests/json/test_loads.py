"""loads: json-compatible values, clear errors placed as `json` places them; both backends."""

from __future__ import annotations

import array
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import json_values


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_loads_equals_json_loads(backend, value):
    text = json.dumps(value, ensure_ascii=False)
    assert backend.loads(text) == json.loads(text)
    assert backend.loads(text.encode()) == json.loads(text)
    ascii_text = json.dumps(value)
    assert backend.loads(ascii_text) == json.loads(ascii_text)


def test_loads_values(backend):
    doc = (
        '{"big":123456789012345678901234567890,"neg":-98765432109876543210,"f":1.5e300,'
        '"tiny":5e-324,"esc":"\\u00e9\\ud83d\\ude00\\n\\"","u":"é😀","z":-0,"zf":-0.0}'
    )
    assert backend.loads(doc) == json.loads(doc)
    assert math.copysign(1, backend.loads(doc)["zf"]) == -1
    assert backend.loads("1e400") == math.inf  # as json.loads
    assert backend.loads(b"  [1, 2]\r\n") == [1, 2]


@pytest.mark.parametrize(
    ("doc", "line", "column"),
    [
        ('{"a": 1,\n "b": x}', 2, 7),
        ("[1,\n2,\n]", 3, 1),
        ("", 1, 1),
        ("[1] x", 1, 5),
        ("[1,\n 2 3]", 2, 4),
        ('{"a":\n"\\q"}', 2, 3),
    ],
)
def test_loads_errors_name_line_and_column(backend, doc, line, column):
    with pytest.raises(backend.DecodeError) as info:
        backend.loads(doc)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.line == line
    assert error.column == column
    assert f"line {error.line}" in str(error)


@pytest.mark.parametrize(
    ("doc", "line", "column", "offset", "byte_offset"),
    [
        # At the end of the input: the column after the last character, never 0.
        ("", 1, 1, 0, 0),
        ("[1,", 1, 4, 3, 3),
        ("[1,\n", 2, 1, 4, 4),
        ("[1,\n  ", 2, 3, 6, 6),
        # Columns count characters, offsets count characters of a str and bytes of bytes.
        ('["é", x]', 1, 7, 6, 7),
        ('["é",\n "é" x]', 2, 6, 11, 13),
    ],
)
def test_loads_error_positions(backend, doc, line, column, offset, byte_offset):
    for data, at in ((doc, offset), (doc.encode(), byte_offset)):
        with pytest.raises(backend.DecodeError) as info:
            backend.loads(data)
        assert (info.value.line, info.value.column, info.value.offset) == (line, column, at)


# One document per fault jiter names, each where the fault sits (offsets of the str form).
_FAULTS = [
    ("", "EOF while parsing a value", 0),
    ("[1", "EOF while parsing a list", 2),
    ('{"a": 1', "EOF while parsing an object", 7),
    ('"abc', "EOF while parsing a string", 4),
    ('{"a":', "EOF while parsing a value", 5),
    ('{"a" 1}', "expected `:`", 5),
    ("[1 2]", "expected `,` or `]`", 3),
    ('{"a": 1 "b"}', "expected `,` or `}`", 8),
    ("trux", "expected ident", 3),
    ("[x]", "expected value", 1),
    ('"\\x"', "invalid escape", 2),
    ('"\\u12G4"', "invalid escape", 5),
    ("01", "invalid number", 1),
    ("1.e5", "invalid number", 2),
    ("-Infinity", "invalid number", 1),
    ("1" * 4301, "number out of range", 4301),
    ("[" + "1" * 30 + ", " + "1" * 4301 + ".5]", "number out of range", 4334),
    ('["\x01"]', "control character (\\u0000-\\u001F) found while parsing a string", 2),
    ("{1: 2}", "key must be a string", 1),
    ('"\\udc00"', "lone leading surrogate in hex escape", 6),
    ('"\\ud800\\u0041"', "lone leading surrogate in hex escape", 12),
    ('"\\ud800x"', "unexpected end of hex escape", 7),
    ("[1,]", "trailing comma", 3),
    ('{"a": 1,}', "trailing comma", 8),
    ("[1] x", "trailing characters", 4),
    ("[" * 201 + "1" + "]" * 201, "recursion limit exceeded", 201),
]


@pytest.mark.parametrize(("doc", "msg", "offset"), _FAULTS)
def test_both_backends_name_and_place_each_fault_alike(both, doc, msg, offset):
    found = {}
    for backend in both:
        with pytest.raises(backend.DecodeError) as info:
            backend.loads(doc)
        e = info.value
        assert (e.msg, e.offset) == (msg, offset)
        assert str(e) == f"{msg} at line {e.line} column {e.column}"
        decoder = backend.FrameDecoder()
        decoder.feed(doc.encode() + b"\n")
        decoder.finish()
        found[backend] = [(str(f), f.detail) for f in decoder.take_errors()]
        if doc.strip():
            assert found[backend][0][1].startswith(msg + " at line 1 column ")
    native, pure = found.values()
    assert native == pure


def test_a_long_integer_part_is_refused_in_a_float_too(backend):
    # jiter's rule (CPython's limit on int conversion), whatever else the document holds.
    long = "1" * 4301 + ".5"
    for doc in (long, f"[{long}]", f"[1e400, {long}]", f"[{'9' * 20}, {long}]"):
        with pytest.raises(backend.DecodeError, match="number out of range"):
            backend.loads(doc)
    assert backend.loads("1" * 4300 + ".5") == float("1" * 4300 + ".5")


@pytest.mark.parametrize(
    "doc", [b"NaN", b"Infinity", b"[1,]", b'"\xff"', b'"\\ud800"', b"01", b"1.", b"{} {}", b"-"]
)
def test_loads_rejects(backend, doc):
    with pytest.raises(backend.DecodeError):
        backend.loads(doc)


def test_loads_rejects_surrogates_in_str(backend):
    with pytest.raises(backend.DecodeError):
        backend.loads('"\ud800"')


def test_loads_rejects_other_types(backend):
    with pytest.raises(TypeError):
        backend.loads(123)


@settings(max_examples=500, deadline=None)
@given(
    pieces=st.lists(
        st.one_of(
            st.binary(max_size=8),
            st.sampled_from([b"\n", b" ", b"a", b'"']),
            st.integers(1, 40).map(lambda n: b"7" * n),
        ),
        max_size=200,
    )
)
def test_sampled_digit_run_search_is_exact(pieces):
    from acpwire._pure.json.loads import has_long_digit_run, has_long_digits

    block = b"".join(pieces)
    assert has_long_digit_run(block) == has_long_digits(block)


def test_sampled_digit_run_search_at_every_offset():
    from acpwire._pure.json.loads import has_long_digit_run

    for length in (18, 19, 25):
        for offset in range(40):
            block = b"x" * offset + b"1" * length + b"\n" + (b"2" * 18 + b" ") * 70
            assert has_long_digit_run(block) == (length >= 19), (length, offset)
    # Digit-heavy data past the sample's budget: the full search decides.
    assert not has_long_digit_run(b"123456789012345678 " * 1000)
    assert has_long_digit_run(b"123456789012345678 " * 1000 + b"1234567890123456789")


@settings(max_examples=500, deadline=None)
@given(
    pieces=st.lists(
        st.one_of(
            st.binary(max_size=8),
            st.sampled_from([b"{", b"[", b"{[", b'"', b"x" * 70]),
            st.integers(1, 80).map(lambda n: b"[" * n),
        ),
        max_size=300,
    ),
    limit=st.sampled_from([0, 5, 200]),
)
def test_bracket_search_never_says_few_of_many(pieces, limit):
    from acpwire._pure.json.loads import few_opens

    data = b"".join(pieces)
    opens = data.count(b"{") + data.count(b"[")
    if few_opens(data, limit):
        assert opens <= limit
    # Sparse brackets (one in 64 bytes or fewer) are never given up on.
    if opens <= limit and opens * 64 <= len(data) and b"[" * 2 not in data:
        assert few_opens(data, limit) or opens >= 32


def test_bracket_search_decides_payload_lines():
    from acpwire._pure.json.loads import few_opens

    payload = b'{"data":"' + b"A" * 4000 + b'","list":[1,2]}'
    assert few_opens(payload, 200)
    assert not few_opens(b"[" * 201 + b"]" * 201, 200)
    # Dense brackets: given up on within a few dozen finds, past the limit or not.
    assert not few_opens(b"[]" * 100, 200)


class Name(str):
    pass


def test_loads_reads_a_str_subclass_as_its_str(backend):
    assert backend.loads(Name('{"a": [1]}')) == {"a": [1]}


class LoudDocument(str):
    def __str__(self) -> str:
        return '["overridden"]'


def test_loads_reads_what_a_str_subclass_holds_not_its_str(backend):
    # `str()` of a (str, Enum) member or of a subclass like this is not its characters.
    assert backend.loads(LoudDocument('{"a": 1}')) == json.loads('{"a": 1}') == {"a": 1}


def test_loads_skips_a_utf8_byte_order_mark_in_bytes_as_json_does(backend):
    for data in (b'\xef\xbb\xbf{"a":1}', bytearray(b'\xef\xbb\xbf{"a":1}')):
        assert backend.loads(data) == json.loads(bytes(data)) == {"a": 1}
    with pytest.raises(backend.DecodeError) as caught:
        backend.loads(b'\xef\xbb\xbf{"a":}')
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(b'\xef\xbb\xbf{"a":}')
    assert (caught.value.line, caught.value.column) == (expected.value.lineno, 6)
    assert expected.value.colno == 6
    # In a str it is a character, which JSON does not allow there (json refuses it too).
    with pytest.raises(backend.DecodeError):
        backend.loads('\ufeff{"a":1}')


def test_loads_takes_any_buffer_of_bytes(backend):
    assert backend.loads(array.array("b", b"[1]")) == [1]
    assert backend.loads(memoryview(b"[2]").cast("b")) == [2]
    assert backend.loads(memoryview(b"3").cast("B", ())) == 3
    with pytest.raises(TypeError, match=r"not array of item format 'i'"):
        backend.loads(array.array("i", [1]))
    released = memoryview(b"1")
    released.release()
    with pytest.raises(ValueError, match="released memoryview"):
        backend.loads(released)


@pytest.mark.parametrize(
    "doc, msg",
    [
        (r'{"a":"\ud800","a":1}', "unexpected end of hex escape"),
        ('{"a":' + "[" * 250 + "]" * 250 + ',"a":1}', "recursion limit exceeded"),
        # Deeper than `json` reads (Python's recursion limit), not than orjson does.
        ('{"a":' + "[" * 1010 + "]" * 1010 + ',"a":1}', "recursion limit exceeded"),
    ],
)
def test_a_repeated_key_does_not_hide_a_rejected_value(backend, doc, msg):
    # The last value of a repeated key wins, yet every value is read and must be valid.
    with pytest.raises(ValueError, match=msg):
        backend.loads(doc)
    decoder = backend.FrameDecoder()
    assert decoder.feed(doc.encode() + b'\n{"ok":1}\n') == [{"ok": 1}]
    [error] = decoder.take_errors()
    assert error.reason == "invalid JSON" and msg in str(error)


def test_loads_reads_long_integers_whatever_the_str_digit_limit(backend):
    import sys

    if not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("no str digit limit before Python 3.11")
    digits = "7" * 2000
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        value = backend.loads(f"[{digits}]")
        decoder = backend.FrameDecoder()
        frames = decoder.feed(f'{{"a":1}}\n[{digits}]\n{{"b":2}}\n'.encode())
    finally:
        sys.set_int_max_str_digits(previous)
    assert value == [int(digits)]
    assert frames == [{"a": 1}, int(digits), {"b": 2}] and decoder.errors == []


def _large(doc: str) -> str:
    """``doc`` inside an object padded past the pure backend's large-document size."""
    from acpwire._pure.json import LARGE_DOCUMENT

    filler = '{"line":"fn main() { \\"\\\\t\\" }","n":12}'
    count = LARGE_DOCUMENT // len(filler) + 1
    return '{"doc":' + doc + ',"pad":[' + ",".join([filler] * count) + "]}"


@pytest.mark.parametrize(
    "doc",
    [
        '{"big":123456789012345678901234567890,"f":1.5e300,"e":"\\u00e9\\ud83d\\ude00","z":-0.0}',
        '{"k":1,"k":[2,{"k":3,"k":4}]}',
        "[" * 150 + "]" * 150,
    ],
)
def test_large_documents_decode_as_small_ones(both, doc):
    # Past LARGE_DOCUMENT the pure backend decodes with `json`, not orjson: the same values.
    native, pure = both
    text = _large(doc)
    assert pure.loads(text) == native.loads(text) == json.loads(text)
    assert pure.loads(text.encode()) == native.loads(text.encode())


@pytest.mark.parametrize(
    ("doc", "msg"),
    [
        ('["\\ud800"]', "hex escape"),
        ('{"k":["\\udc00"],"k":1}', "hex escape"),
        ('{"k":' + "[" * 201 + "]" * 201 + ',"k":1}', "recursion limit exceeded"),
        ("[1,]", "trailing comma"),
    ],
)
def test_large_documents_are_refused_as_small_ones(both, doc, msg):
    text = _large(doc)
    errors = []
    for backend in both:
        with pytest.raises(ValueError) as caught:
            backend.loads(text)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert msg in errors[0], errors[0]


def test_a_large_document_peaks_near_its_value_on_the_pure_backend():
    # orjson reads a whole document into a tree of its own before it builds the value, at
    # about 3.5 times the value's memory; the pure backend's large-document path holds the
    # value and the text.
    import tracemalloc

    from acpwire._pure.json import loads

    text = _large("1").encode()
    tracemalloc.start()
    try:
        value = loads(text)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(value["pad"]) > 10_000
    assert peak <= held + 3 * len(text), (peak, held, len(text))
