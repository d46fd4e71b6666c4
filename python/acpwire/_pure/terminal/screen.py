"""Twin of src/terminal/screen.rs: the grid, cursor, margins, tab stops, the saved cursor and
the alternate screen; index, reverse index and scrolling within the margins; erasing, inserting
and deleting (EL, ED, ICH, DCH, ECH)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .line import _BLANK, _Line

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


class _Saved:
    """A cursor saved by DECSC, CSI s, ?1048h or ?1049h (each screen has its own): the position,
    the rendition with its OSC 8 link, and origin mode."""

    __slots__ = ("bg", "col", "fg", "flags", "link", "origin", "row")

    def __init__(
        self, row: int, col: int, fg: int, bg: int, flags: int, link: int, origin: bool
    ) -> None:
        self.row = row
        self.col = col
        self.fg = fg
        self.bg = bg
        self.flags = flags
        self.link = link
        self.origin = origin


# What restoring a cursor never saved restores.
_HOME = _Saved(0, 0, 0, 0, 0, 0, False)


class ScreenMixin(TerminalState):
    """The grid, the cursor, margins, tab stops and the alternate screen."""

    __slots__ = ()

    def _writable_row(self) -> _Line:
        line = self._grid[self.row]
        if line is _BLANK:
            line = self._grid[self.row] = _Line()
        return line

    def _edit_col(self) -> int:
        return min(self.col, self._w - 1)

    def _home(self) -> None:
        """The cursor to the first column of the first row it may address."""
        self.row = self._top if self._origin else 0
        self.col = 0

    def _addressed_row(self, n: int) -> int:
        """The screen row of row ``n`` (1-based) as CUP and VPA address it."""
        if self._origin:
            return min(self._top + n - 1, self._bot)
        return min(n - 1, self._rows - 1)

    def _save_cursor(self) -> None:
        slot = 0 if self._alt is None else 1
        self._saved[slot] = _Saved(
            self.row,
            self.col,
            self._fg,
            self._bg,
            self._flags,
            self._link,
            self._origin,
        )

    def _restore_cursor(self) -> None:
        saved = self._saved[0 if self._alt is None else 1]
        if saved is None:
            saved = _HOME
        self.row, self.col = saved.row, saved.col
        self._fg, self._bg, self._flags, self._link = saved.fg, saved.bg, saved.flags, saved.link
        self._origin = saved.origin
        self._pen_id = -1
        if self._origin:
            # As xterm (`CursorSet`): in origin mode the cursor stays above the bottom margin
            # set since; a row above the top margin stays where it was.
            self.row = min(self.row, self._bot)

    def _index(self) -> None:
        if self.col >= self._w:
            self.col = self._w - 1  # ends a pending wrap, as `_reset_wrap`
        if self.row == self._bot:
            self._scroll_up(1)
        elif self.row < self._rows - 1:
            self.row += 1

    def _reset_wrap(self) -> None:
        """Ends a pending wrap, leaving the cursor on the last column: xterm's ``ResetWrap``,
        which every vertical move, erase and character insertion or deletion does."""
        if self.col >= self._w:
            self.col = self._w - 1

    def _reverse_index(self) -> None:
        self._reset_wrap()
        if self.row == self._top:
            self._scroll_down(1)
        elif self.row > 0:
            self.row -= 1

    def _scroll_up(self, n: int) -> None:
        top, bot = self._top, self._bot
        n = min(n, bot - top + 1)
        g = self._grid
        removed = g[top : top + n]
        del g[top : top + n]
        g[bot - n + 1 : bot - n + 1] = [_BLANK] * n
        if top == 0 and self._alt is None:
            self._push_scrollback(removed)

    def _scroll_down(self, n: int) -> None:
        top, bot = self._top, self._bot
        n = min(n, bot - top + 1)
        g = self._grid
        del g[bot - n + 1 : bot + 1]
        g[top:top] = [_BLANK] * n

    def _show_alternate(self) -> None:
        """Show the alternate screen as it was last left (blank the first time)."""
        if self._alt is None:
            alt = self._alt_kept
            self._alt_kept = None
            self._alt = self._grid = [_BLANK] * self._rows if alt is None else alt

    def _show_primary(self) -> None:
        """Show the primary screen, keeping the alternate one as it is."""
        if self._alt is not None:
            self._alt_kept = self._alt
            self._alt = None
            self._grid = self._prim

    def _tab_stops(self) -> bytearray:
        """The tab stops, made explicit (every 8 columns) the first time they are changed."""
        if self._tabs is None:
            # Made in C: RIS and an HTS may alternate, each rebuilding the table.
            tabs = bytearray(self._w)
            tabs[8::8] = b"\x01" * len(range(8, self._w, 8))
            self._tabs = tabs
        return self._tabs

    def _next_tab(self, col: int) -> int:
        """The first tab stop right of ``col``, or the last column."""
        last = self._w - 1
        col = min(col, last)
        if self._tabs is None:
            return min((col // 8 + 1) * 8, last)
        found = self._tabs.find(1, col + 1)
        return last if found < 0 else found

    def _tab_forward(self, n: int) -> None:
        """CHT: ``n`` times to the next tab stop, stopping at the last column. Found by
        arithmetic, or by bisecting on counts of stops (each step counting only the half it
        tests), not stop by stop: a count may be as large as the row is wide."""
        last = self._w - 1
        col = self.col
        if col >= last:
            return
        tabs = self._tabs
        if tabs is None:
            self.col = min((col // 8 + n) * 8, last)
            return
        if n == 1:
            self.col = self._next_tab(col)
            return
        if tabs.count(1, col + 1) < n:
            self.col = last
            return
        # The first column x with n stops in col+1..=x; `below` counts those before `lo`.
        lo, hi, below = col + 1, last, 0
        while lo < hi:
            mid = (lo + hi) // 2
            upto = below + tabs.count(1, lo, mid + 1)
            if upto >= n:
                hi = mid
            else:
                lo, below = mid + 1, upto
        self.col = lo

    def _tab_back(self, n: int) -> None:
        """CBT: ``n`` times to the previous tab stop, stopping at column 0 (as ``_tab_forward``)."""
        end = min(self.col, self._w)
        if end == 0:
            return
        tabs = self._tabs
        if tabs is None:
            self.col = max(((end - 1) // 8 - (n - 1)) * 8, 0)
            return
        if n == 1:
            self.col = max(tabs.rfind(1, 0, end), 0)
            return
        if tabs.count(1, 0, end) < n:
            self.col = 0
            return
        # The last column x with n stops in x..end; `above` counts those after `hi`.
        lo, hi, above = 0, end - 1, 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            upto = above + tabs.count(1, mid, hi + 1)
            if upto >= n:
                lo = mid
            else:
                hi, above = mid - 1, upto
        self.col = lo

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
            # Lists repeated in C: a string would be iterated into one-character strings.
            chars[:end] = [" "] * end
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
