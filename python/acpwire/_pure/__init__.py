"""The pure-Python backend: the same API and results as ``acpwire._native``, on orjson.

Each function here mirrors its Rust twin rule for rule (see ``src/framing.rs``): the same
frame boundaries, line numbers, offsets, error reasons and excerpts, the same accepted JSON,
the same nesting limits, the same bytes from ``dumps``.
"""

from __future__ import annotations

from .._errors import DecodeError, EncodeError, FrameError, TerminalDataError
from .._version import __version__
from .base64 import _decode_base64 as _b64decode
from .framing import FrameDecoder
from .json import dumps, loads
from .session import Session, Sessions, reduce_ndjson
from .terminal import Span, Terminal, char_width, render_text

# How this backend was built, as `acpwire._native._build` says it for the extension.
_build = "pure Python"

# The names of the native module, no more: the backends are interchangeable.
__all__ = [
    "DecodeError",
    "EncodeError",
    "FrameDecoder",
    "FrameError",
    "Session",
    "Sessions",
    "Span",
    "Terminal",
    "TerminalDataError",
    "__version__",
    "_b64decode",
    "_build",
    "char_width",
    "dumps",
    "loads",
    "reduce_ndjson",
    "render_text",
]
