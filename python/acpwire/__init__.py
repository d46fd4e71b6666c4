"""acpwire: a fast, exact wire codec for the Agent Client Protocol (ACP).

ACP is JSON-RPC 2.0 over newline-delimited JSON on stdio. acpwire frames such byte streams,
decodes and encodes their JSON (:class:`FrameDecoder`, :func:`loads`, :func:`dumps`), renders
terminal output (:class:`Terminal`) and reduces ``session/update`` streams to session state
(:class:`Sessions`), in Rust (``acpwire._native``) with a pure-Python fallback
(``acpwire._pure``) behind the same API.

Backend selection: the compiled extension is used when it is importable. Set
``ACPWIRE_BACKEND=pure`` to force the fallback, or ``ACPWIRE_BACKEND=native`` to fail loudly
(ImportError) when the extension is missing. :data:`BACKEND` tells which one is active.
"""

from __future__ import annotations

import importlib as _importlib
import os as _os
import typing as _typing

from ._errors import DecodeError, EncodeError, FrameError, TerminalDataError

if _typing.TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "BACKEND",
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
    "char_width",
    "dumps",
    "iter_messages",
    "loads",
    "render_text",
    "replay",
]


def _select_backend() -> tuple[_typing.Literal["native", "pure"], ModuleType]:
    choice = _os.environ.get("ACPWIRE_BACKEND", "").strip().lower()
    if choice not in ("", "native", "pure"):
        raise ImportError(f"ACPWIRE_BACKEND must be 'native' or 'pure', not {choice!r}")
    if choice == "pure":
        from . import _pure

        return "pure", _pure
    try:
        # import_module, not `from . import`: the latter turns a missing submodule into a
        # generic ImportError and loses which module was missing.
        _native = _importlib.import_module(f"{__name__}._native")
    except ModuleNotFoundError as exc:
        # Only a missing extension falls back; a broken one (or a missing dependency of it)
        # is a real error and propagates.
        if exc.name != f"{__name__}._native":
            raise
        if choice == "native":
            raise ImportError(
                "ACPWIRE_BACKEND=native, but the compiled extension acpwire._native is not "
                "installed (install a binary wheel, or build from source with a Rust toolchain)"
            ) from exc
        from . import _pure

        return "pure", _pure
    return "native", _native


BACKEND: _typing.Literal["native", "pure"]
BACKEND, _backend = _select_backend()

if _typing.TYPE_CHECKING:
    # Type checkers see the native stub (`_native.pyi`); the pure backend mirrors it.
    from ._native import (
        FrameDecoder,
        Session,
        Sessions,
        Terminal,
        char_width,
        dumps,
        loads,
        render_text,
    )
else:
    FrameDecoder = _backend.FrameDecoder
    loads = _backend.loads
    dumps = _backend.dumps
    Terminal = _backend.Terminal
    render_text = _backend.render_text
    char_width = _backend.char_width
    Sessions = _backend.Sessions
    Session = _backend.Session

from ._span import Span  # noqa: E402
from ._stream import iter_messages  # noqa: E402  (needs the backend chosen above)
from ._version import __version__  # noqa: E402

if _typing.TYPE_CHECKING:
    from .cli.traces import replay
else:

    def __getattr__(name: str) -> object:
        # `replay` lives with the tools, which import more (dataclasses, pathlib, the contract's
        # tables); loading them on first use keeps `import acpwire` light for a client that never
        # calls it.
        if name == "replay":
            from .cli.traces import replay

            globals()["replay"] = replay
            return replay
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
