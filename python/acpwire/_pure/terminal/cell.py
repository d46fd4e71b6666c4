"""Twin of src/terminal/cell.rs: what a cell holds, and cutting a row between cells.

A row keeps its cells as two parallel lists (see ``line``): a cell's text and its style id. The
text is one character, a grapheme cluster, ``""`` for the right half of a wide character, or
``" "`` for a blank; cells past the end of the lists are default blanks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


class CellMixin(TerminalState):
    """Cutting a row between cells."""

    __slots__ = ()

    @staticmethod
    def _split(chars: list[str], styles: list[int], x: int) -> None:
        # Cutting between the halves of a wide character blanks both halves.
        if 0 < x < len(chars) and chars[x] == "":
            chars[x - 1] = " "
            chars[x] = " "
            styles[x - 1] = 0
            styles[x] = 0
