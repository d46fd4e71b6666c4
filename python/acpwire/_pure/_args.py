"""Arguments read as the native bindings read them, with the same errors."""

from __future__ import annotations

import operator
from typing import Any


def size(value: Any) -> int:
    """An int argument: any int (or object with ``__index__``), of any magnitude.

    Anything else raises the TypeError the native bindings raise.
    """
    return operator.index(value)


def at_most(name: str, value: int, limit: int) -> int:
    """``value``, or the ValueError naming the argument ``name`` when it is over ``limit``."""
    if value > limit:
        raise ValueError(f"{name} must be at most {limit}")
    return value


def flag(value: Any) -> bool:
    """A bool argument: exactly ``True`` or ``False`` (or a NumPy bool), as native requires."""
    kind = type(value)
    if kind is bool or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")):
        return bool(value)
    raise _not_an_instance(value, "bool")


def str_arg(value: Any) -> str:
    """A str argument: a ``str`` (or subclass), as native requires."""
    if isinstance(value, str):
        return value
    raise _not_an_instance(value, "str")


def _not_an_instance(value: Any, kind: str) -> TypeError:
    what = "'None'" if value is None else f"'{type(value).__name__}' object"
    return TypeError(f"{what} is not an instance of '{kind}'")


# Buffers the native backend reads as bytes: one unsigned byte or char per item, any shape.
_BYTE_FORMATS = frozenset(("B", "c"))
BYTES = "bytes, bytearray or memoryview"
BYTES_OR_STR = "bytes, bytearray, memoryview or str"


def buffer_bytes(data: Any, accepted: str = BYTES) -> bytes:
    """The bytes of ``data``: ``bytes`` itself, or a copy of any buffer of bytes.

    Anything else (an int, which ``bytes()`` would take for a length; a buffer of wider
    items) raises the TypeError the native bindings raise, naming ``accepted``.
    """
    if type(data) is bytes:
        return data
    try:
        view = memoryview(data)
    except TypeError:
        view = None
    if view is None or view.format not in _BYTE_FORMATS:
        raise TypeError(f"expected {accepted}, not {type(data).__name__}")
    return view.tobytes()


class Unpicklable:
    """Refuses copy and pickle, as the native classes do: live state (a lock, a stream read
    half-way) that a copy could not share safely."""

    __slots__ = ()

    def __reduce__(self) -> Any:
        # Named by the public name, as the native classes name themselves.
        raise TypeError(f"cannot pickle 'acpwire.{type(self).__qualname__}' object")
