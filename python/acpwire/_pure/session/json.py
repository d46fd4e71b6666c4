"""Twin of src/session/json.rs: the JSON values of the reducer.

Deep copies for snapshots (which must not share state with the reducer), and the reading of a
message given to ``apply`` as JSON with the native binding's type rules (its ``from_py``).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..._contract import MAX_INT_DIGITS
from ..json import MAX_DECODE_DEPTH
from ..json.loads import has_long_digits
from .parts import JsonObject, JsonValue

_INT64 = 1 << 63


def _block_text(block: Any, plain: bool = False) -> str | None:
    """The text of a text block as a message keeps it (its text, or an object whose ``type``
    is ``"text"`` and whose ``text`` is a string), else None; with ``plain``, only of a plain
    text block (no member but ``type`` and ``text``)."""
    if type(block) is str:
        return block
    if type(block) is dict and (not plain or len(block) == 2) and block.get("type") == "text":
        text = block.get("text")
        if type(text) is str:
            return text
    return None


def _stored_block(block: JsonValue) -> JsonValue:
    """A content block as a message keeps it: a plain text block as its text, so that a
    streamed message holds a string a chunk, not a dict."""
    text = _block_text(block, True)
    return block if text is None else text


def _block_as_sent(block: JsonValue) -> JsonValue:
    """A block a message keeps, as it was sent (see `_stored_block`)."""
    return {"type": "text", "text": block} if type(block) is str else block


# A frame at least this long may have its opaque values kept as JSON text (see `_Raw`).
RAW_FRAME_BYTES = 256 * 1024
# The least cost of a value kept so.
RAW_VALUE_COST = 64 * 1024
# An exponent of three digits or more: the number may overflow to infinity, which JSON text
# cannot hold (`orjson.dumps` would write null).
_BIG_EXPONENT = re.compile(rb"[eE][+-]?0*[1-9][0-9]{2}")


class _Raw:
    """An opaque value kept as JSON text, read back only when a snapshot or an entity is: a
    frame of megabytes then keeps about its size rather than the decoded tree's three times.
    ``cost`` is the value's own (see `budget.json_cost`)."""

    __slots__ = ("cost", "text")

    def __init__(self, text: bytes, cost: int) -> None:
        self.text = text
        self.cost = cost


def raw_allowed(line: bytes) -> bool:
    """Whether the opaque values of frame ``line`` may be kept as `_Raw`: it is long, and no
    number in it can read as infinity (a long digit run or a large exponent)."""
    return (
        len(line) >= RAW_FRAME_BYTES
        and _BIG_EXPONENT.search(line) is None
        and not has_long_digits(line)
    )


def keeps_only_strings(frame: Any, chunk_kinds: Any) -> bool:
    """Whether a decoded ``frame`` is a message chunk of which a store keeps only strings: its
    ids and a content block of string members (text, an image's data), with no other update
    field (a chunk's ``_meta``, an object or null, is not kept). No number of it is kept, so
    none needs checking against the way orjson reads long integers."""
    if type(frame) is not dict or "id" in frame:
        return False
    params = frame.get("params")
    if type(params) is not dict or type(params.get("sessionId")) is not str:
        return False
    update = params.get("update")
    if type(update) is not dict or update.get("sessionUpdate") not in chunk_kinds:
        return False
    content = update.get("content")
    if type(content) is not dict:
        return False
    fields = 2
    if "messageId" in update:
        if type(update["messageId"]) is not str:
            return False
        fields += 1
    if "_meta" in update:
        meta = update["_meta"]
        if type(meta) is not dict and meta is not None:
            return False
        fields += 1
    return len(update) == fields and all(type(v) is str for v in content.values())


def _raw(value: Any, cost: int) -> Any:
    """``value`` as a `_Raw` if its JSON text reads back as it (else ``value`` itself: an
    integer beyond 64 bits or a lone surrogate, which orjson does not write)."""
    try:
        text = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return value
    # orjson's bytes keep the room it reserved (several times the text): kept, a copy.
    return _Raw(bytes(memoryview(text)), cost)


