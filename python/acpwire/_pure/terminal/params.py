"""Twin of src/terminal/params.rs: CSI parameters, as the parser collects them.

At most ``MAX_PARAMS`` parameters and sub-parameters, each saturating at 65535; past that the
sequence is ignored. A parameter given as 0 or not at all takes its default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object


def _param(s: bytes) -> int:
    """A CSI parameter as the state machine accumulates it: decimal, saturating at 65535."""
    if len(s) > 5:
        s = s.lstrip(b"0")
        if len(s) > 5:
            return 65535
    return min(int(s or b"0"), 65535)


class ParamsMixin(TerminalState):
    """CSI parameters and intermediates as the state machine collects them."""

    __slots__ = ()

    def _arg(self, i: int, default: int) -> int:
        groups = self._groups
        v = groups[i][0] if i < len(groups) else 0
        return v if v else default
