"""``acpwire stats``: per-session statistics of a trace, and the command that prints them."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import IO, Any

from .. import dumps
from .output import fail, write_out
from .render import visible
from .traces import DEFAULT_MAX_FRAME_BYTES, iter_trace

__all__ = ["trace_stats"]


def _b64_size(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    return len(data) * 3 // 4 - data.count("=", max(0, len(data) - 2))


class _Turn:
    __slots__ = ("first_update", "last_update", "start", "updates")

    def __init__(self, start: float | None) -> None:
        self.start = start
        self.first_update: float | None = None
        self.last_update: float | None = None
        self.updates = 0


def trace_stats(path: str | Path | IO[bytes], **options: Any) -> dict[str, Any]:
    """Reduce a trace and count what happened in each session.

    Returns ``{"sessions": {id: {...}}, "frameErrors": [...], "timed": bool}``.
    """
    from .. import Sessions

    store = Sessions(**options)
    frame_errors: list[dict] = []
    updates: dict[str, Counter[str]] = defaultdict(Counter)
    terminal_in: Counter[str] = Counter()
    stop_reasons: dict[str, Counter[str]] = defaultdict(Counter)
    turns: dict[str, list[_Turn]] = defaultdict(list)
    prompt_session: dict[Any, str] = {}
    timed = False

    # Plain and recorded traces alike: a bad frame, or a raw record, is a frame error at its
    # line, and each message is applied with its sender when the record names it.
    cap = options.get("max_frame_bytes", DEFAULT_MAX_FRAME_BYTES)
    for record in iter_trace(path, cap):
        if record.error is not None:
            frame_errors.append(
                {"line": record.line, "offset": record.offset, "reason": record.error}
            )
            store._record_error(record.error, record.line, record.offset)
            continue
        store._apply_at(record.message, record.sender, record.line, record.offset)
        timed = timed or record.t is not None
        # A batch (a JSON array) counts as its entries, as the store applies them.
        batch = record.message if isinstance(record.message, list) else [record.message]
        for message in batch:
            if isinstance(message, dict):
                _count(message, record.t, turns, prompt_session, updates, terminal_in, stop_reasons)

    sessions: dict[str, Any] = {}
    for session_id in store.ids():
        snap = store[session_id].snapshot()
        tool_kinds = Counter(str(c.get("kind", "other")) for c in snap["toolCalls"].values())
        tool_status = Counter(str(c.get("status", "pending")) for c in snap["toolCalls"].values())
        retained = sum(len(t.get("text", "").encode()) for t in snap["terminals"].values())
        counts = updates.get(session_id, Counter())
        entry: dict[str, Any] = {
            "protocolVersion": snap["protocolVersion"],
            "state": snap["state"],
            "turns": len(snap["prompts"]),
            "stopReasons": dict(stop_reasons.get(session_id, {})),
            "messages": dict(Counter(m.get("role") for m in snap["messages"])),
            "chunks": {k: v for k, v in sorted(counts.items()) if k.endswith("_chunk")},
            "updates": dict(sorted(counts.items())),
            "toolCalls": {"byKind": dict(tool_kinds), "byStatus": dict(tool_status)},
            "terminals": {
                "count": len(snap["terminals"]),
                "bytesIn": terminal_in.get(session_id, 0),
                "bytesRetained": retained,
                "truncated": any(t.get("truncated") for t in snap["terminals"].values()),
            },
            "usage": snap["usage"],
            "errors": len(snap["errors"]),
        }
        if timed:
            entry["timing"] = [
                {
                    "firstUpdateSeconds": None
                    if t.first_update is None or t.start is None
                    else round(t.first_update - t.start, 6),
                    "updates": t.updates,
                    "updatesPerSecond": None
                    if t.first_update is None
                    or t.last_update is None
                    or t.updates < 2
                    or t.last_update <= t.first_update
                    else round((t.updates - 1) / (t.last_update - t.first_update), 1),
                }
                for t in turns.get(session_id, [])
            ]
        sessions[session_id] = entry
    return {"sessions": sessions, "frameErrors": frame_errors, "timed": timed}


def _count(
    message: dict,
    t: float | None,
    turns: dict[str, list[_Turn]],
    prompt_session: dict[Any, str],
    updates: dict[str, Counter[str]],
    terminal_in: Counter[str],
    stop_reasons: dict[str, Counter[str]],
) -> None:
    """Count one message of a trace (sent at ``t``, when recorded) into the tallies."""
    method = message.get("method")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    session_id = params.get("sessionId")
    if method == "session/prompt" and isinstance(session_id, str):
        turns[session_id].append(_Turn(t))
        prompt_session[message.get("id")] = session_id
    elif method == "session/update" and isinstance(session_id, str):
        update = params.get("update") if isinstance(params.get("update"), dict) else {}
        kind = str(update.get("sessionUpdate"))
        updates[session_id][kind] += 1
        if kind == "terminal_output_chunk":
            terminal_in[session_id] += _b64_size(update.get("data"))
        if kind == "state_update" and update.get("state") == "idle":
            stop_reasons[session_id][str(update.get("stopReason"))] += 1
        if turns[session_id]:
            turn = turns[session_id][-1]
            turn.updates += 1
            if t is not None:
                if turn.first_update is None:
                    turn.first_update = t
                turn.last_update = t
    elif method is None and message.get("id") in prompt_session:
        result = message.get("result")
        if isinstance(result, dict) and "stopReason" in result:
            stop_reasons[prompt_session[message["id"]]][str(result["stopReason"])] += 1


def stats(path: str, *, as_json: bool) -> int:
    from . import traces

    try:
        report = trace_stats(path)
    except OSError as exc:
        return fail("stats", f"cannot read {path}: {exc.strerror or exc}")
    except traces.TraceError as exc:
        return fail("stats", f"{path}: {exc}")
    if as_json:
        write_out(dumps(report))
    else:
        # Printed for a reader's terminal: ids and kinds are the trace's own strings.
        _print_stats(visible(report, keys=True))
    return 1 if report["frameErrors"] else 0


def _print_stats(report: dict[str, Any]) -> None:
    for session_id, s in report["sessions"].items():
        print(f"session {session_id} (protocol v{s['protocolVersion']}, state {s['state']})")
        stops = ", ".join(f"{k} ×{v}" for k, v in s["stopReasons"].items()) or "none"
        print(f"  turns: {s['turns']}   stop reasons: {stops}")
        roles = ", ".join(f"{k} {v}" for k, v in s["messages"].items()) or "none"
        chunks = ", ".join(f"{k} {v:,}" for k, v in s["chunks"].items()) or "none"
        print(f"  messages: {roles}   chunks: {chunks}")
        kinds = ", ".join(f"{k} {v}" for k, v in s["toolCalls"]["byKind"].items()) or "none"
        status = ", ".join(f"{k} {v}" for k, v in s["toolCalls"]["byStatus"].items())
        print(f"  tool calls: {kinds}" + (f"   ({status})" if status else ""))
        t = s["terminals"]
        print(
            f"  terminals: {t['count']}, {t['bytesIn']:,} bytes in, {t['bytesRetained']:,} "
            f"retained" + (" (truncated)" if t["truncated"] else "")
        )
        usage = s["usage"]
        if usage:
            cost = usage.get("cost") or {}
            money = f", cost {cost.get('amount')} {cost.get('currency', '')}" if cost else ""
            print(f"  usage: {usage.get('used')} of {usage.get('size')} tokens{money}")
        print(f"  errors: {s['errors']}")
        for i, turn in enumerate(s.get("timing", []), 1):
            first = turn["firstUpdateSeconds"]
            rate = turn["updatesPerSecond"]
            print(
                f"  turn {i}: first update after "
                f"{'-' if first is None else f'{first * 1e3:.1f} ms'}, {turn['updates']} updates"
                + ("" if rate is None else f", {rate:,.0f}/s")
            )
    for error in report["frameErrors"]:
        print(f"bad frame at line {error['line']}, byte {error['offset']}: {error['reason']}")
