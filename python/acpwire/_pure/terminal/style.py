"""Twin of src/terminal/style.rs: styles, colours and the bounded interning of styles, links
and grapheme clusters.

Styles (pen colours, flags and OSC 8 link) are interned as ids, links and grapheme clusters in
tables, each bounded (``MAX_STYLES``, ``MAX_LINKS``, ``MAX_CLUSTERS``); past a bound a cell
takes the default style, no link, or drops the extra mark. A zero-width mark joins the cell
before the cursor into a cluster here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._contract import (
    MAX_CLUSTER_CHARS,
    MAX_CLUSTERS,
    MAX_STYLES,
)
from .utf8 import _utf8_len

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object

# Style flags and colour encoding (as in Rust): 0 = default, 1..=256 = palette index + 1,
# RGB_BIT | 0xRRGGBB = true colour.
BOLD, DIM, ITALIC, UNDERLINE, INVERSE, STRIKE = 1, 2, 4, 8, 16, 32
RGB_BIT = 1 << 24


# What an interned style or grapheme cluster counts in `_retained_bytes` (a cluster, its
# UTF-8 bytes besides).
_INTERNED_COST = 8

# Attributes that make a blank cell visible (with a background colour): `spans()` keeps such
# trailing blanks; every other view trims all trailing blanks.
_SHOWS_BLANK = INVERSE | UNDERLINE | STRIKE


class _Style:
    """An interned style: colours, flags and OSC 8 link id (its key is the same four, a tuple)."""

    __slots__ = ("bg", "fg", "flags", "link")

    def __init__(self, fg: int, bg: int, flags: int, link: int) -> None:
        self.fg = fg
        self.bg = bg
        self.flags = flags
        self.link = link


def _color_out(c: int) -> int | str | None:
    if c == 0:
        return None
    if c & RGB_BIT:
        return f"#{c & 0xFFFFFF:06x}"
    return c - 1


class StyleMixin(TerminalState):
    """The pen's interned style."""

    __slots__ = ()

    def _style(self) -> int:
        sid = self._pen_id
        if sid < 0:
            key = (self._fg, self._bg, self._flags, self._link)
            sid = self._style_ids.get(key, -1)
            if sid < 0:
                if len(self._styles) >= MAX_STYLES:
                    sid = 0
                else:
                    sid = len(self._styles)
                    self._styles.append(_Style(*key))
                    self._style_ids[key] = sid
            self._pen_id = sid
        return sid

    def _combine(self, ch: str) -> None:
        x = self.col - 1
        if x < 0:
            return  # nothing to join at the start of a row
        line = self._writable_row()
        chars = line.chars
        have = len(chars)
        if x < have and chars[x] == "" and x > 0:
            x -= 1
        if x >= have:
            chars.extend(" " * (x + 1 - have))
            line.styles.extend([0] * (x + 1 - have))
        old = chars[x]
        if len(old) >= MAX_CLUSTER_CHARS:
            return
        new = old + ch
        if new not in self._clusters:
            if len(self._clusters) >= MAX_CLUSTERS:
                return
            self._clusters.add(new)
            self._cluster_bytes += _utf8_len(new)
        chars[x] = new
