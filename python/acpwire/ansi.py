"""Styled terminal spans as ANSI text: what ``Terminal.spans()`` gives, written back as SGR.

A terminal's screen comes out of ``Terminal.spans()`` as rows of spans, each a run of text in
one style (``fg``/``bg`` a palette index 0-255, a ``"#rrggbb"`` string or None; ``bold``,
``dim``, ``italic``, ``underline``, ``inverse``, ``strike``; ``link``). :func:`spans_to_ansi`
turns them into text for a terminal again, with only the styles: the text is shown as it is
and should come from a ``Terminal`` (which keeps no control characters in its cells).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

__all__ = ["Span", "span_sgr", "spans_to_ansi"]


class Span(Protocol):
    """What :func:`spans_to_ansi` reads of a span (``acpwire.Span`` has all of it)."""

    @property
    def text(self) -> str: ...
    @property
    def fg(self) -> int | str | None: ...
    @property
    def bg(self) -> int | str | None: ...
    @property
    def bold(self) -> bool: ...
    @property
    def dim(self) -> bool: ...
    @property
    def italic(self) -> bool: ...
    @property
    def underline(self) -> bool: ...
    @property
    def inverse(self) -> bool: ...
    @property
    def strike(self) -> bool: ...


_FLAGS = (
    ("bold", "1"),
    ("dim", "2"),
    ("italic", "3"),
    ("underline", "4"),
    ("inverse", "7"),
    ("strike", "9"),
)


def span_sgr(span: Span | Any) -> str:
    """The SGR sequence that sets ``span``'s style ("" for the default style)."""
    codes = [code for flag, code in _FLAGS if getattr(span, flag)]
    for color, base in ((span.fg, 38), (span.bg, 48)):
        if isinstance(color, int) and not isinstance(color, bool) and 0 <= color < 256:
            codes.append(f"{base};5;{color}")
        elif isinstance(color, str) and len(color) == 7 and color.startswith("#"):
            try:
                r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
            except ValueError:
                continue
            codes.append(f"{base};2;{r};{g};{b}")
    return f"\x1b[{';'.join(codes)}m" if codes else ""


def spans_to_ansi(spans: Iterable[Span | Any] | Iterable[Iterable[Span | Any]]) -> str:
    """ANSI text of spans: one row (a list of spans) or rows (a list of lists, as
    ``Terminal.spans()`` returns them, joined with newlines). Each styled span has its SGR
    attributes set before it and reset after it; links are not written (a terminal's OSC 8
    would make an agent's address clickable)."""
    items: list[Any] = list(spans)
    # A span is a named tuple: rows are told from a row by their items having no text.
    if items and not hasattr(items[0], "text"):
        return "\n".join(_row(row) for row in items)
    return _row(items)


def _row(row: Iterable[Any]) -> str:
    parts = []
    for span in row:
        sgr = span_sgr(span)
        parts.append(f"{sgr}{span.text}\x1b[0m" if sgr else span.text)
    return "".join(parts)
