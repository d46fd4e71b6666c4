"""What every rendering shares: escaping an agent's strings, the text of content blocks,
diffs, and the walk over a snapshot's timeline that puts each block in its place."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ... import dumps

# C0 controls but tab and newline, DEL and C1 controls.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Link schemes a rendering makes clickable; any other (javascript:, data:, ...) is text.
SAFE_SCHEMES = frozenset(("http", "https", "mailto", "file"))
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*):")


def safe_link(url: object) -> bool:
    """Whether ``url`` may be a link: http, https, mailto and file addresses only."""
    if not isinstance(url, str):
        return False
    match = _SCHEME.match(url)
    if match is None:
        return False
    return match.group(1).lower() in SAFE_SCHEMES and not _CONTROLS.search(url)


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


def shown(value: Any) -> str:
    """Any JSON value as one visible string: a str as it is, anything else as JSON."""
    if isinstance(value, str):
        return str(visible(value))
    if value is None:
        return ""
    return str(visible(dumps(value).decode().rstrip("\n")))


def content_text(block: Any) -> str:
    """The text of one ACP content block (text, a resource's text, else a short marker)."""
    if not isinstance(block, dict):
        return shown(block)
    kind = block.get("type")
    if kind == "text":
        return shown(block.get("text", ""))
    if kind == "resource_link":
        name = block.get("name") or block.get("uri") or "resource"
        return f"[{shown(name)}]({shown(block.get('uri', ''))})"
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, dict):
            return f"[resource {shown(resource)}]"
        text = resource.get("text")
        if isinstance(text, str) and text:
            return shown(text)
        return f"[resource {shown(resource.get('uri', ''))}]"
    if kind in ("image", "audio"):
        return f"[{kind} {shown(block.get('mimeType', ''))}]".replace(" ]", "]")
    return f"[{shown(kind)}]"


def blocks_text(content: Any) -> str:
    """The text of a message's or a prompt's content: a block, or a list of blocks."""
    if isinstance(content, list):
        return "".join(content_text(block) for block in content)
    if content is None:
        return ""
    return content_text(content)


def diff_text(item: dict[str, Any]) -> str:
    """A diff content item as a unified diff: a v2 patch's text as sent, or a v1
    ``oldText``/``newText`` pair compared with three lines of context."""
    patch = item.get("patch")
    if isinstance(patch, dict) and isinstance(patch.get("text"), str):
        return shown(patch["text"])
    path = shown(item.get("path", ""))
    old, new = item.get("oldText"), item.get("newText")
    old_lines = shown(old).splitlines() if old is not None else []
    new_lines = shown(new).splitlines() if new is not None else []
    lines = list(
        difflib.unified_diff(
            old_lines,
            new_lines,
            fromfile=path if old is not None else "/dev/null",
            tofile=path,
            lineterm="",
        )
    )
    return "\n".join(lines) if lines else f"--- {path}\n+++ {path}\n(no change)"


def terminal_header(term: dict[str, Any]) -> str:
    """``$ command args`` and what became of it: exit status, killed, released, truncated."""
    command = shown(term.get("command", ""))
    args = term.get("args")
    if isinstance(args, list) and args:
        command = " ".join([command, *(shown(a) for a in args)])
    notes = []
    cwd = term.get("cwd")
    if cwd:
        notes.append(f"in {shown(cwd)}")
    status = term.get("exitStatus")
    if isinstance(status, dict):
        if status.get("exitCode") is not None:
            notes.append(f"exit {shown(status.get('exitCode'))}")
        if status.get("signal") is not None:
            notes.append(f"signal {shown(status.get('signal'))}")
    for flag in ("killed", "released", "truncated"):
        if term.get(flag):
            notes.append(flag)
    if term.get("source") == "client":
        notes.append("client terminal")
    head = f"$ {command}" if command else f"terminal {shown(term.get('terminalId', ''))}"
    return head + (f"  ({', '.join(notes)})" if notes else "")


def turn_outcome(turn: dict[str, Any]) -> tuple[str, str]:
    """How a turn ended, as (a word: ``done``, ``cancelled``, ``failed``, ``running``, and
    the text to show)."""
    error = turn.get("error")
    stop = turn.get("stopReason")
    if error is not None:
        if isinstance(error, dict):
            detail = " ".join(
                shown(error.get(k)) for k in ("code", "message") if error.get(k) is not None
            )
        else:
            detail = shown(error)
        return "failed", f"failed: {detail}" if detail else "failed"
    if stop == "cancelled" or (turn.get("cancelRequested") and stop is None):
        return "cancelled", "cancelled" + (" (requested, running)" if stop is None else "")
    if stop is None:
        return ("running", "running") if turn.get("end") is None else ("done", "ended")
    return "done", shown(stop)


