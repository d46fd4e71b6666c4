"""JSON for the pure backend: orjson on the fast path, ``json`` where orjson refuses.

The native backend decodes with jiter. Where orjson and jiter differ (integers beyond 64 bits,
nesting depth), the slow path here reproduces jiter's verdict so that both backends accept the
same documents and return the same values.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Any

import orjson

from .._errors import DecodeError, EncodeError
from ._args import BYTES_OR_STR, buffer_bytes

# jiter lets values nest this deep below the top-level value; orjson allows more.
MAX_DECODE_DEPTH = 200
# orjson's limit for dumps: containers at depth 0..253.
MAX_ENCODE_DEPTH = 254
JSON_WHITESPACE = " \t\n\r"
# orjson turns integers beyond 64 bits into floats; json keeps them exact, as jiter does.
# Only a run of 19 or more digits can be such an integer. Found by mapping every digit to "0"
# and searching for the run: two C-speed passes, where a regex costs ten times more.
LONG_RUN = 19
DIGITS_TO_ZERO = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
ZEROS = b"0" * LONG_RUN
_STR_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")
_STR_ZEROS = "0" * LONG_RUN
# A document nesting deeper than MAX_DECODE_DEPTH needs this many bytes of brackets.
MIN_DEEP_SIZE = 2 * (MAX_DECODE_DEPTH + 1)

_DUMPS_OPTIONS = (
    orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_STRICT = json.JSONDecoder(parse_constant=_reject_constant)


class SlowPathError(Exception):
    """Why the slow path refused a document: ``kind`` is a FrameError reason."""

    def __init__(self, kind: str, msg: str, pos: int) -> None:
        super().__init__(msg)
        self.kind = kind
        self.msg = msg
        self.pos = pos


# Strings (possibly unterminated), brackets and numbers: the tokens that place depth and number
# errors where jiter places them.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[{\]}]|-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?')
# CPython's limit on the digits of an int built from text.
MAX_INT_DIGITS = 4300


def too_deep_at(text: str) -> int:
    """Where the bracket that opens one level too many is (0 if none does)."""
    depth = 0
    for token in _TOKENS.finditer(text):
        first = token.group()[0]
        if first in "[{":
            depth += 1
            if depth > MAX_DECODE_DEPTH + 1:
                return token.start()
        elif first in "]}":
            depth -= 1
    return 0


def long_int_end(text: str) -> int:
    """Where the first integer of more than MAX_INT_DIGITS digits ends (0 if none)."""
    for token in _TOKENS.finditer(text):
        # Strings, brackets and numbers with a fraction or exponent are not all digits.
        digits = token.group().lstrip("-")
        if len(digits) > MAX_INT_DIGITS and digits.isdigit():
            return token.end()
    return 0


def too_deep(value: Any) -> bool:
    """True when some value sits more than MAX_DECODE_DEPTH containers below the top."""
    if type(value) is not dict and type(value) is not list:
        return False
    stack = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, level = pop()
        children = node.values() if type(node) is dict else node
        if not children:
            continue
        if level >= MAX_DECODE_DEPTH:
            return True
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                push((child, level + 1))
    return False


def maybe_too_deep(data: bytes | str, value: Any) -> bool:
    """Cheap pre-check: a document with few brackets cannot nest deeply."""
    if type(value) is not dict and type(value) is not list:
        return False
    if len(data) < MIN_DEEP_SIZE:
        return False
    if isinstance(data, str):
        opens = data.count("[") + data.count("{")
    else:
        opens = data.count(b"[") + data.count(b"{")
    return opens > MAX_DECODE_DEPTH and too_deep(value)


def _continues_number(literal: str, following: str) -> bool:
    """Whether jiter would read ``following`` as part of the number ``literal``."""
    has_fraction = "." in literal
    has_exponent = "e" in literal or "E" in literal
    if following == ".":
        return not has_fraction and not has_exponent
    if following in "eE":
        return not has_exponent
    if following.isdigit():
        return literal.lstrip("-") == "0"
    return False


def has_long_digits(data: bytes | bytearray | memoryview | str) -> bool:
    """True when ``data`` may hold an integer orjson would turn into a float."""
    if len(data) < LONG_RUN:
        return False
    if isinstance(data, str):
        return _STR_ZEROS in data.translate(_STR_DIGITS_TO_ZERO)
    return ZEROS in bytes(data).translate(DIGITS_TO_ZERO)


# Any 19 consecutive bytes hold three at positions divisible by 6 (19 == 3 * 6 + 1): a digit
# run of LONG_RUN shows as three digits in a row of every sixth byte. That sample costs a sixth
# of a full search, and only where it has such a row is the block searched exactly.
_SAMPLE_STRIDE = 6
_SAMPLE_RUN = b"000"
# Past this many rows in the sample (digit-heavy data), one full search is cheaper.
_MAX_SAMPLE_HITS = 64


def has_long_digit_run(block: bytes) -> bool:
    """``has_long_digits`` for a large block of bytes, in a fraction of its time."""
    sample = block[::_SAMPLE_STRIDE].translate(DIGITS_TO_ZERO)
    hit = sample.find(_SAMPLE_RUN)
    hits = 0
    while hit >= 0:
        hits += 1
        if hits > _MAX_SAMPLE_HITS:
            return ZEROS in block.translate(DIGITS_TO_ZERO)
        # A run through sample rows hit..hit+2 starts within one stride before the first.
        start = _SAMPLE_STRIDE * hit
        window = block[max(start - _SAMPLE_STRIDE, 0) : start + LONG_RUN]
        if ZEROS in window.translate(DIGITS_TO_ZERO):
            return True
        hit = sample.find(_SAMPLE_RUN, hit + 1)
    return False


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str:
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif kind is list:
            stack.extend(node)
        elif kind is dict:
            stack.extend(node.keys())
            stack.extend(node.values())
    return False


def slow_decode(text: str) -> Any:
    """Decode what orjson refused, deciding as jiter would; raise SlowPathError otherwise."""
    start = len(text) - len(text.lstrip(JSON_WHITESPACE))
    try:
        value, end = _STRICT.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        # jiter stops at the first fault in reading order: a bracket one level too deep
        # before the fault json found is the error.
        deep = too_deep_at(text)
        if 0 < deep < exc.pos:
            raise SlowPathError("invalid JSON", "recursion limit exceeded", deep) from None
        raise SlowPathError("invalid JSON", exc.msg, exc.pos) from None
    except RecursionError:
        raise SlowPathError("invalid JSON", "recursion limit exceeded", too_deep_at(text)) from None
    except ValueError as exc:
        end = long_int_end(text)
        if end:
            # An int past CPython's digit limit: where jiter reports it, in its words.
            raise SlowPathError("invalid JSON", "number out of range", end) from None
        raise SlowPathError("invalid JSON", str(exc), start) from None
    # jiter fails inside the value before it looks past it, so these come first.
    if _has_lone_surrogate(value):
        raise SlowPathError("invalid JSON", "lone surrogate in string escape", start)
    if too_deep(value):
        raise SlowPathError("invalid JSON", "recursion limit exceeded", too_deep_at(text))
    rest = len(text) - len(text[end:].lstrip(JSON_WHITESPACE))
    if rest < len(text):
        if (
            rest == end
            and type(value) in (int, float)
            and _continues_number(text[start:end], text[end])
        ):
            # `01`, `1.`, `1e`: jiter reads these as one malformed number, not a number
            # followed by junk.
            raise SlowPathError("invalid JSON", "invalid number", start)
        raise SlowPathError("trailing data after JSON value", "trailing characters", rest)
    return value


def _position(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, column


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document into Python objects (the same values as ``json.loads``)."""
    if type(data) is not str:
        data = buffer_bytes(data, BYTES_OR_STR)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads_slow(data)
    if has_long_digits(data):
        return _loads_slow(data)
    if maybe_too_deep(data, value):
        # The slow path finds where, as for any other error.
        return _loads_slow(data)
    return value


