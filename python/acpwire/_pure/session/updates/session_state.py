"""Twin of src/session/updates/session_state.rs: the session-level updates.

Commands, config options and mode, info, usage, the foreground state, notices and subagents.
"""

from __future__ import annotations

from collections import deque

from ...._contract import MAX_NOTICES
from ..fields import _patch, _set_extras, _without
from ..parts import JsonObject, _StoreParts
from ..tables import V1
from ..turns import close_turn

_U64 = 1 << 64


_REPLACE_FIELDS = {
    "available_commands_update": "availableCommands",
    "config_option_update": "configOptions",
    "current_mode_update": "currentModeId",
}
_REPLACE_SKIP = {
    kind: frozenset(("sessionUpdate", field)) for kind, field in _REPLACE_FIELDS.items()
}
_STATE_SKIP = frozenset(("sessionUpdate", "state", "stopReason"))
_STATE_SKIP_NOT_IDLE = frozenset(("sessionUpdate", "state"))


class _SessionState(_StoreParts):
    """The handlers of session-level updates (a part of Sessions)."""

    __slots__ = ()

    def _replace(self, sid: str, kind: str, u: JsonObject) -> None:
        field = _REPLACE_FIELDS[kind]
        value = u.get(field)
        if field == "currentModeId":
            ok, want = type(value) is str, "a string"
        else:
            ok, want = type(value) is list, "an array"
        if not ok:
            self._error(sid, f"{kind}: {field} must be {want}")
            return
        s = self._sessions[sid]
        if field == "availableCommands":
            s._available_commands = value
        elif field == "configOptions":
            s._config_options = value
        else:
            s._current_mode_id = value
        moved = _set_extras(s, kind, u, _REPLACE_SKIP[kind])
        self._change(sid, "session", field)
        if moved:
            self._change(sid, "session", "updateExtras")

    def _info(self, sid: str, kind: str, u: JsonObject) -> None:
        info = self._sessions[sid]._info
        for k, v in u.items():
            if k != "sessionUpdate":
                _patch(info, k, v)
        self._change(sid, "session", "info")

    def _usage(self, sid: str, kind: str, u: JsonObject) -> None:
        for field in ("used", "size"):
            value = u.get(field)
            if type(value) is not int or value < 0:
                self._error(sid, f"usage_update: {field} must be a non-negative integer")
                return
            if value >= _U64:  # a uint64 in the schema
                self._error(sid, f"usage_update: {field} must be below 2**64")
                return
        self._sessions[sid]._usage = _without(u, ("sessionUpdate",))
        self._change(sid, "session", "usage")

    def _state(self, sid: str, kind: str, u: JsonObject) -> None:
        state = u.get("state")
        if type(state) is not str:
            self._error(sid, "state_update: state must be a string")
            return
        s = self._sessions[sid]
        closed = False
        # `stopReason` is an idle state's; on another it is an unknown field, kept raw.
        if state == "idle":
            stop = u.get("stopReason")
            if type(stop) is not str:
                stop = None
            if s._turn_start is not None:
                # The idle report closes the turn going on, with its stop reason and usage.
                s._turn_start = None
                usage = u.get("usage")
                close_turn(s, s._turn_record, stop, usage if type(usage) is dict else None)
                closed = True
            skip = _STATE_SKIP
        else:
            stop = None
            skip = _STATE_SKIP_NOT_IDLE
        # Named when set, also to the value it had, or cleared.
        stopped = stop is not None or s.stop_reason_ is not None
        s.stop_reason_ = stop
        s.state_ = state
        if s._update_extras or not u.keys() <= skip:
            moved = _set_extras(s, "state_update", u, skip)
        else:
            moved = False  # nothing to keep, and nothing kept before
        self._changes[(sid, "session", "state")] = None
        if stopped:
            self._changes[(sid, "session", "stopReason")] = None
        if moved:
            self._changes[(sid, "session", "updateExtras")] = None
        if closed:
            self._changes[(sid, "session", "turns")] = None

    def _notice(self, sid: str, kind: str, u: JsonObject) -> None:
        if type(u.get("severity")) is not str:
            self._error(sid, "notice: severity must be a string")
            return
        title = u.get("title")
        if type(title) is not str or not title:
            self._error(sid, "notice: title must be a non-empty string")
            return
        s = self._sessions[sid]
        if s._notices is None:
            s._notices = deque(maxlen=MAX_NOTICES)
        s._notices.append(_without(u, ("sessionUpdate",)))
        self._change(sid, "session", "notices")

    def _subagent(self, sid: str, kind: str, u: JsonObject) -> None:
        aid = u.get("subagentSessionId")
        if type(aid) is not str:
            aid = u.get("sessionId")
            if type(aid) is not str:
                self._error(sid, "subagent_update: subagentSessionId must be a string")
                return
        null_clears = self._mode != V1
        s = self._sessions[sid]
        entry = s._subagents.get(aid)
        if entry is None:
            entry = s._own("_subagents")[aid] = {}
        for k, v in u.items():
            if k == "sessionUpdate" or (v is None and not null_clears):
                continue
            _patch(entry, k, v)
        self._change(sid, "subagent", aid)
