"""``acpwire replay``: render each session of a trace as it looked, once or following the file."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from .._contract import EMPTY_BATCH, INVALID_JSON, INVALID_UTF8, TOO_LONG, TRAILING_DATA
from .output import fail, use_color, write_out
from .render import visible

# Errors `acpwire replay` lists on stderr; it counts the rest.
SHOWN_ERRORS = 20
# Session ids named when a --session is unknown.
SHOWN_SESSIONS = 20
POLL_SECONDS = 0.2
# Formats drawn block by block, which --follow appends to as they change.
_INCREMENTAL = frozenset(("text", "ansi", "markdown"))

Times = dict[str, dict[tuple[str, Any], float]]


def replay_command(
    path: str,
    *,
    fmt: str | None,
    session: str | None,
    out: str | None,
    thoughts: bool,
    follow: bool,
    terminal_cols: int | None,
    color: str = "auto",
) -> int:
    from . import traces

    if follow and path == "-":
        return fail("replay", "--follow needs a trace file, not standard input")
    on_terminal = out is None and _isatty()
    if fmt is None:
        fmt = "ansi" if on_terminal else "text"
    if follow and fmt == "html" and out is None:
        return fail("replay", "--follow --format html needs --out FILE (the page is rewritten)")
    # Asked for by name, ANSI is coloured unless colour is turned off.
    colored = fmt == "ansi" and (use_color(color) if on_terminal else _color_wanted(color))
    width = shutil.get_terminal_size().columns if on_terminal else None
    options = {"terminal_cols": terminal_cols}
    following = None
    times: Times = {}
    try:
        if follow:
            following = _open_following(path, options)
            store = following.store
        elif fmt == "html":
            store, times = _load_timed(path, options)
        else:
            store = traces.load(path, **options)
    except OSError as exc:
        return fail("replay", f"cannot read {visible(path)}: {exc.strerror or exc}")
    except traces.TraceError as exc:
        return fail("replay", f"{visible(path)}: {exc}")
    except KeyboardInterrupt:
        return 128 + 2
    if session is not None and session not in store and not follow:
        ids = store.ids()
        # Ids are the agent's strings, shown for a reader's terminal.
        known = ", ".join(repr(visible(i)) for i in ids[:SHOWN_SESSIONS]) or "none"
        if len(ids) > SHOWN_SESSIONS:
            known += f", ... ({len(ids) - SHOWN_SESSIONS} more)"
        return fail(
            "replay", f"no session {visible(session)!r} in {visible(path)} (sessions: {known})"
        )
    view = _View(fmt, session, thoughts, colored, width)

    try:
        if following is None:
            _emit(view.document(store, times), out, fmt)
        elif on_terminal:
            _follow_on_terminal(following, view)
        else:
            _follow_appending(following, view, out)
        if following is not None:
            store = following.store
    except BrokenPipeError:
        raise  # the reader went away: `main` ends with 141
    except _Unreadable as exc:
        error = exc.args[0]
        return fail("replay", f"cannot read {visible(path)}: {error.strerror or error}")
    except OSError as exc:
        target = visible(out) if out is not None else "standard output"
        return fail("replay", f"cannot write {target}: {exc.strerror or exc}")
    return _report_errors(store, path)


def _isatty() -> bool:
    try:
        return sys.stdout is not None and sys.stdout.isatty()
    except ValueError:
        return False


def _color_wanted(choice: str) -> bool:
    return choice == "always" or (choice == "auto" and not os.environ.get("NO_COLOR"))


class _View:
    """What to render of a store, in which format."""

    def __init__(
        self, fmt: str, session: str | None, thoughts: bool, color: bool, width: int | None
    ) -> None:
        self.fmt, self.session, self.thoughts = fmt, session, thoughts
        self.color, self.width = color, width

    def chosen(self, store: Any) -> list[Any]:
        if self.session is not None:
            # A followed file that was replaced: the session may come (back) later.
            return [store[self.session]] if self.session in store else []
        return [store[i] for i in store.ids()]

    def document(self, store: Any, times: Times | None = None) -> str:
        from .. import dumps
        from .render import render_page, render_session, safe_json

        chosen = self.chosen(store)
        if self.fmt == "html":
            return render_page(chosen, thoughts=self.thoughts, times=times)
        if self.fmt == "json":
            return safe_json(dumps({s.id: s.snapshot() for s in chosen})).decode()
        return "\n".join(
            render_session(s, self.fmt, thoughts=self.thoughts, color=self.color, width=self.width)
            for s in chosen
        )

    def parts(self, store: Any) -> list[tuple[Any, str]]:
        """Each session's blocks, identified across renderings (``_INCREMENTAL`` formats)."""
        from .render.base import MarkdownRenderer, Renderer
        from .render.terminal import AnsiRenderer

        out: list[tuple[Any, str]] = []
        for s in self.chosen(store):
            renderer: Renderer
            if self.fmt == "ansi":
                renderer = AnsiRenderer(s, self.thoughts, color=self.color, width=self.width)
            elif self.fmt == "markdown":
                renderer = MarkdownRenderer(s, self.thoughts)
            else:
                renderer = Renderer(s, self.thoughts)
            out.extend(((s.id, key), text) for key, text in renderer.parts())
        return out


