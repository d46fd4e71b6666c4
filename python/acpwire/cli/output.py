"""What the commands share for their output: whole writes to standard output, usage failures,
whether to colour, and the trace paths a command was given."""

from __future__ import annotations

import glob
import os
import re
import sys
from typing import IO, Literal

COLOR_CHOICES = ("auto", "always", "never")
ColorChoice = Literal["auto", "always", "never"]

# Files a directory given to `check` or `stats` contributes: the trace formats in use.
TRACE_SUFFIXES = (".ndjson", ".jsonl")
_GLOB_CHARACTERS = frozenset("*?[")


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


def safe_json(data: bytes) -> bytes:
    """JSON text with DEL and C1 controls (which JSON leaves as they are) written as
    ``\\u`` escapes: the same JSON value, and nothing a terminal would obey."""
    if b"\x7f" not in data and b"\xc2" not in data:
        return data
    data = data.replace(b"\x7f", b"\\u007f")
    return re.sub(rb"\xc2([\x80-\x9f])", lambda m: b"\\u00%02x" % m.group(1)[0], data)


def fail(command: str, message: str) -> int:
    print(f"acpwire {command}: {message}", file=sys.stderr)
    return 2


def use_color(choice: str, stream: IO[str] | None = None) -> bool:
    """Whether to colour output: ``always``, ``never``, or (``auto``) when ``stream``
    (standard output by default) is a terminal, ``NO_COLOR`` is unset or empty
    (https://no-color.org) and ``TERM`` is not ``dumb``."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    stream = sys.stdout if stream is None else stream
    if stream is None or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (ValueError, AttributeError):  # closed, or not a file
        return False


def paint(text: str, style: str, color: bool) -> str:
    """``text`` in a ``rich`` style (``"bold red"``) when ``color``, else as it is. ``text``
    is shown as it is: a caller escapes what came from a trace first."""
    if not color or not text:
        return text
    from rich.color import ColorSystem
    from rich.style import Style

    return Style.parse(style).render(text, color_system=ColorSystem.STANDARD)


def expand_paths(arguments: list[str]) -> tuple[list[str], list[str]]:
    """The trace files named by ``arguments`` and the arguments that named none.

    A file (or ``-``) is itself; a directory gives its ``*.ndjson`` and ``*.jsonl`` files,
    searched recursively, in name order; anything else that holds ``*``, ``?`` or ``[`` is a
    glob (``**`` recursive), its matches in name order. A path named twice is kept once.
    """
    files: list[str] = []
    missing: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        if path not in seen:
            seen.add(path)
            files.append(path)

    for argument in arguments:
        if argument == "-" or os.path.isfile(argument):
            add(argument)
        elif os.path.isdir(argument):
            found = sorted(
                os.path.join(root, name)
                for root, _dirs, names in os.walk(argument)
                for name in names
                if name.endswith(TRACE_SUFFIXES)
            )
            if not found:
                missing.append(argument)
            for path in found:
                add(path)
        elif _GLOB_CHARACTERS & set(argument):
            matches = sorted(p for p in glob.glob(argument, recursive=True) if os.path.isfile(p))
            if not matches:
                missing.append(argument)
            for path in matches:
                add(path)
        else:
            add(argument)  # reported unreadable by the command, with the reason
    return files, missing
