"""Twin of src/terminal/views/screen.rs: the visible rows of the active screen."""

from __future__ import annotations


class ScreenViewMixin:
    """``screen()``: the visible rows of the active screen."""

    __slots__ = ()

    def _screen_rows(self) -> list[str]:
        return ["".join(line.chars).rstrip(" ") for line in self._grid]
