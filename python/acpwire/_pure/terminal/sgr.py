"""Twin of src/terminal/sgr.rs: SGR, the pen's colours and attributes.

Colours: 0 is the default, 1..=256 a palette index + 1, ``RGB_BIT | 0xRRGGBB`` true colour (see
``style``). Plain SGRs met in the ground state are remembered by parameters and pen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .style import BOLD, DIM, INVERSE, ITALIC, RGB_BIT, STRIKE, UNDERLINE

if TYPE_CHECKING:
    from ._state import TerminalState
else:
    TerminalState = object

# (parameters, (fg, bg, flags)) -> (fg, bg, flags) after that SGR; shared, cleared when full.
_SGR_MEMO = 4096
_SGR_MEMO_KEY_BYTES = 64
_sgr_memo: dict[tuple[bytes, tuple[int, int, int]], tuple[int, int, int]] = {}


class SgrMixin(TerminalState):
    """SGR: the pen's colours and attributes."""

    __slots__ = ()

    def _sgr(self) -> None:
        groups = self._groups
        n = len(groups)
        fg, bg, flags = self._fg, self._bg, self._flags
        i = 0
        while i < n:
            g = groups[i]
            v = g[0]
            i += 1
            if v == 0:
                fg = bg = flags = 0
            elif v == 1:
                flags |= BOLD
            elif v == 2:
                flags |= DIM
            elif v == 3:
                flags |= ITALIC
            elif v == 4:
                if len(g) > 1 and g[1] == 0:
                    flags &= ~UNDERLINE
                else:
                    flags |= UNDERLINE
            elif v == 7:
                flags |= INVERSE
            elif v == 9:
                flags |= STRIKE
            elif v == 21:
                flags |= UNDERLINE
            elif v == 22:
                flags &= ~(BOLD | DIM)
            elif v == 23:
                flags &= ~ITALIC
            elif v == 24:
                flags &= ~UNDERLINE
            elif v == 27:
                flags &= ~INVERSE
            elif v == 29:
                flags &= ~STRIKE
            elif 30 <= v <= 37:
                fg = v - 30 + 1
            elif v == 39:
                fg = 0
            elif 40 <= v <= 47:
                bg = v - 40 + 1
            elif v == 49:
                bg = 0
            elif 90 <= v <= 97:
                fg = v - 90 + 9
            elif 100 <= v <= 107:
                bg = v - 100 + 9
            elif v == 38 or v == 48 or v == 58:
                color = -1
                if len(g) > 1:
                    # Colon form: 38:5:n, 38:2:r:g:b or 38:2:colourspace:r:g:b.
                    if g[1] == 5 and len(g) >= 3 and g[2] <= 255:
                        color = g[2] + 1
                    elif g[1] == 2 and len(g) >= 5:
                        r, gg, b = g[2:5] if len(g) == 5 else g[3:6]
                        if r <= 255 and gg <= 255 and b <= 255:
                            color = RGB_BIT | r << 16 | gg << 8 | b
                elif i < n and len(groups[i]) > 1:
                    # xterm's mixed form: 38;5:n, 38;2:r:g:b or 38;2:colourspace:r:g:b.
                    g2 = groups[i]
                    at = 2 if len(g2) > 4 else 1
                    if g2[0] == 5 and len(g2) > at and g2[at] <= 255:
                        color = g2[at] + 1
                    elif g2[0] == 2 and len(g2) >= at + 3:
                        r, gg, b = g2[at : at + 3]
                        if r <= 255 and gg <= 255 and b <= 255:
                            color = RGB_BIT | r << 16 | gg << 8 | b
                    i += 1
                elif i < n:
                    mode = groups[i][0]
                    if mode == 5:
                        if i + 1 < n:
                            idx = groups[i + 1][0]
                            if idx <= 255:
                                color = idx + 1
                            i += 2
                        else:
                            i = n
                    elif mode == 2:
                        if i + 3 < n:
                            r, gg, b = groups[i + 1][0], groups[i + 2][0], groups[i + 3][0]
                            if r <= 255 and gg <= 255 and b <= 255:
                                color = RGB_BIT | r << 16 | gg << 8 | b
                            i += 4
                        else:
                            i = n
                    else:
                        i += 1
                if color >= 0:
                    if v == 38:
                        fg = color
                    elif v == 48:
                        bg = color
        if (fg, bg, flags) != (self._fg, self._bg, self._flags):
            self._fg, self._bg, self._flags = fg, bg, flags
            self._pen_id = -1

    def _dispatch_plain_csi(self, params: bytes, final: bytes) -> None:
        if final == b"m":
            # SGR is a function of the pen and the parameters: remembered.
            pen = (self._fg, self._bg, self._flags)
            key = (params, pen)
            new = _sgr_memo.get(key)
            if new is None:
                self._plain_csi(params, 0x6D)
                # Parameters are read up to any length (each saturates): only short ones are
                # remembered, so the memo's memory stays bounded.
                if len(params) <= _SGR_MEMO_KEY_BYTES:
                    if len(_sgr_memo) >= _SGR_MEMO:
                        _sgr_memo.clear()
                    _sgr_memo[key] = (self._fg, self._bg, self._flags)
            elif new != pen:
                self._fg, self._bg, self._flags = new
                self._pen_id = -1
        else:
            self._plain_csi(params, final[0])
