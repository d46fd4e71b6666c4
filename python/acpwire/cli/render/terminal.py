"""The ANSI rendering, for a terminal: ``rich`` draws the agent's Markdown, the tool calls,
diffs and plans, and the terminals with the colours their commands wrote."""

from __future__ import annotations

import io
import os
import re
from typing import Any, Literal

from .base import Renderer, block_identity, plan_lines, role_label, tool_head
from .markdown import parser
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

_ROLE_STYLE = {"user": "bold blue", "agent": "bold green", "thought": "dim italic"}
_STATUS_STYLE = {"completed": "green", "failed": "bold red", "in_progress": "yellow"}
_OUTCOME_STYLE = {
    "done": "dim",
    "cancelled": "bold yellow",
    "failed": "bold red",
    "running": "cyan",
}
# Spaces rich pads a line with (no style on them): dropped, so a file holds no runs of them.
_PADDING = re.compile(r" +$", re.M)


def color_system() -> Literal["truecolor", "256"]:
    """Truecolor where the terminal says it has it (``COLORTERM``), else the 256 colours
    every terminal in use has."""
    return "truecolor" if os.environ.get("COLORTERM") in ("truecolor", "24bit") else "256"


def _markdown(text: str, style: str = "none") -> Any:
    """Rich's Markdown of ``text``, parsed as the HTML page parses it (raw HTML as text,
    links for safe addresses only)."""
    from rich.markdown import Markdown

    rendered = Markdown("", style=style, hyperlinks=True, code_theme="ansi_dark")
    rendered.markup = text
    rendered.parsed = parser().parse(text)
    return rendered


def spans_text(rows: list[list[Any]], color: bool) -> Any:
    """A terminal's styled rows as rich ``Text``: its colours and attributes, and links to
    safe addresses."""
    from rich.color import Color
    from rich.style import Style
    from rich.text import Text

    out = Text()
    for number, row in enumerate(rows):
        if number:
            out.append("\n")
        for span in row:
            colors: list[Any] = []
            for value in (span.fg, span.bg):
                if not color or value is None:
                    colors.append(None)
                elif isinstance(value, int):
                    colors.append(Color.from_ansi(value))
                else:
                    colors.append(Color.parse(value))
            style = Style(
                color=colors[0],
                bgcolor=colors[1],
                bold=span.bold or None,
                dim=span.dim or None,
                italic=span.italic or None,
                underline=span.underline or None,
                reverse=span.inverse or None,
                strike=span.strike or None,
                link=span.link if span.link and safe_link(span.link) else None,
            )
            out.append(str(visible(span.text)), style=style)
    return out


class AnsiRenderer(Renderer):
    fmt = "ansi"

    def __init__(
        self,
        session: Any,
        thoughts: bool = True,
        times: Any = None,
        *,
        color: bool = True,
        width: int | None = None,
    ) -> None:
        super().__init__(session, thoughts, times)
        self.color = color
        self.width = width or 100

    def document(self) -> str:
        return "\n".join(text for _, text in self.parts())

    def parts(self) -> list[tuple[Any, str]]:
        console = self.console()
        out: list[tuple[Any, str]] = []
        with console.capture() as capture:
            console.print(self.title_text(), soft_wrap=True)
        out.append((("title",), _PADDING.sub("", capture.get())))
        for block in walk(self.snapshot, self.thoughts):
            with console.capture() as capture:
                console.print(self.renderable(block))
            out.append((block_identity(block), _PADDING.sub("", capture.get())))
        return out

    def console(self) -> Any:
        from rich.console import Console

        return Console(
            file=io.StringIO(),
            force_terminal=True,
            color_system=color_system() if self.color else None,
            no_color=not self.color,
            width=self.width,
            highlight=False,
            markup=False,
            emoji=False,
            legacy_windows=False,
        )

    def title_text(self) -> Any:
        from rich.text import Text

        return Text(f"Session {shown(self.snapshot.get('sessionId'))}", style="bold")

    def renderable(self, block: Block) -> Any:
        from rich.console import Group
        from rich.text import Text

        data = block.data
        if block.kind == "turn":
            head = Text(f"── Turn {block.number} ──", style="bold magenta")
            if self.prompt_shown_elsewhere(data):
                return head
            prompt = Text("User: ", style="bold blue") + Text(blocks_text(data.get("prompt")))
            return Group(head, prompt)
        if block.kind == "turnEnd":
            word, text = turn_outcome(data)
            return Text(f"— turn {block.number}: {text} —", style=_OUTCOME_STYLE[word])
        if block.kind == "message":
            role = data.get("role")
            label = Text(f"{role_label(role)}:", style=_ROLE_STYLE.get(str(role), "bold"))
            text = blocks_text(data.get("content"))
            if role == "user":
                return Group(label, Text(text))
            return Group(label, _markdown(text, "dim italic" if role == "thought" else "none"))
        if block.kind == "toolCall":
            return self.tool_renderable(data)
        if block.kind == "terminal":
            return self.terminal_renderable(data, block.key)
        if block.kind == "plan":
            head = Text(f"Plan {shown(data.get('planId', ''))}".strip(), style="bold")
            return Group(head, *(Text(line) for line in plan_lines(data)))
        return Text(self.block(block), style="dim")

    def tool_renderable(self, call: dict[str, Any]) -> Any:
        from rich.console import Group
        from rich.text import Text

        status = call.get("status", "pending")
        parts: list[Any] = [
            Text(tool_head(call), style=_STATUS_STYLE.get(str(status), "bold") + " bold")
        ]
        for item in call.get("content") or []:
            if not isinstance(item, dict):
                parts.append(Text(f"[{shown(item)}]", style="dim"))
            elif item.get("type") == "content":
                parts.append(_markdown(content_text(item.get("content"))))
            elif item.get("type") == "diff":
                parts.append(diff_renderable(diff_text(item)))
            elif item.get("type") == "terminal":
                term = self.terminal_of(item.get("terminalId"))
                if term is None:
                    parts.append(
                        Text(f"(terminal {shown(item.get('terminalId'))} not seen)", style="dim")
                    )
                else:
                    parts.append(self.terminal_renderable(term, item.get("terminalId")))
            else:
                parts.append(Text(f"[{shown(item.get('type'))}]", style="dim"))
        return Group(*parts)

    def terminal_renderable(self, term: dict[str, Any], key: Any) -> Any:
        from rich.console import Group
        from rich.text import Text

        head = Text(terminal_header(term), style="bold cyan")
        live = self.live_terminal(key)
        body = (
            spans_text(live.spans(), self.color)
            if live is not None
            else Text(self.terminal_text(term, key))
        )
        return Group(head, body)


def diff_renderable(text: str) -> Any:
    from rich.text import Text

    out = Text()
    for number, line in enumerate(text.split("\n")):
        if number:
            out.append("\n")
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        out.append(line, style=style)
    return out
