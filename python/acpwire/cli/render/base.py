"""The renderer every format builds on, and the plain-text and Markdown formats."""

from __future__ import annotations

from typing import Any

from .model import (
    Block,
    blocks_text,
    content_text,
    diff_text,
    fence,
    shown,
    terminal_header,
    turn_outcome,
    visible,
    walk,
)

_STATUS_MARK = {"completed": "✔", "failed": "✘", "in_progress": "…", "pending": "·"}
_PLAN_MARK = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
LABELS = {"user": "User", "agent": "Agent", "thought": "Thought"}


def status_mark(status: Any) -> str:
    return _STATUS_MARK.get(status, "?") if isinstance(status, str) else "?"


def plan_mark(status: Any) -> str:
    return _PLAN_MARK.get(status, "[?]") if isinstance(status, str) else "[?]"


def role_label(role: Any) -> str:
    if isinstance(role, str) and role in LABELS:
        return LABELS[role]
    return shown(role).title() or "Message"


def tool_head(call: dict[str, Any]) -> str:
    status = call.get("status", "pending")
    title = call.get("title") or call.get("toolCallId") or ""
    kind = shown(call.get("kind", "other"))
    return f"{status_mark(status)} {shown(title)} [{kind}, {shown(status)}]"


def plan_lines(plan: dict[str, Any]) -> list[str]:
    kind = plan.get("type", "items")
    if kind == "items":
        lines = []
        for entry in plan.get("entries") or []:
            if isinstance(entry, dict):
                lines.append(f"{plan_mark(entry.get('status'))} {shown(entry.get('content', ''))}")
            else:
                lines.append(f"[?] {shown(entry)}")
        return lines
    if isinstance(plan.get("markdown"), str):
        return [shown(plan["markdown"])]
    return [f"[{shown(kind)} plan]"]


def other_text(update: Any) -> str:
    """An update of a kind the reducer does not know: its kind, and all it holds as JSON."""
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return f"[{shown(kind) if kind is not None else 'update'}] {shown(update)}"


def missing_text(entry: Any) -> str:
    if isinstance(entry, dict):
        kind, key = shown(entry.get("type")), shown(entry.get("id"))
        return f"(timeline entry {kind} {key!r} names nothing in the snapshot)"
    return f"(timeline entry {shown(entry)} is not an object)"


def block_identity(block: Block) -> tuple[Any, ...]:
    """What stays the same for a block while its content changes."""
    key = block.key
    try:
        hash(key)
    except TypeError:
        key = repr(key)
    where = block.timeline if block.kind == "missing" else None
    return (block.kind, key, block.number, where)


