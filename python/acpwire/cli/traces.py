"""Reading traces: plain ACP NDJSON, or the timestamped records ``acpwire record`` writes.

A record line is ``{"t": seconds, "dir": "client" | "agent", "msg": message}`` (or ``"raw"``
for a frame that was not JSON). Plain traces are fed to ``Sessions`` as bytes (framed and
reduced in one pass); records are unwrapped and applied message by message, each with its
sender, and a ``raw`` record (or a line that is not JSON) becomes the error record a plain
trace would give for it, at that line of the trace.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from .. import FrameDecoder, loads

if TYPE_CHECKING:
    from .. import Sessions

# The framing's default cap and reasons, which both backends share (the tests hold them equal).
from .._contract import (
    DEFAULT_MAX_FRAME_BYTES,
    EMPTY_BATCH,
    EXCERPT_BYTES,
    INVALID_JSON,
    INVALID_UTF8,
    TOO_LONG,
    TRAILING_DATA,
)

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "TraceError",
    "TraceLine",
    "is_record",
    "iter_lines",
    "iter_trace",
    "load",
    "open_trace",
    "replay",
]

CHUNK = 1 << 20


class TraceError(ValueError):
    """A trace could not be read as NDJSON at all."""


def is_record(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "dir" in value
        and "t" in value
        and ("msg" in value or "raw" in value)
        and "jsonrpc" not in value
    )


@contextlib.contextmanager
def open_trace(path: str | os.PathLike[str] | IO[bytes]) -> Iterator[IO[bytes]]:
    """Open a trace path (``-`` is standard input) or pass a binary file through."""
    if hasattr(path, "read"):
        yield path  # type: ignore[misc]
    elif not isinstance(path, (str, os.PathLike)):
        # `open` would take an int as a file descriptor, and close it when done.
        raise TypeError(f"a trace is a path, '-' or a binary file, not {type(path).__name__}")
    elif str(path) == "-":
        if sys.stdin is None:
            # Started with standard input closed (`acpwire replay - <&-`).
            raise OSError("standard input is closed")
        yield sys.stdin.buffer
    else:
        with open(path, "rb") as fp:
            yield fp


def sniff(fp: IO[bytes], strict: bool = True) -> tuple[bytes, bool]:
    """Read the start of a trace: (the bytes read, whether it holds records).

    With ``strict``, a start that holds lines but no JSON message raises ``TraceError``.
    """
    parts = [fp.read(CHUNK)]
    if not isinstance(parts[0], (bytes, bytearray)):
        kind = type(parts[0]).__name__
        raise TypeError(f"a trace is read as bytes (a file opened 'rb'), not {kind}")
    # A first line longer than that (a record of a large frame): read on to its end, as far
    # as `iter_lines` would hold one line.
    limit = _record_limit(DEFAULT_MAX_FRAME_BYTES)
    total = len(parts[0])
    while parts[-1] and b"\n" not in parts[-1] and total < limit:
        parts.append(fp.read(CHUNK))
        total += len(parts[-1])
    head = b"".join(parts)
    opening = _first_line(head)
    if opening is not None and _deep_record(opening) is not None:
        # A record of a frame nested as deep as a plain frame may be: one level deeper than
        # the framing takes, and still a record.
        return head, True
    decoder = FrameDecoder(max_frame_bytes=limit)
    # Line by line, up to the first message, so that a start of bad lines is not held as
    # one error each.
    first: list[Any] = []
    refused = False
    *lines, rest = head.split(b"\n")
    for line in lines:
        first = decoder.feed(line + b"\n")[:1]
        refused = bool(decoder.take_errors()) or refused
        if first:
            break
    if not first:
        first = decoder.feed(rest)[:1] or decoder.finish()[:1]
        refused = bool(decoder.take_errors()) or refused
    if strict and not first and refused and b"\n" in head:
        raise TraceError("not an NDJSON trace: no line of its first MiB is a JSON message")
    return head, bool(first) and is_record(first[0])


def _first_line(head: bytes) -> bytes | None:
    """The first line of ``head`` that is not blank, without its line end (None if none)."""
    for line in head.split(b"\n"):
        if line.strip(_BLANKS):
            return line[:-1] if line.endswith(b"\r") else line
    return None


# Where a JSON string, or a character that opens, closes or separates a container, is.
_STRUCTURE = re.compile(rb'["{}\[\],]')
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _member_span(frame: bytes, name: str) -> tuple[int, int] | None:
    """Where the value of the top-level member ``name`` of the JSON object ``frame`` is (the
    last one, as ``loads`` keeps), found without decoding it; None if ``frame`` does not
    look like an object holding it. Only a guide: what it finds is decoded strictly after."""
    start = len(frame) - len(frame.lstrip())
    if frame[start : start + 1] != b"{":
        return None
    depth, position = 0, start
    key: bytes | None = None
    expect_key = True
    found: tuple[int, int] | None = None
    value_start = -1
    while True:
        match = _STRUCTURE.search(frame, position)
        if match is None:
            return found
        at = match.start()
        char = frame[at : at + 1]
        if char == b'"':
            string = _STRING.match(frame, at)
            if string is None:
                return found
            if depth == 1 and expect_key:
                key = string.group()
                expect_key = False
                colon = frame.find(b":", string.end())
                if colon < 0:
                    return found
                value_start = colon + 1
                position = colon + 1
            else:
                position = string.end()
            continue
        if char in b"{[":
            depth += 1
        elif char in b"}]":
            depth -= 1
        if (depth == 1 and char == b",") or depth == 0:
            if key is not None and _is_name(key, name):
                found = (value_start, at)
            key, expect_key = None, True
            if depth == 0:
                return found
        position = at + 1


def _is_name(key: bytes, name: str) -> bool:
    try:
        return bool(loads(key) == name)
    except ValueError:
        return False


def _deep_record(frame: bytes) -> tuple[dict[str, Any], bytes] | None:
    """A record line that ``loads`` refuses only because its ``msg`` is as deep as a plain
    frame may be (so the record is one level deeper): the record with ``msg`` None, and the
    frame's text. None for anything else; the frame itself is decoded by the caller."""
    span = _member_span(frame, "msg")
    if span is None:
        return None
    start, end = span
    try:
        envelope = loads(frame[:start] + b"null" + frame[end:])
    except ValueError:
        return None
    if not is_record(envelope):
        return None
    return envelope, frame[start:end].strip(b" \t\r\n")


