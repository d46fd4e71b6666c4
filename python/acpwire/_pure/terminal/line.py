"""Twin of src/terminal/line.rs: one row of cells, the blank row all untouched rows share, and
what a row kept in scrollback costs."""

from __future__ import annotations

# What a line kept in scrollback costs of `max_bytes` besides its cells (the native backend's
# first allocation for a line's cells, which a short line keeps whole).
_LINE_COST = 128


class _Line:
    """One row: parallel lists of cell text and style ids, plus the soft-wrap flags.

    Cell text is one character, a grapheme cluster, ``""`` for the right half of a wide
    character, or ``" "`` for a blank. Cells past the end of the lists are default blanks.
    ``wide_wrap``: the row wrapped early, before a wide character that did not fit in the last
    column, so that column is padding, not part of the text the views join.
    """

    __slots__ = ("chars", "styles", "wide_wrap", "wrapped")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.styles: list[int] = []
        self.wrapped = False
        self.wide_wrap = False


# The row every untouched or cleared row shares, so a new screen costs one list, not a row
# object per line. Its cell lists are tuples: writing to it by mistake raises instead of
# changing every blank row; writers take `Terminal._writable_row()` instead.
_BLANK = _Line()
_BLANK.chars = ()  # type: ignore[assignment]
_BLANK.styles = ()  # type: ignore[assignment]
