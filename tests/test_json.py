"""loads and dumps: json-compatible values, orjson-compatible bytes, clear errors."""

from __future__ import annotations

import array
import ctypes
import dataclasses
import datetime
import decimal
import enum
import json
import math
import re
import uuid
from collections import namedtuple

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import json_values, messages
from subclasses import LoudDict, LoudList


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_loads_equals_json_loads(backend, value):
    text = json.dumps(value, ensure_ascii=False)
    assert backend.loads(text) == json.loads(text)
    assert backend.loads(text.encode()) == json.loads(text)
    ascii_text = json.dumps(value)
    assert backend.loads(ascii_text) == json.loads(ascii_text)


@settings(max_examples=200, deadline=None)
@given(value=messages)
def test_dumps_roundtrip_and_shape(backend, value):
    frame = backend.dumps(value)
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    assert backend.loads(frame) == value
    assert json.loads(frame) == value


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_backends_write_identical_bytes(both, value):
    native, pure = both
    assert native.dumps(value) == pure.dumps(value)


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


def test_limit_errors_are_placed_alike(both):
    # Too deep and too many digits: both backends name the same fault at the same place (the
    # bracket one level too deep, the end of the over-long integer), whatever comes after.
    native, pure = both
    docs = [
        "[" * 202 + "]" * 202,
        '["a", ' + "[" * 201 + "]" * 201 + "]",
        '["[[[", ' + "[" * 201 + "]" * 201 + "]",
        '{"a":' * 202 + "1" + "}" * 202,
        "[" * 300,
        "\n" + "[" * 202 + "x",
        "1" * 4301,
        "[" + "1" * 4301 + "]",
        "-" + "1" * 4301,
        '{"é": [' + "1" * 4301 + "]}",
    ]
    for doc in docs:
        for data in (doc, doc.encode()):
            found = []
            for backend in (native, pure):
                with pytest.raises(backend.DecodeError) as info:
                    backend.loads(data)
                e = info.value
                found.append((str(e), e.line, e.column, e.offset))
            assert found[0] == found[1], doc[:20]
            assert found[0][0].startswith(("recursion limit exceeded", "number out of range"))


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


def test_invalid_utf8_is_placed_alike(both):
    for doc in (b'"\xff"', b'["ok", "a\xe2\x82"]', b"[\xc3]", b'"\\n\xff"'):
        found = []
        for backend in both:
            with pytest.raises(backend.DecodeError) as info:
                backend.loads(doc)
            found.append((info.value.msg, info.value.line, info.value.column, info.value.offset))
        assert found[0] == found[1], doc


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


def test_dumps_is_compact_utf8(backend):
    assert backend.dumps({"a": [1, 2.5, None, True], "é": "😀\n\t\x00"}) == (
        '{"a":[1,2.5,null,true],"é":"😀\\n\\t\\u0000"}\n'.encode()
    )
    assert (
        backend.dumps(("x", 2**70, -(2**64)))
        == b'["x",1180591620717411303424,-18446744073709551616]\n'
    )
    assert backend.dumps([math.nan, math.inf]) == b"[null,null]\n"  # as orjson
    assert backend.dumps(1e16) == b"1e+16\n"


@pytest.mark.parametrize("prefix", [0, 7, 16, 31, 4095, 4096])
def test_dumps_escapes_every_position_and_length(backend, prefix):
    # Strings are scanned in vector blocks with a short tail: put each byte that needs an
    # escape at every offset of every tail length, after prefixes that end inside and
    # exactly at block boundaries.
    for length in range(1, 18):
        for at in range(length):
            for special in ('"', "\\", "\x00", "\x1f", "\n"):
                text = "a" * prefix + "b" * at + special + "c" * (length - at - 1)
                expected = orjson.dumps(text, option=orjson.OPT_APPEND_NEWLINE)
                assert backend.dumps(text) == expected, (prefix, length, at, special)
        assert backend.dumps("é" * length) == orjson.dumps("é" * length) + b"\n"


def _cache_utf8(text: str) -> None:
    """Make CPython compute and keep ``text``'s UTF-8, as ``PyUnicode_AsUTF8`` callers do."""
    ctypes.pythonapi.PyUnicode_AsUTF8.restype = ctypes.c_void_p
    ctypes.pythonapi.PyUnicode_AsUTF8(ctypes.py_object(text))