def _copy(value: Any, depth: int = 0) -> Any:
    """A deep copy of a JSON value (snapshots must not share state with the reducer)."""
    kind = type(value)
    if kind is _Raw:
        return orjson.loads(value.text)
    if kind is dict:
        if depth > _RECURSIVE_COPY_DEPTH:
            return _normalize(value)
        return {k: _copy(v, depth + 1) for k, v in value.items()}
    if kind is list:
        if depth > _RECURSIVE_COPY_DEPTH:
            return _normalize(value)
        return [_copy(v, depth + 1) for v in value]
    return value


# Messages given to `apply` may nest 200 deep, which recursion (two frames a level) cannot
# copy within Python's default limit; past this depth `_normalize`, which keeps a stack of its
# own, makes the copy (of a value already normalized, so it changes nothing else).
_RECURSIVE_COPY_DEPTH = 64


# Deepest nesting `apply` accepts, the framing's (so `apply` takes what `feed` takes, and a
# snapshot stays within what `dumps` writes); the native binding's limit too.
MAX_APPLY_DEPTH = MAX_DECODE_DEPTH


def _str_keyed(value: JsonObject) -> Any:
    # The stored entries and text, as the binding reads them: methods a subclass overrides
    # (`items`, `__str__`: a `(str, Enum)` member's str() is its name) are not called.
    for k, v in dict.items(value):
        if not isinstance(k, str):
            raise TypeError(f"message keys must be str, not {type(k).__name__}")
        key = k if type(k) is str else str.__str__(k)
        if not key.isascii():
            key.encode()  # a lone surrogate is no UTF-8: UnicodeEncodeError
        yield key, v


def _check_big_int(value: int) -> None:
    """Refuse an integer the framing could not read either, as the binding does: its decimal
    form (which Python refuses past its digit limit, 4300 by default) past 4300 digits."""
    digits = str(value)
    if len(digits) - (value < 0) > MAX_INT_DIGITS:
        # Where the binding's reader stops: one digit past the limit.
        index = min(len(digits), MAX_INT_DIGITS + 1 + (value < 0))
        raise ValueError(f"number out of range at index {index}")


def _normalize(message: Any) -> Any:
    """A private JSON copy of a message given to ``apply``, with the binding's type rules.

    Depth first and in order, as the binding walks it, so that the first fault found is the
    same; with a stack of its own, so that a deep message cannot exhaust Python's.
    """
    # The copy's holder: the message is its item 0.
    root: dict[int | str, JsonValue] = {}
    # (what is left of a container, its copy, the depth of its items)
    stack: list[tuple[Any, Any, int]] = [(iter([(0, message)]), root, 0)]
    while stack:
        items, target, depth = stack[-1]
        for key, value in items:
            if depth > MAX_APPLY_DEPTH:
                raise ValueError("message nests too deeply")
            child = None
            out: JsonValue
            if value is None or isinstance(value, bool):
                out = value if value is None else bool(value)
            elif isinstance(value, str):
                # Subclasses by their stored value, as the binding reads them (see _str_keyed).
                out = value if type(value) is str else str.__str__(value)
                if not out.isascii():
                    out.encode()  # a lone surrogate is no UTF-8: UnicodeEncodeError
            elif isinstance(value, int):
                out = value if type(value) is int else int.__int__(value)
                if not -_INT64 <= out < _INT64:
                    _check_big_int(out)
            elif isinstance(value, float):
                out = value if type(value) is float else float.__float__(value)
            elif isinstance(value, dict):
                out, child = {}, _str_keyed(value)
            elif isinstance(value, list):
                out, child = [], ((None, item) for item in list.__iter__(value))
            elif isinstance(value, tuple):
                out, child = [], ((None, item) for item in tuple.__iter__(value))
            else:
                raise TypeError(f"{type(value).__name__} is not a JSON value")
            if type(target) is list:
                target.append(out)
            else:
                target[key] = out
            if child is not None:
                stack.append((child, out, depth + 1))
                break
        else:
            stack.pop()
    return root[0]
