"""An agent's Markdown, read safely: raw HTML is text, and only http, https, mailto and file
addresses become links (``markdown-it-py``, as the terminal and HTML renderings read it)."""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import Any

from .model import SAFE_SCHEMES, safe_link

__all__ = ["markdown_html", "parser", "quote_markdown"]


@lru_cache(maxsize=1)
def parser() -> Any:
    """A CommonMark parser with tables and strikethrough, raw HTML off, links checked."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])
    md.validateLink = safe_link  # type: ignore[method-assign]
    # An image would be fetched when the page opens (an agent's tracking pixel): shown as a
    # link to it instead.
    md.add_render_rule("image", _image_as_link)
    return md


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    src = token.attrGet("src") or ""
    alt = html.escape(self.renderInlineAsText(token.children or [], options, env))
    label = f"[image: {alt}]" if alt else "[image]"
    return f'<a href="{html.escape(str(src), quote=True)}">{label}</a>'


def markdown_html(text: str) -> str:
    """``text`` rendered as HTML: its own tags shown as text, unsafe links as text."""
    rendered: str = parser().render(text)
    return rendered.replace("<a href=", '<a rel="noopener noreferrer" href=', -1)


# Code regions of a Markdown text, which keep their characters as they are.
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\2[`~]*[ \t]*$|\Z)", re.M | re.S)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_INLINE_LINK = re.compile(r"\]\(\s*<?([A-Za-z][A-Za-z0-9+.-]*):")
_REFERENCE = re.compile(r"^( {0,3}\[[^\]\n]+\]:\s*<?)([A-Za-z][A-Za-z0-9+.-]*):", re.M)


def quote_markdown(text: str) -> str:
    """An agent's Markdown to put in a Markdown document: as written, except that raw HTML
    is escaped (``<`` as ``&lt;``) and a link to an address that is not http, https,
    mailto or file is broken into text. Code blocks and code spans keep their text."""
    out: list[str] = []
    last = 0
    for match in _FENCE.finditer(text):
        out.append(_quote_prose(text[last : match.start()]))
        out.append(match.group())
        last = match.end()
    out.append(_quote_prose(text[last:]))
    return "".join(out)


def _quote_prose(text: str) -> str:
    out: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_quote_plain(text[last : match.start()]))
        out.append(match.group())
        last = match.end()
    out.append(_quote_plain(text[last:]))
    return "".join(out)


def _quote_plain(text: str) -> str:
    # An image would be fetched where the document is shown: a link to it instead.
    text = text.replace("<", "&lt;").replace("![", "\\![")

    def inline(match: re.Match[str]) -> str:
        if match.group(1).lower() in SAFE_SCHEMES:
            return match.group()
        return "]\\(" + match.group()[2:]

    def reference(match: re.Match[str]) -> str:
        if match.group(2).lower() in SAFE_SCHEMES:
            return match.group()
        return "\\" + match.group().lstrip(" ")

    return _REFERENCE.sub(reference, _INLINE_LINK.sub(inline, text))
