"""Constructor arguments read as the native bindings read them, with the same errors."""

from __future__ import annotations

import operator
from typing import Any


def size(value: Any) -> int:
    """An int argument: any int (or object with ``__index__``), of any magnitude.

    Anything else raises the TypeError the native bindings raise.
    """
    return operator.index(value)


def flag(value: Any) -> bool:
    """A bool argument: exactly ``True`` or ``False`` (or a NumPy bool), as native requires."""
    kind = type(value)
    if kind is bool or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")):
        return bool(value)
    what = "'None'" if value is None else f"'{kind.__name__}' object"
    raise TypeError(f"{what} is not an instance of 'bool'")
