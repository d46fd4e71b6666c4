"""Twin of src/terminal/views/text.rs: logical lines, soft-wrapped rows joined, for ``text``,
``lines()`` and (with their style runs) ``spans()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._state import TerminalState
else:
    TerminalState = object


class TextViewMixin(TerminalState):
    """The logical lines of ``text`` and ``lines()``."""

    __slots__ = ()

    def _logical(self, styled: bool) -> list[tuple[str, list[tuple[str, int]]]]:
        out: list[tuple[str, list[tuple[str, int]]]] = []
        w = self._w
        parts: list[str] = []
        # [text, style id] pairs, lists so that a run grows in place.
        runs: list[list[Any]] = []
        for line in (*self._sb, *self._prim):
            chars = line.chars
            if styled:
                styles = line.styles
                n = len(styles)
                i = 0
                while i < n:
                    sid = styles[i]
                    j = i + 1
                    while j < n and styles[j] == sid:
                        j += 1
                    text = "".join(chars[i:j])
                    if text:
                        if runs and runs[-1][1] == sid:
                            runs[-1][0] += text
                        else:
                            runs.append([text, sid])
                    i = j
            parts.append("".join(chars))
            if line.wrapped:
                pad = w - line.wide_wrap - len(chars)
                if pad > 0:
                    parts.append(" " * pad)
                    if styled:
                        if runs and runs[-1][1] == 0:
                            runs[-1][0] += " " * pad
                        else:
                            runs.append([" " * pad, 0])
                continue
            text = "".join(parts).rstrip(" ")
            parts = []
            if styled:
                self._trim_runs(runs)
            out.append((text, [(t, s) for t, s in runs]))
            runs = []
        if parts:
            text = "".join(parts).rstrip(" ")
            if styled:
                self._trim_runs(runs)
            out.append((text, [(t, s) for t, s in runs]))
        # Trailing empty lines go: for spans, those without a run left.
        k = 1 if styled else 0
        while out and not out[-1][k]:
            out.pop()
        return out
