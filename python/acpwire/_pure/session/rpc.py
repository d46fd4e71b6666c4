"""Twin of src/session/rpc.rs: JSON-RPC requests and responses, and the prompt turns.

Requests are tracked by side and id until answered (at most ``MAX_PENDING``); a response is
matched to the pending request it answers, and applies what that request waits for: the
negotiated version, a session's setup, a prompt's answer and its turn, a permission's outcome.
"""

from __future__ import annotations

import math
from typing import Any

from ..._contract import MAX_PENDING
from .check import _CONFIG_OPTION, _repair_items
from .parts import JsonObject, _StoreParts
from .tables import AGENT_METHODS, CLIENT_METHODS, RESPONSE_KEYS, UNKNOWN, V1, V2, V2_PROMPT_KEYS
from .turns import answer_turn, close_turn, join_turn, open_turn

_CLIENT, _AGENT = 0, 1
_SENDERS = {"client": _CLIENT, "agent": _AGENT}
# Pending request kinds.
(
    _INITIALIZE,
    _NEW,
    _LOAD,
    _PROMPT,
    _PERMISSION,
    _SET_MODE,
    _TERMINAL_CREATE,
    _TERMINAL_ASK,
    _OTHER,
) = range(9)
_TERMINAL_METHODS = frozenset(
    (
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    )
)


# Keys of a prompt or permission entry that the reducer sets: params of those names are not
# kept, so that an unanswered request cannot pass for an answered one.
_ENTRY_KEYS = frozenset(("sessionId", "requestId", "response", "error", "cancelRequested"))


def _id_key(rid: Any) -> Any:
    """The key of a trackable request id, or None: a string or an integer is its own key (a
    str never equals an int, and bool, which would equal 0 or 1, is not `int` here); a finite
    float (a number written with a fraction or an exponent) is keyed by its exact value apart
    from the integers, so that ``2.0`` and ``2`` stay different ids, as in the native backend."""
    kind = type(rid)
    if kind is str or kind is int:
        return rid
    if kind is float and math.isfinite(rid):
        return ("f", rid.hex())
    return None


def _sender(sender: Any) -> int | None:
    if sender is None:
        return None
    # A str subclass (a `StrEnum` member) by its stored value, as the binding reads it.
    side = _SENDERS.get(str.__str__(sender)) if isinstance(sender, str) else None
    if side is None:
        raise ValueError(f"sender must be 'client' or 'agent', not {sender!r}")
    return side


def _request_entry(rid: Any, params: JsonObject, has_id: bool) -> JsonObject:
    """The params of a request naming its session after its id, less the _ENTRY_KEYS."""
    entry = {"requestId": rid if has_id else None}
    for key, value in params.items():
        if key not in _ENTRY_KEYS:
            entry[key] = value
    return entry


def _answer(entry: JsonObject, has_result: bool, result: Any, error: Any) -> None:
    if has_result:
        entry["response"] = result
    else:
        entry["error"] = error


class _Pending:
    """A request awaiting its response: what the response updates (by kind: the session, the
    index of its prompt or permission entry, the rules in force when a prompt was sent, the
    method, the mode asked for), and the keys a result must have to be its response."""

    __slots__ = (
        "fields",
        "index",
        "keys",
        "kind",
        "method",
        "mode",
        "mode_id",
        "sid",
        "slot",
        "tid",
    )

    def __init__(
        self,
        kind: int,
        sid: str = "",
        index: int = 0,
        mode: int = UNKNOWN,
        method: str = "",
        mode_id: str = "",
    ) -> None:
        # A kind reads only the members it sets; the others keep these defaults.
        self.kind = kind
        self.sid = sid
        self.index = index
        self.mode = mode
        self.method = method
        self.mode_id = mode_id
        # The turn a prompt opened or joined (see `turns`), the terminal a terminal/* request
        # names, and the fields a terminal/create asked for.
        self.slot: tuple[int, int | None] = (0, None)
        self.tid = ""
        self.fields: JsonObject = {}
        # Set by `_track`, which alone stores an entry.
        self.keys: tuple[str, ...] = ()


