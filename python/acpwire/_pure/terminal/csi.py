"""Twin of src/terminal/csi.rs: CSI dispatch (cursor movement, tab stops, margins, scrolling,
private modes, DECSTR), and the plain CSIs the ground state finds whole, SGR through its memo.

Erasing and editing (EL, ED, ICH, DCH, ECH) are the screen's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .line import _BLANK
from .params import _param
from .screen import _Saved

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


class CsiMixin(TerminalState):
    """CSI sequences: cursor movement, erasing, editing, modes."""

    __slots__ = ()

    def _csi(self, f: str) -> None:
        inter = self._inter
        if inter == "?":
            if f == "h" or f == "l":
                self._private_modes(f == "h")
            elif f == "J":
                self._erase_display(self._arg(0, 0))
            elif f == "K":
                self._erase_line(self._arg(0, 0))
            return
        if inter == "!" and f == "p":
            self._decstr()
            return
        if inter:
            return
        w = self._w
        rows = self._rows
        if f == "m":
            self._sgr()
        elif f == "K":
            self._erase_line(self._arg(0, 0))
        elif f == "J":
            self._erase_display(self._arg(0, 0))
        elif f == "A" or f == "F":
            n = self._arg(0, 1)
            floor = self._top if self.row >= self._top else 0
            self.row = max(self.row - n, floor)
            if f == "F":
                self.col = 0
            else:
                self._reset_wrap()
        elif f == "B" or f == "e" or f == "E":
            n = self._arg(0, 1)
            ceil = self._bot if self.row <= self._bot else rows - 1
            self.row = min(self.row + n, ceil)
            if f == "E":
                self.col = 0
            else:
                self._reset_wrap()
        elif f == "C" or f == "a":
            self.col = min(self.col + self._arg(0, 1), w - 1)
        elif f == "D":
            # From a pending wrap, back from the last column (xterm's CursorBack).
            self.col = max(self._edit_col() - self._arg(0, 1), 0)
        elif f == "G" or f == "`":
            self.col = min(self._arg(0, 1) - 1, w - 1)
        elif f == "H" or f == "f":
            self.row = self._addressed_row(self._arg(0, 1))
            self.col = min(self._arg(1, 1) - 1, w - 1)
        elif f == "d":
            self.row = self._addressed_row(self._arg(0, 1))
            self._reset_wrap()
        elif f == "I":
            self._tab_forward(self._arg(0, 1))
        elif f == "Z":
            # From a pending wrap, back from the last column (only stops left of it).
            self._reset_wrap()
            self._tab_back(self._arg(0, 1))
        elif f == "g":
            mode = self._arg(0, 0)
            if mode == 0:
                self._tab_stops()[self._edit_col()] = 0
            elif mode == 3:
                self._tabs = bytearray(w)
        elif f == "@":
            self._insert_chars(self._arg(0, 1))
        elif f == "P":
            self._delete_chars(self._arg(0, 1))
        elif f == "X":
            self._erase_chars(self._arg(0, 1))
        elif f == "L" or f == "M":
            top, bot = self._top, self._bot
            if top <= self.row <= bot:
                n = min(self._arg(0, 1), bot - self.row + 1)
                g = self._grid
                if f == "L":
                    del g[bot - n + 1 : bot + 1]
                    g[self.row : self.row] = [_BLANK] * n
                else:
                    del g[self.row : self.row + n]
                    g[bot - n + 1 : bot - n + 1] = [_BLANK] * n
                self.col = 0
        elif f == "S":
            self._scroll_up(self._arg(0, 1))
        elif f == "T":
            # As xterm: more than one parameter, or an explicit 0, is mouse tracking.
            if len(self._groups) <= 1 and not (self._first_digits and self._arg(0, 0) == 0):
                self._scroll_down(self._arg(0, 1))
        elif f == "b":
            if self._repeatable:
                self._print(self._repeatable * self._arg(0, 1))
                self._repeatable = ""
                # A REP does not make its character repeatable again.
                self._last = ""
        elif f == "r":
            top = self._arg(0, 1)
            bot = min(self._arg(1, rows), rows)
            if top < bot:
                self._top = top - 1
                self._bot = bot - 1
                self._home()
        elif (f == "s" or f == "u") and self._groups == [[0]]:
            if f == "s":
                self._save_cursor()
            else:
                self._restore_cursor()

    def _private_modes(self, on: bool) -> None:
        for group in self._groups:
            mode = group[0]
            if mode == 6:
                self._origin = on
                self._home()
            elif mode == 7:
                self._autowrap = on
            elif mode == 1048:
                if on:
                    self._save_cursor()
                else:
                    self._restore_cursor()
            # As xterm's charproc.c: only the switch itself depends on the screen shown;
            # ?1049 saves, clears and restores whichever it is on.
            elif mode == 47 or mode == 1047:
                if on:
                    self._show_alternate()
                else:
                    if mode == 1047 and self._alt is not None:
                        self._erase_display(2)
                    self._show_primary()
            elif mode == 1049:
                if on:
                    self._save_cursor()
                    self._show_alternate()
                    self._erase_display(2)
                else:
                    self._show_primary()
                    self._restore_cursor()

    def _decstr(self) -> None:
        """DECSTR (``CSI ! p``), as xterm's soft reset: the margins, origin mode, autowrap and
        the rendition (not an OSC 8 link, as SGR 0) to their defaults, and this screen's saved
        cursor to home with them; the cursor, the screens, tab stops and scrollback stay."""
        self._top = 0
        self._bot = self._rows - 1
        self._origin = False
        self._autowrap = True
        self._fg = self._bg = self._flags = 0
        self._pen_id = 0 if self._link == 0 else -1
        slot = 0 if self._alt is None else 1
        self._saved[slot] = _Saved(0, 0, 0, 0, 0, self._link, False)

    def _plain_csi(self, params: bytes, final: int) -> None:
        self._reset_params()
        self._first_digits = params[:1].isdigit()
        groups = [[_param(p)] for p in params.split(b";")]
        self._groups = groups
        self._count = len(groups)
        self._csi(chr(final))