def load(path: str | os.PathLike[str] | IO[bytes], **options: Any) -> Sessions:
    """Reduce a whole trace (a path, ``-``, or a binary file) into a new ``Sessions``.

    As :func:`replay`, except that a trace whose first MiB holds lines but no JSON message
    raises ``TraceError`` (it is not an NDJSON trace at all).
    """
    return _load(path, True, options)


def replay(source: str | os.PathLike[str] | IO[bytes], **options: Any) -> Sessions:
    """Reduce a whole trace (a path, ``-``, or a binary file) into a new ``Sessions``.

    Plain ACP NDJSON is framed and reduced by the active backend in one pass (the native one
    releases the GIL meanwhile); a trace of ``acpwire record`` records is unwrapped and
    applied message by message with its direction as sender. Bad lines never stop the
    replay: each becomes an error record, as ``Sessions.feed`` makes (a trace of bad lines
    only gives just those). ``options`` are ``Sessions``' keyword arguments.
    """
    return _load(source, False, options)


def _load(
    path: str | os.PathLike[str] | IO[bytes], strict: bool, options: dict[str, Any]
) -> Sessions:
    return _load_kind(path, strict, options)[0]


def _load_kind(
    path: str | os.PathLike[str] | IO[bytes], strict: bool, options: dict[str, Any]
) -> tuple[Sessions, bool]:
    """``_load``, also saying whether the trace holds records."""
    from .. import _backend

    with open_trace(path) as fp:
        head, records = sniff(fp, strict=strict)
        if not records:
            return _backend.reduce_ndjson(_Rejoined(head, fp), **options), False
        store = _backend.Sessions(**options)
        _apply_records(store, _Rejoined(head, fp), options)
        return store, True