@pytest.mark.parametrize("wide", ["é", "\xff", "✓", "\u0800", "\uffff", "😀", "\U0010ffff"])
@pytest.mark.parametrize("prefix", [0, 8, 31, 64, 4096])
def test_dumps_transcodes_every_str_kind_at_every_position(backend, wide, prefix):
    # A str that is not ASCII is written from its Latin-1, UCS-2 or UCS-4 code units in blocks
    # of 8, 16 or 32, or copied from its cached UTF-8 when CPython already made it: put each
    # escape and the wide character itself at every offset of every tail, in a str of each
    # kind, before and after its UTF-8 is cached.
    for length in range(1, 34):
        for at in range(length):
            for special in ('"', "\\", "\x00", "\n", "\x7f", wide):
                text = "".join([wide, "a" * prefix, "b" * at, special, "c" * (length - at - 1)])
                expected = json.dumps(text, ensure_ascii=False, separators=(",", ":"))
                expected = (expected + "\n").encode()
                assert backend.dumps(text) == expected, (prefix, length, at, special)
                assert backend.dumps({text: [text]}) == b"{%s:[%s]}\n" % (
                    expected[:-1],
                    expected[:-1],
                )
                _cache_utf8(text)
                assert backend.dumps(text) == expected, (prefix, length, at, special)


@pytest.mark.parametrize("wide", ["", "é", "✓", "😀"])
@pytest.mark.parametrize("at", [0, 1, 7, 8, 15, 16, 33, 4100])
def test_dumps_refuses_a_lone_surrogate_in_any_str_kind(backend, wide, at):
    for surrogate in ("\ud800", "\udbff", "\udc00", "\udfff"):
        text = "".join([wide, "a" * at, surrogate, "z" * 20])
        for value in (text, {text: 1}, {"k": [text]}):
            with pytest.raises(backend.EncodeError, match="surrogates not allowed"):
                backend.dumps(value)


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


class Mapping(dict):
    pass


@dataclasses.dataclass
class Point:
    x: int


def test_dumps_supported_extras(backend):
    value = [Color.RED, Level.HIGH, Name("n"), Mapping(k=1), uuid.UUID(int=1)]
    assert backend.dumps(value) == b'["red",3,"n",{"k":1},"00000000-0000-0000-0000-000000000001"]\n'


def test_dumps_of_an_enum_whose_value_is_an_enum_ends_at_the_recursion_limit(backend):
    # A member whose value is itself, or a chain of members longer than the limit, must raise
    # EncodeError, not recurse until the stack overflows (orjson crashes on the first).
    class Loop(enum.Enum):
        A = 1

    Loop.A._value_ = Loop.A
    with pytest.raises(backend.EncodeError, match="Recursion limit reached"):
        backend.dumps(Loop.A)

    def chain(links):
        member = None
        for i in range(links):
            member = enum.Enum(f"Link{i}", [("A", member)]).A
        return member

    with pytest.raises(backend.EncodeError, match="Recursion limit reached"):
        backend.dumps(chain(3000))
    # Each member counts as a level, as a container does; a short chain is its last value.
    assert backend.dumps(chain(10)) == b"null\n"
    assert backend.dumps({"a": [chain(250)]}) == b'{"a":[null]}\n'
    with pytest.raises(backend.EncodeError, match="Recursion limit reached"):
        backend.dumps({"a": [chain(253)]})


class Ratio(float):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {1: 2},
        {None: 1},
        b"bytes",
        {1, 2},
        Point(1),
        datetime.date(2026, 1, 1),
        Ratio(0.5),
        namedtuple("P", "a")(1),
        object(),
        "\ud800",
    ],
)
def test_dumps_type_errors(backend, value):
    with pytest.raises(TypeError):
        backend.dumps(value)
    with pytest.raises(backend.EncodeError):
        backend.dumps([value])


def test_dumps_recursion_limit_matches_orjson(backend):
    def nested(levels):
        value: list = []
        for _ in range(levels):
            value = [value]
        return value

    assert backend.dumps(nested(253)).startswith(b"[[")
    with pytest.raises(TypeError):
        backend.dumps(nested(254))
    loop: list = []
    loop.append(loop)
    with pytest.raises(TypeError):
        backend.dumps(loop)


def test_python_sdk_golden_files_roundtrip(backend, shared):
    golden = shared / "conformance" / "acp" / "python-sdk-golden-v1"
    files = sorted(golden.glob("*.json"))
    assert len(files) >= 10
    for path in files:
        data = path.read_bytes()
        value = backend.loads(data)
        assert value == json.loads(data), path.name
        assert backend.loads(backend.dumps(value)) == value, path.name


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
    from acpwire._pure._json import has_long_digit_run, has_long_digits

    block = b"".join(pieces)
    assert has_long_digit_run(block) == has_long_digits(block)


def test_sampled_digit_run_search_at_every_offset():
    from acpwire._pure._json import has_long_digit_run

    for length in (18, 19, 25):
        for offset in range(40):
            block = b"x" * offset + b"1" * length + b"\n" + (b"2" * 18 + b" ") * 70
            assert has_long_digit_run(block) == (length >= 19), (length, offset)
    # Digit-heavy data past the sample's budget: the full search decides.
    assert not has_long_digit_run(b"123456789012345678 " * 1000)
    assert has_long_digit_run(b"123456789012345678 " * 1000 + b"1234567890123456789")


