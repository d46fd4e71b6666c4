"""Exceptions shared by both backends.

They are defined here, in Python, so that ``acpwire.FrameError`` is one class whichever backend
is active: the native extension looks these classes up and raises them.
"""

from __future__ import annotations

__all__ = ["DecodeError", "EncodeError", "FrameError", "TerminalDataError"]


class FrameError(ValueError):
    """A frame of an NDJSON stream was rejected; the stream goes on.

    Attributes:
        reason: a fixed phrase naming the class of fault, identical on both backends:
            ``"invalid UTF-8"``, ``"invalid JSON"``, ``"trailing data after JSON value"``,
            ``"empty batch"`` or ``"frame exceeds max_frame_bytes"``.
        line: 1-based line number of the frame in the stream (blank lines count).
        offset: byte offset of the frame's first byte in the stream.
        excerpt: the first 64 bytes of the frame, decoded with ``errors="replace"``.
        detail: what the parser found and where in the frame, identical on both backends.

    The SDK transport (``acpwire.sdk``) also reports a frame that is JSON but not a message
    object, with reason ``"not a JSON-RPC message object"`` and line and offset 0 (the decoder
    has passed the frame by then, so its place is not known).
    """

    reason: str
    line: int
    offset: int
    excerpt: str
    detail: str

    def __init__(
        self, reason: str, line: int, offset: int, excerpt: str = "", detail: str = ""
    ) -> None:
        message = f"{reason} at line {line}, byte offset {offset}"
        if detail:
            message += f" ({detail})"
        message += f": {excerpt!r}"
        super().__init__(message)
        self.reason = reason
        self.line = line
        self.offset = offset
        self.excerpt = excerpt
        self.detail = detail

    # Keep attributes through pickling (multiprocessing harnesses).
    def __reduce__(self) -> tuple[type[FrameError], tuple[str, int, int, str, str]]:
        return (type(self), (self.reason, self.line, self.offset, self.excerpt, self.detail))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrameError):
            return NotImplemented
        return (self.reason, self.line, self.offset, self.excerpt) == (
            other.reason,
            other.line,
            other.offset,
            other.excerpt,
        )

    def __hash__(self) -> int:
        return hash((self.reason, self.line, self.offset, self.excerpt))


class DecodeError(ValueError):
    """A JSON document could not be decoded by :func:`acpwire.loads`.

    Attributes:
        msg: what is wrong. line, column: 1-based position. offset: 0-based character
        offset for ``str`` input, byte offset for ``bytes`` input.
    """

    msg: str
    line: int
    column: int
    offset: int

    def __init__(self, msg: str, line: int, column: int, offset: int) -> None:
        super().__init__(f"{msg} at line {line} column {column}")
        self.msg = msg
        self.line = line
        self.column = column
        self.offset = offset

    def __reduce__(self) -> tuple[type[DecodeError], tuple[str, int, int, int]]:
        return (type(self), (self.msg, self.line, self.column, self.offset))


class EncodeError(TypeError):
    """An object could not be encoded by :func:`acpwire.dumps` (a ``TypeError``)."""


class TerminalDataError(ValueError):
    """A terminal chunk could not be decoded (for example, invalid base64); nothing was applied."""
