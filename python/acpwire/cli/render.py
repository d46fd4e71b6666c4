"""Render a reduced session the way it looked on screen: ANSI, plain text, Markdown, HTML, JSON.

The input is a ``Session`` (either backend): its ``snapshot()`` gives the timeline of messages,
tool calls, terminals and plans, and ``terminal(id)`` the live terminal whose styled ``spans()``
keep the colours of the command output.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

from .. import dumps

__all__ = ["FORMATS", "render_session"]

FORMATS = ("ansi", "text", "markdown", "json", "html")

# Formats read on a terminal: what an agent sent must not reach it as control sequences.
_FOR_TERMINALS = frozenset(("ansi", "text", "markdown"))
# C0 controls but tab and newline, DEL and C1 controls.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# OSC 8 links a page may make clickable; any other scheme (javascript:, data:, ...) is text.
_SAFE_LINK = re.compile(r"(?i)(https?|ftp|mailto|file):")


def _caret(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    return "^?" if code == 0x7F else "\ufffd"


def visible(value: Any, *, keys: bool = False) -> Any:
    """``value`` with every control character in its strings made visible, as ``cat -v``
    does (``ESC`` as ``^[``; C1 controls as U+FFFD): an agent's text printed on a terminal
    cannot then move the cursor, clear the screen or set the clipboard. CRLF reads as a line
    break, as in the terminals' own text. ``keys``: dict keys too (they are printed as well),
    else they stay as they are (they are looked up)."""
    if isinstance(value, str):
        return _CONTROLS.sub(_caret, value.replace("\r\n", "\n"))
    if isinstance(value, dict):
        return {
            (visible(k) if keys and isinstance(k, str) else k): visible(v, keys=keys)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [visible(v, keys=keys) for v in value]
    return value


_STATUS_MARK = {"completed": "✔", "failed": "✘", "in_progress": "…", "pending": "·"}
_PLAN_MARK = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
_BASIC = [
    "#000000",
    "#cd0000",
    "#00cd00",
    "#cdcd00",
    "#0000ee",
    "#cd00cd",
    "#00cdcd",
    "#e5e5e5",
    "#7f7f7f",
    "#ff0000",
    "#00ff00",
    "#ffff00",
    "#5c5cff",
    "#ff00ff",
    "#00ffff",
    "#ffffff",
]


def _content_text(block: Any) -> str:
    """The text of one ACP content block (text, resource, image ... as a short marker)."""
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return f"[{block.get('name') or block.get('uri', 'resource')}]({block.get('uri', '')})"
    if kind == "resource":
        resource = block.get("resource") or {}
        return str(resource.get("text") or f"[resource {resource.get('uri', '')}]")
    return f"[{kind}]"


def _message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(_content_text(block) for block in content)
    if content is None:
        return ""
    return _content_text(content)


def _palette(index: int) -> str:
    if index < 16:
        return _BASIC[index]
    if index < 232:
        index -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return f"#{steps[index // 36]:02x}{steps[index // 6 % 6]:02x}{steps[index % 6]:02x}"
    grey = 8 + 10 * (index - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def _css_color(color: int | str | None) -> str | None:
    if color is None:
        return None
    return color if isinstance(color, str) else _palette(color)


def _ansi_span(span: Any) -> str:
    """A span with its SGR attributes on and reset after it (if it has any)."""
    sgr = _sgr(span)
    return f"{sgr}{span.text}\x1b[0m" if sgr else span.text


def _sgr(span: Any) -> str:
    codes: list[str] = []
    for flag, code in (
        ("bold", "1"),
        ("dim", "2"),
        ("italic", "3"),
        ("underline", "4"),
        ("inverse", "7"),
        ("strike", "9"),
    ):
        if getattr(span, flag):
            codes.append(code)
    for color, base in ((span.fg, 38), (span.bg, 48)):
        if isinstance(color, int):
            codes.append(f"{base};5;{color}")
        elif isinstance(color, str):
            r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
            codes.append(f"{base};2;{r};{g};{b}")
    return f"\x1b[{';'.join(codes)}m" if codes else ""


class _Renderer:
    def __init__(self, session: Any, fmt: str, thoughts: bool) -> None:
        self.session = session
        self.snapshot = session.snapshot()
        if fmt in _FOR_TERMINALS:
            self.snapshot = visible(self.snapshot)
        self.fmt = fmt
        self.thoughts = thoughts

    # -- pieces -------------------------------------------------------------------------------

    def heading(self, text: str) -> str:
        if self.fmt == "markdown":
            return f"### {text}"
        if self.fmt == "html":
            return f"<h3>{html.escape(text)}</h3>"
        if self.fmt == "ansi":
            return f"\x1b[1m{text}\x1b[0m"
        return text

    def paragraph(self, text: str, css: str = "", ansi: str = "") -> str:
        if self.fmt == "html":
            return f'<div class="{css}">{html.escape(text)}</div>'
        if self.fmt == "ansi" and ansi:
            return f"{ansi}{text}\x1b[0m"
        return text

    def terminal(self, terminal_id: str) -> str:
        term = self.session.terminal(terminal_id)
        if term is None:
            return self.paragraph(f"(terminal {terminal_id} not seen)", "note")
        if self.fmt == "text":
            return term.text
        if self.fmt == "markdown":
            return f"```console\n{term.text}\n```"
        rows = term.spans()
        if self.fmt == "ansi":
            return "\n".join("".join(map(_ansi_span, row)) for row in rows)
        out = []
        for row in rows:
            parts = []
            for span in row:
                style = []
                fg, bg = _css_color(span.fg), _css_color(span.bg)
                if span.inverse:
                    fg, bg = bg or "#1e1e1e", fg or "#d4d4d4"
                if fg:
                    style.append(f"color:{fg}")
                if bg:
                    style.append(f"background:{bg}")
                if span.bold:
                    style.append("font-weight:bold")
                if span.dim:
                    style.append("opacity:.6")
                if span.italic:
                    style.append("font-style:italic")
                decorations = [
                    d
                    for d, on in (("underline", span.underline), ("line-through", span.strike))
                    if on
                ]
                if decorations:
                    style.append("text-decoration:" + " ".join(decorations))
                text = html.escape(span.text)
                if span.link and _SAFE_LINK.match(span.link):
                    text = f'<a href="{html.escape(span.link, quote=True)}">{text}</a>'
                parts.append(f'<span style="{";".join(style)}">{text}</span>' if style else text)
            out.append("".join(parts))
        return '<pre class="terminal">' + "\n".join(out) + "</pre>"

    def message(self, message: dict) -> str | None:
        role = message.get("role", "agent")
        if role == "thought" and not self.thoughts:
            return None
        text = _message_text(message)
        label = {"user": "User", "agent": "Agent", "thought": "Thought"}.get(role, role.title())
        if self.fmt == "markdown":
            body = (
                "\n".join(f"> {line}" for line in text.splitlines()) if role == "thought" else text
            )
            return f"**{label}:**\n\n{body}"
        if self.fmt == "html":
            return (
                f'<div class="message {html.escape(role)}"><b>{label}</b>'
                f"<div>{html.escape(text)}</div></div>"
            )
        if self.fmt == "ansi":
            color = {"user": "\x1b[1;34m", "agent": "\x1b[1;32m", "thought": "\x1b[2;3m"}.get(
                role, "\x1b[1m"
            )
            body = f"\x1b[2;3m{text}\x1b[0m" if role == "thought" else text
            return f"{color}{label}:\x1b[0m {body}"
        return f"{label}: {text}"

    def tool_call(self, call: dict) -> str:
        status = call.get("status", "pending")
        head = f"{_STATUS_MARK.get(status, '?')} {call.get('title') or call.get('toolCallId')}"
        head += f" [{call.get('kind', 'other')}, {status}]"
        parts = [self.heading(head)]
        for item in call.get("content") or []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "content":
                parts.append(self.paragraph(_content_text(item.get("content")), "tool-output"))
            elif kind == "diff":
                parts.append(self.diff(item))
            elif kind == "terminal":
                parts.append(self.terminal(str(item.get("terminalId"))))
            else:
                parts.append(self.paragraph(f"[{kind}]", "note"))
        return "\n".join(parts)

    def diff(self, item: dict) -> str:
        patch = item.get("patch")
        if isinstance(patch, dict) and isinstance(patch.get("text"), str):
            text = patch["text"]
        else:
            old = str(item.get("oldText") or "").splitlines()
            new = str(item.get("newText") or "").splitlines()
            text = f"--- {item.get('path', '')}\n+++ {item.get('path', '')}\n" + "\n".join(
                [f"-{line}" for line in old] + [f"+{line}" for line in new]
            )
        if self.fmt == "markdown":
            return f"```diff\n{text}\n```"
        if self.fmt == "html":
            rows = []
            for line in text.splitlines():
                css = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
                rows.append(f'<span class="{css}">{html.escape(line)}</span>')
            return '<pre class="diff">' + "\n".join(rows) + "</pre>"
        if self.fmt == "ansi":
            return "\n".join(
                f"\x1b[32m{line}\x1b[0m"
                if line.startswith("+")
                else f"\x1b[31m{line}\x1b[0m"
                if line.startswith("-")
                else line
                for line in text.splitlines()
            )
        return text

    def plan(self, plan: dict) -> str:
        parts = [self.heading(f"Plan {plan.get('planId', '')}".strip())]
        if plan.get("type", "items") == "items":
            for entry in plan.get("entries") or []:
                mark = _PLAN_MARK.get(entry.get("status"), "[?]")
                parts.append(self.paragraph(f"{mark} {entry.get('content', '')}", "plan"))
        elif isinstance(plan.get("markdown"), str):
            parts.append(self.paragraph(plan["markdown"], "plan"))
        else:
            parts.append(self.paragraph(f"[{plan.get('type')} plan]", "note"))
        return "\n".join(parts)

    # -- document ---------------------------------------------------------------------------

    def blocks(self) -> Iterator[str]:
        snap = self.snapshot
        messages = {(m.get("role"), m.get("id")): m for m in snap.get("messages", [])}
        shown_terminals = {
            str(item.get("terminalId"))
            for call in snap.get("toolCalls", {}).values()
            for item in call.get("content") or []
            if isinstance(item, dict) and item.get("type") == "terminal"
        }
        for entry in snap.get("timeline", []):
            kind, key = entry.get("type"), entry.get("id")
            if kind == "message":
                message = messages.get((entry.get("role"), key))
                block = self.message(message) if message else None
            elif kind == "toolCall":
                block = self.tool_call(snap["toolCalls"][key])
            elif kind == "terminal":
                # Shown inside its tool call when one refers to it.
                block = None if key in shown_terminals else self.terminal(key)
            elif kind == "plan":
                block = self.plan(snap["plans"][key]) if key in snap.get("plans", {}) else None
            else:
                block = None
            if block:
                yield block
        if snap.get("stopReason"):
            yield self.paragraph(f"— {snap['stopReason']} —", "note")

    def document(self) -> str:
        if self.fmt == "json":
            return dumps(self.snapshot).decode()
        title = f"Session {self.snapshot.get('sessionId')}"
        body = [self.heading(title) if self.fmt != "markdown" else f"## {title}", *self.blocks()]
        if self.fmt == "html":
            return "\n".join(body)
        return "\n\n".join(body) + "\n"


_HTML_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; }}
.message {{ margin: .8rem 0; white-space: pre-wrap; }}
.message.thought {{ opacity: .6; font-style: italic; }}
pre.terminal {{ background: #1e1e1e; color: #d4d4d4; padding: .6rem; overflow-x: auto; }}
pre.diff .add {{ color: #22863a; }} pre.diff .del {{ color: #b31d28; }}
.tool-output, .plan {{ white-space: pre-wrap; }} .note {{ color: #777; }}
</style></head><body>
{body}
</body></html>
"""


def render_session(session: Any, fmt: str = "text", *, thoughts: bool = True) -> str:
    """Render one session; ``fmt`` is one of :data:`FORMATS`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    return _Renderer(session, fmt, thoughts).document()


def render_page(sessions: list[Any], *, thoughts: bool = True) -> str:
    """A self-contained HTML page with every session."""
    body = "\n<hr>\n".join(_Renderer(s, "html", thoughts).document() for s in sessions)
    return _HTML_PAGE.format(title="acpwire replay", body=body)
