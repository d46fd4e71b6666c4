"""Twin of src/python/json/loads.rs: orjson on the fast path, ``json`` where orjson refuses.

The native backend decodes with jiter. Where orjson and jiter differ (integers beyond 64 bits,
nesting depth, the digits of a number), the slow path takes jiter's verdict from ``errors`` and
decodes what it accepts with ``json``, so that both backends accept the same documents, return
the same values and report the same faults. The rules are in ``docs/behaviour/json.md``.
"""

from __future__ import annotations

import decimal
import json
import re
from typing import Any

import orjson

from ..._contract import MAX_DECODE_DEPTH
from ..._contract import MAX_INT_DIGITS as MAX_DIGITS
from ..._errors import DecodeError
from .._args import BYTES_OR_STR, buffer_bytes
from .errors import first_error, position

# jiter lets values nest MAX_DECODE_DEPTH deep below the top-level value; orjson allows more.
# orjson turns integers beyond 64 bits into floats; json keeps them exact, as jiter does.
# Only a run of 19 or more digits can be such an integer. Found by mapping every digit to "0"
# and searching for the run: two C-speed passes, where a regex costs ten times more.
LONG_RUN = 19
DIGITS_TO_ZERO = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
ZEROS = b"0" * LONG_RUN
_STR_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")
_STR_ZEROS = "0" * LONG_RUN
# Documents longer than this are decoded by `json` (in C), not orjson: orjson first reads the
# whole document into a tree of its own, then builds the value, and at its peak holds about
# 3.5 times the value's memory (a 28 MiB tool output, 139 MiB as Python objects, peaked at
# 482 MiB). `json` holds the value and the text. A large document costs about three times
# orjson's time that way, and a store's budget stays a budget.
LARGE_DOCUMENT = 4 * 1024 * 1024
# A document nesting deeper than MAX_DECODE_DEPTH needs this many bytes of brackets.
MIN_DEEP_SIZE = 2 * (MAX_DECODE_DEPTH + 1)

_UTF8_BOM = b"\xef\xbb\xbf"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_int(digits: str) -> int:
    """An integer of any length jiter reads (up to MAX_DIGITS digits), whatever limit the
    program set with ``sys.set_int_max_str_digits``: jiter's integers do not go through it."""
    try:
        return int(digits)
    except ValueError:
        # Beyond the str-to-int digit limit: Decimal's conversion to int is not subject to it.
        return int(decimal.Decimal(digits))


_STRICT = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)


class _DuplicateKey(Exception):
    """An object repeats a key: its earlier values are gone from the decoded value."""


def _dict_of_unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _DuplicateKey
    return value


_UNIQUE_KEYS = json.JSONDecoder(
    parse_constant=_reject_constant, parse_int=_parse_int, object_pairs_hook=_dict_of_unique_keys
)


def has_duplicate_keys(text: str) -> bool:
    """True when some object of the document ``text`` repeats a key, or when that cannot be
    told (``json`` gives up nesting past Python's recursion limit): the value a repeated key
    replaced is not in the decoded value, so checks made on that value (depth, lone
    surrogates) cannot see it, where jiter reads every value and rejects a bad one. A True
    sends the document to ``first_error``, which reads it all."""
    try:
        _UNIQUE_KEYS.decode(text)
    except (_DuplicateKey, ValueError, RecursionError):
        return True
    return False


# A `\u` escape of a surrogate (D800-DFFF), which may be lone.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def _may_hide_a_fault(raw: bytes, deepest: int, containers: int, surrogates: bool) -> bool:
    """Whether a repeated key could hide a value jiter rejects from the value decoded from
    ``raw`` (``deepest`` and ``containers`` as ``_nesting`` gives them; ``surrogates``: ``raw``
    has a surrogate escape): only a deep nest or a lone surrogate can be such a value. A hidden
    value hangs below a container of the value and holds at most the brackets the value lacks;
    when even that cannot pass the limit, no deep nest hides."""
    opens = raw.count(b"[") + raw.count(b"{")
    return surrogates or deepest + 1 + (opens - containers) > MAX_DECODE_DEPTH


def too_deep(value: Any) -> bool:
    """True when some value sits more than MAX_DECODE_DEPTH containers below the top."""
    if type(value) is not dict and type(value) is not list:
        return False
    return _nesting(value)[0]


def _nesting(value: dict[Any, Any] | list[Any]) -> tuple[bool, int, int]:
    """(too deep, the deepest level holding a container, how many containers), read depth
    first with one iterator per level: memory bounded by the depth limit, not by the number of
    containers (a batch of ten million ``{}`` would otherwise hold one entry per object)."""
    containers, deepest = 1, 0
    stack = [iter(value.values() if type(value) is dict else value)]
    while stack:
        for child in stack[-1]:
            kind = type(child)
            if kind is dict or kind is list:
                containers += 1
                level = len(stack)
                deepest = max(deepest, level)
                if child:
                    if level >= MAX_DECODE_DEPTH:
                        return True, level, containers
                    stack.append(iter(child.values() if kind is dict else child))
                    break
        else:
            stack.pop()
    return False, deepest, containers


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
    if opens <= MAX_DECODE_DEPTH:
        return False
    deep, deepest, containers = _nesting(value)
    if deep:
        return True
    # A deep nest under a repeated key is not in the value. Such a value hangs below a
    # container of the value and holds at most the brackets the value lacks: when even that
    # cannot pass the limit, the text need not be read again.
    if deepest + 1 + (opens - containers) <= MAX_DECODE_DEPTH:
        return False
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    return has_duplicate_keys(text)


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


