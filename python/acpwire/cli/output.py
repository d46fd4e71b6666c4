"""What the commands share for their output: whole writes to standard output, and usage failures."""

from __future__ import annotations

import sys


def write_out(data: bytes) -> None:
    """Write ``data`` to standard output whole, or raise ``BrokenPipeError``.

    A large write to a pipe whose reader goes away part way returns a short count rather
    than raising: the rest would be dropped silently and the command end with status 0.
    """
    sys.stdout.flush()
    out = sys.stdout.buffer
    view = memoryview(data)
    while view:
        written = out.write(view)
        if not written:
            raise BrokenPipeError("standard output accepts no more")
        view = view[written:]


def fail(command: str, message: str) -> int:
    print(f"acpwire {command}: {message}", file=sys.stderr)
    return 2
