"""Twin of src/terminal/views/spans.rs: each logical line as ``Span`` runs of one style."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...._span import Span
from ..style import _SHOWS_BLANK, BOLD, DIM, INVERSE, ITALIC, STRIKE, UNDERLINE, _color_out

if TYPE_CHECKING:
    from .._state import TerminalState
else:
    TerminalState = object


class SpansViewMixin(TerminalState):
    """``spans()``: each logical line as runs of one style."""

    __slots__ = ()

    def _trim_runs(self, runs: list[list[Any]]) -> None:
        """Trim a line's trailing blanks back to the last cell that can be seen: a non-blank, or
        a blank whose style shows it (a background colour, inverse, underline or strike)."""
        styles = self._styles
        while runs:
            run = runs[-1]
            style = styles[run[1]]
            if style.bg or style.flags & _SHOWS_BLANK:
                return
            text = run[0].rstrip(" ")
            if text:
                run[0] = text
                return
            runs.pop()

    def _spans(self) -> list[list[Span]]:
        out = []
        # Spans are immutable and output repeats itself: a run of a text and style already
        # made is that span again (as the native backend does it).
        made: dict[tuple[str, int], Span] = {}
        for _, runs in self._logical(True):
            spans = []
            for run in runs:
                span = made.get(run)
                if span is None:
                    text, sid = run
                    style = self._styles[sid]
                    flags, link = style.flags, style.link
                    span = made[run] = Span(
                        text,
                        _color_out(style.fg),
                        _color_out(style.bg),
                        bool(flags & BOLD),
                        bool(flags & DIM),
                        bool(flags & ITALIC),
                        bool(flags & UNDERLINE),
                        bool(flags & INVERSE),
                        bool(flags & STRIKE),
                        self._links[link] if link else None,
                    )
                spans.append(span)
            out.append(spans)
        return out
