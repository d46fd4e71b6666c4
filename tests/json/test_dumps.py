"""dumps: orjson-compatible bytes, the types orjson writes, clear errors; both backends."""

from __future__ import annotations

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

from strategies import messages
from subclasses import LoudDict, LoudList


@settings(max_examples=200, deadline=None)
@given(value=messages)
def test_dumps_roundtrip_and_shape(backend, value):
    frame = backend.dumps(value)
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    assert backend.loads(frame) == value
    assert json.loads(frame) == value


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