@dataclass
class Block:
    """One thing a rendering shows, in timeline order: ``kind`` is ``turn`` (``data`` the
    turn, ``number`` its position), ``turnEnd``, ``message``, ``toolCall``, ``terminal``,
    ``plan``, ``other`` (an update of a kind the reducer does not know, as sent), ``missing``
    (a timeline entry naming nothing in the snapshot), or ``stop`` (a
    session's stop reason, when it has no turns). ``key`` is the entry's id as the snapshot
    holds it (for ``Session.terminal``); ``timeline`` the entry's index (None for what no
    timeline entry names)."""

    kind: str
    data: Any
    key: Any = None
    number: int = 0
    timeline: int | None = None


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("json", dumps(value))
    return value


def walk(snapshot: dict[str, Any], thoughts: bool = True) -> Iterator[Block]:
    """The blocks of a snapshot in the order they came. Nothing an agent sent is left out:
    what the timeline does not place (or places under an id the snapshot does not hold) is
    shown after it."""
    messages: dict[Any, dict[str, Any]] = {}
    for message in _list(snapshot.get("messages")):
        if isinstance(message, dict):
            messages.setdefault(_hashable((message.get("role"), message.get("id"))), message)
    calls, terminals, plans = (
        _mapping(snapshot.get(name)) for name in ("toolCalls", "terminals", "plans")
    )
    others = _list(snapshot.get("other"))
    turns = [t for t in _list(snapshot.get("turns")) if isinstance(t, dict)]
    turn_by_id = {_hashable(t.get("requestId")): t for t in reversed(turns)}
    numbers = {id(t): i for i, t in enumerate(turns, 1)}
    in_calls = {
        _hashable(item.get("terminalId"))
        for call in calls.values()
        if isinstance(call, dict)
        for item in _list(call.get("content"))
        if isinstance(item, dict) and item.get("type") == "terminal"
    }
    seen: set[Any] = set()
    current: dict[str, Any] | None = None

    def entity(kind: str, key: Any, index: int | None) -> Iterator[Block]:
        table = {"toolCall": calls, "terminal": terminals, "plan": plans}[kind]
        hashed = _hashable(key)
        if hashed not in table:
            yield Block("missing", {"type": kind, "id": key}, key, timeline=index)
            return
        seen.add((kind, hashed))
        if kind == "terminal" and hashed in in_calls:
            return  # shown inside the tool call that refers to it
        yield Block(kind, table[hashed], key, timeline=index)

    for index, entry in enumerate(_list(snapshot.get("timeline"))):
        if not isinstance(entry, dict):
            yield Block("missing", entry, timeline=index)
            continue
        kind, key = entry.get("type"), entry.get("id")
        if kind == "turn":
            turn = turn_by_id.get(_hashable(key))
            if turn is None or ("turn", id(turn)) in seen:
                yield Block("missing", entry, key, timeline=index)
                continue
            if current is not None:
                yield Block("turnEnd", current, number=numbers[id(current)])
            seen.add(("turn", id(turn)))
            current = turn
            yield Block("turn", turn, key, number=numbers[id(turn)], timeline=index)
        elif kind == "message":
            found = messages.get(_hashable((entry.get("role"), key)))
            if found is None:
                yield Block("missing", entry, key, timeline=index)
                continue
            seen.add(("message", _hashable((entry.get("role"), key))))
            if found.get("role") != "thought" or thoughts:
                yield Block("message", found, key, timeline=index)
        elif kind in ("toolCall", "terminal", "plan"):
            yield from entity(kind, key, index)
        elif kind == "other":
            # An update of a kind the reducer does not know, kept whole: shown as sent.
            position = int(key) if isinstance(key, str) and key.isdigit() else key
            if isinstance(position, int) and 0 <= position < len(others):
                seen.add(("other", position))
                yield Block("other", others[position], key, timeline=index)
            else:
                yield Block("missing", entry, key, timeline=index)
        else:
            yield Block("missing", entry, key, timeline=index)
    if current is not None:
        yield Block("turnEnd", current, number=numbers[id(current)])
    # What no timeline entry placed.
    for turn in turns:
        if ("turn", id(turn)) not in seen:
            yield Block("turn", turn, turn.get("requestId"), number=numbers[id(turn)])
            yield Block("turnEnd", turn, number=numbers[id(turn)])
    for hashed, message in messages.items():
        if ("message", hashed) not in seen and (message.get("role") != "thought" or thoughts):
            yield Block("message", message, message.get("id"))
    for kind, table in (("toolCall", calls), ("plan", plans), ("terminal", terminals)):
        for hashed, value in table.items():
            if (kind, hashed) in seen or (kind == "terminal" and hashed in in_calls):
                continue
            yield Block(kind, value, hashed)
    for position, value in enumerate(others):
        if ("other", position) not in seen:
            yield Block("other", value, str(position))
    if not turns and snapshot.get("stopReason") is not None:
        yield Block("stop", snapshot.get("stopReason"))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def fence(text: str, info: str = "") -> str:
    """``text`` in a Markdown code fence longer than any backtick run inside it, so that
    nothing in it can close the fence early."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text}\n{marks}"
