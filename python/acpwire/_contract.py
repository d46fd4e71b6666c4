"""The reason strings, default caps and limits of framing and JSON, defined once.

The pure backend and the tools read them here; the native backend has the same values in Rust
(``src/framing.rs``, ``src/python/json/``); ``tests/framing/test_framing_contract.py`` and
``tests/json/test_json_contract.py`` hold the two equal. The rules themselves are in
``docs/behaviour/framing.md`` and ``docs/behaviour/json.md``.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "EMPTY_BATCH",
    "EXCERPT_BYTES",
    "INVALID_JSON",
    "INVALID_UTF8",
    "MAX_DECODE_DEPTH",
    "MAX_ENCODE_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_KEPT_ERRORS",
    "TOO_LONG",
    "TRAILING_DATA",
]

# Why a frame is rejected: `FrameError.reason`.
INVALID_UTF8 = "invalid UTF-8"
INVALID_JSON = "invalid JSON"
TRAILING_DATA = "trailing data after JSON value"
EMPTY_BATCH = "empty batch"
TOO_LONG = "frame exceeds max_frame_bytes"

# The longest frame a decoder accepts unless told otherwise, in bytes.
DEFAULT_MAX_FRAME_BYTES = 32 * 1024 * 1024
# A rejected frame's excerpt: its first bytes, this many.
EXCERPT_BYTES = 64
# Rejected frames a decoder keeps for `errors`/`take_errors()`; beyond, the oldest are dropped.
MAX_KEPT_ERRORS = 10_000

# jiter's limits, which `loads` and the frame decoder keep: no value more than this many
# containers below the top-level value, and no more digits in a number's integer part.
MAX_DECODE_DEPTH = 200
MAX_INT_DIGITS = 4300
# orjson's limit for `dumps`: containers at depth 0..253.
MAX_ENCODE_DEPTH = 254
