"""``acpwire stats``: per-session statistics of traces, and the command that prints them."""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from typing import IO, Any, TypedDict

from .. import dumps
from ..types import SessionSnapshot, Usage
from .output import expand_paths, fail, paint, safe_json, write_out
from .render import visible
from .traces import DEFAULT_MAX_FRAME_BYTES, iter_trace

__all__ = [
    "FrameErrorStats",
    "SessionStats",
    "TerminalStats",
    "ToolCallStats",
    "TraceStats",
    "TurnTiming",
    "trace_stats",
]


class FrameErrorStats(TypedDict):
    """A bad frame (or a raw record) of the trace: its 1-based line, byte offset, reason."""

    line: int
    offset: int
    reason: str


class ToolCallStats(TypedDict):
    byKind: dict[str, int]
    byStatus: dict[str, int]


class TerminalStats(TypedDict):
    count: int
    bytesIn: int
    bytesRetained: int
    truncated: bool


class _TurnTimingBase(TypedDict):
    updates: int


class TurnTiming(_TurnTimingBase):
    """One turn of a recorded trace: seconds from the prompt to its first update, and the
    rate of updates after that (None where there are too few to say)."""

    firstUpdateSeconds: float | None
    updatesPerSecond: float | None


class _SessionStatsBase(TypedDict):
    protocolVersion: int | None
    state: str | None
    turns: int
    stopReasons: dict[str, int]
    messages: dict[str, int]
    chunks: dict[str, int]
    updates: dict[str, int]
    toolCalls: ToolCallStats
    terminals: TerminalStats
    usage: Usage | None
    errors: int
    errorResponses: int


class SessionStats(_SessionStatsBase, total=False):
    """One session: its snapshot's state, counts of what happened in it, and the JSON-RPC
    error responses to requests naming it. ``timing`` (per turn) only for recorded traces."""

    timing: list[TurnTiming]


class TraceStats(TypedDict):
    """What :func:`trace_stats` returns."""

    sessions: dict[str, SessionStats]
    frameErrors: list[FrameErrorStats]
    errorResponses: int
    timed: bool


