"""Twin of src/terminal/width.rs: cells taken by a code point (``unicode-width``, non-CJK).

The table is generated (``_width_table``, by ``python scripts/gen_widths.py``) from the widths
the Rust terminal computes, so both backends measure every character alike.
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_right

from ._width_table import _WIDTH_TABLE


def _build_width_table() -> tuple[list[int], list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    widths: list[int] = []
    for item in _WIDTH_TABLE.split(","):
        if not item:
            continue
        width = 2 if item.endswith("!") else 0
        first, _, last = item.rstrip("!").partition("-")
        starts.append(int(first, 16))
        ends.append(int(last or first, 16))
        widths.append(width)
    return starts, ends, widths


_W_STARTS, _W_ENDS, _W_WIDTHS = _build_width_table()


def _special_class() -> re.Pattern[str]:
    # Code points that may not be simply one cell: C1 (dropped), every width-0/2 range of the
    # BMP, and all of the supplementary planes (a class reaching past the BMP is a slow linear
    # scan in `re`, so those take the per-character path whatever their width).
    parts = ["\x80-\x9f"]
    for first, last in zip(_W_STARTS, _W_ENDS, strict=True):
        first, last = max(first, 0xAD), min(last, 0xFFFF)
        if first <= last:
            parts.append(f"{re.escape(chr(first))}-{re.escape(chr(last))}")
    parts.append("\U00010000-\U0010ffff")
    return re.compile("[" + "".join(parts) + "]")


def char_width(cp: int) -> int:
    """Cells the code point ``cp`` takes on its own: 0 for a control character or a mark that
    joins the previous cell, else 1 or 2. ``ValueError`` for a surrogate or a value beyond
    U+10FFFF, ``OverflowError`` for one outside 0 to 2**32 - 1, ``TypeError`` for a non-integer."""
    cp = operator.index(cp)
    if not 0 <= cp <= 0xFFFF_FFFF:
        # The binding's two messages: read as a C long first, then narrowed to 32 bits.
        if not -(1 << 63) <= cp < 1 << 63:
            raise OverflowError("Python int too large to convert to C long")
        raise OverflowError("out of range integral type conversion attempted")
    if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        raise ValueError(f"{cp:#x} is not a Unicode scalar value")
    if cp < 0x20 or 0x7F <= cp < 0xA0:
        return 0
    return _width(cp)


def _width(cp: int) -> int:
    """Cells taken by the printable code point ``cp``: 0 (joins the previous cell), 1 or 2."""
    if cp < 0xAD:
        return 1
    i = bisect_right(_W_STARTS, cp) - 1
    if i >= 0 and cp <= _W_ENDS[i]:
        return _W_WIDTHS[i]
    return 1


_SPECIAL = _special_class()
