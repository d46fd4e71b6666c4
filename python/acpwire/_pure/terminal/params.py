"""Twin of src/terminal/params.rs: CSI parameters, sub-parameters and intermediates.

At most ``MAX_PARAMS`` parameters and sub-parameters, each saturating at 65535; past that the
sequence is ignored.
"""

from __future__ import annotations

MAX_PARAMS = 32


def _param(s: bytes) -> int:
    """A CSI parameter as the state machine accumulates it: decimal, saturating at 65535."""
    if len(s) > 5:
        s = s.lstrip(b"0")
        if len(s) > 5:
            return 65535
    return min(int(s or b"0"), 65535)


class ParamsMixin:
    """CSI parameters and intermediates as the state machine collects them."""

    __slots__ = ()

    def _reset_params(self) -> None:
        self._inter = ""
        self._ignoring = False
        self._param = 0
        self._groups: list[list[int]] = []
        self._cur: list[int] = []
        self._count = 0
        # Whether the first parameter was written with digits (`CSI 0 T` is not `CSI T`).
        self._first_digits = False

    def _collect(self, b: int) -> None:
        if len(self._inter) == 2:
            self._ignoring = True
        else:
            self._inter += chr(b)

    def _param_digit(self, b: int) -> None:
        if self._count == MAX_PARAMS:
            self._ignoring = True
        else:
            if self._count == 0:
                self._first_digits = True
            self._param = min(self._param * 10 + (b - 0x30), 65535)

    def _param_next(self) -> None:
        if self._count == MAX_PARAMS:
            self._ignoring = True
        else:
            self._cur.append(self._param)
            self._groups.append(self._cur)
            self._cur = []
            self._count += 1
            self._param = 0

    def _param_sub(self) -> None:
        if self._count == MAX_PARAMS:
            self._ignoring = True
        else:
            self._cur.append(self._param)
            self._count += 1
            self._param = 0

    def _arg(self, i: int, default: int) -> int:
        groups = self._groups
        v = groups[i][0] if i < len(groups) else 0
        return v if v else default
