"""``acpwire replay``: render each session of a trace as it looked, once or following the file."""

from __future__ import annotations

import sys
import time
from typing import Any

from .. import dumps
from .._contract import EMPTY_BATCH, INVALID_JSON, INVALID_UTF8, TOO_LONG, TRAILING_DATA
from .output import fail, write_out
from .render import visible

# Errors `acpwire replay` lists on stderr; it counts the rest.
SHOWN_ERRORS = 20


def replay_command(
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
        return fail("replay", "--follow needs a trace file, not standard input")
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
        return fail("replay", f"cannot read {path}: {exc.strerror or exc}")
    except traces.TraceError as exc:
        return fail("replay", f"{path}: {exc}")
    if session is not None and session not in store:
        known = ", ".join(store.ids()) or "none"
        return fail("replay", f"no session {session!r} in {path} (sessions: {known})")

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
        return fail("replay", f"cannot read {path}: {exc.args[0].strerror or exc.args[0]}")
    except OSError as exc:
        target = out if out is not None else "standard output"
        return fail("replay", f"cannot write {target}: {exc.strerror or exc}")
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
