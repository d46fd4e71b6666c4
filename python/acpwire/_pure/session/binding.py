"""Twin of ``replay`` in src/python/session.rs: a whole NDJSON trace reduced into a new store."""

from __future__ import annotations

import os
from typing import Any, BinaryIO

from .reducer import Sessions

_READ_BYTES = 1 << 20


# Sessions' keyword arguments, read off its signature rather than listed again.
_SESSIONS_OPTIONS = frozenset(
    Sessions.__init__.__code__.co_varnames[1 : Sessions.__init__.__code__.co_argcount]
)


def replay(source: str | os.PathLike | BinaryIO, **options: Any) -> Sessions:
    """Reduce a whole NDJSON trace (a path or a binary file) into a new Sessions.

    ``options`` are Sessions' keyword arguments.
    """
    for key in options:
        if key not in _SESSIONS_OPTIONS:
            raise TypeError(f"replay() got an unexpected keyword argument {key!r}")
    store = Sessions(**options)
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            _replay_file(store, f)
    elif hasattr(source, "read"):
        _replay_file(store, source)
    else:
        raise TypeError(
            f"replay() needs a path or a binary file with read(), not {type(source).__name__}"
        )
    store.finish()
    return store


def _replay_file(store: Sessions, f: BinaryIO) -> None:
    while True:
        data = f.read(_READ_BYTES)
        if isinstance(data, str):
            raise TypeError("replay needs a binary file")
        if data is None:
            # A non-blocking stream with nothing to read yet: not the end of the trace.
            raise TypeError("replay needs a blocking binary file: read() returned None")
        if not data:
            break
        store.feed(data)
