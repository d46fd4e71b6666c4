"""asyncio support: read messages from a ``StreamReader`` without its 64 KiB line limit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ._stream import OnError, _new_decoder, check_chunk_size, drain, unread

if TYPE_CHECKING:
    from ._native import FrameDecoder

__all__ = ["read_messages"]


def read_messages(
    reader: asyncio.StreamReader,
    chunk_size: int = 65536,
    on_error: OnError | None = None,
    *,
    decoder: FrameDecoder | None = None,
) -> AsyncIterator[Any]:
    """Yield every JSON-RPC message arriving on ``reader`` until EOF.

    Uses ``reader.read(chunk_size)``, never ``readline()``, so a frame of any size up to the
    decoder's ``max_frame_bytes`` gets through (``readline`` raises past the stream's limit,
    64 KiB by default). Errors are handled as in :func:`acpwire.iter_messages`; a bad
    ``chunk_size`` is refused at the call, before anything is read.
    """
    chunk_size = check_chunk_size(chunk_size)
    if decoder is None:
        decoder = _new_decoder()
    return _read_messages(reader, chunk_size, on_error, decoder)


async def _read_messages(
    reader: asyncio.StreamReader, chunk_size: int, on_error: OnError | None, decoder: FrameDecoder
) -> AsyncIterator[Any]:
    events = unread(decoder)
    for message in drain(events, on_error):
        yield message
    while True:
        chunk = await reader.read(chunk_size)
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            # As iter_messages: a reader of text, or of nothing (None), is not a byte stream.
            raise TypeError(
                f"read_messages needs a reader of bytes: read() returned {type(chunk).__name__}"
            )
        if not chunk:
            break
        events.extend(decoder._feed_events(chunk))
        for message in drain(events, on_error):
            yield message
    events.extend(decoder._finish_events())
    for message in drain(events, on_error):
        yield message
