"""Twin of src/terminal/utf8.rs: incremental UTF-8 decoding of printable runs.

Invalid bytes become U+FFFD exactly as ``bytes.decode("utf-8", "replace")`` does, across chunk
boundaries: an unfinished sequence is held back until the next run or control byte.
"""

from __future__ import annotations

from codecs import utf_8_decode
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


def _utf8_len(text: str) -> int:
    """The UTF-8 length of ``text`` (lone surrogates, should one come, as three bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


class Utf8Mixin(TerminalState):
    """Printable runs through an incremental UTF-8 decoder."""

    __slots__ = ()

    def _print_bytes(self, run: bytes) -> None:
        """Print a run of printable bytes as an incremental "replace" decoder would (without its
        per-call cost), holding back an unfinished UTF-8 sequence for the next run."""
        tail = self._utf8_tail
        if tail:
            run = tail + run
        s, used = utf_8_decode(run, "replace", False)
        self._utf8_tail = run[used:] if used < len(run) else b""
        if s:
            self._print(s)

    def _end_utf8_tail(self) -> None:
        """A control byte ends an incomplete UTF-8 sequence: one U+FFFD, as CPython."""
        self._print(utf_8_decode(self._utf8_tail, "replace", True)[0])
        self._utf8_tail = b""