class Following:
    """A trace file that is still being written, reduced as it grows (``replay --follow``).

    Only whole lines are reduced: a line still being written waits for its newline, and the
    trace is told plain or recorded by its first line that is not blank. A file that shrinks,
    is replaced, or is rewritten in place (the 64 bytes just before where the last poll
    stopped are no longer the ones read) is reduced again from its start. A record line is
    held as it grows, up to the limit ``iter_lines`` keeps: one over it is one error record
    and is skipped to its newline without being held further, as in a whole replay.
    """

    def __init__(self, path: str, **options: Any) -> None:
        self.path = path
        self.options = options
        cap = options.get("max_frame_bytes", DEFAULT_MAX_FRAME_BYTES)
        # The longest record line `iter_lines` holds, with its CR and newline: it fits in one
        # window, which under a small cap still takes in a burst.
        self._record_line = _record_limit(cap) + 2
        self._record_window = max(self._record_line, _PLAIN_WINDOW)
        self.store: Sessions
        self._reload()

    def _reload(self) -> None:
        with open(self.path, "rb") as fp:
            stat = os.fstat(fp.fileno())
            position = _whole_lines(fp)
            if not _holds_a_line(fp, position):
                position = 0  # blank lines only: not yet told plain or recorded
            fp.seek(0)
            store, recorded = _load_kind(_Limited(fp, position), True, self.options)  # type: ignore[arg-type]
            fp.seek(0)
            whole = _Limited(fp, position)
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: whole.read(CHUNK), b""))
            fp.seek(max(0, position - _TAIL))
            tail = fp.read(position - fp.tell())
        store.changes()  # what the load did is the starting point, not a change
        # The sessions the last poll that returned True changed: after a load, all of them.
        self.changed: list[str] = list(store.ids())
        self.store, self.recorded = store, recorded
        self.position, self._lines, self._tail = position, lines, tail
        self._identity = (stat.st_dev, stat.st_ino)
        # Recorded traces: the line at `position` is over the limit and is being skipped, or
        # the bytes of it read so far (it has not ended).
        self._skipping = False
        self._pending = bytearray()
        # While no line with content has ended: how far the file is known to hold none, the
        # bytes just before there, and whether the line being written there has content.
        self._searched = 0
        self._searched_tail = b""
        self._content = False

    def _restart(self) -> bool:
        """Reduce the file again from its start; False (the old state kept) if it cannot be
        read, or is not a trace, yet."""
        try:
            self._reload()
        except (OSError, TraceError):
            return False
        return True

    def poll(self) -> bool:
        """Reduce what was appended since the last call; True if a session changed."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return False  # being replaced: the next poll sees the new file
        # Read up to here: the position and the part of a record line held past it.
        read = self.position + len(self._pending)
        if (stat.st_dev, stat.st_ino) != self._identity or stat.st_size < read:
            return self._restart()
        if stat.st_size == read:
            return False
        if self.position == 0:
            # Only with a whole first line can the trace be told plain or recorded.
            return self._first_line_ended(stat.st_size) and self._restart()
        try:
            return self._read_on(stat.st_size)
        except FileNotFoundError:
            return False  # replaced between the two looks: the next poll sees the new file

    def _read_on(self, size: int) -> bool:
        """``poll`` past the first line, the file ``size`` bytes long."""
        # At most a window at a time, so that a burst of output costs bounded memory: a
        # plain trace's store holds a partial line itself; a record line is held here until
        # its newline comes (one may take up to six bytes per byte of its frame), and only
        # what was appended since is read, so a long record written slowly is read once.
        window = self._record_window if self.recorded else _PLAIN_WINDOW
        held = len(self._pending)
        start = self.position + held
        if held >= _TAIL:
            before = bytes(self._pending[-_TAIL:])
        else:
            before = (self._tail + self._pending)[-_TAIL:]
        with open(self.path, "rb") as fp:
            fp.seek(start - len(before))
            data = fp.read(len(before) + min(size - start, window - held))
        if not data.startswith(before):
            return self._restart()
        data = data[len(before) :]
        if self.recorded:
            self._records(data)
        else:
            self.store.feed(data)
            self._advance(data, len(data))
        changes = self.store.changes()
        self.changed = list(dict.fromkeys(session_id for session_id, _, _ in changes))
        return bool(changes)

    def _first_line_ended(self, size: int) -> bool:
        """Whether the file now holds a line that is not blank, ended; each byte is searched
        once, unless the file was cut short or rewritten under the search."""
        try:
            with open(self.path, "rb") as fp:
                seen = len(self._searched_tail)
                if size < self._searched or (
                    seen and _read_at(fp, self._searched - seen, seen) != self._searched_tail
                ):
                    self._searched, self._searched_tail, self._content = 0, b"", False
                fp.seek(self._searched)
                while self._searched < size:
                    chunk = fp.read(min(CHUNK, size - self._searched))
                    if not chunk:
                        return False
                    *ended, rest = chunk.split(b"\n")
                    for line in ended:
                        if self._content or line.strip(_BLANKS):
                            return True
                        self._content = False
                    self._content = self._content or bool(rest.strip(_BLANKS))
                    self._searched += len(chunk)
                    self._searched_tail = (self._searched_tail + chunk[-_TAIL:])[-_TAIL:]
        except FileNotFoundError:
            return False  # being replaced
        return False

    def _records(self, data: bytes) -> None:
        """Apply the whole record lines that ``data`` (read where the last poll stopped)
        completes, and hold the line it leaves unfinished."""
        if self._skipping:
            end = data.find(b"\n") + 1
            if not end:
                self._advance(data, len(data))
                return
            self._lines += 1
            self._advance(data, end)
            self._skipping = False
            data = data[end:]
        end = data.rfind(b"\n") + 1
        if end:
            whole = bytes(self._pending) + data[:end] if self._pending else data[:end]
            self._pending = bytearray()
            _apply_records(self.store, io.BytesIO(whole), self.options, self._lines, self.position)
            self._lines += whole.count(b"\n")
            self._advance(whole, len(whole))
            data = data[end:]
        self._pending += data
        if len(self._pending) >= self._record_line:
            # No newline within the limit: reported once, as `iter_lines` reports it.
            self.store._record_error(TOO_LONG, self._lines + 1, self.position)
            self._skipping = True
            self._advance(self._pending, len(self._pending))
            self._pending = bytearray()

    def _advance(self, data: bytes | bytearray, end: int) -> None:
        """Move past ``data[:end]``, remembering the bytes just before the new position."""
        self._tail = (self._tail + bytes(data[max(0, end - _TAIL) : end]))[-_TAIL:]
        self.position += end


_PLAIN_WINDOW = 16 * CHUNK
# What a line holds that leaves it blank, to the framing (which skips such lines).
_BLANKS = b" \t\r"
# Bytes before the followed position compared at each poll to tell a rewrite from an append.
_TAIL = 64


def _holds_a_line(fp: IO[bytes], size: int) -> bool:
    """Whether the first ``size`` bytes of the file hold a line that is not blank (read up to
    the first such byte)."""
    fp.seek(0)
    while size > 0:
        chunk = fp.read(min(CHUNK, size))
        if not chunk:
            return False
        if chunk.strip(_BLANKS + b"\n"):
            return True
        size -= len(chunk)
    return False


def _read_at(fp: IO[bytes], offset: int, size: int) -> bytes:
    fp.seek(offset)
    return fp.read(size)


def _record_limit(max_frame_bytes: int) -> int:
    """The longest record line ``iter_lines`` holds: six bytes per byte of a frame under the
    cap (its text escaped), and the record's other members."""
    return 6 * max_frame_bytes + 1024


