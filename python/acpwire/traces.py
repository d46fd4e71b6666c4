"""Reading traces: plain ACP NDJSON, or the timestamped records ``acpwire record`` writes.

A record line is ``{"t": seconds, "dir": "client" | "agent", "msg": message}`` (or ``"raw"``
for a frame that was not JSON). Plain traces are fed to ``Sessions`` as bytes (framed and
reduced in one pass); records are unwrapped and applied message by message.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import FrameDecoder, FrameError, iter_messages

__all__ = ["Record", "TraceError", "is_record", "iter_records", "load", "open_trace"]

CHUNK = 1 << 20


class TraceError(ValueError):
    """A trace could not be read as NDJSON at all."""


@dataclass(frozen=True, slots=True)
class Record:
    """One message of a trace; ``t`` and ``direction`` are None in plain traces."""

    message: Any
    t: float | None = None
    direction: str | None = None


def is_record(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "dir" in value
        and "t" in value
        and ("msg" in value or "raw" in value)
        and "jsonrpc" not in value
    )


@contextlib.contextmanager
def open_trace(path: str | Path | IO[bytes]) -> Iterator[IO[bytes]]:
    """Open a trace path (``-`` is standard input) or pass a binary file through."""
    if hasattr(path, "read"):
        yield path  # type: ignore[misc]
    elif str(path) == "-":
        yield sys.stdin.buffer
    else:
        with open(path, "rb") as fp:
            yield fp


def sniff(fp: IO[bytes]) -> tuple[bytes, bool]:
    """Read the start of a trace: (the bytes read, whether it holds records)."""
    head = fp.read(CHUNK)
    decoder = FrameDecoder()
    first = decoder.feed(head)[:1] or decoder.finish()[:1]
    if not first and decoder.take_errors() and b"\n" in head:
        raise TraceError("not an NDJSON trace: its first line is not JSON")
    return head, bool(first) and is_record(first[0])


def iter_records(
    path: str | Path | IO[bytes], on_error: Callable[[FrameError], object] | None = None
) -> Iterator[Record]:
    """Every message of a trace, with its timestamp and direction when it has them."""
    with open_trace(path) as fp:
        head, records = sniff(fp)
        stream = _Rejoined(head, fp)
        for value in iter_messages(stream, chunk_size=CHUNK, on_error=on_error):  # type: ignore[arg-type]
            if records and is_record(value):
                if "msg" in value:
                    yield Record(value["msg"], float(value["t"]), str(value["dir"]))
            else:
                yield Record(value)


def load(path: str | Path | IO[bytes], **options: Any) -> Any:
    """Reduce a whole trace (a path, ``-``, or a binary file) into a new ``Sessions``.

    Plain ACP NDJSON is framed and reduced by the active backend in one pass (the native one
    releases the GIL meanwhile); a trace of ``acpwire record`` records is unwrapped and
    applied message by message. ``options`` are ``Sessions``' keyword arguments.
    """
    from . import _backend

    with open_trace(path) as fp:
        head, records = sniff(fp)
        if not records:
            return _backend.replay(_Rejoined(head, fp), **options)
        store = _backend.Sessions(**options)
        for record in iter_records(_Rejoined(head, fp)):  # type: ignore[arg-type]
            store.apply(record.message)
        return store


class _Rejoined:
    """A file whose first bytes were already read: hands them out again first."""

    def __init__(self, head: bytes, fp: IO[bytes]) -> None:
        self.head = head
        self.fp = fp

    def read(self, size: int = -1) -> bytes:
        if self.head:
            head, self.head = self.head, b""
            return head
        return self.fp.read(size)
