"""The HTML rendering: a self-contained page with no script, the agent's Markdown rendered
(its raw HTML escaped), tool calls and thoughts collapsible, terminals in their colours with
at least a 4.5:1 contrast, and the times of a recorded trace."""

from __future__ import annotations

import html
from functools import lru_cache
from typing import Any

from .base import Renderer, plan_lines, role_label, tool_head
from .markdown import markdown_html
from .model import (
    Block,
    blocks_text,
    content_text,
    diff_text,
    safe_link,
    shown,
    terminal_header,
    turn_outcome,
    visible,
    walk,
)

# The terminal block's own colours, and the page's.
TERMINAL_FG = "#d4d4d4"
TERMINAL_BG = "#1e1e1e"
PAGE_FG = "#1f2328"
PAGE_BG = "#ffffff"
# WCAG's AA contrast for text: every colour a terminal is drawn in keeps it, as a terminal
# with a minimum contrast setting draws it.
MIN_CONTRAST = 4.5
BASIC = (
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
)  # fmt: skip
# Colours of the page's own parts, with the background they are drawn on (tested for contrast).
PAGE_COLORS = {
    "note": ("#57606a", PAGE_BG),
    "add": ("#116329", "#e6ffec"),
    "del": ("#a40e26", "#ffebe9"),
    "hunk": ("#0550ae", PAGE_BG),
    "time": ("#57606a", PAGE_BG),
    "failed": ("#a40e26", PAGE_BG),
    "cancelled": ("#7d4e00", PAGE_BG),
}