class Renderer:
    """Walks a session's snapshot and joins the rendering of each block."""

    fmt = "text"
    joiner = "\n\n"

    def __init__(
        self,
        session: Any,
        thoughts: bool = True,
        times: dict[tuple[str, Any], float] | None = None,
    ) -> None:
        self.session = session
        self.snapshot: dict[str, Any] = session.snapshot()
        self.thoughts = thoughts
        self.times = times or {}

    def document(self) -> str:
        return self.joiner.join(text for _, text in self.parts()) + "\n"

    def parts(self) -> list[tuple[Any, str]]:
        """Each block's rendering with what identifies the block across renderings (the
        title first), for ``replay --follow`` to write only what changed."""
        out: list[tuple[Any, str]] = [
            (("title",), self.title(shown(self.snapshot.get("sessionId"))))
        ]
        for block in walk(self.snapshot, self.thoughts):
            rendered = self.block(block)
            if rendered:
                out.append((block_identity(block), rendered))
        return out

    def block(self, block: Block) -> str:
        data = block.data
        if block.kind == "turn":
            return self.turn(data, block.number)
        if block.kind == "turnEnd":
            return self.turn_end(data, block.number)
        if block.kind == "message":
            return self.message(data)
        if block.kind == "toolCall":
            return self.tool_call(data)
        if block.kind == "terminal":
            return self.terminal(data, block.key)
        if block.kind == "plan":
            return self.plan(data)
        if block.kind == "stop":
            return self.note(f"— {shown(data)} —")
        if block.kind == "other":
            return self.note(other_text(data))
        return self.note(missing_text(data))

    def terminal_text(self, term: Any, key: Any) -> str:
        """The terminal's rendered text: the live one's, else the snapshot's."""
        live = self.live_terminal(key)
        if live is not None:
            return str(visible(live.text))
        return shown(term.get("text", "")) if isinstance(term, dict) else ""

    def live_terminal(self, key: Any) -> Any:
        if not isinstance(key, str):
            return None
        try:
            return self.session.terminal(key)
        except (KeyError, TypeError, ValueError):
            return None

    def terminal_of(self, terminal_id: Any) -> dict[str, Any] | None:
        terms = self.snapshot.get("terminals")
        if isinstance(terms, dict) and isinstance(terminal_id, str):
            found = terms.get(terminal_id)
            return found if isinstance(found, dict) else None
        return None

    def prompt_shown_elsewhere(self, turn: dict[str, Any]) -> bool:
        """A v2 prompt is also a user message in the timeline: shown there once."""
        message_id = turn.get("messageId")
        if message_id is None:
            return False
        return any(
            isinstance(m, dict) and m.get("role") == "user" and m.get("id") == message_id
            for m in self.snapshot.get("messages") or []
        )

    # -- text --------------------------------------------------------------------------------

    def title(self, session_id: str) -> str:
        return f"Session {session_id}"

    def note(self, text: str) -> str:
        return text

    def turn(self, turn: dict[str, Any], number: int) -> str:
        head = f"── Turn {number} ──"
        if self.prompt_shown_elsewhere(turn):
            return head
        return f"{head}\nUser: {blocks_text(turn.get('prompt'))}"

    def turn_end(self, turn: dict[str, Any], number: int) -> str:
        return f"— turn {number}: {turn_outcome(turn)[1]} —"

    def message(self, message: dict[str, Any]) -> str:
        return f"{role_label(message.get('role'))}: {blocks_text(message.get('content'))}"

    def tool_call(self, call: dict[str, Any]) -> str:
        parts = [tool_head(call)]
        for item in call.get("content") or []:
            parts.append(self.tool_content(item))
        return "\n".join(parts)

    def tool_content(self, item: Any) -> str:
        if not isinstance(item, dict):
            return self.note(f"[{shown(item)}]")
        kind = item.get("type")
        if kind == "content":
            return content_text(item.get("content"))
        if kind == "diff":
            return self.diff(item)
        if kind == "terminal":
            terminal_id = item.get("terminalId")
            term = self.terminal_of(terminal_id)
            if term is None:
                return self.note(f"(terminal {shown(terminal_id)} not seen)")
            return self.terminal(term, terminal_id)
        return self.note(f"[{shown(kind)}]")

    def diff(self, item: dict[str, Any]) -> str:
        return diff_text(item)

    def terminal(self, term: dict[str, Any], key: Any) -> str:
        return f"{terminal_header(term)}\n{self.terminal_text(term, key)}"

    def plan(self, plan: dict[str, Any]) -> str:
        head = f"Plan {shown(plan.get('planId', ''))}".strip()
        return "\n".join([head, *plan_lines(plan)])


class MarkdownRenderer(Renderer):
    """A Markdown document: the agent's Markdown kept (its raw HTML and unsafe links
    quoted), code, terminals and diffs fenced."""

    fmt = "markdown"

    def title(self, session_id: str) -> str:
        return f"## Session {_md_inline(session_id)}"

    def note(self, text: str) -> str:
        return f"*{_md_inline(text)}*"

    def turn(self, turn: dict[str, Any], number: int) -> str:
        head = f"### Turn {number}"
        if self.prompt_shown_elsewhere(turn):
            return head
        return f"{head}\n\n**User:**\n\n{_quote(blocks_text(turn.get('prompt')))}"

    def turn_end(self, turn: dict[str, Any], number: int) -> str:
        return f"*Turn {number}: {_md_inline(turn_outcome(turn)[1])}*"

    def message(self, message: dict[str, Any]) -> str:
        role = message.get("role")
        text = _quote(blocks_text(message.get("content")))
        if role == "thought":
            text = "\n".join(f"> {line}" for line in text.splitlines())
        return f"**{role_label(role)}:**\n\n{text}"

    def tool_call(self, call: dict[str, Any]) -> str:
        parts = [f"#### {_md_inline(tool_head(call))}"]
        for item in call.get("content") or []:
            rendered = self.tool_content(item)
            parts.append(
                _quote(rendered)
                if isinstance(item, dict) and item.get("type") == "content"
                else rendered
            )
        return "\n\n".join(parts)

    def diff(self, item: dict[str, Any]) -> str:
        return fence(diff_text(item), "diff")

    def terminal(self, term: dict[str, Any], key: Any) -> str:
        text = self.terminal_text(term, key)
        return f"{_md_inline(terminal_header(term))}\n\n" + fence(text, "console")

    def plan(self, plan: dict[str, Any]) -> str:
        head = f"#### Plan {_md_inline(shown(plan.get('planId', '')))}".strip()
        return "\n".join([head, "", *(_quote(line) for line in plan_lines(plan))])


def _quote(text: str) -> str:
    from .markdown import quote_markdown

    return quote_markdown(text)


def _md_inline(text: str) -> str:
    """Text shown as it is inside a Markdown line: its Markdown and HTML characters escaped."""
    return "".join("\\" + c if c in "\\`*[]<>|~&" else c for c in text)