def test_dumps_bounds_tuples_and_mixed_nesting_like_lists(backend):
    # orjson does not count tuples toward its nesting limit (thousands of levels crash it);
    # both backends count every container alike.
    def nested(levels, mix):
        value: object = 1
        for level in range(levels):
            value = [value] if mix and level % 2 else (value,)
        return value

    for mix in (False, True):
        assert backend.dumps(nested(254, mix)).startswith(b"[[")
        for levels in (255, 5000):
            with pytest.raises(backend.EncodeError, match="Recursion limit reached"):
                backend.dumps(nested(levels, mix))


def test_dumps_refuses_orjson_fragments(backend):
    # orjson writes a Fragment out raw, newline and all; a frame must hold one JSON value.
    for value in (orjson.Fragment(b'{\n"a":1}'), [orjson.Fragment(b"not json\n")]):
        with pytest.raises(
            backend.EncodeError, match=r"^Type is not JSON serializable: orjson\.Fragment$"
        ):
            backend.dumps(value)


def test_dumps_writes_str_subclass_keys_wherever_they_sit(backend):
    for value, expected in [
        ({Name("k"): 1}, b'{"k":1}\n'),
        ({"a": 2**70, Name("k"): 1}, b'{"a":1180591620717411303424,"k":1}\n'),
        ({Name("k"): 1, "a": 2**70}, b'{"k":1,"a":1180591620717411303424}\n'),
    ]:
        assert backend.dumps(value) == expected


def test_dumps_names_unsupported_types_as_orjson_does(both):
    class Local:
        pass

    for value, name in [
        (decimal.Decimal(1), "decimal.Decimal"),
        (datetime.datetime(2026, 1, 1), "datetime.datetime"),
        (Local(), "Local"),
        ({1, 2}, "set"),
    ]:
        for backend in both:
            with pytest.raises(backend.EncodeError) as caught:
                backend.dumps({"k": [value]})
            assert str(caught.value) == f"Type is not JSON serializable: {name}"
        # orjson's own words, where it refuses the type (datetimes only when told to).
        with pytest.raises(TypeError, match=f"{re.escape(name)}$"):
            orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_DATETIME)


def test_dumps_past_the_int_digit_limit_says_so_alike(both):
    messages = set()
    for backend in both:
        with pytest.raises(backend.EncodeError) as caught:
            backend.dumps(10**4300)
        messages.add(str(caught.value))
    (message,) = messages
    assert message.startswith("Exceeds the limit (4300 digits)")


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


class _Lying(int):
    """An int whose conversions all say something else."""

    def __index__(self):
        return '0}\n{"injected":true'

    def __int__(self):
        return 6

    def __repr__(self):
        return "nope"

    __str__ = __repr__


def test_dumps_writes_an_int_subclass_as_its_own_value(backend):
    for value in (3, 2**70, -(2**70)):
        assert backend.dumps({"id": _Lying(value)}) == b'{"id":%d}\n' % value


def test_dumps_fails_like_a_dict_iterator_when_a_value_changes_the_dict(backend):
    target: dict = {}

    class Grows(enum.Enum):
        ONE = 1

        @property
        def value(self):
            target["added"] = 1
            return 1

    class Swaps(enum.Enum):
        ONE = 1

        @property
        def value(self):
            del target["a"]
            target["z"] = 1
            return 1

    target.update(a=1, e=Grows.ONE, c=3)
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        backend.dumps(target)
    target.clear()
    target.update(a=1, e=Swaps.ONE, c=3)
    with pytest.raises(RuntimeError, match="dictionary keys changed during iteration"):
        backend.dumps(target)


def test_dumps_writes_only_uuid_uuid_as_a_uuid(backend):
    value = uuid.UUID(int=1)
    assert backend.dumps(value) == b'"00000000-0000-0000-0000-000000000001"\n'
    look_alike = type("UUID", (), {"__module__": "uuid", "__str__": lambda self: "x"})
    with pytest.raises(TypeError, match="Type is not JSON serializable: UUID"):
        backend.dumps(look_alike())


def test_dumps_writes_what_dict_and_list_subclasses_hold(backend):
    # As orjson does: the stored entries and items, whatever `items` or `__iter__` say.
    value = {"d": LoudDict(a=LoudList([1, LoudDict(b=2)])), "l": LoudList(["x"])}
    assert backend.dumps(value) == b'{"d":{"a":[1,{"b":2}]},"l":["x"]}\n'
    assert backend.dumps(LoudList([LoudDict(k="v")])) == b'[{"k":"v"}]\n'
