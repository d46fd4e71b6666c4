"""Twin of src/framing.rs (and src/python/framing.rs): NDJSON framing for the pure backend.

Linear in the input: each byte is searched for a newline once (``bytes.find`` from where the
last search stopped), a pending line is kept as a list of pieces joined once, and a line past
the cap is reported once and then skipped to its newline without being kept. The rules are in
``docs/behaviour/framing.md``.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

import orjson

from .._contract import (
    DEFAULT_MAX_FRAME_BYTES,
    EMPTY_BATCH,
    EXCERPT_BYTES,
    INVALID_JSON,
    INVALID_UTF8,
    MAX_KEPT_ERRORS,
    TOO_LONG,
    TRAILING_DATA,
)
from .._errors import FrameError
from ._args import Unpicklable, buffer_bytes, flag, size
from .json.errors import first_error, jiter_position
from .json.loads import (
    DIGITS_TO_ZERO,
    LARGE_DOCUMENT,
    LONG_RUN,
    MIN_DEEP_SIZE,
    ZEROS,
    decode_if_valid,
    decode_valid,
    maybe_too_deep,
)

_loads = orjson.loads
# A line's pieces shorter than SMALL_PIECE, after its first KEPT_PIECES, are gathered into one
# buffer (see FrameDecoder).
SMALL_PIECE = 4096
KEPT_PIECES = 8
_BLANK = b" \t\r"


def _excerpt(frame: bytes) -> str:
    return frame[:EXCERPT_BYTES].decode("utf-8", "replace")


def _decode_failure(frame: bytes) -> tuple[Any, str | None, str]:
    """orjson refused ``frame``: decode it as the native backend would, or classify why not.

    Returns ``(value, None, "")`` or ``(None, reason, detail)``.
    """
    valid, value = decode_if_valid(frame)
    if valid:
        return value, None, ""
    # As the native backend: invalid UTF-8 anywhere in the frame first, then jiter's words and
    # place for the first fault.
    try:
        frame.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, INVALID_UTF8, f"invalid byte at frame offset {exc.start}"
    fault = first_error(frame)
    if fault is not None:
        msg, index = fault
        reason = TRAILING_DATA if msg == "trailing characters" else INVALID_JSON
        return None, reason, f"{msg} at {jiter_position(frame, index)}"
    return decode_valid(frame), None, ""


class _CallLock:
    """One decoder's lock. Calls from other threads wait for the call in progress; a call from
    the same thread in the middle of one (a finalizer run by a garbage collection inside a
    feed, or a signal handler) is refused with RuntimeError, as the native decoder refuses a
    second borrow, rather than waiting for ever on itself."""

    __slots__ = ("_lock", "_owner")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None

    def __enter__(self) -> None:
        me = threading.get_ident()
        # Only this thread sets the owner to itself, and only while it holds the lock.
        if self._owner == me:
            raise RuntimeError("Already borrowed")
        self._lock.acquire()
        self._owner = me

    def __exit__(self, *exc: object) -> None:
        self._owner = None
        self._lock.release()


class FrameDecoder(Unpicklable):
    """Incremental NDJSON decoder: bytes in, JSON-RPC messages out."""

    __slots__ = (
        # Readers remember what they decoded and did not hand out, by the decoder.
        "__weakref__",
        "_errors",
        "_errors_dropped",
        "_frames",
        "_line",
        "_line_start",
        "_lock",
        "_max",
        "_partial",
        "_partial_len",
        "_position",
        "_raw",
        "_skipping",
    )

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, raw: bool = False) -> None:
        # Both arguments read before either is checked, as the binding does.
        max_frame_bytes, raw = size(max_frame_bytes), flag(raw)
        if max_frame_bytes <= 0:
            raise ValueError("max_frame_bytes must be positive")
        self._max = max_frame_bytes
        self._raw = raw
        # The line so far, as pieces. Past the first KEPT_PIECES, small ones are gathered into
        # one buffer: an object per piece costs tens of bytes whatever its size, so a line fed
        # a byte at a time would otherwise hold many times the cap.
        self._partial: list[bytes | bytearray] = []
        self._partial_len = 0
        self._skipping = False
        self._line = 1
        self._line_start = 0
        self._position = 0
        self._frames = 0
        self._errors: deque[FrameError] = deque()
        self._errors_dropped = 0
        # Calls from several threads take turns, as they do on the native decoder (which
        # holds the GIL throughout): a feed reads its position first and writes it back last.
        self._lock = _CallLock()

    # -- feeding -----------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> list[Any]:
        """Feed bytes; return the messages of every frame they complete, in order."""
        data = buffer_bytes(data)
        out: list[Any] = []
        with self._lock:
            self._feed(data, out, False)
        return out

    def finish(self) -> list[Any]:
        """End of stream: return the messages of a last frame that had no newline."""
        out: list[Any] = []
        with self._lock:
            self._finish(out, False)
        return out

    def _feed_events(self, data: bytes | bytearray | memoryview) -> list[Any]:
        """Like ``feed``, but each rejected frame also appears as a FrameError at its place."""
        data = buffer_bytes(data)
        out: list[Any] = []
        with self._lock:
            self._feed(data, out, True)
        return out

    def _finish_events(self) -> list[Any]:
        out: list[Any] = []
        with self._lock:
            self._finish(out, True)
        return out

    def _feed(self, data: bytes, out: list[Any], inline: bool) -> None:
        base = self._position
        size = len(data)
        limit = self._max + 1
        find = data.find
        pos = 0
        while pos < size:
            newline = find(b"\n", pos)
            if newline < 0:
                self._hold(data, pos, out, inline)
                break
            if self._skipping:
                self._skipping = False
            elif not self._partial_len:
                self._emit(data[pos:newline], out, inline)
            elif self._partial_len + (newline - pos) > limit:
                head = b"".join(self._partial) + data[pos : pos + min(newline - pos, EXCERPT_BYTES)]
                self._clear_partial()
                self._too_long(head, out, inline)
            else:
                self._partial.append(data[pos:newline])
                line = b"".join(self._partial)
                self._clear_partial()
                self._emit(line, out, inline)
            pos = newline + 1
            self._line += 1
            self._line_start = base + pos
        self._position = base + size

    def _hold(self, data: bytes, pos: int, out: list[Any], inline: bool) -> None:
        if self._skipping:
            return
        rest = len(data) - pos
        if self._partial_len + rest > self._max + 1:
            head = b"".join(self._partial)
            need = max(EXCERPT_BYTES - len(head), 0)
            head += data[pos : pos + min(rest, need)]
            self._clear_partial()
            self._too_long(head, out, inline)
            self._skipping = True
        else:
            parts = self._partial
            if rest >= SMALL_PIECE or len(parts) < KEPT_PIECES:
                parts.append(data[pos:])
            elif type(parts[-1]) is bytearray:
                parts[-1] += memoryview(data)[pos:]
            else:
                parts.append(bytearray(memoryview(data)[pos:]))
            self._partial_len += rest

    def _clear_partial(self) -> None:
        self._partial = []
        self._partial_len = 0

    def _finish(self, out: list[Any], inline: bool) -> None:
        had_line = self._skipping or self._partial_len > 0
        if self._skipping:
            self._skipping = False
        elif self._partial_len:
            line = b"".join(self._partial)
            self._clear_partial()
            self._emit(line, out, inline)
        if had_line:
            self._line += 1
            self._line_start = self._position

    # -- frames and errors -------------------------------------------------------------------

    def _emit(self, line: bytes, out: list[Any], inline: bool) -> None:
        if line[-1:] == b"\r":
            line = line[:-1]
        if len(line) > self._max:
            self._too_long(line, out, inline)
            return
        first = line[:1]
        if first != b"{" and first != b"[" and not line.strip(_BLANK):
            return
        self._frames += 1
        if self._raw:
            out.append(line)
            return
        size = len(line)
        # The decoder of last resort decides when orjson refuses the frame, may read it
        # otherwise (a long digit run, a deep nest), or is not used (see LARGE_DOCUMENT).
        value: Any = None
        if size > LARGE_DOCUMENT:
            fallback = True
        else:
            try:
                value = _loads(line)
                # Inlined `has_long_digits`: this runs for every frame.
                fallback = size >= LONG_RUN and ZEROS in line.translate(DIGITS_TO_ZERO)
            except orjson.JSONDecodeError:
                fallback = True
            else:
                fallback = fallback or (size >= MIN_DEEP_SIZE and maybe_too_deep(line, value))
        if fallback:
            value, reason, detail = _decode_failure(line)
            if reason is not None:
                self._error(reason, line, detail, out, inline)
                return
        if type(value) is list:
            if not value:
                self._error(EMPTY_BATCH, line, "", out, inline)
                return
            out.extend(value)
        else:
            out.append(value)

    def _too_long(self, head: bytes, out: list[Any], inline: bool) -> None:
        self._frames += 1
        # Quote no more than the cap allows, so the excerpt is the same however the line arrived.
        quoted = head[: self._max + 1]
        self._error(TOO_LONG, quoted, f"limit is {self._max} bytes", out, inline)

    def _error(self, reason: str, frame: bytes, detail: str, out: list[Any], inline: bool) -> None:
        error = FrameError(reason, self._line, self._line_start, _excerpt(frame), detail)
        if inline:
            out.append(error)
            return
        if len(self._errors) == MAX_KEPT_ERRORS:
            self._errors.popleft()
            self._errors_dropped += 1
        self._errors.append(error)

    # -- state -------------------------------------------------------------------------------

    @property
    def errors(self) -> list[FrameError]:
        """Rejected frames not yet taken, oldest first."""
        return list(self._errors)

    def take_errors(self) -> list[FrameError]:
        """Return the rejected frames and forget them."""
        with self._lock:
            taken = list(self._errors)
            self._errors.clear()
        return taken

    @property
    def errors_dropped(self) -> int:
        """Errors dropped because more than 10,000 were waiting to be taken."""
        return self._errors_dropped

    @property
    def buffered(self) -> int:
        """Bytes held while waiting for a newline."""
        return self._partial_len

    @property
    def frames(self) -> int:
        """Non-blank frames seen so far, good or bad."""
        return self._frames

    @property
    def position(self) -> int:
        """Bytes fed so far."""
        return self._position

    @property
    def max_frame_bytes(self) -> int:
        """The longest frame accepted, in bytes; longer ones become ``FrameError``s."""
        return self._max

    @property
    def raw(self) -> bool:
        """True when frames are returned as bytes, undecoded."""
        return self._raw

    def __repr__(self) -> str:
        return (
            f"FrameDecoder(max_frame_bytes={self._max}, raw={self._raw}, "
            f"frames={self._frames}, buffered={self._partial_len})"
        )
