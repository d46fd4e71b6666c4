"""Twin of src/terminal/osc.rs: OSC strings, their bound and their dispatch (OSC 0/2 title,
OSC 8 links, OSC 9;4 progress)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._contract import MAX_LINK_BYTES, MAX_LINKS
from .utf8 import _utf8_len

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


def _uint(s: str) -> int | None:
    """An ASCII decimal, saturating at 65535; None if empty or not all digits."""
    if not s or not (s.isascii() and s.isdigit()):
        return None
    s = s.lstrip("0")
    if len(s) > 5:
        return 65535
    return min(int(s or "0"), 65535)


class OscMixin(TerminalState):
    """OSC sequences: title, OSC 8 links, OSC 9;4 progress."""

    __slots__ = ()

    def _osc_dispatch(self, text: str) -> None:
        num, sep, rest = text.partition(";")
        if not sep:
            return
        if num == "0" or num == "2":
            self._title = rest
            self._title_bytes = _utf8_len(rest)
        elif num == "8":
            _params, sep, uri = rest.partition(";")
            if not sep:
                return
            link = 0
            size = _utf8_len(uri)
            if uri and size <= MAX_LINK_BYTES:
                link = self._link_ids.get(uri, 0)
                if not link and len(self._links) <= MAX_LINKS:
                    link = len(self._links)
                    self._links.append(uri)
                    self._link_ids[uri] = link
                    self._link_bytes += size
            if link != self._link:
                self._link = link
                self._pen_id = -1
        elif num == "9":
            fields = rest.split(";")
            if fields[0] != "4":
                return
            state = _uint(fields[1]) if len(fields) > 1 else 0
            if state == 0:
                self._progress = None
            elif state == 3:
                self._progress = (3, None)
            elif state in (1, 2, 4):
                pct = _uint(fields[2]) if len(fields) > 2 else None
                self._progress = (state, None if pct is None else min(pct, 100))

    def _osc_end(self) -> None:
        if not self._osc_overflow:
            self._osc_dispatch(bytes(self._osc).decode("utf-8", "replace"))
        self._osc = bytearray()
        self._osc_overflow = False