def _whole_lines(fp: IO[bytes]) -> int:
    """The length of the file's start up to and including its last newline."""
    end = fp.seek(0, os.SEEK_END)
    position = end
    while position > 0:
        step = min(CHUNK, position)
        position -= step
        fp.seek(position)
        found = fp.read(step).rfind(b"\n")
        if found >= 0:
            return position + found + 1
    return 0


class _Limited:
    """The first ``size`` bytes of a file."""

    def __init__(self, fp: IO[bytes], size: int) -> None:
        self.fp = fp
        self.left = size

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self.left:
            size = self.left
        data = self.fp.read(size) if size else b""
        self.left -= len(data)
        return data


_SENDERS = frozenset(("client", "agent"))
# What the framing refuses a frame for (`FrameError.reason`, alike on both backends).
_FRAME_REASONS = frozenset((INVALID_UTF8, INVALID_JSON, TRAILING_DATA, EMPTY_BATCH, TOO_LONG))


@dataclass
class TraceLine:
    """A line of a trace that is not blank, where it starts, and what it holds: a message
    (with its time and sender when recorded) or, in ``error``, why it holds none (the reason a
    plain trace holding that frame would give)."""

    line: int
    offset: int
    message: Any = None
    t: float | None = None
    sender: str | None = None
    error: str | None = None
    # The start of the frame an error is about, as ``FrameError.excerpt`` quotes it.
    excerpt: str = ""


