"""The tables a trace reduces to, and the reducer that makes their rows from one trace.

Pure Python and plain data (lists of dicts), so a process pool, a Dask worker or any other
runner can call :func:`reduce_trace` and ship its rows back; the Arrow schemas are built only
where pyarrow is at hand.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Any

from ... import dumps
from ..._contract import DEFAULT_MAX_FRAME_BYTES
from ..traces import TraceError, iter_trace

__all__ = ["COLUMNS", "TABLES", "arrow_schema", "reduce_trace"]

# Column kinds: "json" columns hold a value the protocol leaves open, as JSON text.
_STRING, _INT, _FLOAT, _BOOL, _JSON = "string", "int64", "float64", "bool", "json"

COLUMNS: dict[str, list[tuple[str, str]]] = {
    "sessions": [
        ("trace", _STRING),
        ("session_id", _STRING),
        ("protocol_version", _INT),
        ("state", _STRING),
        ("stop_reason", _STRING),
        ("title", _STRING),
        ("turns", _INT),
        ("messages", _INT),
        ("tool_calls", _INT),
        ("terminals", _INT),
        ("permissions", _INT),
        ("errors", _INT),
        ("usage_used", _INT),
        ("usage_size", _INT),
        ("cost_amount", _FLOAT),
        ("cost_currency", _STRING),
        ("usage", _JSON),
        ("info", _JSON),
    ],
    "turns": [
        ("trace", _STRING),
        ("session_id", _STRING),
        ("turn", _INT),
        ("request_id", _JSON),
        ("prompt_text", _STRING),
        ("prompt", _JSON),
        ("message_id", _STRING),
        ("stop_reason", _STRING),
        ("cancel_requested", _BOOL),
        ("total_tokens", _INT),
        ("input_tokens", _INT),
        ("output_tokens", _INT),
        ("thought_tokens", _INT),
        ("cached_read_tokens", _INT),
        ("cached_write_tokens", _INT),
        ("usage", _JSON),
        ("timeline_start", _INT),
        ("timeline_end", _INT),
        ("started_at", _FLOAT),
        ("ended_at", _FLOAT),
        ("seconds", _FLOAT),
        ("updates", _INT),
        ("cost", _FLOAT),
        ("cost_total", _FLOAT),
        ("cost_currency", _STRING),
    ],
    "messages": [
        ("trace", _STRING),
        ("session_id", _STRING),
        ("message_id", _STRING),
        ("role", _STRING),
        ("position", _INT),
        ("blocks", _INT),
        ("text", _STRING),
        ("text_bytes", _INT),
        ("content", _JSON),
    ],
    "tool_calls": [
        ("trace", _STRING),
        ("session_id", _STRING),
        ("tool_call_id", _STRING),
        ("title", _STRING),
        ("name", _STRING),
        ("kind", _STRING),
        ("status", _STRING),
        ("failed", _BOOL),
        ("locations", _JSON),
        ("raw_input", _JSON),
        ("raw_output", _JSON),
        ("content", _JSON),
    ],
    "terminals": [
        ("trace", _STRING),
        ("session_id", _STRING),
        ("terminal_id", _STRING),
        ("source", _STRING),
        ("command", _STRING),
        ("args", _JSON),
        ("cwd", _STRING),
        ("exit_code", _INT),
        ("signal", _STRING),
        ("bytes", _INT),
        ("retained_bytes", _INT),
        ("truncated", _BOOL),
        ("text", _STRING),
    ],
    "permissions": [
        ("trace", _STRING),
        ("session_id", _STRING),
        ("request_id", _JSON),
        ("tool_call_id", _STRING),
        ("title", _STRING),
        ("options", _JSON),
        ("outcome", _STRING),
        ("option_id", _STRING),
        ("option_kind", _STRING),
    ],
    "errors": [
        ("trace", _STRING),
        ("session_id", _STRING),
        ("line", _INT),
        ("offset", _INT),
        ("reason", _STRING),
        ("detail", _JSON),
    ],
}
"""Each table's columns, in order, with their kind; every row has every column."""