def _b64_size(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    return len(data) * 3 // 4 - data.count("=", max(0, len(data) - 2))


def _id_key(value: Any) -> Any:
    """A request id as a dict key: ids of any JSON type (a hostile ``[1]`` too) are matched
    by value, and ``1`` and ``"1"`` are different ids."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return (type(value).__name__, value)
    return ("json", dumps(value))


class _Turn:
    __slots__ = ("first_update", "last_update", "start", "updates")

    def __init__(self, start: float | None) -> None:
        self.start = start
        self.first_update: float | None = None
        self.last_update: float | None = None
        self.updates = 0


_OTHER_SIDE = {"client": "agent", "agent": "client"}


class _Tally:
    """Counts over the messages of one trace, beside what the store reduces."""

    def __init__(self) -> None:
        self.updates: dict[str, Counter[str]] = defaultdict(Counter)
        self.terminal_in: Counter[str] = Counter()
        self.stop_reasons: dict[str, Counter[str]] = defaultdict(Counter)
        self.error_responses: Counter[str] = Counter()
        self.unowned_error_responses = 0
        self.turns: dict[str, list[_Turn]] = defaultdict(list)
        # (requesting side or None, id key) -> (method, session id or None)
        self.pending: dict[tuple[str | None, Any], tuple[str, str | None]] = {}

    def count(self, message: dict[str, Any], t: float | None, sender: str | None) -> None:
        """Count one message of a trace (sent at ``t`` by ``sender``, when recorded)."""
        method = message.get("method")
        params: dict[str, Any] = (
            message["params"] if isinstance(message.get("params"), dict) else {}
        )
        session_id = params.get("sessionId")
        owner = session_id if isinstance(session_id, str) else None
        if isinstance(method, str):
            if "id" in message:
                self.pending[(sender, _id_key(message["id"]))] = (method, owner)
            if method == "session/prompt" and owner is not None:
                self.turns[owner].append(_Turn(t))
            elif method == "session/update" and owner is not None:
                self._update(owner, params, t)
            return
        if method is not None or "id" not in message:
            return
        requester = _OTHER_SIDE.get(sender) if sender is not None else None
        request = self.pending.pop((requester, _id_key(message["id"])), None)
        if "error" in message:
            if request is not None and request[1] is not None:
                self.error_responses[request[1]] += 1
            else:
                self.unowned_error_responses += 1
            return
        if request is None or request[0] != "session/prompt" or request[1] is None:
            return
        result = message.get("result")
        if isinstance(result, dict) and "stopReason" in result:
            self.stop_reasons[request[1]][str(result["stopReason"])] += 1

    def _update(self, session_id: str, params: dict[str, Any], t: float | None) -> None:
        update: dict[str, Any] = params["update"] if isinstance(params.get("update"), dict) else {}
        kind = str(update.get("sessionUpdate"))
        self.updates[session_id][kind] += 1
        if kind == "terminal_output_chunk":
            self.terminal_in[session_id] += _b64_size(update.get("data"))
        if kind == "state_update" and update.get("state") == "idle":
            self.stop_reasons[session_id][str(update.get("stopReason"))] += 1
        if self.turns[session_id]:
            turn = self.turns[session_id][-1]
            turn.updates += 1
            if t is not None:
                if turn.first_update is None:
                    turn.first_update = t
                turn.last_update = t


def trace_stats(
    path: str | os.PathLike[str] | IO[bytes],
    *,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    **options: Any,
) -> TraceStats:
    """Reduce a trace and count what happened in each session.

    ``path`` is a trace file (plain ACP NDJSON, or the records ``acpwire record`` writes),
    ``"-"`` for standard input, or a binary file. ``max_frame_bytes`` and ``options`` are
    those of ``Sessions`` (``terminal_cols``, ``scrollback``, ``max_terminal_bytes``).

    Returns a :class:`TraceStats`: ``sessions`` maps each session id (first-seen order) to
    its :class:`SessionStats` (protocol version, state, turns, stop reasons, messages by
    role, chunks and updates by kind, tool calls by kind and status, terminal bytes in and
    retained, usage, error records, and the JSON-RPC error responses to requests naming
    it); ``frameErrors`` lists every bad frame and raw record, as ``acpwire check`` and
    ``acpwire replay`` count them; ``errorResponses`` counts all error responses, those to
    requests of no session too; ``timed`` says whether the trace was recorded (then each
    session has ``timing`` per turn).

    Raises ``OSError`` when the trace cannot be read and ``acpwire.traces.TraceError``
    when its first MiB holds lines but no JSON message.
    """
    from .. import Sessions

    store = Sessions(max_frame_bytes=max_frame_bytes, **options)
    frame_errors: list[FrameErrorStats] = []
    tally = _Tally()
    timed = False
    # Plain and recorded traces alike: a bad frame, or a raw record, is a frame error at its
    # line, and each message is applied with its sender when the record names it.
    for record in iter_trace(path, max_frame_bytes):
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
                tally.count(message, record.t, record.sender)

    sessions: dict[str, SessionStats] = {}
    for session_id in store.ids():
        sessions[session_id] = _session_stats(store[session_id].snapshot(), session_id, tally)
        if timed:
            sessions[session_id]["timing"] = [
                _timing(turn) for turn in tally.turns.get(session_id, [])
            ]
    total_errors = sum(tally.error_responses.values()) + tally.unowned_error_responses
    return {
        "sessions": sessions,
        "frameErrors": frame_errors,
        "errorResponses": total_errors,
        "timed": timed,
    }


def _session_stats(snap: SessionSnapshot, session_id: str, tally: _Tally) -> SessionStats:
    calls = [c for c in snap["toolCalls"].values() if isinstance(c, dict)]
    terminals = [t for t in snap["terminals"].values() if isinstance(t, dict)]
    tool_kinds = Counter(str(c.get("kind", "other")) for c in calls)
    tool_status = Counter(str(c.get("status", "pending")) for c in calls)
    retained = sum(len(str(t.get("text", "")).encode()) for t in terminals)
    counts = tally.updates.get(session_id, Counter())
    turns = snap.get("turns")
    return {
        "protocolVersion": snap["protocolVersion"],
        "state": snap["state"],
        "turns": len(turns if isinstance(turns, list) else snap["prompts"]),
        "stopReasons": dict(tally.stop_reasons.get(session_id, {})),
        "messages": dict(Counter(str(m.get("role")) for m in snap["messages"])),
        "chunks": {k: v for k, v in sorted(counts.items()) if k.endswith("_chunk")},
        "updates": dict(sorted(counts.items())),
        "toolCalls": {"byKind": dict(tool_kinds), "byStatus": dict(tool_status)},
        "terminals": {
            "count": len(terminals),
            "bytesIn": tally.terminal_in.get(session_id, 0),
            "bytesRetained": retained,
            "truncated": any(bool(t.get("truncated")) for t in terminals),
        },
        "usage": snap["usage"],
        "errors": len(snap["errors"]),
        "errorResponses": tally.error_responses.get(session_id, 0),
    }


def _timing(turn: _Turn) -> TurnTiming:
    first, last = turn.first_update, turn.last_update
    return {
        "firstUpdateSeconds": None
        if first is None or turn.start is None
        else round(first - turn.start, 6),
        "updates": turn.updates,
        "updatesPerSecond": None
        if first is None or last is None or turn.updates < 2 or last <= first
        else round((turn.updates - 1) / (last - first), 1),
    }


def stats(paths: str | list[str], *, as_json: bool, color: bool = False) -> int:
    """``acpwire stats``: one trace's statistics, or a row per trace and a total for several
    (or a directory, or a glob). Exit status: 0, 1 bad frames, 2 a trace unreadable."""
    from . import traces

    arguments = [paths] if isinstance(paths, str) else list(paths)
    files, missing = expand_paths(arguments)
    if len(arguments) == 1 and not missing and files == arguments:
        path = arguments[0]
        try:
            report = trace_stats(path)
        except OSError as exc:
            return fail("stats", f"cannot read {visible(path)}: {exc.strerror or exc}")
        except traces.TraceError as exc:
            return fail("stats", f"{visible(path)}: {exc}")
        if as_json:
            write_out(safe_json(dumps(report)))
        else:
            # Printed for a reader's terminal: ids and kinds are the trace's own strings.
            _print_stats(visible(report, keys=True), color)
        return 1 if report["frameErrors"] else 0
    return _stats_many(files, missing, as_json, color)


def _stats_many(files: list[str], missing: list[str], as_json: bool, color: bool) -> int:
    from . import traces

    rows: list[dict[str, Any]] = []
    unreadable = [{"trace": name, "error": "no trace matches"} for name in missing]
    for path in files:
        name = os.fsencode(path).decode("utf-8", "backslashreplace")
        try:
            rows.append({"trace": name, **trace_stats(path)})
        except OSError as exc:
            unreadable.append({"trace": name, "error": str(exc.strerror or exc)})
        except traces.TraceError as exc:
            unreadable.append({"trace": name, "error": str(exc)})
    summaries = [_summary(row) for row in rows]
    total = {
        key: sum(s[key] for s in summaries)
        for key in ("sessions", "turns", "messages", "toolCalls", "errorResponses", "badFrames")
    }
    total["traces"], total["unreadable"] = len(rows), len(unreadable)
    if as_json:
        write_out(safe_json(dumps({"traces": rows, "unreadable": unreadable, "total": total})))
    else:
        _print_table(visible(summaries), visible(unreadable), total, color)
    if unreadable:
        return 2
    return 1 if total["badFrames"] else 0


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    sessions = row["sessions"].values()
    return {
        "trace": row["trace"],
        "sessions": len(sessions),
        "turns": sum(s["turns"] for s in sessions),
        "messages": sum(sum(s["messages"].values()) for s in sessions),
        "toolCalls": sum(sum(s["toolCalls"]["byKind"].values()) for s in sessions),
        "errorResponses": row["errorResponses"],
        "badFrames": len(row["frameErrors"]),
    }


_COLUMNS = (
    ("sessions", "sessions"),
    ("turns", "turns"),
    ("messages", "messages"),
    ("toolCalls", "tool calls"),
    ("errorResponses", "error responses"),
    ("badFrames", "bad frames"),
)


def _print_table(
    summaries: list[dict[str, Any]],
    unreadable: list[dict[str, str]],
    total: dict[str, int],
    color: bool,
) -> None:
    names = [s["trace"] for s in summaries] + [u["trace"] for u in unreadable]
    width = max([len(n) for n in names] + [len("total")])
    header = f"{'trace':<{width}}" + "".join(f"  {title:>{len(title)}}" for _, title in _COLUMNS)
    print(paint(header, "bold", color))
    for summary in summaries:
        cells = []
        for key, title in _COLUMNS:
            cell = f"{summary[key]:>{len(title)},}"
            if key in ("errorResponses", "badFrames") and summary[key]:
                cell = paint(cell, "bold red", color)
            cells.append("  " + cell)
        print(f"{summary['trace']:<{width}}" + "".join(cells))
    for entry in unreadable:
        print(
            f"{entry['trace']:<{width}}  "
            + paint(f"cannot read: {entry['error']}", "bold red", color)
        )
    row = f"{'total':<{width}}" + "".join(
        f"  {total[key]:>{len(title)},}" for key, title in _COLUMNS
    )
    print(paint(row, "bold", color))


def _print_stats(report: dict[str, Any], color: bool = False) -> None:
    for session_id, s in report["sessions"].items():
        print(
            paint(f"session {session_id}", "bold", color)
            + f" (protocol v{s['protocolVersion']}, state {s['state']})"
        )
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
        if isinstance(usage, dict) and usage:
            cost = usage.get("cost")
            money = (
                f", cost {cost.get('amount')} {cost.get('currency', '')}"
                if isinstance(cost, dict) and cost
                else ""
            )
            print(f"  usage: {usage.get('used')} of {usage.get('size')} tokens{money}")
        errors = f"  errors: {s['errors']}   error responses: {s['errorResponses']}"
        print(paint(errors, "red", color) if s["errors"] or s["errorResponses"] else errors)
        for i, turn in enumerate(s.get("timing", []), 1):
            first = turn["firstUpdateSeconds"]
            rate = turn["updatesPerSecond"]
            print(
                f"  turn {i}: first update after "
                f"{'-' if first is None else f'{first * 1e3:.1f} ms'}, {turn['updates']} updates"
                + ("" if rate is None else f", {rate:,.0f}/s")
            )
    for error in report["frameErrors"]:
        print(
            paint(
                f"bad frame at line {error['line']}, byte {error['offset']}: {error['reason']}",
                "bold red",
                color,
            )
        )
    sys.stdout.flush()
