"""Type stubs for the compiled backend ``acpwire._native``.

``acpwire._pure`` provides the same names with the same signatures.
"""

from typing import Any, final

from ._errors import DecodeError as DecodeError
from ._errors import EncodeError as EncodeError
from ._errors import FrameError as FrameError

__version__: str
__all__ = ["DecodeError", "EncodeError", "FrameDecoder", "FrameError", "__version__", "dumps", "loads"]

_Buffer = bytes | bytearray | memoryview

@final
class FrameDecoder:
    """Incremental NDJSON decoder: bytes in, JSON-RPC messages out.

    Frames are lines ending in ``\\n`` (a ``\\r`` before it is dropped). Blank lines are
    skipped. A frame holding a JSON array (a batch) yields its entries. Bad frames never stop
    the stream: each becomes a :class:`FrameError` in :attr:`errors`. A line longer than
    ``max_frame_bytes`` is reported and skipped without being buffered. With ``raw=True``,
    frames are returned as ``bytes`` (line ending removed) without being decoded.
    """

    def __new__(cls, max_frame_bytes: int = 33554432, raw: bool = False) -> FrameDecoder: ...
    def feed(self, data: _Buffer) -> list[Any]:
        """Feed bytes; return the messages of every frame they complete, in order."""
    def finish(self) -> list[Any]:
        """End of stream: return the messages of a last frame that had no newline."""
    def take_errors(self) -> list[FrameError]:
        """Return the rejected frames and forget them."""
    def _feed_events(self, data: _Buffer) -> list[Any]: ...
    def _finish_events(self) -> list[Any]: ...
    @property
    def errors(self) -> list[FrameError]:
        """Rejected frames not yet taken, oldest first (at most 10,000 are kept)."""
    @property
    def errors_dropped(self) -> int:
        """Errors dropped because more than 10,000 were waiting to be taken."""
    @property
    def buffered(self) -> int:
        """Bytes held while waiting for a newline (never more than max_frame_bytes + 1)."""
    @property
    def frames(self) -> int:
        """Non-blank frames seen so far, good or bad."""
    @property
    def position(self) -> int:
        """Bytes fed so far."""
    @property
    def max_frame_bytes(self) -> int: ...
    @property
    def raw(self) -> bool: ...

def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document; the same values as ``json.loads``. Raises DecodeError."""

def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as compact UTF-8 JSON ending in one ``\\n``. Raises EncodeError (TypeError)."""
