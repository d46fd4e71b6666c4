"""Implementations of the ``acpwire`` subcommands."""

from __future__ import annotations

import contextlib
import sys
import time
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from typing import IO, Any

from . import BACKEND, FrameDecoder, FrameError, dumps, iter_messages

SAMPLE_TRACE = "sample-v2.ndjson"


@contextlib.contextmanager
def open_trace(path: str | None) -> Iterator[tuple[str, IO[bytes]]]:
    """Open a trace by path, ``-`` for standard input, or None for the embedded sample."""
    if path is None:
        resource = resources.files("acpwire") / "data" / SAMPLE_TRACE
        with resource.open("rb") as fp:
            yield f"<embedded {SAMPLE_TRACE}>", fp
    elif path == "-":
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


def check(path: str | None, *, max_frame_bytes: int, as_json: bool) -> int:
    methods: Counter[str] = Counter()
    updates: Counter[str] = Counter()
    errors: list[FrameError] = []
    decoder = FrameDecoder(max_frame_bytes=max_frame_bytes)
    try:
        with open_trace(path) as (name, fp):
            start = time.perf_counter()
            for message in iter_messages(fp, on_error=errors.append, decoder=decoder):
                method, update = _kind(message)
                methods[method] += 1
                if update is not None:
                    updates[update] += 1
            elapsed = time.perf_counter() - start
    except OSError as exc:
        print(f"acpwire check: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    size = decoder.position
    rate = size / elapsed / 1e6 if elapsed > 0 else 0.0
    report = {
        "trace": name,
        "backend": BACKEND,
        "bytes": size,
        "frames": decoder.frames,
        "messages": sum(methods.values()),
        "seconds": elapsed,
        "mb_per_s": rate,
        "methods": dict(methods.most_common()),
        "session_updates": dict(updates.most_common()),
        "errors": [
            {"line": e.line, "offset": e.offset, "reason": e.reason, "excerpt": e.excerpt}
            for e in errors
        ],
    }
    if as_json:
        sys.stdout.buffer.write(dumps(report))
    else:
        _print_report(report, errors)
    return 1 if errors else 0


def _print_report(report: dict[str, Any], errors: list[FrameError]) -> None:
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
    if errors:
        print(f"\n{len(errors)} bad frame(s):", file=out)
        for e in errors:
            detail = f" ({e.detail})" if e.detail else ""
            print(f"  line {e.line}, byte {e.offset}: {e.reason}{detail}: {e.excerpt!r}", file=out)
    else:
        print("\nno bad frames", file=out)
