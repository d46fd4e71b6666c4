"""Twin of src/session/client_terminals.rs: v1 client terminals, from the terminal/* requests.

A ``terminal/create`` answered with a ``terminalId`` makes a terminal entry (``source:
"client"``); each ``terminal/output`` response's ``output`` (the output retained so far)
replaces what it shows, rendered by the same live Terminal as v2's; the other requests' answers
set its exit status and its ``killed`` and ``released`` flags.
"""

from __future__ import annotations

from typing import Any

from .parts import JsonObject, _StoreParts
from .rpc import _OTHER, _TERMINAL_ASK, _TERMINAL_CREATE, _Pending

# The members of a terminal/create request kept on its terminal, as sent.
_CREATE_FIELDS = ("command", "args", "cwd", "env", "outputByteLimit")
# The requests whose result must be an object; any result says a kill or release was done (a
# void result may be written `null`).
_RESULT_OBJECTS = frozenset(("terminal/output", "terminal/wait_for_exit"))


class _ClientTerminals(_StoreParts):
    """The handlers of terminal/* requests and their answers (a part of Sessions)."""

    __slots__ = ()

    def _terminal_pending(self, method: str, params: Any) -> Any:
        """What the answer to a terminal/* request updates, when its params name a session
        (and, but for terminal/create, a terminal)."""
        sid = self._params_session(method, params)
        if sid is None:
            return _Pending(_OTHER)
        if method == "terminal/create":
            if type(params.get("command")) is not str:
                self._error(sid, "terminal/create: params.command must be a string")
            fields = {"source": "client"}
            for key in _CREATE_FIELDS:
                value = params.get(key)
                if value is not None:
                    fields[key] = value
            what = _Pending(_TERMINAL_CREATE, sid)
            what.fields = fields
            return what
        tid = params.get("terminalId")
        if type(tid) is not str:
            self._error(sid, f"{method}: params.terminalId must be a string")
            return _Pending(_OTHER)
        what = _Pending(_TERMINAL_ASK, sid, method=method)
        what.tid = tid
        return what

    def _terminal_created(
        self, sid: str, fields: JsonObject, has_result: bool, result: Any
    ) -> None:
        """A result with a terminalId makes the terminal (an error answer makes none)."""
        if not has_result:
            return
        tid = result.get("terminalId") if type(result) is dict else None
        if type(tid) is not str:
            self._error(sid, "terminal/create: result.terminalId must be a string")
            return
        self._session(sid)
        entry = self._terminal_entry(sid, tid, "client")
        entry.fields.update(fields)
        self._change(sid, "terminal", tid)

    def _terminal_answered(
        self, sid: str, tid: str, method: str, has_result: bool, result: Any
    ) -> None:
        """The answer to a terminal/* request of terminal ``tid``: an error changes nothing."""
        if not has_result:
            return
        entry = self._session(sid)._terminals.get(tid)
        if entry is None:
            self._error(sid, f"{method}: params.terminalId names no terminal of the session")
            return
        if type(result) is not dict and method in _RESULT_OBJECTS:
            self._error(sid, f"{method}: result must be an object")
            return
        notes = []
        if method == "terminal/output":
            output = result.get("output")
            if type(output) is not str:
                self._error(sid, "terminal/output: result.output must be a string")
                return
            truncated = result.get("truncated")
            if type(truncated) is bool:
                entry.source_truncated = truncated
            else:
                notes.append("terminal/output: result.truncated must be a boolean (ignored)")
            status = result.get("exitStatus")
            if type(status) is dict:
                entry.fields["exitStatus"] = status
            elif status is not None:
                notes.append(
                    "terminal/output: result.exitStatus must be an object or null (ignored)"
                )
            self._hold_terminal_output(
                sid,
                tid,
                entry,
                entry.term._reset_for_store(output.encode("utf-8", "surrogatepass")),
            )
        elif method == "terminal/wait_for_exit":
            entry.fields["exitStatus"] = result
        elif method == "terminal/kill":
            entry.fields["killed"] = True
        else:
            entry.fields["released"] = True
        for note in notes:
            self._error(sid, note)
        self._change(sid, "terminal", tid)
