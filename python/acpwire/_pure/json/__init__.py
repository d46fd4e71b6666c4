"""Twin of src/python/json/mod.rs: JSON for the pure backend, ``loads`` and ``dumps``.

Both read and write exactly what the native backend does (see ``docs/behaviour/json.md``); the
helpers the frame decoder and the session reducer share with ``loads`` are exported here too.
"""

from __future__ import annotations

from ..._contract import MAX_DECODE_DEPTH, MAX_ENCODE_DEPTH
from .dumps import dumps
from .loads import (
    DIGITS_TO_ZERO,
    LARGE_DOCUMENT,
    LONG_RUN,
    MIN_DEEP_SIZE,
    ZEROS,
    block_checks,
    decode_if_valid,
    decode_valid,
    has_duplicate_keys,
    has_long_digit_run,
    has_long_digits,
    loads,
    maybe_too_deep,
    too_deep,
)

__all__ = [
    "DIGITS_TO_ZERO",
    "LARGE_DOCUMENT",
    "LONG_RUN",
    "MAX_DECODE_DEPTH",
    "MAX_ENCODE_DEPTH",
    "MIN_DEEP_SIZE",
    "ZEROS",
    "block_checks",
    "decode_if_valid",
    "decode_valid",
    "dumps",
    "has_duplicate_keys",
    "has_long_digit_run",
    "has_long_digits",
    "loads",
    "maybe_too_deep",
    "too_deep",
]