# Where brackets come more often than one in this many bytes, counting each line is cheaper
# than finding each bracket of the block; found past the first few, the search gives up.
_DENSE_BRACKETS = 64
_FEW_FOUND = 32


def few_opens(data: bytes, limit: int) -> bool:
    """True when ``data`` certainly holds at most ``limit`` opening brackets. Each is found by
    ``find`` (memchr), which is several times faster than ``count`` where brackets are few
    (payloads); where they are dense it gives up (``False``) within a few dozen calls."""
    seen = 0
    # Arrays first: where brackets are dense they are mostly `[` (escape sequences in tool
    # output), and the search gives up sooner.
    for bracket in (b"[", b"{"):
        at = data.find(bracket)
        while at >= 0:
            seen += 1
            if seen > limit or (seen >= _FEW_FOUND and at < seen * _DENSE_BRACKETS):
                return False
            at = data.find(bracket, at + 1)
    return True


def block_checks(block: bytes, lines: int) -> tuple[bool | None, bool]:
    """For ``block``, ``lines`` complete lines: whether a line may hold a digit run orjson
    reads otherwise, and whether one may nest past MAX_DECODE_DEPTH; ``False`` is certain.

    Where lines are short, the sampled digit search answers for the block and no line is long
    enough to nest that deep by itself. Where they are long (payloads), the digit question is
    ``None``, left to each line whose value keeps a number (most keep only strings), and a
    block with too few brackets to nest that deep spares each line its own count.
    """
    if len(block) < lines * MIN_DEEP_SIZE:
        return has_long_digit_run(block), True
    return None, not few_opens(block, MAX_DECODE_DEPTH)


def decode_valid(raw: bytes) -> Any:
    """The value of a document ``first_error`` found no fault in.

    orjson refused it or may have read it otherwise (integers beyond 64 bits become floats
    there); ``json`` keeps integers exact and rounds floats correctly, as jiter does.
    """
    return _STRICT.decode(raw.decode("utf-8"))


# A digit run longer than jiter's limit on a number's integer part (as zeros, see DIGITS_TO_ZERO).
_OVERLONG_DIGITS = b"0" * (MAX_DIGITS + 1)


def decode_if_valid(raw: bytes) -> tuple[bool, Any]:
    """``(True, value)`` when jiter accepts ``raw``, else ``(False, None)``: ``first_error``
    then names the fault.

    ``json`` (in C) decides, and three checks cover what it accepts and jiter does not: digit
    runs past 4300, nesting past 200 levels, lone surrogate escapes (also under a key an object
    repeats, whose earlier value the decoded value lacks). ``first_error`` reads in Python, so
    it is kept for documents that may hold a fault.
    """
    if len(raw) >= len(_OVERLONG_DIGITS) and _OVERLONG_DIGITS in raw.translate(DIGITS_TO_ZERO):
        return False, None
    try:
        text = raw.decode("utf-8")
        value = _STRICT.decode(text)
    except (ValueError, RecursionError):
        return False, None
    if type(value) is dict or type(value) is list:
        deep, deepest, containers = _nesting(value)
    else:
        deep, deepest, containers = False, 0, 0
    # Only a `\u` escape makes a lone surrogate (UTF-8 cannot hold one).
    surrogates = b"\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None
    if deep or (surrogates and _has_lone_surrogate(value)):
        return False, None
    if _may_hide_a_fault(raw, deepest, containers, surrogates):
        # Decoded again, refusing repeated keys; the first value goes first, so that no more
        # than one is held (a large document's value can be many times its text).
        del value
        try:
            value = _UNIQUE_KEYS.decode(text)
        except (_DuplicateKey, ValueError, RecursionError):
            return False, None
    return True, value


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


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document into Python objects (the same values as ``json.loads``)."""
    if type(data) is not str:
        # A str subclass is read as the str it is; anything else must be a buffer of bytes.
        if isinstance(data, str):
            data = str.__str__(data)
        else:
            data = buffer_bytes(data, BYTES_OR_STR)
            if data[:3] == _UTF8_BOM:
                # Skipped, as `json.loads` skips it in bytes.
                data = data[3:]
    if len(data) > LARGE_DOCUMENT:
        return _loads_slow(data)
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
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            raise DecodeError("str is not valid UTF-8: surrogates not allowed", 1, 1, 0) from None
    else:
        raw = bytes(data)
    valid, value = decode_if_valid(raw)
    if valid:
        return value
    # jiter's words and place for the first fault.
    fault = first_error(raw)
    if fault is not None:
        msg, index = fault
        raise DecodeError(msg, *position(raw, index, isinstance(data, str)))
    return decode_valid(raw)