def _excerpt(frame: bytes) -> str:
    return frame[:EXCERPT_BYTES].decode("utf-8", "replace")


def iter_trace(
    path: str | os.PathLike[str] | IO[bytes], max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
) -> Iterator[TraceLine]:
    """Each line of a trace (a path, ``-``, or a binary file) that is not blank, placed, with
    its message or the error a plain trace would record for it: see :func:`iter_lines`.

    Raises ``TraceError`` for a file whose first MiB holds lines but no JSON message.
    """
    with open_trace(path) as fp:
        head, recorded = sniff(fp)
        yield from iter_lines(_Rejoined(head, fp), max_frame_bytes, recorded)  # type: ignore[arg-type]


def iter_lines(
    stream: IO[bytes],
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    recorded: bool = True,
    *,
    lines_before: int = 0,
    offset: int = 0,
) -> Iterator[TraceLine]:
    """Each line of a trace, plain or recorded, placed (1-based line, byte offset). A frame
    the framing would refuse (invalid UTF-8 or JSON, trailing data, an empty batch, over the
    cap), plain or recorded raw, is an ``error`` entry with the framing's reason.

    A record holds its frame's JSON as it was, or its text escaped: in a ``recorded`` trace a
    line may take up to six bytes per byte of a frame under the cap; in a plain one, the cap.
    Nothing longer is held, so memory stays bounded by the cap however long a line runs.
    """
    # A plain line may end in a CR beyond the cap, which the framing drops.
    limit = _record_limit(max_frame_bytes) if recorded else max_frame_bytes + 1

    def reason_for(frame: bytes) -> str | None:
        # What a plain trace holding this frame as a line would record.
        decoder = FrameDecoder(max_frame_bytes=max_frame_bytes)
        decoder.feed(frame + b"\n")
        errors = decoder.take_errors()
        return errors[0].reason if errors else None

    def entry(line: bytes, number: int, start: int) -> TraceLine | None:
        frame = line[:-1] if line[-1:] == b"\r" else line
        # As in the framing, the cap applies to every line, blank or not; only a record
        # (below) may be longer than the frame it holds.
        over_cap = len(frame) > max_frame_bytes
        if len(frame) > limit or (over_cap and not recorded):
            return TraceLine(number, start, excerpt=_excerpt(frame), error=TOO_LONG)
        if not frame.strip(b" \t\r"):
            return (
                TraceLine(number, start, excerpt=_excerpt(frame), error=TOO_LONG)
                if over_cap
                else None
            )
        try:
            # `loads` skips a byte order mark, as `json.loads` does; the framing does not.
            if frame.startswith(b"\xef\xbb\xbf"):
                raise ValueError("byte order mark")
            value = loads(frame)
        except ValueError:
            deep = _deep_record(frame) if recorded else None
            if deep is None:
                return TraceLine(
                    number, start, excerpt=_excerpt(frame), error=reason_for(frame) or INVALID_JSON
                )
            value, inner = deep
            try:
                value["msg"] = loads(inner)
            except ValueError:
                # Deeper than a plain frame may be, or not JSON: what a plain trace says.
                reason = reason_for(inner) or INVALID_JSON
                t, sender = _placed(value)
                return TraceLine(
                    number, start, t=t, sender=sender, error=reason, excerpt=_excerpt(inner)
                )
        if value == []:
            return TraceLine(number, start, excerpt=_excerpt(frame), error=EMPTY_BATCH)
        if not is_record(value):
            return (
                TraceLine(number, start, excerpt=_excerpt(frame), error=TOO_LONG)
                if over_cap
                else TraceLine(number, start, value)
            )
        t, sender = _placed(value)
        if "msg" in value:
            if value["msg"] == []:
                return TraceLine(number, start, t=t, sender=sender, error=EMPTY_BATCH, excerpt="[]")
            return TraceLine(number, start, value["msg"], t, sender)
        reason = value.get("error")
        raw = value["raw"]
        text = raw.encode("utf-8", "replace") if isinstance(raw, str) else b""
        if not isinstance(reason, str) or reason not in _FRAME_REASONS:
            # A frame recorded raw whose text is now valid JSON held invalid UTF-8 (the
            # recorder replaced it). A reason the framing never gives is not taken either:
            # the frame is judged as a plain trace would judge it.
            reason = (reason_for(text) or INVALID_UTF8) if isinstance(raw, str) else INVALID_JSON
        return TraceLine(number, start, t=t, sender=sender, error=reason, excerpt=_excerpt(text))

    number = lines_before  # lines ended so far
    start = offset  # where the current line starts in the trace
    held: list[bytes] = []  # the current line's pieces, unless it is being skipped
    length = 0  # the current line's length so far
    skipping = False
    while chunk := stream.read(CHUNK):
        *ended, rest = chunk.split(b"\n")
        for piece in ended:
            number += 1
            if not skipping:
                found = entry(b"".join([*held, piece]) if held else piece, number, start)
                if found is not None:
                    yield found
            start += length + len(piece) + 1
            held, length, skipping = [], 0, False
        length += len(rest)
        if skipping or not rest:
            continue
        if length > limit:
            # Reported once, then skipped up to its newline without being kept.
            yield TraceLine(number + 1, start, error=TOO_LONG)
            held, skipping = [], True
        else:
            held.append(rest)
    if held and not skipping:
        found = entry(b"".join(held), number + 1, start)
        if found is not None:
            yield found


def _placed(record: dict[str, Any]) -> tuple[float | None, str | None]:
    """A record's time (None unless a number) and sender (None unless client or agent)."""
    direction = record["dir"]
    sender = direction if isinstance(direction, str) and direction in _SENDERS else None
    t = record["t"]
    return (float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None), sender


def _apply_records(
    store: Any, stream: Any, options: dict[str, Any], lines_before: int = 0, offset: int = 0
) -> None:
    """Apply each line of a recorded trace to ``store``, errors placed at their trace line
    (``stream`` starting after ``lines_before`` lines, at byte ``offset`` of the trace)."""
    cap = options.get("max_frame_bytes", DEFAULT_MAX_FRAME_BYTES)
    for entry in iter_lines(stream, cap, lines_before=lines_before, offset=offset):
        if entry.error is not None:
            store._record_error(entry.error, entry.line, entry.offset)
        else:
            store._apply_at(entry.message, entry.sender, entry.line, entry.offset)


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