TABLES = tuple(COLUMNS)


def arrow_schema(table: str) -> Any:
    """The ``pyarrow.Schema`` of ``table`` (JSON columns are UTF-8 strings)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    types = {
        _STRING: pa.string(),
        _INT: pa.int64(),
        _FLOAT: pa.float64(),
        _BOOL: pa.bool_(),
        _JSON: pa.string(),
    }
    return pa.schema([pa.field(name, types[kind]) for name, kind in COLUMNS[table]])


def _json(value: Any) -> str | None:
    # `dumps` writes an NDJSON line: the text is the line without its newline.
    return None if value is None else dumps(value)[:-1].decode()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    # bool is an int to Python, never a count to the protocol; Parquet's int64 bounds it.
    if type(value) is int and -(2**63) <= value < 2**63:
        return value
    return None


def _float(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _object(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a member absent or mistyped)."""
    return value if isinstance(value, dict) else {}


def _texts(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return "".join(
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


class _Timing:
    """What the snapshot does not keep, seen while the trace is applied: when each prompt and
    its end came (line, and record time when recorded), and each session's updates and usage."""

    def __init__(self) -> None:
        self.prompts: dict[tuple[str, str], tuple[int, float | None]] = {}
        self.open_prompts: dict[str, tuple[str, str]] = {}
        self.answers: dict[tuple[str, str], tuple[int, float | None]] = {}
        self.idles: dict[str, list[tuple[int, float | None]]] = defaultdict(list)
        self.updates: dict[str, list[int]] = defaultdict(list)
        self.usage: dict[str, list[tuple[int, Any]]] = defaultdict(list)

    def see(self, message: dict[str, Any], line: int, t: float | None, sender: str | None) -> None:
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        session_id = params.get("sessionId")
        if method == "session/prompt" and isinstance(session_id, str) and sender != "agent":
            key = _json(message.get("id")) or "null"
            self.prompts[(session_id, key)] = (line, t)
            self.open_prompts[key] = (session_id, key)
        elif method == "session/update" and isinstance(session_id, str):
            self.updates[session_id].append(line)
            update = params.get("update")
            update = update if isinstance(update, dict) else {}
            kind = update.get("sessionUpdate")
            if kind == "state_update" and update.get("state") == "idle":
                self.idles[session_id].append((line, t))
            elif kind == "usage_update":
                self.usage[session_id].append((line, update))
        elif method is None and sender != "client" and "id" in message:
            key = _json(message.get("id")) or "null"
            opened = self.open_prompts.pop(key, None)
            if opened is not None:
                self.answers[opened] = (line, t)


def _replay(path: str, max_frame_bytes: int) -> tuple[Any, _Timing]:
    from ... import Sessions

    store = Sessions(max_frame_bytes=max_frame_bytes)
    timing = _Timing()
    # As `acpwire stats` reads a trace: the shared reader gives each line's message (or the
    # error a plain trace would record for it), with its sender and time when recorded.
    for record in iter_trace(path, max_frame_bytes):
        if record.error is not None:
            store._record_error(record.error, record.line, record.offset)
            continue
        store._apply_at(record.message, record.sender, record.line, record.offset)
        batch = record.message if isinstance(record.message, list) else [record.message]
        for message in batch:
            if isinstance(message, dict):
                timing.see(message, record.line, record.t, record.sender)
    store.finish()
    return store, timing


def reduce_trace(
    path: str, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table for the trace at ``path`` (plain or recorded).

    A trace that cannot be read (missing, not NDJSON at all) gives one ``errors`` row naming
    why and no other row; bad lines inside a readable trace are ``errors`` rows each, at their
    line, as ``Sessions`` records them. Only this trace's store is held meanwhile.
    """
    rows: dict[str, list[dict[str, Any]]] = {table: [] for table in TABLES}
    try:
        store, timing = _replay(path, max_frame_bytes)
    except (OSError, TraceError, TypeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        rows["errors"].append(
            {
                "trace": path,
                "session_id": None,
                "line": None,
                "offset": None,
                "reason": f"cannot read the trace: {reason}",
                "detail": None,
            }
        )
        return rows
    for session_id in store.ids():
        _session_rows(path, session_id, store[session_id].snapshot(), timing, rows)
    for error in store.errors:
        detail = {k: v for k, v in error.items() if k not in ("line", "offset", "sessionId")}
        rows["errors"].append(
            {
                "trace": path,
                "session_id": _str(error.get("sessionId")),
                "line": _int(error.get("line")),
                "offset": _int(error.get("offset")),
                "reason": _str(error.get("reason")),
                "detail": _json(detail),
            }
        )
    return rows


def _session_rows(
    path: str, session_id: str, snap: dict[str, Any], timing: _Timing, rows: dict[str, list[Any]]
) -> None:
    base = {"trace": path, "session_id": session_id}
    usage = _object(snap.get("usage"))
    cost = _object(usage.get("cost"))
    info = _object(snap.get("info"))
    turns = snap.get("turns")
    rows["sessions"].append(
        {
            **base,
            "protocol_version": _int(snap.get("protocolVersion")),
            "state": _str(snap.get("state")),
            "stop_reason": _str(snap.get("stopReason")),
            "title": _str(info.get("title")),
            "turns": len(turns) if isinstance(turns, list) else len(snap.get("prompts", [])),
            "messages": len(snap.get("messages", [])),
            "tool_calls": len(snap.get("toolCalls", {})),
            "terminals": len(snap.get("terminals", {})),
            "permissions": len(snap.get("permissions", [])),
            "errors": len(snap.get("errors", [])),
            "usage_used": _int(usage.get("used")),
            "usage_size": _int(usage.get("size")),
            "cost_amount": _float(cost.get("amount")),
            "cost_currency": _str(cost.get("currency")),
            "usage": _json(snap.get("usage")),
            "info": _json(snap.get("info")),
        }
    )
    if isinstance(turns, list):
        version = _int(snap.get("protocolVersion")) or 1
        _turn_rows(base, session_id, version, turns, timing, rows["turns"])
    for position, message in enumerate(snap.get("messages", [])):
        content = message.get("content")
        text = _texts(content)
        rows["messages"].append(
            {
                **base,
                "message_id": _str(message.get("id")),
                "role": _str(message.get("role")),
                "position": position,
                "blocks": len(content) if isinstance(content, list) else None,
                "text": text,
                "text_bytes": len(text.encode()),
                "content": _json(content),
            }
        )
    for call_id, call in snap.get("toolCalls", {}).items():
        rows["tool_calls"].append(
            {
                **base,
                "tool_call_id": call_id,
                "title": _str(call.get("title")),
                "name": _str(call.get("name")),
                "kind": _str(call.get("kind")),
                "status": _str(call.get("status")),
                "failed": call.get("status") == "failed",
                "locations": _json(call.get("locations")),
                "raw_input": _json(call.get("rawInput")),
                "raw_output": _json(call.get("rawOutput")),
                "content": _json(call.get("content")),
            }
        )
    for terminal_id, terminal in snap.get("terminals", {}).items():
        status = terminal.get("exitStatus") if isinstance(terminal.get("exitStatus"), dict) else {}
        text = terminal.get("text") if isinstance(terminal.get("text"), str) else ""
        rows["terminals"].append(
            {
                **base,
                "terminal_id": terminal_id,
                "source": _str(terminal.get("source")),
                "command": _str(terminal.get("command")),
                "args": _json(terminal.get("args")),
                "cwd": _str(terminal.get("cwd")),
                "exit_code": _int(status.get("exitCode")),
                "signal": _str(status.get("signal")),
                "bytes": _int(terminal.get("bytes")),
                "retained_bytes": len(text.encode()),
                "truncated": bool(terminal.get("truncated")),
                "text": text,
            }
        )
    for permission in snap.get("permissions", []):
        subject = permission.get("subject") if isinstance(permission.get("subject"), dict) else {}
        call = subject.get("toolCall") or permission.get("toolCall")
        call = call if isinstance(call, dict) else {}
        response = permission.get("response")
        outcome = response.get("outcome") if isinstance(response, dict) else None
        outcome = outcome if isinstance(outcome, dict) else {}
        option_id = _str(outcome.get("optionId"))
        options = permission.get("options") if isinstance(permission.get("options"), list) else []
        kinds = [
            o.get("kind") for o in options if isinstance(o, dict) and o.get("optionId") == option_id
        ]
        rows["permissions"].append(
            {
                **base,
                "request_id": _json(permission.get("requestId")),
                "tool_call_id": _str(call.get("toolCallId")),
                "title": _str(permission.get("title")) or _str(call.get("title")),
                "options": _json(permission.get("options")),
                "outcome": _str(outcome.get("outcome")),
                "option_id": option_id,
                "option_kind": _str(kinds[0]) if kinds else None,
            }
        )


def _turn_rows(
    base: dict[str, Any],
    session_id: str,
    version: int,
    turns: list[Any],
    timing: _Timing,
    out: list[dict[str, Any]],
) -> None:
    update_lines = timing.updates.get(session_id, [])
    idles = timing.idles.get(session_id, [])
    idle_lines = [line for line, _ in idles]
    usage = timing.usage.get(session_id, [])
    usage_lines = [line for line, _ in usage]
    starts: list[tuple[int, float | None] | None] = []
    for turn in turns:
        key = (session_id, _json(turn.get("requestId")) or "null")
        starts.append(timing.prompts.get(key))
    previous_total: float | None = None
    for index, turn in enumerate(turns):
        start = starts[index]
        key = (session_id, _json(turn.get("requestId")) or "null")
        end = timing.answers.get(key)
        if version >= 2 and start is not None:
            # A v2 prompt's answer only accepts it: the first idle after the prompt ends it.
            at = bisect.bisect_right(idle_lines, start[0])
            end = idles[at] if at < len(idles) else None
        # Usage and cost: the last usage_update before the next turn starts.
        following = next((s for s in starts[index + 1 :] if s is not None), None)
        limit = following[0] if following is not None else float("inf")
        at = bisect.bisect_left(usage_lines, limit) - 1
        last = usage[at][1] if at >= 0 and (start is None or usage[at][0] > start[0]) else None
        cost = last.get("cost") if isinstance(last, dict) else None
        cost = cost if isinstance(cost, dict) else {}
        total = _float(cost.get("amount"))
        tokens = turn.get("usage") if isinstance(turn.get("usage"), dict) else {}
        updates = None
        if start is not None and end is not None:
            updates = bisect.bisect_right(update_lines, end[0]) - bisect.bisect_right(
                update_lines, start[0]
            )
        started_at = start[1] if start is not None else None
        ended_at = end[1] if end is not None else None
        out.append(
            {
                **base,
                "turn": index + 1,
                "request_id": _json(turn.get("requestId")),
                "prompt_text": _texts(turn.get("prompt")),
                "prompt": _json(turn.get("prompt")),
                "message_id": _str(turn.get("messageId")),
                "stop_reason": _str(turn.get("stopReason")),
                "cancel_requested": bool(turn.get("cancelRequested")),
                "total_tokens": _int(tokens.get("totalTokens")),
                "input_tokens": _int(tokens.get("inputTokens")),
                "output_tokens": _int(tokens.get("outputTokens")),
                "thought_tokens": _int(tokens.get("thoughtTokens")),
                "cached_read_tokens": _int(tokens.get("cachedReadTokens")),
                "cached_write_tokens": _int(tokens.get("cachedWriteTokens")),
                "usage": _json(turn.get("usage")),
                "timeline_start": _int(turn.get("start")),
                "timeline_end": _int(turn.get("end")),
                "started_at": started_at,
                "ended_at": ended_at,
                "seconds": None
                if started_at is None or ended_at is None
                else round(ended_at - started_at, 6),
                "updates": updates,
                "cost": None if total is None else round(total - (previous_total or 0.0), 12),
                "cost_total": total,
                "cost_currency": _str(cost.get("currency")),
            }
        )
        if total is not None:
            previous_total = total
