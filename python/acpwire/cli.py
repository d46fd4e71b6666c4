"""Implementations of the ``acpwire`` subcommands."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from typing import IO, Any

from . import BACKEND, FrameDecoder, FrameError, dumps, iter_messages
from ._contract import EMPTY_BATCH, INVALID_JSON, INVALID_UTF8, TOO_LONG, TRAILING_DATA
from .render import visible
from .traces import is_record

SAMPLE_TRACE = "sample-v2.ndjson"


@contextlib.contextmanager
def open_trace(path: str | None) -> Iterator[tuple[str, IO[bytes]]]:
    """Open a trace by path, ``-`` for standard input, or None for the embedded sample."""
    if path is None:
        resource = resources.files("acpwire") / "data" / SAMPLE_TRACE
        with resource.open("rb") as fp:
            yield f"<embedded {SAMPLE_TRACE}>", fp
    elif path == "-":
        if sys.stdin is None:
            # Started with standard input closed (`acpwire check - <&-`).
            raise OSError("standard input is closed")
        yield "<stdin>", sys.stdin.buffer
    else:
        with open(path, "rb") as fp:
            yield path, fp


def write_out(data: bytes) -> None:
    """Write ``data`` to standard output whole, or raise ``BrokenPipeError``.

    A large write to a pipe whose reader goes away part way returns a short count rather
    than raising: the rest would be dropped silently and the command end with status 0.
    """
    sys.stdout.flush()
    out = sys.stdout.buffer
    view = memoryview(data)
    while view:
        written = out.write(view)
        if not written:
            raise BrokenPipeError("standard output accepts no more")
        view = view[written:]


def _kind(message: Any) -> tuple[str, str | None]:
    """The method (or response kind) of a message, and its sessionUpdate kind if any."""
    if message is _RAW_RECORD:
        return "(recorded raw: not JSON)", None
    if not isinstance(message, dict):
        return "(not an object)", None
    method = message.get("method")
    if isinstance(method, str):
        update = None
        params = message.get("params")
        if method == "session/update" and isinstance(params, dict):
            body = params.get("update")
            if isinstance(body, dict) and isinstance(body.get("sessionUpdate"), str):
                update = body["sessionUpdate"]
        return method, update
    if "error" in message:
        return "(error response)", None
    if "result" in message:
        return "(response)", None
    return "(unrecognised)", None


_RAW_RECORD = object()


def _recorded(value: Any) -> list[Any]:
    """The messages a trace's line holds: itself, or what an ``acpwire record`` record holds
    (a batch's entries, as the framing gives a plain batch's)."""
    if not is_record(value):
        return [value]
    if "msg" not in value:
        return [_RAW_RECORD]
    inner = value["msg"]
    return inner if isinstance(inner, list) else [inner]


class _ErrorLog:
    """Bad frames as they come, each written out for the report at once: past its first MiB
    the log is kept on disk, so a trace of millions of bad lines costs no more memory than a
    trace of a few."""

    def __init__(self, as_json: bool) -> None:
        self.count = 0
        self._as_json = as_json
        self._spool = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115

    def __call__(self, error: FrameError) -> None:
        self.count += 1
        if self._as_json:
            entry = {
                "line": error.line,
                "offset": error.offset,
                "reason": error.reason,
                "detail": error.detail,
                "excerpt": error.excerpt,
            }
            self._spool.write(dumps(entry))
        else:
            detail = f" ({error.detail})" if error.detail else ""
            self._spool.write(
                f"  line {error.line}, byte {error.offset}: {error.reason}{detail}: "
                f"{error.excerpt!r}\n".encode()
            )

    def lines(self) -> Iterator[bytes]:
        """The entries in order, each ending in a newline."""
        self._spool.seek(0)
        yield from self._spool

    def close(self) -> None:
        self._spool.close()


def check(path: str | None, *, max_frame_bytes: int, as_json: bool) -> int:
    methods: Counter[str] = Counter()
    updates: Counter[str] = Counter()
    errors = _ErrorLog(as_json)
    decoder = FrameDecoder(max_frame_bytes=max_frame_bytes)
    try:
        with open_trace(path) as (name, fp):
            start = time.perf_counter()
            for line in iter_messages(fp, on_error=errors, decoder=decoder):
                for message in _recorded(line):
                    method, update = _kind(message)
                    methods[method] += 1
                    if update is not None:
                        updates[update] += 1
            elapsed = time.perf_counter() - start
    except OSError as exc:
        errors.close()
        print(f"acpwire check: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    size = decoder.position
    rate = size / elapsed / 1e6 if elapsed > 0 else 0.0
    report = {
        # A path is bytes on POSIX: one that is not UTF-8 is shown with its bytes escaped.
        "trace": os.fsencode(name).decode("utf-8", "backslashreplace"),
        "backend": BACKEND,
        "bytes": size,
        "frames": decoder.frames,
        "messages": sum(methods.values()),
        "seconds": elapsed,
        "mb_per_s": rate,
        "methods": dict(methods.most_common()),
        "session_updates": dict(updates.most_common()),
    }
    try:
        if as_json:
            _write_json_report(report, errors)
        else:
            # Printed for a reader's terminal: methods and kinds are the trace's own strings.
            _print_report(visible(report, keys=True), errors)
    finally:
        errors.close()
    return 1 if errors.count else 0


def _write_json_report(report: dict[str, Any], errors: _ErrorLog) -> None:
    """``report`` with its ``errors`` list streamed from the log, as one JSON document."""
    write_out(dumps(report)[:-2] + b',"errors":[')
    for i, entry in enumerate(errors.lines()):
        write_out((b"," if i else b"") + entry[:-1])
    write_out(b"]}\n")


def _print_report(report: dict[str, Any], errors: _ErrorLog) -> None:
    out = sys.stdout
    print(
        f"{report['trace']}: {report['bytes']:,} bytes, {report['frames']:,} frames, "
        f"{report['messages']:,} messages",
        file=out,
    )
    print(
        f"{report['mb_per_s']:.1f} MB/s ({report['seconds'] * 1e3:.2f} ms, "
        f"{report['backend']} backend)",
        file=out,
    )
    for title, counts in (
        ("by method", report["methods"]),
        ("by sessionUpdate", report["session_updates"]),
    ):
        if not counts:
            continue
        print(f"\n{title}:", file=out)
        width = max(len(k) for k in counts)
        for key, count in counts.items():
            print(f"  {key:<{width}}  {count:>8,}", file=out)
    if errors.count:
        print(f"\n{errors.count} bad frame(s):", file=out)
        for entry in errors.lines():
            write_out(entry)
        out.flush()
    else:
        print("\nno bad frames", file=out)


# Errors `acpwire replay` lists on stderr; it counts the rest.
SHOWN_ERRORS = 20


def _fail(command: str, message: str) -> int:
    print(f"acpwire {command}: {message}", file=sys.stderr)
    return 2


def replay(
    path: str,
    *,
    fmt: str | None,
    session: str | None,
    out: str | None,
    thoughts: bool,
    follow: bool,
    terminal_cols: int | None,
) -> int:
    from . import traces
    from .render import render_page, render_session

    if follow and path == "-":
        return _fail("replay", "--follow needs a trace file, not standard input")
    if fmt is None:
        fmt = "ansi" if out is None and sys.stdout.isatty() else "text"
    options = {"terminal_cols": terminal_cols}
    following = None
    try:
        if follow:
            following = traces.Following(path, **options)
            store = following.store
        else:
            store = traces.load(path, **options)
    except OSError as exc:
        return _fail("replay", f"cannot read {path}: {exc.strerror or exc}")
    except traces.TraceError as exc:
        return _fail("replay", f"{path}: {exc}")
    if session is not None and session not in store:
        known = ", ".join(store.ids()) or "none"
        return _fail("replay", f"no session {session!r} in {path} (sessions: {known})")

    def render(store: Any) -> str:
        if session is not None and session not in store:
            return ""  # a followed file that was replaced: the session may come back
        chosen = [store[session]] if session is not None else [store[i] for i in store.ids()]
        if fmt == "html":
            return render_page(chosen, thoughts=thoughts)
        if fmt == "json":
            return dumps({s.id: s.snapshot() for s in chosen}).decode()
        return "\n".join(render_session(s, fmt, thoughts=thoughts) for s in chosen)

    def emit(text: str) -> None:
        if out is None:
            if fmt in ("json", "html"):
                # Documents in UTF-8 whatever the terminal's encoding (the page says so).
                data = text.encode("utf-8")
            else:
                # What the terminal's encoding cannot show is replaced, not a traceback.
                errors = sys.stdout.errors or "strict"
                data = text.encode(
                    sys.stdout.encoding or "utf-8", "replace" if errors == "strict" else errors
                )
            write_out(data)
            sys.stdout.flush()
        else:
            with open(out, "w", encoding="utf-8") as fp:
                fp.write(text)

    try:
        emit(render(store))
        if following is not None:
            _follow(following, render, emit, clear=fmt == "ansi" and out is None)
            store = following.store
    except BrokenPipeError:
        raise  # the reader went away: `main` ends with 141
    except _Unreadable as exc:
        return _fail("replay", f"cannot read {path}: {exc.args[0].strerror or exc.args[0]}")
    except OSError as exc:
        target = out if out is not None else "standard output"
        return _fail("replay", f"cannot write {target}: {exc.strerror or exc}")
    # No rendering shows error records: those placed in the trace are listed here, bad
    # frames and malformed messages of no session first, then malformed updates by session.
    placed = [e for e in store.errors if e.get("line") is not None]
    loose = [e for e in placed if e.get("sessionId") is None]
    owned = [e for e in placed if e.get("sessionId") is not None]
    for errors in (loose, owned):
        for e in errors[:SHOWN_ERRORS]:
            where = f"line {e['line']}, byte {e['offset']}"
            if e.get("sessionId") is not None:
                where += f", session {visible(e['sessionId'])}"
            print(f"acpwire replay: {path}: {where}: {visible(e['reason'])}", file=sys.stderr)
        if len(errors) > SHOWN_ERRORS:
            print(f"acpwire replay: ... and {len(errors) - SHOWN_ERRORS} more", file=sys.stderr)
    # As `check` and `stats`: bad frames fail the run; a valid frame that is no message, or a
    # malformed update, is an error record of the store, not of the trace.
    frames = [e for e in loose if e["reason"] in FRAME_REASONS]
    return 1 if frames else 0


# What the framing refuses a frame for (`FrameError.reason`, alike on both backends).
FRAME_REASONS = frozenset((INVALID_UTF8, INVALID_JSON, TRAILING_DATA, EMPTY_BATCH, TOO_LONG))


class _Unreadable(Exception):
    """The followed trace could not be read (the OSError in args[0])."""


def _follow(following: Any, render: Any, emit: Any, *, clear: bool) -> None:
    """Reduce what is appended to the trace and re-render whenever a session changed."""
    try:
        while True:
            time.sleep(0.2)
            try:
                changed = following.poll()
            except OSError as exc:
                raise _Unreadable(exc) from exc
            if changed:
                emit(("\x1b[H\x1b[2J" if clear else "") + render(following.store))
    except KeyboardInterrupt:
        pass


def stats(path: str, *, as_json: bool) -> int:
    from . import traces
    from .stats import trace_stats

    try:
        report = trace_stats(path)
    except OSError as exc:
        return _fail("stats", f"cannot read {path}: {exc.strerror or exc}")
    except traces.TraceError as exc:
        return _fail("stats", f"{path}: {exc}")
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


def bench(
    *,
    trace: str | None,
    rounds: int,
    scale: float,
    only: str | None,
    json_out: str | None,
    plot_out: str | None,
    progress: bool,
) -> int:
    from .bench import format_table, plot, run_bench

    if rounds < 1 or not 0 < scale < float("inf"):
        return _fail("bench", "--rounds must be at least 1 and --scale positive and finite")
    selected = {name.strip() for name in only.split(",")} if only else None
    if plot_out:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return _fail("bench", "--plot needs matplotlib (pip install 'acpwire[plot]')")
    # Where the results go is checked before the run, so that a long run is not lost to a
    # path that cannot be written.
    for target in (json_out, plot_out):
        if target:
            try:
                with open(target, "ab"):
                    pass
            except OSError as exc:
                return _fail("bench", f"cannot write {target}: {exc.strerror or exc}")
    try:
        report = run_bench(
            trace=trace, rounds=rounds, scale=scale, contenders=selected, progress=progress
        )
    except OSError as exc:
        return _fail("bench", f"cannot read {trace}: {exc.strerror or exc}")
    except ValueError as exc:
        return _fail("bench", str(exc))
    print(format_table(report))
    if json_out:
        with open(json_out, "wb") as fp:
            fp.write(dumps(report))
    if plot_out:
        plot(report, plot_out)
    return 1 if report["mismatches"] else 0
