"""``acpwire check``: frame and decode a trace, count its messages, list every bad frame."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import IO, Any

from .. import BACKEND, FrameDecoder, dumps, iter_messages
from .output import expand_paths, paint, safe_json, write_out
from .render import visible
from .traces import TraceError, iter_lines, sniff

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


def _kind(message: Any) -> tuple[str, str | None]:
    """The method (or response kind) of a message, and its sessionUpdate kind if any."""
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


def _entries(message: Any) -> list[Any]:
    """The messages a record's frame holds: a batch's entries, as the framing gives a plain
    batch's, else the one message."""
    return message if isinstance(message, list) else [message]


@dataclass
class _BadFrame:
    """A bad frame as the framing reports it (``FrameError``'s fields), or as the trace reader
    reports a recorded one."""

    line: int
    offset: int
    reason: str
    detail: str
    excerpt: str


class _ErrorLog:
    """Bad frames as they come, each written out for the report at once: past its first MiB
    the log is kept on disk, so a trace of millions of bad lines costs no more memory than a
    trace of a few."""

    def __init__(self, as_json: bool) -> None:
        self.count = 0
        self._as_json = as_json
        self._spool = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115

    def __call__(self, error: Any) -> None:
        self.count += 1
        if self._as_json:
            entry = {
                "line": error.line,
                "offset": error.offset,
                "reason": error.reason,
                "detail": error.detail,
                "excerpt": error.excerpt,
            }
            self._spool.write(safe_json(dumps(entry)))
        else:
            # Printed for a reader's terminal: a reason or an excerpt may be the trace's own.
            detail = f" ({visible(error.detail)})" if error.detail else ""
            self._spool.write(
                f"  line {error.line}, byte {error.offset}: {visible(error.reason)}{detail}: "
                f"{visible(repr(error.excerpt))}\n".encode()
            )

    def lines(self) -> Iterator[bytes]:
        """The entries in order, each ending in a newline."""
        self._spool.seek(0)
        yield from self._spool

    def close(self) -> None:
        self._spool.close()


class _Counted:
    """A binary file that counts the bytes read from it."""

    def __init__(self, fp: Any) -> None:
        self.fp = fp
        self.position = 0

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.fp.read(size)
        self.position += len(data)
        return data


def _check_one(path: str | None, max_frame_bytes: int, errors: _ErrorLog) -> dict[str, Any]:
    """Check one trace into a report; bad frames go to ``errors``. Raises ``OSError``."""
    methods: Counter[str] = Counter()
    updates: Counter[str] = Counter()
    with open_trace(path) as (name, fp):
        start = time.perf_counter()
        # Unlike `stats` and `replay`, which refuse it, a file of bad lines only is checked:
        # its every line is a bad frame to list.
        head, recorded = sniff(fp, strict=False)
        stream = _Rejoined(head, fp)
        if recorded:
            # Records are read as `stats` and `replay` read them: a raw record, or a record
            # line that is no JSON, is a bad frame at its line.
            counted = _Counted(stream)
            frames = 0
            for line in iter_lines(counted, max_frame_bytes, True):  # type: ignore[arg-type]
                frames += 1
                if line.error is not None:
                    errors(_BadFrame(line.line, line.offset, line.error, "", line.excerpt))
                    continue
                for message in _entries(line.message):
                    _tally(message, methods, updates)
            size = counted.position
        else:
            decoder = FrameDecoder(max_frame_bytes=max_frame_bytes)
            for message in iter_messages(stream, on_error=errors, decoder=decoder):  # type: ignore[arg-type]
                _tally(message, methods, updates)
            size, frames = decoder.position, decoder.frames
        elapsed = time.perf_counter() - start
    rate = size / elapsed / 1e6 if elapsed > 0 else 0.0
    return {
        # A path is bytes on POSIX: one that is not UTF-8 is shown with its bytes escaped.
        "trace": os.fsencode(name).decode("utf-8", "backslashreplace"),
        "backend": BACKEND,
        "recorded": recorded,
        "bytes": size,
        "frames": frames,
        "messages": sum(methods.values()),
        "seconds": elapsed,
        "mb_per_s": rate,
        "methods": dict(methods.most_common()),
        "session_updates": dict(updates.most_common()),
    }


def _tally(message: Any, methods: Counter[str], updates: Counter[str]) -> None:
    method, update = _kind(message)
    methods[method] += 1
    if update is not None:
        updates[update] += 1


class _Rejoined:
    """A file whose first bytes were already read: hands them out again first."""

    def __init__(self, head: bytes, fp: IO[bytes]) -> None:
        self.head = head
        self.fp = fp

    def read(self, size: int = -1) -> bytes:
        # In pieces of the size asked for: the framing then holds no more bad frames of the
        # start at once than of any other read.
        if self.head:
            if size < 0:
                size = len(self.head)
            piece, self.head = self.head[:size], self.head[size:]
            return piece
        data: bytes = self.fp.read(size)
        return data


def check(
    paths: str | Sequence[str] | None,
    *,
    max_frame_bytes: int,
    as_json: bool,
    color: bool = False,
) -> int:
    """``acpwire check``: report on each trace (the embedded sample when none is named).

    One trace gives its report; several (or a directory, or a glob) a row per trace and a
    total. Exit status: 0 clean, 1 bad frames found, 2 a trace could not be read.
    """
    if paths is None or isinstance(paths, str):
        arguments: list[str | None] = [paths]
    else:
        arguments = list(paths) or [None]
    named = [a for a in arguments if a is not None]
    files, missing = expand_paths(named)
    single = len(arguments) == 1 and not missing and (arguments[0] is None or files == named)
    if single:
        return _check_single(arguments[0], max_frame_bytes, as_json, color)
    return _check_many(files, missing, max_frame_bytes, as_json, color)


