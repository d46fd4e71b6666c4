"""Iterating over the messages of a binary file."""

from __future__ import annotations

import operator
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from ._errors import FrameError

if TYPE_CHECKING:
    from ._native import FrameDecoder

OnError = Callable[[FrameError], object]
# A decoded message (any JSON value, as `FrameDecoder.feed` gives it), or a rejected frame.
Event = Any

# What readers decoded and did not hand out yet, by decoder: every reader over a decoder takes
# its messages from this one queue, so what one reader leaves when it stops (its consumer broke
# off, or a FrameError was raised) is the next one's start, at once, and a stream read in
# several goes loses nothing.
_UNREAD: weakref.WeakKeyDictionary[FrameDecoder, deque[Event]] = weakref.WeakKeyDictionary()


def unread(decoder: FrameDecoder) -> deque[Event]:
    """The queue of what readers over ``decoder`` decoded and did not hand out, oldest first."""
    events = _UNREAD.get(decoder)
    if events is None:
        events = _UNREAD[decoder] = deque()
    return events


def drain(events: deque[Event], on_error: OnError | None) -> Iterator[Any]:
    """Yield the messages of ``events`` (messages and FrameErrors, in stream order), taking
    each off as it goes: what the consumer does not take stays in ``events``."""
    while events:
        item = events.popleft()
        if isinstance(item, FrameError):
            if on_error is None:
                raise item
            on_error(item)
        else:
            yield item


def _new_decoder() -> FrameDecoder:
    from . import FrameDecoder

    return FrameDecoder()


def iter_messages(
    fp: IO[bytes],
    chunk_size: int = 65536,
    on_error: OnError | None = None,
    *,
    decoder: FrameDecoder | None = None,
) -> Iterator[Any]:
    """Yield every JSON-RPC message of a binary NDJSON file, reading ``chunk_size`` at a time.

    A batch frame (a JSON array) yields its entries one by one. A bad frame raises its
    :class:`FrameError` when ``on_error`` is None; otherwise ``on_error(error)`` is called and
    iteration goes on. Pass ``decoder`` to use a configured ``FrameDecoder`` (for example one
    with another ``max_frame_bytes``).
    """
    chunk_size = check_chunk_size(chunk_size)
    if decoder is None:
        decoder = _new_decoder()
    return _iter_messages(fp, chunk_size, on_error, decoder)


def check_chunk_size(chunk_size: int) -> int:
    """``chunk_size`` as an int from 1 to 2**31 - 1, checked when a reader is made."""
    size = operator.index(chunk_size)  # TypeError for a float, a str, ...
    if not 0 < size < 1 << 31:
        raise ValueError(f"chunk_size must be from 1 to 2**31 - 1, not {size}")
    return size


def _iter_messages(
    fp: IO[bytes], chunk_size: int, on_error: OnError | None, decoder: FrameDecoder
) -> Iterator[Any]:
    read = getattr(fp, "read1", None) or fp.read
    events = unread(decoder)
    yield from drain(events, on_error)
    while True:
        chunk = read(chunk_size)
        if chunk is None:
            # A non-blocking stream with nothing to read yet: not the end of the stream.
            raise TypeError("iter_messages needs a blocking binary file: read() returned None")
        if isinstance(chunk, str):
            # Refused even when empty: an empty text file is as wrong as a full one.
            raise TypeError("iter_messages needs a binary file, not a text file")
        if not chunk:
            break
        events.extend(decoder._feed_events(chunk))
        yield from drain(events, on_error)
    events.extend(decoder._finish_events())
    yield from drain(events, on_error)