def _encode(text: str, fmt: str) -> bytes:
    if fmt in ("json", "html"):
        # Documents in UTF-8 whatever the terminal's encoding (the page says so).
        return text.encode("utf-8")
    # What the terminal's encoding cannot show is replaced, not a traceback.
    errors = sys.stdout.errors or "strict"
    return text.encode(sys.stdout.encoding or "utf-8", "replace" if errors == "strict" else errors)


def _emit(text: str, out: str | None, fmt: str) -> None:
    if out is None:
        write_out(_encode(text, fmt))
        sys.stdout.flush()
    else:
        with open(out, "w", encoding="utf-8") as fp:
            fp.write(text)


def _rewrite(out: str, text: str) -> None:
    """Replace the file ``out`` with ``text`` at once: a reader never sees half of it."""
    directory = os.path.dirname(os.path.abspath(out))
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".acpwire-replay-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fp:
            fp.write(text)
        os.replace(temporary, out)
    except BaseException:
        with _suppress():
            os.unlink(temporary)
        raise


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return isinstance(exc[1], OSError)


def _load_timed(path: str, options: dict[str, Any]) -> tuple[Any, Times]:
    """The store of a trace and, for a recorded one, when each timeline entry first came
    (seconds, by session and ``(entry type, id)``)."""
    from .. import _backend
    from . import traces

    times: Times = {}
    with traces.open_trace(path) as fp:
        head, recorded = traces.sniff(fp, strict=True)
        stream = traces._Rejoined(head, fp)
        if not recorded:
            return _backend.reduce_ndjson(stream, **options), times
        store = _backend.Sessions(**options)
        store.changes()
        cap = options.get("max_frame_bytes", traces.DEFAULT_MAX_FRAME_BYTES)
        for line in traces.iter_lines(stream, cap, True):  # type: ignore[arg-type]
            if line.error is not None:
                store._record_error(line.error, line.line, line.offset)
                continue
            store._apply_at(line.message, line.sender, line.line, line.offset)
            if line.t is None:
                continue
            for session_id, kind, key in store.changes():
                times.setdefault(session_id, {}).setdefault((kind, key), line.t)
            for message in line.message if isinstance(line.message, list) else [line.message]:
                _time_prompt(message, line.t, times)
    return store, times


def _time_prompt(message: Any, t: float, times: Times) -> None:
    if not isinstance(message, dict) or message.get("method") != "session/prompt":
        return
    params = message.get("params")
    request_id = message.get("id")
    if (
        isinstance(params, dict)
        and isinstance(params.get("sessionId"), str)
        and isinstance(request_id, str | int)
        and not isinstance(request_id, bool)
    ):
        times.setdefault(params["sessionId"], {}).setdefault(("turn", request_id), t)


def _report_errors(store: Any, path: str) -> int:
    # No rendering shows error records: those placed in the trace are listed here, bad
    # frames and malformed messages of no session first, then malformed updates by session.
    placed = [e for e in store.errors if e.get("line") is not None]
    loose = [e for e in placed if e.get("sessionId") is None]
    owned = [e for e in placed if e.get("sessionId") is not None]
    shown_path = visible(path)
    for errors in (loose, owned):
        for e in errors[:SHOWN_ERRORS]:
            where = f"line {e['line']}, byte {e['offset']}"
            if e.get("sessionId") is not None:
                where += f", session {visible(e['sessionId'])}"
            print(f"acpwire replay: {shown_path}: {where}: {visible(e['reason'])}", file=sys.stderr)
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


def _open_following(path: str, options: dict[str, Any]) -> Any:
    """Follow ``path``, waiting (as ``tail -F`` does) while it does not exist yet."""
    from . import traces

    said = False
    while True:
        try:
            return traces.Following(path, **options)
        except FileNotFoundError:
            if not said:
                print(f"acpwire replay: waiting for {visible(path)}", file=sys.stderr)
                said = True
            time.sleep(POLL_SECONDS)


