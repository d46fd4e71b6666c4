"""Twin of src/terminal/scrollback.rs: lines scrolled off the top of the primary screen, bounded
by ``scrollback`` lines and ``max_bytes``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .line import _LINE_COST, _Line

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


class ScrollbackMixin(TerminalState):
    """Lines scrolled off the top, and what they cost."""

    __slots__ = ()

    def _line_cost(self, line: _Line) -> int:
        """What a scrollback line counts against max_bytes: the cells the views show (a soft-
        wrapped row is padded to the width, whatever cells it holds) and a fixed part."""
        shown = len(line.chars)
        if line.wrapped:
            shown = max(shown, self._w - line.wide_wrap)
        return shown + _LINE_COST

    def _push_scrollback(self, lines: list[_Line]) -> None:
        sb = self._sb
        for line in lines:
            sb.append(line)
            self._sb_cost += self._line_cost(line)
        while sb and (len(sb) > self._sb_max or self._sb_cost > self._max_bytes):
            old = sb.popleft()
            self._sb_cost -= self._line_cost(old)
            self._truncated = True
