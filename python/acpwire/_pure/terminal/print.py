"""Twin of src/terminal/print.rs: printing decoded text into cells, narrow runs and wide
characters, wrapping at the right margin (zero-width marks join a cluster, in ``style``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .line import _BLANK, _Line
from .width import _SPECIAL, _width

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


class PrintMixin(TerminalState):
    """Printing decoded text into cells: narrow, wide, combining."""

    __slots__ = ()

    def _print(self, s: str) -> None:
        if s.isascii():
            self._last = s[-1]
            self._put_narrow(s)
            return
        # Runs of one-cell characters are written whole; writing them in pieces is the same.
        pos = 0
        n = len(s)
        search = _SPECIAL.search
        while pos < n:
            m = search(s, pos)
            k = n if m is None else m.start()
            if k > pos:
                run = s[pos:k]
                self._last = run[-1]
                self._put_narrow(run)
            if m is None:
                return
            pos = k + 1
            ch = s[k]
            o = ord(ch)
            if o < 0xA0:
                continue  # C1 code points are never printed
            w = _width(o)
            if w == 2:
                self._last = ch
                self._put_wide(ch)
            elif w == 0:
                # xterm's REP repeats nothing after a zero-width character.
                self._last = ""
                self._combine(ch)
            else:
                self._last = ch
                self._put_narrow(ch)

    def _wrap(self, wide: bool = False) -> None:
        """Soft-wrap to the start of the next row; ``wide``: early, for a wide character that
        the last column could not hold."""
        line = self._writable_row()
        line.wrapped = True
        line.wide_wrap = wide
        self._soft_wraps = True
        self._index()
        self.col = 0

    def _put_narrow(self, s: str) -> None:
        w = self._w
        n = len(s)
        col = self.col
        if col + n < w:
            # Fits before the last column: no wrap, pending or new.
            self._write(col, s)
            self.col = col + n
            return
        pos = 0
        while pos < n:
            col = self.col
            if col >= w:
                if self._autowrap:
                    self._wrap()
                    col = 0
                else:
                    col = w - 1
            room = w - col
            k = n - pos
            if k > room:
                if not self._autowrap:
                    # Without autowrap the rest overwrites the last column: the final one stays.
                    self._write(col, s[pos : pos + room - 1] + s[n - 1])
                    self.col = w - 1
                    return
                k = room
            self._write(col, s[pos : pos + k])
            pos += k
            col += k
            self.col = col if col < w or self._autowrap else w - 1

    def _write(self, col: int, text: str) -> None:
        # `_writable_row`, inline: every printed run comes here.
        line = self._grid[self.row]
        if line is _BLANK:
            line = self._grid[self.row] = _Line()
        chars = line.chars
        styles = line.styles
        sid = self._pen_id
        if sid < 0:
            sid = self._style()
        end = col + len(text)
        have = len(chars)
        if col >= have:
            if col > have:
                chars.extend(" " * (col - have))
                styles.extend([0] * (col - have))
            chars.extend(text)
            styles.extend([sid] * len(text))
            return
        if col and chars[col] == "":
            self._split(chars, styles, col)
        if end < have and chars[end] == "":
            self._split(chars, styles, end)
        chars[col:end] = text
        styles[col:end] = [sid] * len(text)

    def _put_wide(self, ch: str) -> None:
        w = self._w
        col = self.col
        if col + 2 < w:
            line = self._grid[self.row]
            chars = line.chars
            if col == len(chars) and line is not _BLANK:
                # Appended at the end of the row, before the last column: no wrap, no cell cut.
                sid = self._pen_id
                if sid < 0:
                    sid = self._style()
                chars += (ch, "")
                line.styles += (sid, sid)
                self.col = col + 2
                return
        if w < 2:
            return
        if col >= w:
            if self._autowrap:
                self._wrap()
                col = 0
            else:
                col = w - 1
        if col == w - 1:
            if self._autowrap:
                # It does not fit: the last column is left as it is and the character wraps.
                self._wrap(True)
                col = 0
            else:
                col = w - 2
        line = self._writable_row()
        chars = line.chars
        styles = line.styles
        sid = self._style()
        have = len(chars)
        if col > have:
            chars.extend(" " * (col - have))
            styles.extend([0] * (col - have))
        else:
            self._split(chars, styles, col)
        self._split(chars, styles, col + 2)
        chars[col : col + 2] = (ch, "")
        styles[col : col + 2] = (sid, sid)
        col += 2
        self.col = col if col < w or self._autowrap else w - 1
