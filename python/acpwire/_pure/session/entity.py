"""Twin of src/session/entity.rs: one entity of a session, exactly its snapshot entry.

Each read copies one entity as ``snapshot()`` copies it, without building the rest of the
snapshot; ``None`` when the session has no such entity.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, cast

from .json import _block_as_sent, _copy
from .snapshot import message_view, terminal_view

if TYPE_CHECKING:
    from ...types import (
        Compaction,
        ContentBlock,
        Message,
        Plan,
        Subagent,
        TerminalEntry,
        ToolCall,
    )
    from .model import Session


def tool_call(s: Session, tool_call_id: str) -> ToolCall | None:
    """``snapshot()["toolCalls"][tool_call_id]``, or None."""
    fields = s._tool_calls.get(tool_call_id)
    return None if fields is None else cast("ToolCall", _copy(fields))


def message(s: Session, role: str, message_id: str) -> Message | None:
    """The entry of ``snapshot()["messages"]`` with this ``role`` and ``id``, or None; an
    anonymous message (``~1``, ...) is found by its id too, as ``message_text`` finds it."""
    index = s._message_index.get((role, message_id))
    if index is None:
        index = s._message_index.get((role, message_id, True))
    if index is None:
        return None
    return cast("Message", message_view(s._messages[index]))


def message_blocks(s: Session, index: int) -> list[ContentBlock] | None:
    """The content blocks of message ``index`` of the snapshot, each as sent, or None."""
    # An int as the native binding takes one (a bool is one; another type is a TypeError).
    index = operator.index(index)
    if not 0 <= index < len(s._messages):
        return None
    blocks = s._messages[index].blocks()
    if blocks is None:
        return None
    return cast("list[ContentBlock]", _copy([_block_as_sent(block) for block in blocks]))


def terminal(s: Session, terminal_id: str) -> TerminalEntry | None:
    """``snapshot()["terminals"][terminal_id]`` (its ``text`` rendered now), or None."""
    entry = s._terminals.get(terminal_id)
    if entry is None:
        return None
    return cast("TerminalEntry", terminal_view(entry))


def plan(s: Session, plan_id: str) -> Plan | None:
    """``snapshot()["plans"][plan_id]``, or None."""
    found = s._plans.get(plan_id)
    return None if found is None else cast("Plan", _copy(found))


def compaction(s: Session, compaction_id: str) -> Compaction | None:
    """``snapshot()["compactions"][compaction_id]``, or None."""
    found = s._compactions.get(compaction_id)
    return None if found is None else cast("Compaction", _copy(found))


def subagent(s: Session, subagent_id: str) -> Subagent | None:
    """``snapshot()["subagents"][subagent_id]``, or None."""
    found = s._subagents.get(subagent_id)
    return None if found is None else cast("Subagent", _copy(found))
