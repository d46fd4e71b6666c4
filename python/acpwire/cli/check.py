"""``acpwire check``: frame and decode a trace, count its messages, list every bad frame."""

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

from .. import BACKEND, FrameDecoder, FrameError, dumps, iter_messages
from .output import write_out
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