def _check_single(path: str | None, max_frame_bytes: int, as_json: bool, color: bool) -> int:
    errors = _ErrorLog(as_json)
    try:
        try:
            report = _check_one(path, max_frame_bytes, errors)
        except OSError as exc:
            shown = visible(str(path))
            print(f"acpwire check: cannot read {shown}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        except TraceError as exc:
            print(f"acpwire check: {visible(str(path))}: {exc}", file=sys.stderr)
            return 2
        if as_json:
            _write_json_report(report, errors)
        else:
            # Printed for a reader's terminal: methods and kinds are the trace's own strings.
            _print_report(visible(report, keys=True), errors, color)
    finally:
        errors.close()
    return 1 if errors.count else 0


def _check_many(
    files: list[str], missing: list[str], max_frame_bytes: int, as_json: bool, color: bool
) -> int:
    rows: list[tuple[dict[str, Any], _ErrorLog]] = []
    unreadable: list[dict[str, str]] = [
        {"trace": name, "error": "no trace matches"} for name in missing
    ]
    try:
        for path in files:
            errors = _ErrorLog(as_json)
            try:
                rows.append((_check_one(path, max_frame_bytes, errors), errors))
            except OSError as exc:
                errors.close()
                unreadable.append({"trace": path, "error": str(exc.strerror or exc)})
            except TraceError as exc:
                errors.close()
                unreadable.append({"trace": path, "error": str(exc)})
        total = {
            "traces": len(rows),
            "unreadable": len(unreadable),
            "bytes": sum(r["bytes"] for r, _ in rows),
            "frames": sum(r["frames"] for r, _ in rows),
            "messages": sum(r["messages"] for r, _ in rows),
            "badFrames": sum(e.count for _, e in rows),
        }
        if as_json:
            write_out(b'{"traces":[')
            for i, (report, errors) in enumerate(rows):
                report = {**report, "badFrames": errors.count}
                write_out(b"," if i else b"")
                _write_json_report(report, errors, end=b"]}")
            write_out(
                b'],"unreadable":'
                + safe_json(dumps(unreadable))[:-1]
                + b',"total":'
                + dumps(total)[:-1]
                + b"}\n"
            )
        else:
            _print_table(rows, unreadable, total, color)
    finally:
        for _, errors in rows:
            errors.close()
    if unreadable:
        return 2
    return 1 if total["badFrames"] else 0


def _print_table(
    rows: list[tuple[dict[str, Any], Any]],
    unreadable: list[dict[str, str]],
    total: dict[str, int],
    color: bool,
) -> None:
    out = sys.stdout
    names = [visible(r["trace"]) for r, _ in rows] + [visible(u["trace"]) for u in unreadable]
    width = max([len(n) for n in names] + [len("total")])
    header = f"{'trace':<{width}}  {'bytes':>12}  {'frames':>9}  {'messages':>9}  {'bad':>6}"
    print(paint(header, "bold", color), file=out)
    for (report, errors), name in zip(rows, names, strict=False):
        bad = f"{errors.count:>6,}"
        print(
            f"{name:<{width}}  {report['bytes']:>12,}  {report['frames']:>9,}  "
            f"{report['messages']:>9,}  "
            + paint(bad, "bold red" if errors.count else "green", color),
            file=out,
        )
    for entry, name in zip(unreadable, names[len(rows) :], strict=True):
        print(
            f"{name:<{width}}  "
            + paint(f"cannot read: {visible(entry['error'])}", "bold red", color),
            file=out,
        )
    print(
        paint(
            f"{'total':<{width}}  {total['bytes']:>12,}  {total['frames']:>9,}  "
            f"{total['messages']:>9,}  {total['badFrames']:>6,}",
            "bold",
            color,
        ),
        file=out,
    )
    for (_, errors), name in zip(rows, names, strict=False):
        if errors.count:
            print(f"\n{name}: {errors.count} bad frame(s):", file=out)
            out.flush()
            for entry in errors.lines():
                write_out(entry)


def _write_json_report(report: dict[str, Any], errors: _ErrorLog, end: bytes = b"]}\n") -> None:
    """``report`` with its ``errors`` list streamed from the log, as one JSON document."""
    write_out(safe_json(dumps(report))[:-2] + b',"errors":[')
    for i, entry in enumerate(errors.lines()):
        write_out((b"," if i else b"") + entry[:-1])
    write_out(end)


def _print_report(report: dict[str, Any], errors: _ErrorLog, color: bool) -> None:
    out = sys.stdout
    print(
        paint(str(report["trace"]), "bold", color)
        + f": {report['bytes']:,} bytes, {report['frames']:,} "
        + ("records" if report["recorded"] else "frames")
        + f", {report['messages']:,} messages",
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
        print("\n" + paint(f"{title}:", "bold", color), file=out)
        width = max(len(k) for k in counts)
        for key, count in counts.items():
            print(f"  {paint(f'{key:<{width}}', 'cyan', color)}  {count:>8,}", file=out)
    if errors.count:
        print("\n" + paint(f"{errors.count} bad frame(s):", "bold red", color), file=out)
        out.flush()
        for entry in errors.lines():
            write_out(entry)
        out.flush()
    else:
        print("\n" + paint("no bad frames", "green", color), file=out)
