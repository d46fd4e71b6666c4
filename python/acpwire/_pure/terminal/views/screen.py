"""Twin of src/terminal/views/screen.rs: the visible rows of the active screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._state import TerminalState
else:
    TerminalState = object


class ScreenViewMixin(TerminalState):
    """``screen()``: the visible rows of the active screen."""

    __slots__ = ()

    def _screen_rows(self) -> list[str]:
        return ["".join(line.chars).rstrip(" ") for line in self._grid]
