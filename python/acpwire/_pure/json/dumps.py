"""Twin of src/python/json/dumps.rs: orjson where it writes what the native backend writes.

Anything orjson would treat otherwise (integers beyond 64 bits, tuples, subclasses, enums) is
written piece by piece with the native backend's rules. The rules are in
``docs/behaviour/json.md``.
"""

from __future__ import annotations

import enum
from typing import Any, cast

import orjson

from ..._contract import MAX_ENCODE_DEPTH
from ..._errors import EncodeError

_DUMPS_OPTIONS = (
    orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as one compact NDJSON frame: UTF-8, ending in a single ``\\n``."""
    if _plain(obj):
        try:
            return orjson.dumps(obj, option=_DUMPS_OPTIONS)
        except orjson.JSONEncodeError as exc:
            # orjson stops at 64-bit integers, where the native backend writes any int Python
            # can print, and refuses str subclasses as keys, which the native backend writes.
            if str(exc) not in _SLOW_PATH_FAULTS:
                raise EncodeError(str(exc)) from None
    parts: list[bytes] = []
    _encode_slow(obj, 0, parts)
    parts.append(b"\n")
    return b"".join(parts)


_SLOW_PATH_FAULTS = frozenset(("Integer exceeds 64-bit range", "Dict key must be str"))
_LEAF_TYPES = frozenset((str, int, float, bool, type(None)))


def _plain(obj: Any) -> bool:
    """True when ``obj`` is made of exact dicts, lists, str, int, float, bool and None only.

    Only those go to orjson directly: it does not bound the nesting of tuples (thousands of
    levels crash the process) and writes an ``orjson.Fragment`` out raw, newlines and all.
    Anything else takes ``_encode_slow``, which treats every type as the native backend does.
    """
    kind = type(obj)
    if kind in _LEAF_TYPES:
        return True
    if kind is not dict and kind is not list:
        return False
    # Depth is tracked so that a self-referencing container ends the walk (and is refused by
    # the slow path, as orjson and the native backend refuse it).
    stack = [(obj, 0)]
    pop, push, leaf = stack.pop, stack.append, _LEAF_TYPES
    while stack:
        node, depth = pop()
        if depth >= MAX_ENCODE_DEPTH:
            return False
        for item in node.values() if type(node) is dict else node:
            kind = type(item)
            if kind in leaf:
                continue
            if kind is not dict and kind is not list:
                return False
            push((item, depth + 1))
    return True


def _encode_slow(obj: Any, depth: int, out: list[bytes]) -> None:
    """orjson's output, piece by piece, for what ``_plain`` keeps from orjson (integers
    beyond 64 bits, tuples, subclasses, enums and the like), with the native backend's rules."""
    kind = type(obj)
    if kind is int or (isinstance(obj, int) and kind is not bool):
        try:
            out.append(orjson.dumps(obj))
        except orjson.JSONEncodeError:
            try:
                # The int's own value, whatever a subclass's __int__, __index__ or __repr__
                # say: no code of the object runs, as in the native backend.
                out.append(int.__repr__(obj).encode())
            except ValueError as exc:  # beyond Python's digit limit for int -> str
                raise EncodeError(str(exc)) from None
        return
    if kind is list or kind is tuple or (isinstance(obj, list)):
        if depth >= MAX_ENCODE_DEPTH:
            raise EncodeError("Recursion limit reached")
        out.append(b"[")
        # The stored items, as the native backend (and orjson) read them: a subclass's
        # `__iter__` is not called.
        # Not a list, `kind` is exactly tuple.
        items = (
            list.__iter__(obj)
            if isinstance(obj, list)
            else tuple.__iter__(cast("tuple[object, ...]", obj))
        )
        for i, item in enumerate(items):
            if i:
                out.append(b",")
            _encode_slow(item, depth + 1, out)
        out.append(b"]")
        return
    if isinstance(obj, dict):
        if depth >= MAX_ENCODE_DEPTH:
            raise EncodeError("Recursion limit reached")
        out.append(b"{")
        # The stored entries, whatever a subclass's `items` says (as for lists above).
        for i, (key, value) in enumerate(dict.items(obj)):
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
        # A member's value may be a member, even itself: each step counts as a level, so the
        # limit ends the chain.
        if depth >= MAX_ENCODE_DEPTH:
            raise EncodeError("Recursion limit reached")
        _encode_slow(obj.value, depth + 1, out)
        return
    if kind is orjson.Fragment:
        # orjson's own name for it (its type's tp_name), as the native backend reports it.
        raise EncodeError("Type is not JSON serializable: orjson.Fragment")
    out.append(_dumps_leaf(obj))


def _dumps_leaf(obj: Any) -> bytes:
    try:
        return orjson.dumps(
            obj, option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
        )
    except orjson.JSONEncodeError as exc:
        raise EncodeError(str(exc)) from None