def _loads_slow(data: bytes | bytearray | memoryview | str) -> Any:
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            raise DecodeError("str is not valid UTF-8: surrogates not allowed", 1, 1, 0) from None
        text = data
    else:
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            good = raw[: exc.start].decode("utf-8")
            line, column = _position(good, len(good))
            raise DecodeError("invalid UTF-8", line, column, exc.start) from None
    try:
        return slow_decode(text)
    except SlowPathError as exc:
        line, column = _position(text, exc.pos)
        offset = exc.pos if isinstance(data, str) else len(text[: exc.pos].encode("utf-8"))
        raise DecodeError(exc.msg, line, column, offset) from None


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as one compact NDJSON frame: UTF-8, ending in a single ``\\n``."""
    try:
        return orjson.dumps(obj, option=_DUMPS_OPTIONS)
    except orjson.JSONEncodeError as exc:
        if str(exc) != "Integer exceeds 64-bit range":
            raise EncodeError(str(exc)) from None
    # orjson stops at 64-bit integers; the native backend writes any int Python can print.
    parts: list[bytes] = []
    _encode_slow(obj, 0, parts)
    parts.append(b"\n")
    return b"".join(parts)


def _encode_slow(obj: Any, depth: int, out: list[bytes]) -> None:
    """orjson's output, piece by piece, for documents with integers beyond 64 bits."""
    kind = type(obj)
    if kind is int or (isinstance(obj, int) and kind is not bool):
        try:
            out.append(orjson.dumps(obj))
        except orjson.JSONEncodeError:
            try:
                out.append(str(int(obj)).encode())
            except ValueError as exc:  # beyond Python's digit limit for int -> str
                raise EncodeError(str(exc)) from None
        return
    if kind is list or kind is tuple or (isinstance(obj, list)):
        if depth >= MAX_ENCODE_DEPTH:
            raise EncodeError("Recursion limit reached")
        out.append(b"[")
        for i, item in enumerate(obj):
            if i:
                out.append(b",")
            _encode_slow(item, depth + 1, out)
        out.append(b"]")
        return
    if isinstance(obj, dict):
        if depth >= MAX_ENCODE_DEPTH:
            raise EncodeError("Recursion limit reached")
        out.append(b"{")
        for i, (key, value) in enumerate(obj.items()):
            if not isinstance(key, str):
                raise EncodeError("Dict key must be str")
            if i:
                out.append(b",")
            out.append(_dumps_leaf(key))
            out.append(b":")
            _encode_slow(value, depth + 1, out)
        out.append(b"}")
        return
    if isinstance(obj, enum.Enum) and not isinstance(obj, (str, int)):
        _encode_slow(obj.value, depth, out)
        return
    out.append(_dumps_leaf(obj))


def _dumps_leaf(obj: Any) -> bytes:
    try:
        return orjson.dumps(
            obj, option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
        )
    except orjson.JSONEncodeError as exc:
        raise EncodeError(str(exc)) from None
