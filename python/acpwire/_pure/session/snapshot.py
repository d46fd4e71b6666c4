"""Twin of src/session/snapshot.rs: a session's state as a JSON-serializable dict (a copy).

The shape is documented at ``Session.snapshot``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .json import _block_text, _copy
from .parts import ErrorRecord, JsonObject, JsonValue
from .turns import kept_before

if TYPE_CHECKING:
    from .model import Session, _Message, _TerminalEntry


# An error record: (line, offset, sessionId, reason), line and offset None for a message given
# to `apply`. A tuple rather than a slotted class: one is made for each refused frame or update,
# and making a class instance instead slowed a stream of refused updates by about a tenth.
def _error_dict(record: ErrorRecord) -> JsonObject:
    line, offset, sid, reason = record
    return {"line": line, "offset": offset, "sessionId": sid, "reason": reason}


def _turns_view(s: Session) -> list[JsonValue]:
    """``turns``, with timeline indices as the snapshot's timeline counts them."""
    shown = kept_before(s._timeline)
    out = []
    for t in s._turns:
        o: JsonObject = {"requestId": _copy(t.request_id), "prompt": _copy(t.prompt)}
        if t.message_id is not None:
            o["messageId"] = t.message_id
        o["stopReason"] = t.stop_reason
        o["cancelRequested"] = t.cancel_requested
        if t.usage is not None:
            o["usage"] = _copy(t.usage)
        if t.has_error:
            o["error"] = _copy(t.error)
        if t.joined:
            o["joined"] = _copy(t.joined)
        o["start"] = shown[t.start]
        o["end"] = None if t.end is None else shown[t.end]
        out.append(o)
    return out


def _merged(blocks: Iterable[JsonValue]) -> list[JsonValue]:
    """Content blocks as the snapshot shows them: each run of plain text blocks (no member but
    ``type`` and ``text``) as one."""
    out: list[JsonValue] = []
    run: list[str] | None = None
    for block in blocks:
        # Most blocks are a streamed message's texts: those need no call.
        text = block if type(block) is str else _block_text(block, True)
        if text is not None:
            if run is None:
                run = [text]
            else:
                run.append(text)
            continue
        if run is not None:
            out.append({"type": "text", "text": "".join(run)})
            run = None
        out.append(_copy(block))
    if run is not None:
        out.append({"type": "text", "text": "".join(run)})
    return out


def message_view(m: _Message) -> JsonObject:
    """A message as the snapshot writes it: id, role, content, then its other fields."""
    o: JsonObject = {"id": m.id, "role": m.role}
    content = m.content
    trunc = m.trunc
    if trunc is not None:
        o["content"] = [*_merged(content or ()), *_merged(trunc.tail[trunc.start :])]
    elif content is not None:
        o["content"] = _merged(content)
    for k, v in m.fields.items():
        o[k] = _copy(v)
    if trunc is not None:
        o["truncated"] = {"blocks": trunc.blocks, "bytes": trunc.bytes}
    return o


def terminal_view(entry: _TerminalEntry) -> JsonObject:
    """A terminal's fields, then what it shows: ``text`` (rendered now), ``bytes`` and
    ``truncated`` (by our bounds or, for a client terminal, by the client)."""
    term = entry.term
    o: JsonObject = _copy(entry.fields)
    o["text"] = term.text
    o["bytes"] = term.bytes_fed
    o["truncated"] = term.truncated or entry.source_truncated
    return o


def snapshot(s: Session) -> JsonObject:
    """The snapshot of session ``s`` (see ``Session.snapshot``)."""
    messages = [message_view(m) for m in s._messages]
    terminals = {tid: terminal_view(entry) for tid, entry in s._terminals.items()}
    timeline = []
    turns = s._turns
    for item in s._timeline:
        if item is None:
            continue
        kind, eid, role = item
        shown: JsonObject = {"type": kind, "id": eid}
        if kind == "turn" and type(eid) is int:
            # A turn's entry shows its request id.
            shown["id"] = _copy(turns[eid].request_id)
        if role is not None:
            shown["role"] = role
        timeline.append(shown)
    return {
        "sessionId": s._id,
        "protocolVersion": s._version[0],
        "state": s.state_,
        "stopReason": s.stop_reason_,
        "messages": messages,
        "toolCalls": _copy(s._tool_calls),
        "terminals": terminals,
        "plans": _copy(s._plans),
        "compactions": _copy(s._compactions),
        "usage": _copy(s._usage),
        "info": _copy(s._info),
        "availableCommands": _copy(s._available_commands),
        "configOptions": _copy(s._config_options),
        "currentModeId": s._current_mode_id,
        "permissions": _copy(s._permissions),
        "prompts": _copy(s._prompts),
        "turns": _turns_view(s) if turns else [],
        "notices": _copy(list(s._notices or ())),
        "other": _copy(s._other),
        "timeline": timeline,
        "errors": [_error_dict(e) for e in s._errors or ()],
        "subagents": _copy(s._subagents),
        "updateExtras": _copy(s._update_extras),
    }
