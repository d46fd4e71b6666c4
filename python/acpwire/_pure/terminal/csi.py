"""Twin of src/terminal/csi.rs: CSI dispatch (cursor movement, erase and edit, tab stops,
margins, scrolling, private modes, DECSTR)."""

from __future__ import annotations

from .line import _BLANK
from .screen import _Saved


class CsiMixin:
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

    def _erase_line(self, mode: int) -> None:
        """EL: from the cursor (0), to it (1) or the whole row (2). A row erased to its end is no
        longer soft-wrapped (xterm's ``ClearRight``), nor is one erased whole."""
        if mode > 2:
            return
        x = self.col = self._edit_col()
        line = self._grid[self.row]
        if line is _BLANK:
            return  # every mode leaves a blank row blank
        chars = line.chars
        styles = line.styles
        if mode == 0:
            self._split(chars, styles, x)
            del chars[x:]
            del styles[x:]
            line.wrapped = False
        elif mode == 1 and x + 1 < self._w:
            self._split(chars, styles, x + 1)
            end = min(x + 1, len(chars))
            chars[:end] = " " * end
            styles[:end] = [0] * end
        else:
            self._grid[self.row] = _BLANK

    def _erase_display(self, mode: int) -> None:
        g = self._grid
        if mode == 0:
            self._erase_line(0)
            for r in range(self.row + 1, self._rows):
                g[r] = _BLANK
        elif mode == 1:
            for r in range(self.row):
                g[r] = _BLANK
            self._erase_line(1)
        elif mode == 2:
            self._reset_wrap()
            for r in range(self._rows):
                g[r] = _BLANK
        elif mode == 3:
            self._sb.clear()
            self._sb_cost = 0

    def _insert_chars(self, n: int) -> None:
        line = self._grid[self.row]
        chars = line.chars
        styles = line.styles
        w = self._w
        x = self.col = self._edit_col()
        n = min(n, w - x)
        if x >= len(chars):
            return
        self._split(chars, styles, x)
        self._split(chars, styles, w - n)
        chars[x:x] = " " * n
        styles[x:x] = [0] * n
        del chars[w:]
        del styles[w:]
        # Trailing blanks show as nothing but count against max_bytes (as in the Rust core).
        # Found by comparing slices, in C, of doubling then halving sizes: a run of blanks
        # may be as long as the row is wide.
        kept = len(chars)
        size = 1
        while (
            kept >= size
            and chars[kept - size : kept] == [" "] * size
            and styles[kept - size : kept] == [0] * size
        ):
            kept -= size
            size *= 2
        while size > 1:
            size //= 2
            if (
                kept >= size
                and chars[kept - size : kept] == [" "] * size
                and styles[kept - size : kept] == [0] * size
            ):
                kept -= size
        del chars[kept:]
        del styles[kept:]

    def _delete_chars(self, n: int) -> None:
        """DCH; as in xterm, the row is no longer soft-wrapped."""
        line = self._grid[self.row]
        if line.wrapped:
            line.wrapped = False
        chars = line.chars
        styles = line.styles
        x = self.col = self._edit_col()
        n = min(n, self._w - x)
        if x >= len(chars):
            return
        self._split(chars, styles, x)
        self._split(chars, styles, x + n)
        del chars[x : x + n]
        del styles[x : x + n]

    def _erase_chars(self, n: int) -> None:
        """ECH; as in xterm (``ClearRight``), the row is no longer soft-wrapped."""
        line = self._grid[self.row]
        if line.wrapped:
            line.wrapped = False
        chars = line.chars
        styles = line.styles
        x = self.col = self._edit_col()
        end = min(x + n, self._w)
        if x >= len(chars):
            return
        self._split(chars, styles, x)
        self._split(chars, styles, end)
        end = min(end, len(chars))
        chars[x:end] = " " * (end - x)
        styles[x:end] = [0] * (end - x)
