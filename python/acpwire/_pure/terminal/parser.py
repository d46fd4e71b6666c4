"""Twin of src/terminal/parser.rs: the escape parser, Paul Williams' state machine (as vte's).

In the ground state, printable runs, plain CSIs and C0 controls are found by regex searches, many
bytes at a time; every other sequence goes through the state machine byte by byte (collecting
intermediates and parameters), with the same result. Bounds: see docs/behaviour/terminal.md.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..._contract import MAX_OSC_BYTES, MAX_PARAMS

# Parser states (Paul Williams' DEC parser, as in vte).
(
    GROUND,
    ESCAPE,
    ESC_INTER,
    CSI_ENTRY,
    CSI_PARAM,
    CSI_INTER,
    CSI_IGNORE,
    DCS_ENTRY,
    DCS_PARAM,
    DCS_INTER,
    DCS_IGNORE,
    DCS_PASS,
    OSC_STRING,
    SOS_STRING,
) = range(14)

_CTRL = re.compile(rb"[\x00-\x1f\x7f]")
# A whole CSI of at most 16 plain decimal parameters: the common case, run without the state
# machine (which gives the same result, byte by byte).
_PLAIN_CSI = re.compile(rb"\x1b\[((?:[0-9]*;){0,15}[0-9]*)([\x40-\x7e])")
# `_advance_small`'s pieces: a printable run, a plain CSI (as `_PLAIN_CSI`), a C0 control
# other than ESC, or an ESC beginning anything else (all groups empty).
_GROUND_TOKENS = re.compile(
    rb"([^\x00-\x1f\x7f]+)|\x1b\[((?:[0-9]*;){0,15}[0-9]*)([\x40-\x7e])|([\x00-\x1a\x1c-\x1f\x7f])|\x1b"
)

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object
# Chunks up to this size take `_advance_small` first; on larger ones a late escape sequence
# would cost a wasted pass.
_SMALL_CHUNK = 1024
_OSC_END = re.compile(rb"[\x07\x18\x1a\x1b]")
_STRING_END = re.compile(rb"[\x18\x1a\x1b]")
# C0 bytes that an OSC string ignores (BEL, CAN, SUB and ESC end it).
_OSC_DROP = bytes(b for b in range(0x20) if b not in (0x07, 0x18, 0x1A, 0x1B))


class ParserMixin(TerminalState):
    """The escape parser's state machine and its ground-state fast paths."""

    __slots__ = ()

    def _advance(self, data: bytes) -> None:
        n = len(data)
        i = self._advance_small(data) if self._state == GROUND and n <= _SMALL_CHUNK else 0
        while i < n:
            state = self._state
            if state == GROUND:
                m = _CTRL.search(data, i)
                j = m.start() if m is not None else n
                if j > i:
                    self._print_bytes(data[i:j])
                if j == n:
                    return
                if self._utf8_tail:
                    self._end_utf8_tail()
                b = data[j]
                i = j + 1
                if b == 0x0D:
                    self.col = 0
                    self._last = self._repeatable = ""
                elif b == 0x1B:
                    self._repeatable = self._last
                    self._last = ""
                    m = _PLAIN_CSI.match(data, j)
                    if m is not None:
                        i = m.end()
                        self._dispatch_plain_csi(*m.groups())
                        continue
                    self._reset_params()
                    self._state = ESCAPE
                else:
                    self._execute(b)
            elif state == OSC_STRING:
                m = _OSC_END.search(data, i)
                j = m.start() if m is not None else n
                if j > i and not self._osc_overflow:
                    chunk = data[i:j].translate(None, _OSC_DROP)
                    if len(self._osc) + len(chunk) > MAX_OSC_BYTES:
                        self._osc_overflow = True
                        self._osc = bytearray()
                    else:
                        self._osc += chunk
                if j == n:
                    return
                b = data[j]
                i = j + 1
                self._osc_end()
                if b == 0x1B:
                    self._reset_params()
                    self._state = ESCAPE
                else:
                    self._state = GROUND
            elif state in (DCS_PASS, DCS_IGNORE, SOS_STRING):
                # Payloads of these strings are consumed and never stored.
                m = _STRING_END.search(data, i)
                if m is None:
                    return
                j = m.start()
                i = j + 1
                if data[j] == 0x1B:
                    self._reset_params()
                    self._state = ESCAPE
                else:
                    self._state = GROUND
            else:
                self._step(data[i])
                i += 1

    def _advance_small(self, data: bytes) -> int:
        """``_advance`` from the ground state over one regex split of ``data`` into printable runs,
        plain CSIs and C0 controls, the pieces of typical short chunks: fewer calls per piece.

        Returns where ``_advance`` goes on: at the first other escape sequence, or the end.
        """
        plain_csis = 0
        for run, params, final, control in _GROUND_TOKENS.findall(data):
            if run:
                if run.isascii() and not self._utf8_tail:
                    # Printable ASCII, nothing held back: one narrow cell a byte (`_print`'s
                    # first case, without the decoder).
                    text = run.decode()
                    self._last = text[-1]
                    self._put_narrow(text)
                else:
                    self._print_bytes(run)
                continue
            if self._utf8_tail:
                self._end_utf8_tail()
            if final:
                plain_csis += 1
                self._repeatable = self._last
                self._last = ""
                self._dispatch_plain_csi(params, final)
            elif control:
                b = control[0]
                if b == 0x0D:
                    self.col = 0
                    self._last = self._repeatable = ""
                else:
                    self._execute(b)
            else:
                # Every ESC before this one began a plain CSI.
                at = -1
                for _ in range(plain_csis + 1):
                    at = data.index(b"\x1b", at + 1)
                return at
        return len(data)

    def _anywhere(self, b: int) -> None:
        if b == 0x1B:
            self._reset_params()
            self._state = ESCAPE
        elif b == 0x18 or b == 0x1A:
            self._state = GROUND

    def _step(self, b: int) -> None:
        state = self._state
        if b < 0x20:
            if b == 0x18 or b == 0x1A or b == 0x1B:
                self._anywhere(b)
            elif state <= CSI_IGNORE:
                # ESC and CSI states execute C0 controls in passing; DCS entry states ignore them.
                self._execute(b)
            return
        if b >= 0x7F:
            return
        if state == ESCAPE:
            if b < 0x30:
                self._collect(b)
                self._state = ESC_INTER
            elif b == 0x5B:
                self._state = CSI_ENTRY
            elif b == 0x5D:
                self._osc = bytearray()
                self._osc_overflow = False
                self._state = OSC_STRING
            elif b == 0x50:
                self._state = DCS_ENTRY
            elif b == 0x58 or b == 0x5E or b == 0x5F:
                self._state = SOS_STRING
            else:
                self._state = GROUND
                self._esc_dispatch(b)
        elif state == ESC_INTER:
            if b < 0x30:
                self._collect(b)
            else:
                self._state = GROUND
                self._esc_dispatch(b)
        elif state in (CSI_ENTRY, CSI_PARAM):
            if b < 0x30:
                self._collect(b)
                self._state = CSI_INTER
            elif b < 0x3A:
                self._param_digit(b)
                self._state = CSI_PARAM
            elif b == 0x3A:
                self._param_sub()
                self._state = CSI_PARAM
            elif b == 0x3B:
                self._param_next()
                self._state = CSI_PARAM
            elif b < 0x40:
                if state == CSI_ENTRY:
                    self._collect(b)
                    self._state = CSI_PARAM
                else:
                    self._state = CSI_IGNORE
            else:
                self._csi_end(b)
        elif state == CSI_INTER:
            if b < 0x30:
                self._collect(b)
            elif b < 0x40:
                self._state = CSI_IGNORE
            else:
                self._csi_end(b)
        elif state == CSI_IGNORE:
            if b >= 0x40:
                self._state = GROUND
        elif state in (DCS_ENTRY, DCS_PARAM):
            if b < 0x30:
                self._state = DCS_INTER
            elif b < 0x3C:
                self._state = DCS_PARAM
            elif b < 0x40:
                self._state = DCS_PARAM if state == DCS_ENTRY else DCS_IGNORE
            else:
                self._state = DCS_PASS
        elif state == DCS_INTER:
            if b < 0x30:
                pass
            elif b < 0x40:
                self._state = DCS_IGNORE
            else:
                self._state = DCS_PASS

    def _csi_end(self, final: int) -> None:
        self._state = GROUND
        self._param_next()  # the final byte ends the last parameter as `;` ends the others
        if not self._ignoring:
            self._csi(chr(final))

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
