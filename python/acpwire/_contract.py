"""The framing's reason strings and default frame cap, shared by both backends and the tools."""

from ._pure._framing import (
    DEFAULT_MAX_FRAME_BYTES,
    EMPTY_BATCH,
    INVALID_JSON,
    INVALID_UTF8,
    TOO_LONG,
    TRAILING_DATA,
)

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "EMPTY_BATCH",
    "INVALID_JSON",
    "INVALID_UTF8",
    "TOO_LONG",
    "TRAILING_DATA",
]
