"""The reason strings, default caps and limits of framing, JSON, terminals and sessions, defined
once for Python.

The pure backend and the tools read them here; the native backend has the same values in Rust
(``src/framing.rs``, ``src/python/json/``, ``src/terminal/``, ``src/session/mod.rs``).
``tests/framing/test_framing_contract.py`` and ``tests/json/test_json_contract.py`` hold the
backends' behaviour equal to them, ``tests/package/test_contract_constants.py`` the Rust
constants. The rules themselves are in ``docs/behaviour/``.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "DEFAULT_MAX_TERMINAL_BYTES",
    "EMPTY_BATCH",
    "EXCERPT_BYTES",
    "INVALID_JSON",
    "INVALID_UTF8",
    "MAX_CLUSTERS",
    "MAX_CLUSTER_CHARS",
    "MAX_COLS",
    "MAX_DECODE_DEPTH",
    "MAX_ENCODE_DEPTH",
    "MAX_ERRORS",
    "MAX_HOLES",
    "MAX_INT_DIGITS",
    "MAX_KEPT_ERRORS",
    "MAX_LINKS",
    "MAX_LINK_BYTES",
    "MAX_NOTICES",
    "MAX_OSC_BYTES",
    "MAX_PARAMS",
    "MAX_PENDING",
    "MAX_ROWS",
    "MAX_SESSION_ERRORS",
    "MAX_STYLES",
    "TOO_LONG",
    "TRAILING_DATA",
    "UNBOUNDED_COLS",
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

# Terminals (src/terminal/): grid bounds, the row width of a transcript (`cols=None`), and what
# one terminal interns or holds at most, so that no input grows a table without bound.
UNBOUNDED_COLS = 8192
MAX_COLS = MAX_ROWS = 65_535
MAX_OSC_BYTES = 64 * 1024
MAX_PARAMS = 32
MAX_STYLES = 65536
MAX_LINKS = 4096
MAX_LINK_BYTES = 2083
MAX_CLUSTERS = 65536
MAX_CLUSTER_CHARS = 16

# Session stores (src/session/mod.rs): error records kept in all and per session, notices and
# pending requests kept, holes left in a timeline by removed plans before it is compacted, and
# what all of a store's terminals may hold together by default.
MAX_ERRORS = 10_000
MAX_SESSION_ERRORS = 1_000
MAX_NOTICES = 100
MAX_PENDING = 10_000
MAX_HOLES = 32
DEFAULT_MAX_TERMINAL_BYTES = 64 * 1024 * 1024
