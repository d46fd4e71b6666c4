"""Twin of the argument conversions of src/python/mod.rs: read as the native bindings read them.

Sizes (``Size``), byte buffers (``with_bytes``) and refused pickling (``unpicklable``), with the
same errors.
"""

from __future__ import annotations

import operator
import sys
from typing import Any


def size(value: Any) -> int:
    """An int argument: any int (or object with ``__index__``), of any magnitude.

    Past the machine word it saturates, as the native bindings' sizes do (as good as unlimited
    for a size), so both report the same value back. Anything else raises the TypeError the
    native bindings raise.
    """
    return min(operator.index(value), _SIZE_MAX)


_SIZE_MAX = 2 * sys.maxsize + 1


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
    """A str argument: a ``str`` (or subclass, by its stored value), as native requires."""
    if isinstance(value, str):
        # A subclass's own methods (`__str__`, `__hash__`: a `(str, Enum)` member hashes as
        # its name) are not what the binding reads.
        return value if type(value) is str else str.__str__(value)
    raise _not_an_instance(value, "str")


def _not_an_instance(value: Any, kind: str) -> TypeError:
    what = "'None'" if value is None else f"'{type(value).__name__}' object"
    return TypeError(f"{what} is not an instance of '{kind}'")


# Buffers read as bytes, on both backends: one byte per item (unsigned, signed or char), any
# shape.
_BYTE_FORMATS = frozenset(("B", "b", "c"))
BYTES = "bytes, bytearray or memoryview"
BYTES_OR_STR = "bytes, bytearray, memoryview or str"


def buffer_bytes(data: Any, accepted: str = BYTES) -> bytes:
    """The bytes of ``data``: ``bytes`` itself, or a copy of any buffer of bytes.

    Anything else (an int, which ``bytes()`` would take for a length; a buffer of wider
    items) raises the TypeError the native bindings raise, naming ``accepted``; a released
    buffer raises memoryview's ValueError, as there.
    """
    if type(data) is bytes:
        return data
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"expected {accepted}, not {type(data).__name__}") from None
    if view.format not in _BYTE_FORMATS:
        raise TypeError(
            f"expected {accepted}, not {type(data).__name__} of item format '{view.format}'"
        )
    return view.tobytes()


class Unpicklable:
    """Refuses copy and pickle, as the native classes do: live state (a lock, a stream read
    half-way) that a copy could not share safely."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The native classes cannot be subclassed (the stubs mark them final); the backend's
        # own helpers, in this package, may.
        if not cls.__module__.startswith("acpwire."):
            base = next(b for b in cls.__mro__[1:] if b.__module__.startswith("acpwire."))
            raise TypeError(f"type 'acpwire.{base.__qualname__}' is not an acceptable base type")
        super().__init_subclass__(**kwargs)

    def __reduce__(self) -> Any:
        # Named by the public name, as the native classes name themselves.
        raise TypeError(f"cannot pickle 'acpwire.{type(self).__qualname__}' object")
