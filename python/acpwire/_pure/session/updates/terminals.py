"""Twin of src/session/updates/terminals.rs: terminals, their output, and the store's bound.

Each terminal is a live ``Terminal``; what all of a store's terminals hold together is
bounded by ``max_terminal_bytes``, past which the ones written least recently are cleared.
"""

from __future__ import annotations

from ...._errors import TerminalDataError
from ...base64 import _decode_base64
from ...terminal import Terminal
from ..fields import _patch
from ..model import _TerminalEntry
from ..parts import JsonObject, _StoreParts


class _Terminals(_StoreParts):
    """The handlers of terminal updates (a part of Sessions)."""

    __slots__ = ()

    def _terminal_entry(self, sid: str, tid: str, source: str = "agent") -> _TerminalEntry:
        """The terminal ``tid``, made (and placed on the timeline) on first sight, run by
        ``source``: "agent" (v2 terminal updates) or "client" (v1 terminal/create)."""
        s = self._sessions[sid]
        entry = s._terminals.get(tid)
        if entry is None:
            cols, scrollback, max_bytes = s._term_args
            term = Terminal(cols=cols, scrollback=scrollback, max_bytes=max_bytes)
            entry = _TerminalEntry({"terminalId": tid, "source": source}, term)
            s._own("_terminals")[tid] = entry
            s._timeline.append(("terminal", tid, None))
        return entry

    def _terminal_update(self, sid: str, kind: str, u: JsonObject) -> None:
        tid = u.get("terminalId")
        if type(tid) is not str:
            self._error(sid, "terminal_update: terminalId must be a string")
            return
        # A snapshot that is not base64 cannot be read: like any optional object that cannot,
        # it is left out.
        reset = False
        snapshot = b""
        # The snapshot's `_meta`, kept as the entry's `output` (its `data` is the rendering):
        # replaced with each snapshot read, cleared by one without.
        output_meta = None
        if "output" in u:
            output = u["output"]
            if output is None:
                reset = True
            elif type(output) is dict:
                data = output.get("data")
                if type(data) is str:
                    try:
                        snapshot = _decode_base64(data)
                        reset = True
                        meta = output.get("_meta")
                        if type(meta) is dict:
                            output_meta = {"_meta": meta}
                        elif meta is not None:
                            self._notes.append(
                                "terminal_update: output._meta must be an object or null (ignored)"
                            )
                    except TerminalDataError:
                        self._notes.append(
                            "terminal_update: output.data is not valid base64 (output ignored)"
                        )
        entry = self._terminal_entry(sid, tid)
        fields = entry.fields
        for k, v in u.items():
            if k != "sessionUpdate" and k != "terminalId" and k != "output":
                _patch(fields, k, v)
        if reset:
            _patch(fields, "output", output_meta)
            self._hold_terminal_output(sid, tid, entry, entry.term._reset_for_store(snapshot))
        self._change(sid, "terminal", tid)

    def _terminal_chunk(self, sid: str, kind: str, u: JsonObject) -> None:
        tid = u.get("terminalId")
        if type(tid) is not str:
            self._error(sid, "terminal_output_chunk: terminalId must be a string")
            return
        data = u.get("data")
        if type(data) is not str:
            self._error(sid, "terminal_output_chunk: data must be a string")
            return
        try:
            raw = _decode_base64(data)
        except TerminalDataError:
            self._error(sid, "terminal_output_chunk: data is not valid base64")
            return
        entry = self._sessions[sid]._terminals.get(tid)
        if entry is None:
            entry = self._terminal_entry(sid, tid)
        self._hold_terminal_output(sid, tid, entry, entry.term._feed_for_store(raw))
        self._changes[(sid, "terminal", tid)] = None

    def _hold_terminal_output(self, sid: str, tid: str, entry: _TerminalEntry, held: int) -> None:
        """Count what the terminal just written holds now (``held``) against
        ``max_terminal_bytes``, and clear the terminals written least recently until the total
        fits (never this one: its own bounds hold it)."""
        self._terminal_held += held - entry.held
        entry.held = held
        order = self._terminal_order
        key = (sid, tid)
        # A stream of chunks to one terminal leaves the order as it is.
        if next(reversed(order), None) != key:
            order.pop(key, None)
            order[key] = entry
        while self._terminal_held > self._terminal_budget and len(order) > 1:
            (victim_sid, victim_tid), victim = order.popitem(last=False)
            # One that holds nothing a clear would drop loses nothing: it is not cleared, nor
            # marked truncated. A clear keeps the links its pen and saved cursors carry.
            kept = victim.term._clear_for_store(victim.held)
            if kept is not None:
                self._terminal_held -= victim.held - kept
                victim.held = kept
                self._change(victim_sid, "terminal", victim_tid)
