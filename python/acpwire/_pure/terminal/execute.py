"""Twin of src/terminal/execute.rs: C0 controls and ESC sequences (IND, NEL, RI, DECSC/DECRC,
HTS, RIS, DECALN)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .line import _Line

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object

# The columns DECALN fills when cols is None: the VT100's width, not a whole row of
# UNBOUNDED_COLS (three bytes would otherwise write 8,192 cells per row).
DECALN_TRANSCRIPT_COLS = 80


class ExecuteMixin(TerminalState):
    """C0 controls and ESC sequences."""

    __slots__ = ()

    def _execute(self, b: int) -> None:
        self._last = self._repeatable = ""
        if b == 0x0A or b == 0x0B or b == 0x0C:
            self._index()
            if self._cols is None:
                self.col = 0
        elif b == 0x0D:
            self.col = 0
        elif b == 0x08:
            # From a pending wrap, back from the last column (xterm's CursorBack).
            col = self.col
            if col >= self._w:
                col = self._w - 1
            if col > 0:
                col -= 1
            self.col = col
        elif b == 0x09:
            # xterm's TabToNextStop keeps a pending wrap, so HT moves only short of it.
            if self.col < self._w:
                self.col = self._next_tab(self.col)
        elif b == 0x07:
            self._bell += 1

    def _esc_dispatch(self, final: int) -> None:
        if self._ignoring:
            return
        inter = self._inter
        if inter == "":
            if final == 0x37:  # DECSC
                self._save_cursor()
            elif final == 0x38:  # DECRC
                self._restore_cursor()
            elif final == 0x44:  # IND
                self._index()
            elif final == 0x45:  # NEL
                self.col = 0
                self._index()
            elif final == 0x4D:  # RI
                self._reverse_index()
            elif final == 0x48:  # HTS
                self._tab_stops()[self._edit_col()] = 1
            elif final == 0x63:  # RIS
                self._soft_reset()
        elif inter == "#" and final == 0x38:
            # DECALN: fill the screen with 'E' (a transcript, with no width, the 80 columns of
            # the VT100 it tests), then, as xterm, leave origin mode and the rendition (not a
            # link).
            w = self._w if self._cols is not None else DECALN_TRANSCRIPT_COLS
            for r in range(self._rows):
                line = _Line()
                line.chars = ["E"] * w
                line.styles = [0] * w
                self._grid[r] = line
            self._top = 0
            self._bot = self._rows - 1
            self.row = 0
            self.col = 0
            self._origin = False
            self._fg = self._bg = self._flags = 0
            self._pen_id = -1
