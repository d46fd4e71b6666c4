"""Twin of ``reduce_ndjson`` in src/python/session.rs: a whole NDJSON trace reduced into a store."""

from __future__ import annotations

import os
from typing import Any, BinaryIO

from .reducer import Sessions

_READ_BYTES = 1 << 20


# Sessions' keyword arguments, read off its signature rather than listed again.
_SESSIONS_OPTIONS = frozenset(
    Sessions.__init__.__code__.co_varnames[1 : Sessions.__init__.__code__.co_argcount]
)


def reduce_ndjson(source: str | os.PathLike[str] | BinaryIO, **options: Any) -> Sessions:
    """Reduce a whole NDJSON trace (a path or a binary file) into a new Sessions.

    ``options`` are Sessions' keyword arguments.
    """
    for key in options:
        if key not in _SESSIONS_OPTIONS:
            raise TypeError(f"reduce_ndjson() got an unexpected keyword argument {key!r}")
    store = Sessions(**options)
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            _feed_file(store, f)
    elif hasattr(source, "read"):
        _feed_file(store, source)
    else:
        kind = type(source).__name__
        raise TypeError(f"reduce_ndjson() needs a path or a binary file with read(), not {kind}")
    store.finish()
    return store


def _feed_file(store: Sessions, f: BinaryIO) -> None:
    while True:
        data = f.read(_READ_BYTES)
        if isinstance(data, str):
            raise TypeError("reduce_ndjson needs a binary file")
        if data is None:
            # A non-blocking stream with nothing to read yet: not the end of the trace.
            raise TypeError("reduce_ndjson needs a blocking binary file: read() returned None")
        if not data:
            break
        store.feed(data)