def palette(index: int) -> str:
    """The xterm colour of a 256-colour palette index."""
    if index < 16:
        return BASIC[index]
    if index < 232:
        index -= 16
        steps = (0, 95, 135, 175, 215, 255)
        return f"#{steps[index // 36]:02x}{steps[index // 6 % 6]:02x}{steps[index % 6]:02x}"
    grey = 8 + 10 * (index - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def _channels(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def luminance(color: str) -> float:
    """WCAG 2 relative luminance of ``#rrggbb``."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in _channels(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    a, b = sorted((luminance(first), luminance(second)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@lru_cache(maxsize=4096)
def readable(fg: str, bg: str, minimum: float = MIN_CONTRAST) -> str:
    """``fg``, or the nearest colour towards white or black (whichever gets there with less
    change) that keeps ``minimum`` contrast on ``bg``."""
    if contrast(fg, bg) >= minimum:
        return fg
    best: tuple[float, str] | None = None
    for target in ("#ffffff", "#000000"):
        if contrast(target, bg) < minimum:
            continue
        low, high = 0.0, 1.0  # the share of the target mixed in
        for _ in range(20):
            middle = (low + high) / 2
            if contrast(_mix(fg, target, middle), bg) >= minimum:
                high = middle
            else:
                low = middle
        candidate = _mix(fg, target, high)
        while contrast(candidate, bg) < minimum:  # rounding to whole channels
            high = min(1.0, high + 0.01)
            candidate = _mix(fg, target, high)
        if best is None or high < best[0]:
            best = (high, candidate)
    if best is None:  # no colour is readable on this background: the one furthest from it
        return "#ffffff" if luminance(bg) < 0.18 else "#000000"
    return best[1]


def _mix(color: str, target: str, share: float) -> str:
    mixed = (
        round(c + (t - c) * share) for c, t in zip(_channels(color), _channels(target), strict=True)
    )
    return "#" + "".join(f"{c:02x}" for c in mixed)


def _css_color(color: int | str | None) -> str | None:
    if isinstance(color, int) and not isinstance(color, bool) and 0 <= color < 256:
        return palette(color)
    if isinstance(color, str) and len(color) == 7 and color.startswith("#"):
        try:
            _channels(color)
        except ValueError:
            return None
        return color.lower()
    return None


def span_colors(span: Any) -> tuple[str | None, str | None]:
    """A span's foreground and background on the terminal block (``inverse`` applied), the
    foreground made readable on the background; None for the block's own colour."""
    fg, bg = _css_color(span.fg), _css_color(span.bg)
    if span.inverse:
        fg, bg = bg or TERMINAL_BG, fg or TERMINAL_FG
    if fg is None and bg is None:
        return None, None
    shown_fg = readable(fg or TERMINAL_FG, bg or TERMINAL_BG)
    return (shown_fg if fg is not None or shown_fg != TERMINAL_FG else None), bg


def spans_html(rows: list[list[Any]]) -> str:
    out = []
    for row in rows:
        parts = []
        for span in row:
            style = []
            fg, bg = span_colors(span)
            if fg:
                style.append(f"color:{fg}")
            if bg:
                style.append(f"background:{bg}")
            if span.bold:
                style.append("font-weight:bold")
            if span.italic:
                style.append("font-style:italic")
            decorations = [
                d for d, on in (("underline", span.underline), ("line-through", span.strike)) if on
            ]
            if decorations:
                style.append("text-decoration:" + " ".join(decorations))
            text = html.escape(str(visible(span.text)))
            if span.link and safe_link(span.link):
                href = html.escape(span.link, quote=True)
                text = f'<a rel="noopener noreferrer" href="{href}">{text}</a>'
            parts.append(f'<span style="{";".join(style)}">{text}</span>' if style else text)
        out.append("".join(parts))
    return "\n".join(out)


def _e(text: str) -> str:
    return html.escape(text, quote=True)


class HtmlRenderer(Renderer):
    fmt = "html"
    joiner = "\n"

    def document(self) -> str:
        session_id = shown(self.snapshot.get("sessionId"))
        parts = [f'<section class="session"><h2>Session {_e(session_id)}</h2>']
        for block in walk(self.snapshot, self.thoughts):
            parts.append(self.block_html(block))
        parts.append("</section>")
        return "\n".join(parts)

    def stamp(self, block: Block) -> str:
        try:
            t = self.times.get((block.kind, block.key)) if block.key is not None else None
        except TypeError:  # an id of a type no time is kept for (a list, an object)
            t = None
        if t is None:
            return ""
        return f'<time class="t">{t:.3f} s</time> '

    def block_html(self, block: Block) -> str:
        data = block.data
        stamp = self.stamp(block)
        if block.kind == "turn":
            prompt = ""
            if not self.prompt_shown_elsewhere(data):
                prompt = f'<div class="prompt">{_e(blocks_text(data.get("prompt")))}</div>'
            return f'<div class="turn"><h3>{stamp}Turn {block.number}</h3>{prompt}</div>'
        if block.kind == "turnEnd":
            word, text = turn_outcome(data)
            return f'<div class="turn-end {word}">Turn {block.number}: {_e(text)}</div>'
        if block.kind == "message":
            role = data.get("role")
            text = blocks_text(data.get("content"))
            body = (
                f'<div class="prompt">{_e(text)}</div>'
                if role == "user"
                else f'<div class="markdown">{markdown_html(text)}</div>'
            )
            label = _e(role_label(role))
            css = _e(str(role))
            if role == "thought":
                return (
                    f'<details class="message thought"><summary>{stamp}{label}</summary>'
                    f"{body}</details>"
                )
            return f'<div class="message {css}"><b>{stamp}{label}</b>{body}</div>'
        if block.kind == "toolCall":
            return self.tool_html(data, stamp)
        if block.kind == "terminal":
            return self.terminal_html(data, block.key)
        if block.kind == "plan":
            head = f"Plan {shown(data.get('planId', ''))}".strip()
            items = "".join(f"<li>{_e(line)}</li>" for line in plan_lines(data))
            return f'<div class="plan"><h4>{stamp}{_e(head)}</h4><ul>{items}</ul></div>'
        return f'<div class="note">{_e(self.block(block))}</div>'

    def tool_html(self, call: dict[str, Any], stamp: str) -> str:
        status = _e(shown(call.get("status", "pending")))
        parts = [
            f'<details class="tool {status}"{" open" if status == "failed" else ""}>'
            f"<summary>{stamp}{_e(tool_head(call))}</summary>"
        ]
        for item in call.get("content") or []:
            if not isinstance(item, dict):
                parts.append(f'<div class="note">[{_e(shown(item))}]</div>')
            elif item.get("type") == "content":
                rendered = markdown_html(content_text(item.get("content")))
                parts.append(f'<div class="markdown">{rendered}</div>')
            elif item.get("type") == "diff":
                parts.append(diff_html(diff_text(item)))
            elif item.get("type") == "terminal":
                term = self.terminal_of(item.get("terminalId"))
                if term is None:
                    missing = f"(terminal {shown(item.get('terminalId'))} not seen)"
                    parts.append(f'<div class="note">{_e(missing)}</div>')
                else:
                    parts.append(self.terminal_html(term, item.get("terminalId")))
            else:
                parts.append(f'<div class="note">[{_e(shown(item.get("type")))}]</div>')
        parts.append("</details>")
        return "".join(parts)

    def terminal_html(self, term: dict[str, Any], key: Any) -> str:
        live = self.live_terminal(key)
        body = spans_html(live.spans()) if live is not None else _e(self.terminal_text(term, key))
        head = f'<div class="terminal-head">{_e(terminal_header(term))}</div>'
        return f'{head}<pre class="terminal">{body}</pre>'


def diff_html(text: str) -> str:
    rows = []
    for line in text.split("\n"):
        if line.startswith(("+++", "---")):
            css = "file"
        elif line.startswith("+"):
            css = "add"
        elif line.startswith("-"):
            css = "del"
        elif line.startswith("@@"):
            css = "hunk"
        else:
            css = ""
        rows.append(f'<span class="{css}">{_e(line)}</span>' if css else _e(line))
    return '<pre class="diff">' + "\n".join(rows) + "</pre>"


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; color: {page_fg}; background: {page_bg};
  max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
pre, code, .prompt, .terminal-head, summary {{
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }}
pre {{ padding: .6rem; overflow-x: auto; }}
.message, .turn, .plan, details.tool {{ margin: .8rem 0; }}
.prompt {{ white-space: pre-wrap; }}
.plan ul {{ list-style: none; padding-left: 1rem; }}
.message.thought {{ font-style: italic; }}
details > summary {{ cursor: pointer; }}
pre.terminal {{ background: {term_bg}; color: {term_fg}; margin-top: 0; }}
.terminal-head {{ font-size: .9em; }}
pre.diff {{ background: #f6f8fa; }}
pre.diff .add {{ color: {add}; background: {add_bg}; }}
pre.diff .del {{ color: {del_}; background: {del_bg}; }}
pre.diff .hunk {{ color: {hunk}; }} pre.diff .file {{ font-weight: bold; }}
.note, time.t {{ color: {note}; }}
.turn-end.failed {{ color: {failed}; font-weight: bold; }}
.turn-end.cancelled {{ color: {cancelled}; font-weight: bold; }}
.turn-end {{ color: {note}; }}
</style></head><body>
{body}
</body></html>
"""


def render_page(renderers: list[HtmlRenderer]) -> str:
    """A self-contained page of every session: no script, no fetch (its policy forbids both)."""
    body = "\n<hr>\n".join(r.document() for r in renderers)
    return _PAGE.format(
        title="acpwire replay",
        body=body,
        page_fg=PAGE_FG,
        page_bg=PAGE_BG,
        term_fg=TERMINAL_FG,
        term_bg=TERMINAL_BG,
        note=PAGE_COLORS["note"][0],
        add=PAGE_COLORS["add"][0],
        add_bg=PAGE_COLORS["add"][1],
        del_=PAGE_COLORS["del"][0],
        del_bg=PAGE_COLORS["del"][1],
        hunk=PAGE_COLORS["hunk"][0],
        failed=PAGE_COLORS["failed"][0],
        cancelled=PAGE_COLORS["cancelled"][0],
    )