def _polls(following: Any) -> Any:
    """Yield after each poll that changed a session, until Ctrl-C."""
    try:
        while True:
            time.sleep(POLL_SECONDS)
            try:
                changed = following.poll()
            except OSError as exc:
                raise _Unreadable(exc) from exc
            if changed:
                yield
    except KeyboardInterrupt:
        return


def _follow_on_terminal(following: Any, view: _View) -> None:
    """Redraw in place on the alternate screen (the reader's scrollback keeps one copy:
    the last rendering, written when following stops)."""
    text = view.document(following.store)
    write_out(b"\x1b[?1049h\x1b[?25l")
    try:
        _draw(text)
        for _ in _polls(following):
            text = view.document(following.store)
            _draw(text)
    finally:
        sys.stdout.flush()
        write_out(b"\x1b[?25h\x1b[?1049l")
        write_out(_encode(text, view.fmt))
        sys.stdout.flush()


def _draw(text: str) -> None:
    """The end of ``text`` that fits the screen, from its top left corner, each line
    cleared to its end: the screen never scrolls, so nothing is pushed to scrollback."""
    size = shutil.get_terminal_size()
    lines = text.rstrip("\n").split("\n")
    # A line that wraps takes more rows: count them so that the last line stays on screen.
    rows, shown_lines = 0, list[str]()
    for line in reversed(lines):
        need = max(1, -(-_width(line) // max(1, size.columns)))
        if rows + need > size.lines - 1 and shown_lines:
            break
        rows += need
        shown_lines.append(line)
    body = "\x1b[K\n".join(reversed(shown_lines))
    write_out(b"\x1b[H" + _encode(body, "text") + b"\x1b[K\x1b[J")
    sys.stdout.flush()


def _width(line: str) -> int:
    from rich.cells import cell_len
    from rich.text import Text

    return int(cell_len(Text.from_ansi(line).plain)) if "\x1b" in line else int(cell_len(line))


def _follow_appending(following: Any, view: _View, out: str | None) -> None:
    """Write the rendering, then only what changes: new blocks, the text added to the last
    block written, and a block that changed otherwise (once per change)."""
    if view.fmt not in _INCREMENTAL:
        # A document (JSON, a page): the file is rewritten; to a pipe, JSON comes as one
        # line per change holding the sessions that changed.
        if out is not None:
            _emit(view.document(following.store), out, view.fmt)
            for _ in _polls(following):
                _rewrite(out, view.document(following.store))
            return
        first = view.document(following.store)
        _emit(first if first.endswith("\n") else first + "\n", None, view.fmt)
        _follow_json_lines(following, view.session)
        return
    if out is not None:
        handle = open(out, "w", encoding="utf-8")  # noqa: SIM115

        def write(text: str) -> None:
            handle.write(text)
            handle.flush()

    else:
        handle = None

        def write(text: str) -> None:
            write_out(_encode(text, view.fmt))
            sys.stdout.flush()

    try:
        written: dict[Any, str] = {}
        last: Any = None
        for _ in _polls_with_first(following):
            last = _write_changes(view.parts(following.store), written, last, write)
    finally:
        if handle is not None:
            handle.close()


def _polls_with_first(following: Any) -> Any:
    yield
    yield from _polls(following)


def _write_changes(
    parts: list[tuple[Any, str]], written: dict[Any, str], last: Any, write: Callable[[str], None]
) -> Any:
    """Write what of ``parts`` differs from what was ``written`` (updated in place); return
    the block written last. A new block is written whole; the block written last, grown, as
    its new text; another block that changed as its first line (what it is) and its lines
    from the first that changed, so that output stays linear in what was appended."""
    for key, text in parts:
        before = written.get(key)
        if before == text:
            continue
        written[key] = text
        if before is not None and key == last and text.startswith(before):
            write(text[len(before) :])
            continue
        if last is not None:
            write("\n\n" if not text.startswith("\n") else "\n")
        last = key
        if before is None:
            write(text)
            continue
        old, new = before.split("\n"), text.split("\n")
        common = 0
        for old_line, new_line in zip(old, new, strict=False):
            if old_line != new_line:
                break
            common += 1
        if common == 0:
            write(text)
        else:
            write("\n".join([new[0], "…", *new[max(common, 1) :]]))
    return last


def _follow_json_lines(following: Any, session: str | None) -> None:
    from .. import dumps
    from .render import safe_json

    for _ in _polls(following):
        store = following.store
        chosen = [s for s in following.changed if session is None or s == session]
        snapshot = {s: store[s].snapshot() for s in chosen if s in store}
        if snapshot:
            write_out(safe_json(dumps(snapshot)))
            sys.stdout.flush()