class _Rpc(_StoreParts):
    """Requests and responses: the methods of Sessions that track and answer them."""

    __slots__ = ()

    def _track_if_contested(self, side: int, rid: Any, method: str) -> None:
        """A notification sent with an id (session/update, session/cancel) by side: tracked
        only while the other side has a request of that id pending, whose response the
        notification's own could otherwise take (nothing answers one as a rule, and untracked
        it cannot push real requests out of the pending table)."""
        if self._sender is not None:
            side = self._sender
        key = _id_key(rid)
        if key is not None and (1 - side, key) in self._pending:
            self._track(side, True, rid, method, _Pending(_OTHER))

    def _track(self, side: int, has_id: bool, rid: Any, method: str, what: _Pending) -> None:
        if not has_id:
            return
        if type(rid) is not str and type(rid) is not int:  # those are their own keys
            rid = _id_key(rid)
            if rid is None:
                return
        if self._sender is not None:
            side = self._sender
        keys = RESPONSE_KEYS.get(method, ())
        if method == "session/prompt" and self._mode != V1:
            # Before `initialize` either version's result is the prompt's.
            keys = V2_PROMPT_KEYS if self._mode == V2 else ()
        key = (side, rid)
        pending = self._pending
        what.keys = keys
        pending[key] = what
        pending.move_to_end(key)
        if len(pending) > MAX_PENDING:
            pending.popitem(last=False)

    def _params_session(self, method: str, params: Any) -> str | None:
        if type(params) is not dict:
            self._error(None, f"{method}: params must be an object")
            return None
        sid = params.get("sessionId")
        if type(sid) is not str:
            self._error(None, f"{method}: sessionId must be a string")
            return None
        return sid

    def _check_request(self, sid: str, method: str, params: JsonObject) -> None:
        """An error record for each member a session/prompt or session/request_permission
        request must have and lacks (its schema's required params, of the version in use);
        the request is kept as it came, and its answer is still awaited."""
        missing = []
        if method == "session/prompt":
            if type(params.get("prompt")) is not list:
                missing.append("params.prompt must be an array")
        else:
            mode = self._mode
            if mode == V1 and type(params.get("toolCall")) is not dict:
                missing.append("params.toolCall must be an object")
            elif mode == V2 and type(params.get("title")) is not str:
                missing.append("params.title must be a string")
            if type(params.get("options")) is not list:
                missing.append("params.options must be an array")
        for what in missing:
            self._error(sid, f"{method}: {what}")

    def _request(self, method: str, has_id: bool, rid: Any, params: Any) -> None:
        if method == "session/prompt":
            sid = params.get("sessionId") if type(params) is dict else None
            if type(sid) is not str:
                self._params_session(method, params)  # its error record
                # Refused, yet its response is still this request's.
                self._track(_CLIENT, has_id, rid, method, _Pending(_OTHER))
                return
            entry = _request_entry(rid, params, has_id)
            mode = self._mode
            s = self._sessions.get(sid)
            if s is None:
                s = self._session(sid)
            prompts = s._prompts
            prompts.append(entry)
            index = len(prompts) - 1
            if mode == V2 and s._turn_start is not None:
                slot = join_turn(s, s._turn_record, rid, has_id, params)
            else:
                slot = open_turn(s, rid, has_id, params)
                s._turn_start = s._turn_cancelled_to = index
                s._turn_refused = 0
                s._turn_record = slot[0]
            # The user's turn: v1 chunks without an id that follow start a new message.
            s._current = None
            changes = self._changes
            if mode != V2:
                s.state_ = "running"
                stopped = s.stop_reason_ is not None
                s.stop_reason_ = None
                changes[(sid, "session", "state")] = None
                if stopped:
                    changes[(sid, "session", "stopReason")] = None
            changes[(sid, "session", "prompts")] = None
            changes[(sid, "session", "turns")] = None
            if type(params.get("prompt")) is not list:
                self._check_request(sid, method, params)
            what = _Pending(_PROMPT, sid, index, mode)
            what.slot = slot
            self._track(_CLIENT, has_id, rid, method, what)
        elif method in _TERMINAL_METHODS:
            self._track(_AGENT, has_id, rid, method, self._terminal_pending(method, params))
        elif method == "session/request_permission":
            sid = params.get("sessionId") if type(params) is dict else None
            if type(sid) is not str:
                self._params_session(method, params)  # its error record
                self._track(_AGENT, has_id, rid, method, _Pending(_OTHER))
                return
            entry = _request_entry(rid, params, has_id)
            s = self._session(sid)
            s._own("_permissions").append(entry)
            index = len(s._permissions) - 1
            self._change(sid, "session", "permissions")
            self._check_request(sid, method, params)
            self._track(_AGENT, has_id, rid, method, _Pending(_PERMISSION, sid, index))
        elif method == "session/cancel":
            if has_id:
                self._track_if_contested(_CLIENT, rid, method)
            sid = self._params_session(method, params)
            if sid is None:
                return
            s = self._session(sid)
            # Only an ongoing turn can be cancelled, and in it only the prompts not answered
            # with an error: a finished one stays as it was.
            if s._turn_start is not None:
                # Each prompt once, however many cancels a turn sees.
                prompts = s._prompts
                for k in range(s._turn_cancelled_to, len(prompts)):
                    if "error" not in prompts[k]:
                        prompts[k]["cancelRequested"] = True
                s._turn_cancelled_to = len(prompts)
                s._turns[s._turn_record].cancel_requested = True
                self._change(sid, "session", "prompts")
                self._change(sid, "session", "turns")
        elif method == "initialize":
            if type(params) is dict:
                self._set_version("params", params)
            self._track(_CLIENT, has_id, rid, method, _Pending(_INITIALIZE))
        elif method == "session/new" or method == "session/fork":
            self._track(_CLIENT, has_id, rid, method, _Pending(_NEW, method=method))
        elif method == "session/load" or method == "session/resume":
            sid = self._params_session(method, params)
            if sid is None:
                self._track(_CLIENT, has_id, rid, method, _Pending(_OTHER))
                return
            self._session(sid)
            self._track(_CLIENT, has_id, rid, method, _Pending(_LOAD, sid, method=method))
        elif method == "session/set_mode":
            # Answered with a result, the mode asked for is current. A request without a
            # session or mode id is still tracked, as any other.
            what = _Pending(_OTHER)
            if type(params) is dict:
                sid = params.get("sessionId")
                mode_id = params.get("modeId")
                if type(sid) is str and type(mode_id) is str:
                    what = _Pending(_SET_MODE, sid, mode_id=mode_id)
            self._track(_CLIENT, has_id, rid, method, what)
        elif method == "session/set_config_option":
            # The result is the full set of options: it applies as a session setup's does. A
            # request without a session id is still tracked, as any other.
            sid = params.get("sessionId") if type(params) is dict else None
            what = _Pending(_LOAD, sid, method=method) if type(sid) is str else _Pending(_OTHER)
            self._track(_CLIENT, has_id, rid, method, what)
        else:
            client = method in AGENT_METHODS
            agent = method in CLIENT_METHODS
            if client and not agent:
                self._track(_CLIENT, has_id, rid, method, _Pending(_OTHER))
            elif agent and not client:
                self._track(_AGENT, has_id, rid, method, _Pending(_OTHER))
            elif self._sender is not None:
                # A method of either side or none: tracked when the caller names the sender.
                self._track(self._sender, has_id, rid, method, _Pending(_OTHER))

    def _response(self, rid: Any, has_result: bool, result: Any, error: Any) -> None:
        if type(rid) is not str and type(rid) is not int:  # those are their own keys
            rid = _id_key(rid)
            if rid is None:
                return
        pending = self._pending
        client_key = (_CLIENT, rid)
        agent_key = (_AGENT, rid)
        if self._sender is not None:
            # A response answers a request of the other side.
            key = agent_key if self._sender == _CLIENT else client_key
            if key not in pending:
                return
        else:
            client = pending.get(client_key)
            agent = pending.get(agent_key)
            if client is not None and agent is not None:
                fits_client = fits_agent = False
                if type(result) is dict:
                    fits_client = all(k in result for k in client.keys)
                    fits_agent = all(k in result for k in agent.keys)
                # A type that requires keys the result has tells more than one that requires
                # none (which any result fits).
                named_client = fits_client and bool(client.keys)
                named_agent = fits_agent and bool(agent.keys)
                if named_client != named_agent:
                    key = client_key if named_client else agent_key
                elif fits_client != fits_agent:
                    key = client_key if fits_client else agent_key
                elif type(result) is dict and "outcome" in result:
                    key = agent_key
                else:
                    key = client_key
            elif client is not None:
                key = client_key
            elif agent is not None:
                key = agent_key
            else:
                return
        what = pending.pop(key)
        kind = what.kind
        if kind == _INITIALIZE:
            if type(result) is dict:
                self._set_version("result", result)
        elif kind == _NEW:
            if type(result) is dict:
                sid = result.get("sessionId")
                if type(sid) is str:
                    self._session(sid)
                    self._session_setup(sid, what.method, result)
        elif kind == _LOAD:
            if type(result) is dict:
                self._session_setup(what.sid, what.method, result)
        elif kind == _PROMPT:
            sid, index = what.sid, what.index
            s = self._sessions[sid]  # made by the request; sessions are never removed
            stop = result.get("stopReason") if type(result) is dict else None
            if type(stop) is not str:
                stop = None
            # Read by the rules in force when the prompt was sent (a connection initialized
            # again meanwhile changes them); sent before `initialize`, by those in force now,
            # and before it by the result's shape: a `messageId` without a `stopReason` is a
            # v2 acknowledgement.
            mode = what.mode
            if mode == UNKNOWN:
                mode = self._mode
            if mode == UNKNOWN:
                v1 = stop is not None or type(result) is not dict or "messageId" not in result
            else:
                v1 = mode != V2
            # v1: the result ends the turn with its stop reason; a result without one is
            # malformed, and ends the turn as an error response does.
            if v1 and stop is None and has_result:
                self._error(sid, "session/prompt: result.stopReason must be a string")
            # v2: the acknowledgement names the user message it inserted, always (the prompt
            # lifecycle: "a required, non-null string"); recorded as it came.
            if (
                not v1
                and has_result
                and (type(result) is not dict or type(result.get("messageId")) is not str)
            ):
                self._error(sid, "session/prompt: result.messageId must be a string")
            # v1: the answer closes the prompt's turn, with the usage it reports.
            usage = self._prompt_usage(sid, result) if v1 and has_result else None
            if has_result:
                s._prompts[index]["response"] = result
            else:
                s._prompts[index]["error"] = error
            answer_turn(s, what.slot, has_result, result, error)
            if v1:
                close_turn(s, what.slot[0], stop, usage)
            # A v2 result only acknowledges the prompt: its turn ends with an idle update, or
            # once every prompt of it was refused with an error.
            start = s._turn_start
            if start is not None and not has_result and index >= start:
                s._turn_refused += 1
            if v1:
                ended = index + 1 == len(s._prompts)
            else:
                ended = start is not None and s._turn_refused == len(s._prompts) - start
            if ended:
                s._turn_start = None
                if not v1:
                    # v2: each of its prompts refused, the turn is over.
                    close_turn(s, s._turn_record, None, None)
            # v1: any answer ends the turn (a response carries a result or an error); the answer
            # to an earlier prompt than the last one ends no turn that is going on.
            if v1 and index + 1 == len(s._prompts):
                s.state_ = "idle"
                # Named when set, also to the value it had, or cleared.
                moved = stop is not None or s.stop_reason_ is not None
                s.stop_reason_ = stop
                self._change(sid, "session", "state")
                if moved:
                    self._change(sid, "session", "stopReason")
            self._changes[(sid, "session", "prompts")] = None
            self._changes[(sid, "session", "turns")] = None
        elif kind == _PERMISSION:
            sid, index = what.sid, what.index
            s = self._sessions[sid]
            _answer(s._permissions[index], has_result, result, error)
            self._change(sid, "session", "permissions")
        elif kind == _TERMINAL_CREATE:
            self._terminal_created(what.sid, what.fields, has_result, result)
        elif kind == _TERMINAL_ASK:
            self._terminal_answered(what.sid, what.tid, what.method, has_result, result)
        elif kind == _SET_MODE and has_result and self._mode != V2:
            # v1 only, as current_mode_update: v2 has no modes.
            sid = what.sid
            self._session(sid)._current_mode_id = what.mode_id
            self._change(sid, "session", "currentModeId")

    def _prompt_usage(self, sid: str, result: Any) -> JsonObject | None:
        """``usage`` of a v1 prompt result (the unstable schema's), if it is an object; another
        value is an error record and is ignored."""
        usage = result.get("usage") if type(result) is dict else None
        if usage is None or type(usage) is dict:
            return usage
        self._error(sid, "session/prompt: result.usage must be an object or null (ignored)")
        return None

    def _session_setup(self, sid: str, method: str, r: JsonObject) -> None:
        """configOptions and modes.currentModeId of the result of session setup method (new,
        fork, load, resume, set_config_option), read as the schemas say: an option that cannot
        be read is left out, a field of the wrong type is ignored, each with an error record,
        as in a config_option_update."""
        s = self._session(sid)
        notes: list[str] = []
        options = r.get("configOptions")
        if type(options) is list:
            options = _repair_items(
                method, "result.configOptions", options, _CONFIG_OPTION, self._mode, notes
            )
        elif options is not None:
            notes.append(f"{method}: result.configOptions must be an array or null (ignored)")
            options = None
        modes = r.get("modes")
        mode_id = None
        if type(modes) is dict:
            mode_id = modes.get("currentModeId")
            if type(mode_id) is not str:
                notes.append(
                    f"{method}: result.modes.currentModeId must be a string (modes ignored)"
                )
                mode_id = None
        elif modes is not None:
            notes.append(f"{method}: result.modes must be an object or null (ignored)")
        for note in notes:
            self._error(sid, note)
        if options is not None:
            s._config_options = options
            self._change(sid, "session", "configOptions")
        if mode_id is not None:
            s._current_mode_id = mode_id
            self._change(sid, "session", "currentModeId")
