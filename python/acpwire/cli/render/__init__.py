"""Render a reduced session the way it looked on screen: ANSI, plain text, Markdown, HTML, JSON.

The input is a ``Session`` (either backend): its ``snapshot()`` gives the timeline of turns,
messages, tool calls, terminals and plans, and ``terminal(id)`` the live terminal whose
styled ``spans()`` keep the colours of the command output. Every string an agent sent is
shown with its control characters made visible, and nothing it sent is left out.
"""

from __future__ import annotations

from typing import Any

from ... import dumps
from ..output import safe_json
from .model import safe_link, visible

__all__ = ["FORMATS", "render_page", "render_session", "safe_json", "safe_link", "visible"]

FORMATS = ("ansi", "text", "markdown", "json", "html")


def render_session(
    session: Any,
    fmt: str = "text",
    *,
    thoughts: bool = True,
    color: bool = True,
    width: int | None = None,
    times: dict[tuple[str, Any], float] | None = None,
) -> str:
    """Render one session; ``fmt`` is one of :data:`FORMATS`. ``color`` and ``width``
    (columns, default 100) are for ``ansi``; ``times`` (seconds by ``(entry type, id)``,
    from a recorded trace) for ``html``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    if fmt == "json":
        return safe_json(dumps(session.snapshot())).decode()
    if fmt == "text":
        from .base import Renderer

        return Renderer(session, thoughts).document()
    if fmt == "markdown":
        from .base import MarkdownRenderer

        return MarkdownRenderer(session, thoughts).document()
    if fmt == "ansi":
        from .terminal import AnsiRenderer

        return AnsiRenderer(session, thoughts, color=color, width=width).document()
    from .page import HtmlRenderer

    return HtmlRenderer(session, thoughts, times).document()


def render_page(
    sessions: list[Any],
    *,
    thoughts: bool = True,
    times: dict[str, dict[tuple[str, Any], float]] | None = None,
) -> str:
    """A self-contained HTML page with every session (``times`` by session id)."""
    from .page import HtmlRenderer
    from .page import render_page as page

    times = times or {}
    return page([HtmlRenderer(s, thoughts, times.get(s.id)) for s in sessions])
