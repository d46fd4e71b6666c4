"""``Span``: a run of terminal text in one style, shared by both backends."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Span"]


class Span(NamedTuple):
    """A run of text in one style (a named tuple: cheap to make by the hundred thousand).

    ``fg``/``bg`` are None (default), a palette index 0-255, or ``"#rrggbb"``; ``link`` is the
    OSC 8 URI or None.
    """

    text: str
    fg: int | str | None = None
    bg: int | str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    inverse: bool = False
    strike: bool = False
    link: str | None = None
