"""Session reduction for the pure backend: the rules of ``src/session/mod.rs``, in Python.

A stream of ACP JSON-RPC messages (both directions) goes in; per ``params.sessionId`` the
reducer keeps what a client renders. Every rule, error reason and change record matches the
Rust reducer, so both backends give identical snapshots, errors and changes. See
``Session.snapshot`` for the shape.

Rules in brief: ``initialize`` picks v1 (``protocolVersion`` < 2) or v2 rules; before it, the
variants of both versions are accepted with v2 patch rules and optional ``messageId``. Patch
fields: omitted = unchanged, ``null`` = clear, a value replaces; arrays replace whole and
``[]`` clears; v1 ``tool_call_update``/``subagent_update`` treat ``null`` as omitted. A known
variant with missing or mistyped required fields is an error record and changes nothing; a
variant unknown to the active version is kept raw in ``other``.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import accumulate
from typing import Any, BinaryIO

import orjson

from .._contract import MAX_INT_DIGITS
from .._errors import FrameError, TerminalDataError
from ._args import Unpicklable, at_most, buffer_bytes, size, str_arg
from .framing import DEFAULT_MAX_FRAME_BYTES, FrameDecoder
from .json import (
    DIGITS_TO_ZERO,
    MAX_DECODE_DEPTH,
    MIN_DEEP_SIZE,
    ZEROS,
    has_long_digit_run,
    maybe_too_deep,
)
from .terminal import MAX_COLS, Terminal, _decode_base64, _locked

__all__ = ["Session", "Sessions", "replay"]

MAX_ERRORS = 10_000
MAX_SESSION_ERRORS = 1_000
MAX_NOTICES = 100
MAX_PENDING = 10_000
# Holes left in the timeline by removed plans before it is compacted.
MAX_HOLES = 32
_EMPTY_BATCH = "empty batch"
_INT64 = 1 << 63

# Methods handled by the agent (sent by the client) and by the client (sent by the agent),
# from meta.json and meta.unstable.json of v1 and v2. mcp/message goes both ways: untracked.
_AGENT_METHODS = frozenset(
    [
        "initialize",
        "authenticate",
        "auth/login",
        "auth/logout",
        "logout",
        "providers/list",
        "providers/set",
        "providers/disable",
        "session/new",
        "session/load",
        "session/set_mode",
        "session/set_config_option",
        "session/prompt",
        "session/cancel",
        "session/list",
        "session/delete",
        "session/fork",
        "session/resume",
        "session/close",
        "nes/start",
        "nes/suggest",
        "nes/accept",
        "nes/reject",
        "nes/close",
        "document/didOpen",
        "document/didChange",
        "document/didClose",
        "document/didSave",
        "document/didFocus",
    ]
)
_CLIENT_METHODS = frozenset(
    [
        "session/request_permission",
        "session/update",
        "fs/write_text_file",
        "fs/read_text_file",
        "terminal/create",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
        "terminal/kill",
        "mcp/connect",
        "mcp/disconnect",
        "elicitation/create",
        "elicitation/complete",
    ]
)
_V1_ONLY = frozenset(("tool_call", "plan", "current_mode_update"))
_V2_ONLY = frozenset(
    (
        "user_message",
        "agent_message",
        "agent_thought",
        "state_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
    )
)
_UNKNOWN, _V1, _V2 = 0, 1, 2
# The mode under which a variant of one version only is unknown.
_OTHER_VERSION = {**{k: _V2 for k in _V1_ONLY}, **{k: _V1 for k in _V2_ONLY}}
_CLIENT, _AGENT = 0, 1
_SENDERS = {"client": _CLIENT, "agent": _AGENT}
# Pending request kinds.
_INITIALIZE, _NEW, _LOAD, _PROMPT, _PERMISSION, _SET_MODE, _OTHER = range(7)
# The keys a successful response to a method must have (its response type's required
# properties in the v1 and v2 schemas): they tell which of two requests sharing an id a result
# answers. A prompt's response requires stopReason in v1; in v2 the schema requires nothing,
# yet the spec's prompt lifecycle returns messageId.
_RESPONSE_KEYS = {
    "initialize": ("protocolVersion",),
    "session/new": ("sessionId",),
    "session/fork": ("sessionId",),
    "nes/start": ("sessionId",),
    "session/list": ("sessions",),
    "session/set_config_option": ("configOptions",),
    "session/prompt": ("stopReason",),
    "providers/list": ("providers",),
    "nes/suggest": ("suggestions",),
    "session/request_permission": ("outcome",),
    "fs/read_text_file": ("content",),
    "terminal/create": ("terminalId",),
    "terminal/output": ("output", "truncated"),
    "elicitation/create": ("action",),
    "mcp/connect": ("connectionId",),
}
_V2_PROMPT_KEYS = ("messageId",)
_U64 = 1 << 64
# Keys of a prompt or permission entry that the reducer sets: params of those names are not
# kept, so that an unanswered request cannot pass for an answered one.
_ENTRY_KEYS = frozenset(("sessionId", "requestId", "response", "error", "cancelRequested"))


def _copy(value: Any, depth: int = 0) -> Any:
    """A deep copy of a JSON value (snapshots must not share state with the reducer)."""
    kind = type(value)
    if kind is dict:
        if depth > _RECURSIVE_COPY_DEPTH:
            return _normalize(value)
        return {k: _copy(v, depth + 1) for k, v in value.items()}
    if kind is list:
        if depth > _RECURSIVE_COPY_DEPTH:
            return _normalize(value)
        return [_copy(v, depth + 1) for v in value]
    return value


# Messages given to `apply` may nest 200 deep, which recursion (two frames a level) cannot
# copy within Python's default limit; past this depth `_normalize`, which keeps a stack of its
# own, makes the copy (of a value already normalized, so it changes nothing else).
_RECURSIVE_COPY_DEPTH = 64


# Deepest nesting `apply` accepts, the framing's (so `apply` takes what `feed` takes, and a
# snapshot stays within what `dumps` writes); the native binding's limit too.
MAX_APPLY_DEPTH = MAX_DECODE_DEPTH


def _str_keyed(value: dict) -> Any:
    # The stored entries and text, as the binding reads them: methods a subclass overrides
    # (`items`, `__str__`: a `(str, Enum)` member's str() is its name) are not called.
    for k, v in dict.items(value):
        if not isinstance(k, str):
            raise TypeError(f"message keys must be str, not {type(k).__name__}")
        key = k if type(k) is str else str.__str__(k)
        if not key.isascii():
            key.encode()  # a lone surrogate is no UTF-8: UnicodeEncodeError
        yield key, v


def _check_big_int(value: int) -> None:
    """Refuse an integer the framing could not read either, as the binding does: its decimal
    form (which Python refuses past its digit limit, 4300 by default) past 4300 digits."""
    digits = str(value)
    if len(digits) - (value < 0) > MAX_INT_DIGITS:
        # Where the binding's reader stops: one digit past the limit.
        index = min(len(digits), MAX_INT_DIGITS + 1 + (value < 0))
        raise ValueError(f"number out of range at index {index}")


def _normalize(message: Any) -> Any:
    """A private JSON copy of a message given to ``apply``, with the binding's type rules.

    Depth first and in order, as the binding walks it, so that the first fault found is the
    same; with a stack of its own, so that a deep message cannot exhaust Python's.
    """
    root: dict = {}
    # (what is left of a container, its copy, the depth of its items)
    stack: list[tuple[Any, Any, int]] = [(iter([(0, message)]), root, 0)]
    while stack:
        items, target, depth = stack[-1]
        for key, value in items:
            if depth > MAX_APPLY_DEPTH:
                raise ValueError("message nests too deeply")
            child = None
            if value is None or isinstance(value, bool):
                out = value if value is None else bool(value)
            elif isinstance(value, str):
                # Subclasses by their stored value, as the binding reads them (see _str_keyed).
                out = value if type(value) is str else str.__str__(value)
                if not out.isascii():
                    out.encode()  # a lone surrogate is no UTF-8: UnicodeEncodeError
            elif isinstance(value, int):
                out = value if type(value) is int else int.__int__(value)
                if not -_INT64 <= out < _INT64:
                    _check_big_int(out)
            elif isinstance(value, float):
                out = value if type(value) is float else float.__float__(value)
            elif isinstance(value, dict):
                out, child = {}, _str_keyed(value)
            elif isinstance(value, list):
                out, child = [], ((None, item) for item in list.__iter__(value))
            elif isinstance(value, tuple):
                out, child = [], ((None, item) for item in tuple.__iter__(value))
            else:
                raise TypeError(f"{type(value).__name__} is not a JSON value")
            if type(target) is list:
                target.append(out)
            else:
                target[key] = out
            if child is not None:
                stack.append((child, out, depth + 1))
                break
        else:
            stack.pop()
    return root[0]


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


def _session_id_of(message: Any) -> str | None:
    """``message["params"]["sessionId"]`` when it is a str that is valid UTF-8."""
    params = message.get("params") if isinstance(message, dict) else None
    sid = params.get("sessionId") if isinstance(params, dict) else None
    if not isinstance(sid, str):
        return None
    try:
        sid.encode()
    except UnicodeEncodeError:
        return None
    return str(sid)


def _error_dict(record: tuple) -> dict:
    line, offset, sid, reason = record
    return {"line": line, "offset": offset, "sessionId": sid, "reason": reason}


class _Framer(FrameDecoder):
    """The pure FrameDecoder, reporting each frame's (line, offset) before its values."""

    __slots__ = ()

    def _emit(self, line: bytes, out: list, inline: bool) -> None:
        # JSON values are never tuples, so the marker cannot be mistaken for a message.
        out.append((self._line, self._line_start))
        FrameDecoder._emit(self, line, out, inline)


class _Message:
    __slots__ = ("content", "fields", "id", "role")

    def __init__(self, mid: str, role: str) -> None:
        self.id = mid
        self.role = role
        self.content: list | None = None
        self.fields: dict = {}

    def append(self, block: dict) -> list:
        """Append one chunk's content block; return the content list."""
        content = self.content
        if content is None:
            content = self.content = [block]
        else:
            content.append(block)
        return content


class _StoreLock:
    """The lock of one store, shared with its sessions, as the Rust store behaves: while one
    thread feeds, other threads' calls wait for that feed to return, and a second feeder is
    refused (two streams fed into one store would interleave)."""

    __slots__ = ("_busy", "_feeding", "_lock")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._feeding = False
        # A change (feed, apply, taking errors or changes) is running on the thread that holds
        # the lock: the same thread calling for another in the middle of it (a finalizer run by
        # a garbage collection, say) is refused, as the native store refuses a second borrow,
        # instead of changing a half-applied state.
        self._busy = False

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    @contextmanager
    def feeding(self):
        # The lock is reentrant, so failing to take it means another thread holds it.
        if not self._lock.acquire(blocking=False):
            if self._feeding:
                raise RuntimeError(
                    "the store is being fed by another thread: feed one stream from one thread"
                )
            self._lock.acquire()
        self._refuse_nested()
        self._busy = self._feeding = True
        try:
            yield
        finally:
            self._busy = self._feeding = False
            self._lock.release()

    @contextmanager
    def changing(self):
        """A change other than a feed: other threads' calls wait for it, as for a feed."""
        self._lock.acquire()
        self._refuse_nested()
        self._busy = True
        try:
            yield
        finally:
            self._busy = False
            self._lock.release()

    def _refuse_nested(self) -> None:
        # Called holding the lock: a busy store is this thread's own call in progress.
        if self._busy:
            self._lock.release()
            raise RuntimeError("Already borrowed")


class Session(Unpicklable):
    """The reduced state of one session (a live view: it follows later updates)."""

    __slots__ = (
        "_anonymous",
        "_available_commands",
        "_compactions",
        "_config_options",
        "_current",
        "_current_mode_id",
        "_errors",
        "_id",
        "_info",
        "_lock",
        "_message_index",
        "_messages",
        "_notices",
        "_other",
        "_permissions",
        "_plan_at",
        "_plans",
        "_prompts",
        "_subagents",
        "_term_args",
        "_terminals",
        "_timeline",
        "_timeline_holes",
        "_tool_calls",
        "_turn_cancelled_to",
        "_turn_refused",
        "_turn_start",
        "_update_extras",
        "_usage",
        "_version",
        "state_",
        "stop_reason_",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Sessions come from a store (`store[session_id]`), as on the native backend.
        raise TypeError("cannot create 'acpwire.Session' instances")

    @classmethod
    def _of_store(cls, sid: str, version: list, term_args: tuple, lock: _StoreLock) -> Session:
        session = cls.__new__(cls)
        session._init(sid, version, term_args, lock)
        return session

    def _init(self, sid: str, version: list, term_args: tuple, lock: _StoreLock) -> None:
        self._id = sid
        self._lock = lock
        # The store's protocol version, in a one-item list every session shares: every session
        # has the one last negotiated, and a change of version costs nothing per session.
        self._version = version
        self.state_: str | None = None
        self.stop_reason_: str | None = None
        self._messages: list[_Message] = []
        # (role, messageId) -> index in _messages; anonymous messages under
        # (role, messageId, True), kept apart so that a real id never reaches one.
        self._message_index: dict[tuple, int] = {}
        self._current: int | None = None
        self._anonymous = 0
        self._tool_calls: dict[str, dict] = {}
        self._terminals: dict[str, list] = {}
        self._plans: dict[str, dict] = {}
        self._compactions: dict[str, dict] = {}
        self._subagents: dict[str, dict] = {}
        self._usage: dict | None = None
        self._info: dict = {}
        self._available_commands: list | None = None
        self._config_options: list | None = None
        self._current_mode_id: str | None = None
        self._update_extras: dict = {}
        self._permissions: list[dict] = []
        self._prompts: list[dict] = []
        # The turn going on, if one is: until the last prompt's v1 response or error response,
        # or (v2) an idle state_update or an error answer to each of its prompts. In v2 a
        # prompt sent meanwhile joins the turn (the work it contributes to). Only an ongoing
        # turn can be cancelled. Its first prompt, its prompts answered with an error, and
        # where the prompts a cancel has marked end.
        self._turn_start: int | None = None
        self._turn_refused = 0
        self._turn_cancelled_to = 0
        self._notices: deque = deque(maxlen=MAX_NOTICES)
        self._other: list = []
        # (type, id, role) in first-seen order; None where a removed plan's entry was.
        self._timeline: list[tuple | None] = []
        # Where each plan's entry is in the timeline, so that removing a plan is O(1).
        self._plan_at: dict[str, int] = {}
        self._timeline_holes = 0
        self._errors: deque = deque(maxlen=MAX_SESSION_ERRORS)
        self._term_args = term_args

    @property
    def id(self) -> str:
        """The session id."""
        return self._id

    def _remove_plan_entry(self, pid: str) -> None:
        # The entry becomes a hole; holes are compacted once they outnumber the rest, so a
        # stream of plan removals stays linear.
        at = self._plan_at.pop(pid, None)
        if at is None:
            return
        timeline = self._timeline
        timeline[at] = None
        self._timeline_holes += 1
        if self._timeline_holes > MAX_HOLES and self._timeline_holes * 2 > len(timeline):
            timeline = self._timeline = [t for t in timeline if t is not None]
            self._timeline_holes = 0
            self._plan_at = {t[1]: i for i, t in enumerate(timeline) if t[0] == "plan"}

    @property
    @_locked
    def state(self) -> str | None:
        """The foreground state (``running``, ``idle``, ``requires_action`` or any other string
        sent), None before the first report. In v1 a prompt sets ``running``, its response
        ``idle``."""
        return self.state_

    @property
    @_locked
    def stop_reason(self) -> str | None:
        """Why the last turn stopped (only while idle)."""
        return self.stop_reason_

    @_locked
    def terminal(self, terminal_id: str) -> Terminal | None:
        """The live Terminal ``terminal_id`` (None if the session has no such terminal)."""
        entry = self._terminals.get(str_arg(terminal_id))
        return None if entry is None else entry[1]

    @_locked
    def message_text(self, message_id: str, role: str = "agent") -> str | None:
        """The concatenated text blocks of message (role, message_id), None if absent.

        ``role`` is ``"user"``, ``"agent"``, ``"thought"`` or ``"session"``.
        """
        key = (str_arg(role), str_arg(message_id))
        index = self._message_index.get(key)
        if index is None:
            index = self._message_index.get((*key, True))
        if index is None:
            return None
        parts = []
        for block in self._messages[index].content or ():
            if type(block) is dict and block.get("type") == "text":
                text = block.get("text")
                if type(text) is str:
                    parts.append(text)
        return "".join(parts)

    @_locked
    def snapshot(self) -> dict:
        """The session as a JSON-serializable dict (a copy).

        Top-level keys, always present: ``sessionId``, ``protocolVersion``, ``state``,
        ``stopReason``, ``messages`` (list of ``{id, role, content?, _meta?, ...}`` in timeline
        order), ``toolCalls`` (by id), ``terminals`` (by id: ``terminalId``, ``command?``,
        ``cwd?``, ``exitStatus?``, ``_meta?``, ``text``, ``bytes``, ``truncated``), ``plans``
        (by planId), ``compactions`` (by id), ``usage``, ``info``, ``availableCommands``,
        ``configOptions``, ``currentModeId``, ``permissions`` and ``prompts`` (request order,
        with ``response`` or ``error`` once answered), ``notices`` (the last 100), ``other``
        (raw unknown updates), ``timeline`` (``{type, id}`` plus ``role`` for messages),
        ``errors`` (this session's, the last 1000), ``subagents`` (by id) and ``updateExtras``.
        Inside entities, a field never set or cleared is absent.
        """
        messages = []
        for m in self._messages:
            o: dict = {"id": m.id, "role": m.role}
            if m.content is not None:
                o["content"] = _copy(m.content)
            for k, v in m.fields.items():
                o[k] = _copy(v)
            messages.append(o)
        terminals = {}
        for tid, (fields, term, _) in self._terminals.items():
            o = _copy(fields)
            o["text"] = term.text
            o["bytes"] = term.bytes_fed
            o["truncated"] = term.truncated
            terminals[tid] = o
        timeline = []
        for item in self._timeline:
            if item is None:
                continue
            kind, eid, role = item
            entry = {"type": kind, "id": eid}
            if role is not None:
                entry["role"] = role
            timeline.append(entry)
        return {
            "sessionId": self._id,
            "protocolVersion": self._version[0],
            "state": self.state_,
            "stopReason": self.stop_reason_,
            "messages": messages,
            "toolCalls": _copy(self._tool_calls),
            "terminals": terminals,
            "plans": _copy(self._plans),
            "compactions": _copy(self._compactions),
            "usage": _copy(self._usage),
            "info": _copy(self._info),
            "availableCommands": _copy(self._available_commands),
            "configOptions": _copy(self._config_options),
            "currentModeId": self._current_mode_id,
            "permissions": _copy(self._permissions),
            "prompts": _copy(self._prompts),
            "notices": _copy(list(self._notices)),
            "other": _copy(self._other),
            "timeline": timeline,
            "errors": [_error_dict(e) for e in self._errors],
            "subagents": _copy(self._subagents),
            "updateExtras": _copy(self._update_extras),
        }

    @_locked
    def __repr__(self) -> str:
        return f"Session({self._id!r}, state={self.state_!r}, messages={len(self._messages)})"


def _patch(obj: dict, key: str, value: Any) -> None:
    if value is None:
        obj.pop(key, None)
    else:
        obj[key] = value


def _push_item(obj: dict, key: str, item: Any) -> None:
    items = obj.get(key)
    if type(items) is list:
        items.append(item)
    else:
        obj[key] = [item]


def _without(u: dict, skip: tuple | frozenset) -> dict:
    """The members of ``u`` except ``skip`` and nulls (a field cleared is absent)."""
    return {k: v for k, v in u.items() if k not in skip and v is not None}


_PLAN_UPDATE_SKIP = frozenset(("sessionUpdate", "plan"))
_PLAN_REMOVED_SKIP = frozenset(("sessionUpdate", "planId"))


def _set_extras(extras: dict, kind: str, u: dict, skip: frozenset) -> bool:
    """Store the rest of update ``u`` as ``extras[kind]``; return whether ``updateExtras`` was
    touched (it had or now has an entry for ``kind``), as any entity touched is a change."""
    # Most updates have no member past `skip`: a set comparison in C tells, without a copy.
    rest = None if u.keys() <= skip else _without(u, skip)
    if rest:
        extras[kind] = rest
        return True
    return extras.pop(kind, None) is not None


def _request_entry(rid: Any, params: dict, has_id: bool) -> dict:
    """The params of a request naming its session after its id, less the _ENTRY_KEYS."""
    entry = {"requestId": rid if has_id else None}
    for key, value in params.items():
        if key not in _ENTRY_KEYS:
            entry[key] = value
    return entry


def _answer(entry: dict, has_result: bool, result: Any, error: Any) -> None:
    if has_result:
        entry["response"] = result
    else:
        entry["error"] = error


# A store's defaults: what all its terminals may hold together, and each one alone.
DEFAULT_MAX_TERMINAL_BYTES = 64 * 1024 * 1024
_TERMINAL_MAX_BYTES = 16 * 1024 * 1024


class Sessions(Unpicklable):
    """All sessions of one connection or trace, keyed by ``params.sessionId``.

    Args:
        max_frame_bytes: longest accepted NDJSON frame.
        terminal_cols: width of terminal grids (None: unwrapped transcripts).
        scrollback: lines of scrollback kept per terminal.
        max_terminal_bytes: what all the store's terminals may hold together, in the units
            of a terminal's ``max_bytes`` (its scrollback as counted there, each screen row
            with cells the same way, 8 per style and 8 plus its UTF-8 length per grapheme
            cluster and per OSC 8 link): past it, the terminals written least recently are
            cleared
            (``truncated``). Each terminal's own ``max_bytes`` is at most this.
    """

    __slots__ = (
        "_block",
        "_changes",
        "_decoder",
        "_errors",
        "_errors_dropped",
        "_handlers",
        "_lock",
        "_mode",
        "_notes",
        "_order",
        "_pending",
        "_pos",
        "_sender",
        "_sessions",
        "_shared_version",
        "_term_args",
        "_terminal_budget",
        "_terminal_held",
        "_terminal_order",
        "_version",
        "_version_changes_named",
    )

    def __init__(
        self,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        terminal_cols: int | None = None,
        scrollback: int = 10_000,
        max_terminal_bytes: int = DEFAULT_MAX_TERMINAL_BYTES,
    ) -> None:
        # Every argument read before any is checked, in the binding's order.
        max_frame_bytes = size(max_frame_bytes)
        terminal_cols = None if terminal_cols is None else size(terminal_cols)
        scrollback = size(scrollback)
        max_terminal_bytes = size(max_terminal_bytes)
        self._decoder = _Framer(max_frame_bytes)
        if terminal_cols is not None:
            if terminal_cols < 1:
                raise ValueError("terminal_cols must be at least 1 (or None)")
            at_most("terminal_cols", terminal_cols, MAX_COLS)
        if scrollback < 0:
            raise ValueError("scrollback must not be negative")
        if max_terminal_bytes < 0:
            raise ValueError("max_terminal_bytes must not be negative")
        self._term_args = (
            terminal_cols,
            scrollback,
            min(_TERMINAL_MAX_BYTES, max_terminal_bytes),
        )
        self._terminal_budget = max_terminal_bytes
        # What the terminals held when last written, together; and the terminals written
        # since created or cleared, least recently written first.
        self._terminal_held = 0
        self._terminal_order: OrderedDict[tuple[str, str], list] = OrderedDict()
        self._version: int | None = None
        # `_version` as every session reads it; the first sessions (in `_order`) whose version
        # change is in `_changes` already.
        self._shared_version: list = [None]
        self._version_changes_named = 0
        # The rules in force: _UNKNOWN before `initialize`, then _V1 or _V2.
        self._mode = _UNKNOWN
        self._handlers = _MODE_HANDLERS[_UNKNOWN]
        self._sessions: dict[str, Session] = {}
        self._order: list[str] = []
        # Oldest first: past MAX_PENDING the oldest is forgotten. An OrderedDict, because
        # dropping the first entry of a plain dict over and over makes finding it O(n).
        self._pending: OrderedDict[tuple, tuple] = OrderedDict()
        self._errors: deque = deque()
        self._errors_dropped = 0
        # Error records for the parts of the update being applied that were left out: recorded
        # once its handler has applied it, dropped if the handler refuses it (its one record).
        self._notes: list = []
        # Deduplicated, in first-change order: a dict as an ordered set (setting a key that is
        # there already leaves it where it is).
        self._changes: dict[tuple[str, str, str], None] = {}
        # Where the message being applied is: (line, offset), None (one given to `apply`), or
        # the index of a line of the block `_reduce_lines` is reducing (see `_block_pos`).
        self._pos: tuple | int | None = None
        # (first line number, its offset, the lines, where they start or None) of that block.
        self._block: tuple | None = None
        # Who sent the message being applied, when the caller says (_CLIENT or _AGENT).
        self._sender: int | None = None
        self._lock = _StoreLock()

    # -- input -------------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        """Feed NDJSON bytes (any split); return the frames completed, good or bad."""
        data = buffer_bytes(data)
        with self._lock.feeding():
            return self._feed(data)

    def _feed(self, data: bytes) -> int:
        decoder = self._decoder
        before = decoder._frames
        # The complete lines not joined to a held piece go through `_reduce_lines`; the few
        # bytes around them (the end of a held line, a last partial line) through the decoder.
        start = 0
        if decoder._partial_len or decoder._skipping:
            start = data.find(b"\n") + 1
            if not start:
                self._run(decoder._feed_events(data))
                return decoder._frames - before
            self._run(decoder._feed_events(data[:start]))
        end = data.rfind(b"\n") + 1
        if end > start:
            self._reduce_lines(data[start : end - 1])
        if end < len(data):
            self._run(decoder._feed_events(data[end:] if end else data))
        return decoder._frames - before

    def finish(self) -> int:
        """End of stream: reduce a last line that had no newline; return frames completed."""
        with self._lock.feeding():
            decoder = self._decoder
            before = decoder._frames
            self._run(decoder._finish_events())
            return decoder._frames - before

    def _reduce_lines(self, block: bytes) -> None:
        """Reduce complete lines (``block`` holds them without the last newline).

        What the decoder would do line by line, with its checks paid once for the whole block
        where possible, and message chunks appended without the general path.
        """
        decoder = self._decoder
        lines = block.split(b"\n")
        first_line = decoder._line
        base = decoder._position
        # Every line counts as a frame; `_reduce_frame` takes blank lines back out.
        decoder._frames += len(lines)
        cap = decoder._max
        # A line over the cap, or a digit run orjson may read differently from jiter, is left
        # to the decoder. Newlines map to blanks, so no run spans two lines: only when the
        # block has one is each line searched.
        check_each = len(block) > cap or has_long_digit_run(block)
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        roles = _FAST_ROLES
        # Lines are placed by their index here (`_pos`); `_block_pos` gives a line's number and
        # offset when an error record needs them.
        self._block = (first_line, base, lines, None)
        # The message the previous line appended to: the next chunk of the same message only
        # appends (its session, message, current message and change record are in place).
        last_sid = last_role = last_mid = None
        last_content: list = []
        # Where sessions (or one session's messages) interleave, every message a chunk in this
        # block went to, by (session, role, messageId), as (session, index, message): a later
        # chunk of it appends and makes it current (the change record, made by the first
        # chunk, cannot have been taken during the block).
        chunk_targets: dict[tuple[str, str, str], tuple] = {}
        dispatch = self._dispatch
        for i, line in enumerate(lines):
            if check_each and (len(line) > cap or ZEROS in line.translate(DIGITS_TO_ZERO)):
                refused = True
            else:
                try:
                    value = loads(line)
                except decode_error:
                    refused = True
                else:
                    refused = len(line) >= MIN_DEEP_SIZE and maybe_too_deep(line, value)
            if refused:
                # The decoder decides, as for a line fed alone.
                last_sid = None
                self._reduce_frame(line, *self._block_pos(i))
                continue
            if (
                type(value) is not dict
                or value.get("method") != "session/update"
                or "id" in value  # sent with an id, it is tracked as a request
            ):
                last_sid = None
                self._pos = i
                if type(value) is list:
                    self._batch(value)
                else:
                    self._message(value)
                continue
            try:
                params = value["params"]
                sid = params["sessionId"]
                u = params["update"]
                # Of the values orjson makes only a dict takes a str index: past this, u is one.
                kind = u["sessionUpdate"]
                role = roles.get(kind)
            except (KeyError, TypeError):  # not an update's shape: the general path decides
                kind = role = None
            if type(kind) is not str or type(sid) is not str:
                last_sid = None
                self._pos = i
                self._session_update(value.get("params"))
                continue
            if role is not None and len(u) == 3:  # other fields (`_meta`): the general path's
                mid = u.get("messageId")
                content = u.get("content")
                if type(mid) is str and type(content) is dict and type(content.get("type")) is str:
                    if mid == last_mid and sid == last_sid and role == last_role:
                        last_content.append(content)
                        continue
                    key = (sid, role, mid)
                    target = chunk_targets.get(key)
                    if target is not None:
                        target[0]._current = target[1]
                        m = target[2]
                        last_content = m.content
                        if last_content is None:
                            last_content = m.content = [content]
                        else:
                            last_content.append(content)
                    else:
                        target = chunk_targets[key] = self._append_chunk(sid, role, mid, content)
                        last_content = target[2].content
                    last_sid, last_role, last_mid = sid, role, mid
                    continue
            last_sid = None
            self._pos = i
            # `_session_update` once these types are known.
            dispatch(sid, kind, u)
        self._block = self._pos = None
        decoder._line = first_line + len(lines)
        decoder._position = decoder._line_start = base + len(block) + 1

    def _block_pos(self, i: int) -> tuple[int, int]:
        """(line number, offset) of line ``i`` of the block `_reduce_lines` is reducing."""
        first_line, base, lines, starts = self._block
        if starts is None:
            # Where each line starts, less the newlines before it: computed once a block.
            starts = list(accumulate(map(len, lines), initial=base))
            self._block = (first_line, base, lines, starts)
        return first_line + i, starts[i] + i

    def _append_chunk(self, sid: str, role: str, mid: str, content: dict) -> tuple:
        """Apply a message chunk with an id and object content, as `_chunk` does.

        Returns (session, message index, message).
        """
        s = self._sessions.get(sid)
        if s is None:
            s = self._session(sid)
        index = s._message_index.get((role, mid))
        if index is None:
            index = self._message_index(sid, role, mid)
        s._current = index
        m = s._messages[index]
        m.append(content)
        self._changes[(sid, "message", mid)] = None
        return (s, index, m)

    def _reduce_frame(self, line: bytes, number: int, offset: int) -> None:
        """One line, by the decoder's rules, as line ``number`` starting at byte ``offset``."""
        decoder = self._decoder
        decoder._line = number
        decoder._line_start = offset
        decoder._frames -= 1
        out: list = []
        decoder._emit(line, out, True)
        self._run(out)

    def _batch(self, items: list) -> None:
        if not items:
            self._error(None, _EMPTY_BATCH)
            return
        for item in items:
            self._message(item)

    def _run(self, items: list) -> None:
        message = self._message
        update = self._session_update
        for item in items:
            kind = type(item)
            if kind is dict:
                if item.get("method") == "session/update" and "id" not in item:
                    update(item.get("params"))
                else:
                    message(item)
            elif kind is tuple:
                self._pos = item
            elif isinstance(item, FrameError):
                self._pos = (item.line, item.offset)
                self._error(None, item.reason)
            else:
                message(item)

    def apply(self, message: Any, sender: str | None = None) -> None:
        """Reduce one decoded JSON-RPC message of either direction (a list applies each entry).

        ``sender`` (``"client"`` or ``"agent"``), when known, says who sent it: a response then
        answers the other side's pending request with its id. A message holding a str that is
        not valid UTF-8 (a lone surrogate) is not applied: it becomes one error record. Error
        records from it have no line or offset.
        """
        with self._lock.changing():
            self._apply_at(message, sender, None, None)

    @_locked
    def _apply_at(self, message: Any, sender: str | None, line: Any, offset: Any) -> None:
        """``apply``, with error records placed at (line, offset): a message of a trace."""
        side = _sender(sender)
        pos = None if line is None else (line, offset)
        try:
            value = _normalize(message)
        except UnicodeEncodeError as exc:
            # A str that is not valid UTF-8 (a lone surrogate) cannot be JSON: the message is
            # refused whole, as `feed` refuses such a frame, with an error record.
            self._pos = pos
            self._error(_session_id_of(message), f"str is not valid UTF-8: {exc.reason}")
            return
        self._pos = pos
        self._sender = side
        try:
            if type(value) is list:
                self._batch(value)
            else:
                self._message(value)
        finally:
            self._sender = None

    @_locked
    def _record_error(self, reason: str, line: int, offset: int) -> None:
        """Record an error at (line, offset) for a frame of a trace that could not be applied."""
        self._pos = (line, offset)
        self._error(None, reason)

    # -- queries -----------------------------------------------------------------------------

    @_locked
    def ids(self) -> list[str]:
        """Session ids in first-seen order."""
        return list(self._order)

    @_locked
    def __len__(self) -> int:
        return len(self._order)

    @_locked
    def __contains__(self, session_id: object) -> bool:
        # Any other key is absent, hashable or not, as in the native store.
        return isinstance(session_id, str) and session_id in self._sessions

    @_locked
    def __getitem__(self, session_id: str) -> Session:
        if not isinstance(session_id, str):
            raise KeyError(session_id)
        return self._sessions[session_id]

    @_locked
    def __iter__(self):
        return iter(list(self._order))

    @property
    @_locked
    def protocol_version(self) -> int | None:
        """The negotiated protocol version, None before ``initialize``."""
        return self._version

    @property
    @_locked
    def errors(self) -> list[dict]:
        """Error records not yet taken, oldest first: ``{line, offset, sessionId, reason}``."""
        return [_error_dict(e) for e in self._errors]

    def take_errors(self) -> list[dict]:
        """Return the error records and forget them."""
        with self._lock.changing():
            taken = self.errors
            self._errors.clear()
        return taken

    @property
    @_locked
    def errors_dropped(self) -> int:
        """Errors dropped because more than 10,000 were waiting to be taken."""
        return self._errors_dropped

    def changes(self) -> list[tuple[str, str, str]]:
        """(sessionId, entity type, id) of everything changed since the last call.

        Deduplicated, in first-change order. Entity types: ``message``, ``toolCall``,
        ``terminal``, ``plan``, ``compaction``, ``other`` (id: index in ``other``),
        ``subagent``, and ``session`` (id: the snapshot key that moved).
        """
        with self._lock.changing():
            out = list(self._changes)
            self._changes = {}
            self._version_changes_named = 0
        return out

    @_locked
    def __repr__(self) -> str:
        return f"Sessions({len(self._order)} sessions)"

    # -- bookkeeping -------------------------------------------------------------------------

    def _error(self, sid: str | None, reason: str) -> None:
        # An error while an update is applied refuses it: what was left out of it is moot.
        if self._notes:
            self._notes = []
        pos = self._pos
        if type(pos) is int:
            pos = self._block_pos(pos)
        record = (None, None, sid, reason) if pos is None else (pos[0], pos[1], sid, reason)
        if sid is not None:
            self._session(sid)._errors.append(record)
            self._change(sid, "session", "errors")
        if len(self._errors) == MAX_ERRORS:
            self._errors.popleft()
            self._errors_dropped += 1
        self._errors.append(record)

    def _change(self, sid: str, kind: str, eid: str) -> None:
        # The handlers run for most updates store their records inline, without this call.
        self._changes[(sid, kind, eid)] = None

    def _session(self, sid: str) -> Session:
        session = self._sessions.get(sid)
        if session is None:
            session = Session._of_store(sid, self._shared_version, self._term_args, self._lock)
            self._sessions[sid] = session
            self._order.append(sid)
            self._change(sid, "session", "sessionId")
        return session

    def _set_version(self, part: str, message: dict) -> None:
        # A uint16 in the schema: any other value present is an error record, and the rules stay.
        if "protocolVersion" not in message:
            return
        value = message["protocolVersion"]
        if type(value) is not int or not 0 <= value <= 65535:
            self._error(
                None, f"initialize: {part}.protocolVersion must be an integer from 0 to 65535"
            )
            return
        if value == self._version:
            # The same again: every session has it already (walking them all for each of a
            # stream of initializes would be quadratic).
            return
        self._version = self._shared_version[0] = value
        self._mode = _V1 if value < 2 else _V2
        self._handlers = _MODE_HANDLERS[self._mode]
        # Every session's version moved; the sessions named for it since the changes were
        # last taken need not be named again (walking them all at each switch of version
        # would be quadratic).
        for sid in self._order[self._version_changes_named :]:
            self._change(sid, "session", "protocolVersion")
        self._version_changes_named = len(self._order)

    def _track_if_contested(self, side: int, rid: Any, method: str) -> None:
        """A notification sent with an id (session/update, session/cancel) by side: tracked
        only while the other side has a request of that id pending, whose response the
        notification's own could otherwise take (nothing answers one as a rule, and untracked
        it cannot push real requests out of the pending table)."""
        if self._sender is not None:
            side = self._sender
        key = _id_key(rid)
        if key is not None and (1 - side, key) in self._pending:
            self._track(side, True, rid, method, (_OTHER,))

    def _track(self, side: int, has_id: bool, rid: Any, method: str, what: tuple) -> None:
        if not has_id:
            return
        if type(rid) is not str and type(rid) is not int:  # those are their own keys
            rid = _id_key(rid)
            if rid is None:
                return
        if self._sender is not None:
            side = self._sender
        keys = _RESPONSE_KEYS.get(method, ())
        if method == "session/prompt" and self._mode != _V1:
            # Before `initialize` either version's result is the prompt's.
            keys = _V2_PROMPT_KEYS if self._mode == _V2 else ()
        key = (side, rid)
        pending = self._pending
        pending[key] = (keys, what)
        pending.move_to_end(key)
        if len(pending) > MAX_PENDING:
            pending.popitem(last=False)

    # -- messages ----------------------------------------------------------------------------

    def _message(self, msg: Any) -> None:
        if type(msg) is not dict:
            self._error(None, "invalid message: not a JSON object")
            return
        if "method" in msg:
            method = msg["method"]
            if type(method) is not str:
                self._error(None, "invalid message: method must be a string")
                return
            if method == "session/update":
                if "id" in msg:
                    self._track_if_contested(_AGENT, msg["id"], method)
                self._session_update(msg.get("params"))
            else:
                self._request(method, "id" in msg, msg.get("id"), msg.get("params"))
        elif "id" in msg:
            if "result" in msg and "error" in msg:
                # JSON-RPC: a response has one or the other; which one holds is not known.
                self._error(None, "invalid message: a response has both result and error")
            elif "result" in msg:
                self._response(msg["id"], True, msg["result"], None)
            elif "error" in msg:
                self._response(msg["id"], False, None, msg["error"])
            else:
                self._error(None, "invalid message: no method, result or error")
        else:
            self._error(None, "invalid message: no method, result or error")

    def _params_session(self, method: str, params: Any) -> str | None:
        if type(params) is not dict:
            self._error(None, f"{method}: params must be an object")
            return None
        sid = params.get("sessionId")
        if type(sid) is not str:
            self._error(None, f"{method}: sessionId must be a string")
            return None
        return sid

    def _check_request(self, sid: str, method: str, params: dict) -> None:
        """An error record for each member a session/prompt or session/request_permission
        request must have and lacks (its schema's required params, of the version in use);
        the request is kept as it came, and its answer is still awaited."""
        missing = []
        if method == "session/prompt":
            if type(params.get("prompt")) is not list:
                missing.append("params.prompt must be an array")
        else:
            mode = self._mode
            if mode == _V1 and type(params.get("toolCall")) is not dict:
                missing.append("params.toolCall must be an object")
            elif mode == _V2 and type(params.get("title")) is not str:
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
                self._track(_CLIENT, has_id, rid, method, (_OTHER,))
                return
            entry = _request_entry(rid, params, has_id)
            mode = self._mode
            s = self._sessions.get(sid)
            if s is None:
                s = self._session(sid)
            prompts = s._prompts
            prompts.append(entry)
            index = len(prompts) - 1
            if mode != _V2 or s._turn_start is None:
                s._turn_start = s._turn_cancelled_to = index
                s._turn_refused = 0
            # The user's turn: v1 chunks without an id that follow start a new message.
            s._current = None
            changes = self._changes
            if mode != _V2:
                s.state_ = "running"
                stopped = s.stop_reason_ is not None
                s.stop_reason_ = None
                changes[(sid, "session", "state")] = None
                if stopped:
                    changes[(sid, "session", "stopReason")] = None
            changes[(sid, "session", "prompts")] = None
            if type(params.get("prompt")) is not list:
                self._check_request(sid, method, params)
            self._track(_CLIENT, has_id, rid, method, (_PROMPT, sid, index, mode))
        elif method == "session/request_permission":
            sid = params.get("sessionId") if type(params) is dict else None
            if type(sid) is not str:
                self._params_session(method, params)  # its error record
                self._track(_AGENT, has_id, rid, method, (_OTHER,))
                return
            entry = _request_entry(rid, params, has_id)
            s = self._session(sid)
            s._permissions.append(entry)
            index = len(s._permissions) - 1
            self._change(sid, "session", "permissions")
            self._check_request(sid, method, params)
            self._track(_AGENT, has_id, rid, method, (_PERMISSION, sid, index))
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
                self._change(sid, "session", "prompts")
        elif method == "initialize":
            if type(params) is dict:
                self._set_version("params", params)
            self._track(_CLIENT, has_id, rid, method, (_INITIALIZE,))
        elif method == "session/new" or method == "session/fork":
            self._track(_CLIENT, has_id, rid, method, (_NEW, method))
        elif method == "session/load" or method == "session/resume":
            sid = self._params_session(method, params)
            if sid is None:
                self._track(_CLIENT, has_id, rid, method, (_OTHER,))
                return
            self._session(sid)
            self._track(_CLIENT, has_id, rid, method, (_LOAD, sid, method))
        elif method == "session/set_mode":
            # Answered with a result, the mode asked for is current. A request without a
            # session or mode id is still tracked, as any other.
            what = (_OTHER,)
            if type(params) is dict:
                sid = params.get("sessionId")
                mode_id = params.get("modeId")
                if type(sid) is str and type(mode_id) is str:
                    what = (_SET_MODE, sid, mode_id)
            self._track(_CLIENT, has_id, rid, method, what)
        elif method == "session/set_config_option":
            # The result is the full set of options: it applies as a session setup's does. A
            # request without a session id is still tracked, as any other.
            sid = params.get("sessionId") if type(params) is dict else None
            what = (_LOAD, sid, method) if type(sid) is str else (_OTHER,)
            self._track(_CLIENT, has_id, rid, method, what)
        else:
            client = method in _AGENT_METHODS
            agent = method in _CLIENT_METHODS
            if client and not agent:
                self._track(_CLIENT, has_id, rid, method, (_OTHER,))
            elif agent and not client:
                self._track(_AGENT, has_id, rid, method, (_OTHER,))
            elif self._sender is not None:
                # A method of either side or none: tracked when the caller names the sender.
                self._track(self._sender, has_id, rid, method, (_OTHER,))

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
                    fits_client = all(k in result for k in client[0])
                    fits_agent = all(k in result for k in agent[0])
                # A type that requires keys the result has tells more than one that requires
                # none (which any result fits).
                named_client = fits_client and bool(client[0])
                named_agent = fits_agent and bool(agent[0])
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
        what = pending.pop(key)[1]
        kind = what[0]
        if kind == _INITIALIZE:
            if type(result) is dict:
                self._set_version("result", result)
        elif kind == _NEW:
            if type(result) is dict:
                sid = result.get("sessionId")
                if type(sid) is str:
                    self._session(sid)
                    self._session_setup(sid, what[1], result)
        elif kind == _LOAD:
            if type(result) is dict:
                self._session_setup(what[1], what[2], result)
        elif kind == _PROMPT:
            sid, index = what[1], what[2]
            s = self._sessions[sid]  # made by the request; sessions are never removed
            stop = result.get("stopReason") if type(result) is dict else None
            if type(stop) is not str:
                stop = None
            # Read by the rules in force when the prompt was sent (a connection initialized
            # again meanwhile changes them); sent before `initialize`, by those in force now,
            # and before it by the result's shape: a `messageId` without a `stopReason` is a
            # v2 acknowledgement.
            mode = what[3]
            if mode == _UNKNOWN:
                mode = self._mode
            if mode == _UNKNOWN:
                v1 = stop is not None or type(result) is not dict or "messageId" not in result
            else:
                v1 = mode != _V2
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
            if has_result:
                s._prompts[index]["response"] = result
            else:
                s._prompts[index]["error"] = error
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
        elif kind == _PERMISSION:
            sid, index = what[1], what[2]
            s = self._sessions[sid]
            _answer(s._permissions[index], has_result, result, error)
            self._change(sid, "session", "permissions")
        elif kind == _SET_MODE and has_result and self._mode != _V2:
            # v1 only, as current_mode_update: v2 has no modes.
            sid = what[1]
            self._session(sid)._current_mode_id = what[2]
            self._change(sid, "session", "currentModeId")

    def _session_setup(self, sid: str, method: str, r: dict) -> None:
        """configOptions and modes.currentModeId of the result of session setup method (new,
        fork, load, resume, set_config_option), read as the schemas say: an option that cannot
        be read is left out, a field of the wrong type is ignored, each with an error record,
        as in a config_option_update."""
        s = self._session(sid)
        notes: list = []
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

    # -- session/update ----------------------------------------------------------------------

    def _session_update(self, params: Any) -> None:
        sid = self._params_session("session/update", params)
        if sid is None:
            return
        u = params.get("update")
        if type(u) is not dict:
            self._error(sid, "session/update: update must be an object")
            return
        kind = u.get("sessionUpdate")
        if type(kind) is not str:
            self._error(sid, "session/update: sessionUpdate must be a string")
            return
        self._dispatch(sid, kind, u)

    def _dispatch(self, sid: str, kind: str, u: dict) -> None:
        """Apply a well-typed update to its session (created on first sight)."""
        if sid not in self._sessions:
            self._session(sid)
        # The handlers of the rules in force: a variant of one protocol version only is unknown
        # under the other.
        handler = self._handlers.get(kind)
        if handler is None:
            self._other(sid, u)
            return
        # (Reset first: nothing of an update whose handler raised is kept for the next one.
        # The list is replaced only when something was noted, as it seldom is.)
        if self._notes:
            self._notes = []
        mode = self._mode
        if _needs_repair(kind, u, mode):
            try:
                u, self._notes = _repair(kind, u, mode)
            except _Refused as refused:
                self._error(sid, str(refused))
                return
        handler(self, sid, kind, u)
        notes = self._notes
        if notes:
            self._notes = []
            for note in notes:
                self._error(sid, note)

    def _other(self, sid: str, u: dict) -> None:
        s = self._sessions[sid]
        index = str(len(s._other))
        s._other.append(u)
        s._timeline.append(("other", index, None))
        self._change(sid, "other", index)

    def _message_index(self, sid: str, role: str, mid: str) -> int:
        s = self._sessions[sid]
        index = s._message_index.get((role, mid))
        if index is not None:
            return index
        index = len(s._messages)
        s._messages.append(_Message(mid, role))
        s._message_index[(role, mid)] = index
        s._timeline.append(("message", mid, role))
        return index

    def _anonymous_message(self, s: Session, role: str) -> int:
        """A new anonymous message of ``role``: the next ``~N`` not a real id of that role."""
        index_of = s._message_index
        while True:
            s._anonymous += 1
            mid = f"~{s._anonymous}"
            if (role, mid) not in index_of:
                break
        index = len(s._messages)
        s._messages.append(_Message(mid, role))
        index_of[(role, mid, True)] = index
        s._timeline.append(("message", mid, role))
        return index

    def _chunk(self, sid: str, kind: str, u: dict) -> None:
        role = _CHUNK_ROLES[kind]
        content = u.get("content")
        if type(content) is not dict:
            self._error(sid, f"{kind}: content must be an object")
            return
        if type(content.get("type")) is not str:
            self._error(sid, f"{kind}: content.type must be a string")
            return
        mid = u.get("messageId")
        if type(mid) is str:
            index = self._message_index(sid, role, mid)
        elif role == "session" or self._mode == _V2:
            self._error(sid, f"{kind}: messageId must be a string")
            return
        else:
            s = self._sessions[sid]
            current = s._current
            if current is not None and s._messages[current].role == role:
                index = current
            else:
                index = self._anonymous_message(s, role)
        s = self._sessions[sid]
        s._current = index
        m = s._messages[index]
        if role == "session":
            for key in ("senderSessionId", "recipientSessionId"):
                value = u.get(key)
                if value is not None:
                    m.fields[key] = value
        m.append(content)
        self._change(sid, "message", m.id)

    def _upsert_message(self, sid: str, kind: str, u: dict) -> None:
        role = _UPSERT_ROLES[kind]
        mid = u.get("messageId")
        if type(mid) is not str:
            self._error(sid, f"{kind}: messageId must be a string")
            return
        index = self._message_index(sid, role, mid)
        s = self._sessions[sid]
        s._current = index
        m = s._messages[index]
        for k, v in u.items():
            # `id` and `role` name the message in the snapshot (its key): a field of that
            # name in an update is not kept, so it cannot pass for another message.
            if k == "sessionUpdate" or k == "messageId" or k == "id" or k == "role":
                continue
            if k == "content":
                if type(v) is list:
                    m.content = list(v) if v else None
                elif v is None:
                    m.content = None
            elif role == "session" and (k == "senderSessionId" or k == "recipientSessionId"):
                if v is not None:
                    m.fields[k] = v
            else:
                _patch(m.fields, k, v)
        self._changes[(sid, "message", mid)] = None

    def _tool_call(self, sid: str, kind: str, u: dict) -> None:
        create = kind == "tool_call"
        tid = u.get("toolCallId")
        if type(tid) is not str:
            self._error(sid, f"{kind}: toolCallId must be a string")
            return
        if create and type(u.get("title")) is not str:
            self._error(sid, "tool_call: title must be a string")
            return
        null_clears = self._mode != _V1
        s = self._sessions[sid]
        call = s._tool_calls.get(tid)
        new = call is None
        if new or create:
            call = {"toolCallId": tid}
            s._tool_calls[tid] = call
        for k, v in u.items():
            if v is None:
                if null_clears and k != "sessionUpdate" and k != "toolCallId":
                    call.pop(k, None)
            elif k == "content" or k == "locations":
                # Arrays replace whole, [] clears; any other value is ignored.
                if type(v) is list:
                    if v:
                        call[k] = v
                    else:
                        call.pop(k, None)
            elif k != "sessionUpdate" and k != "toolCallId":
                call[k] = v
        if new:
            s._timeline.append(("toolCall", tid, None))
        self._changes[(sid, "toolCall", tid)] = None

    def _tool_call_chunk(self, sid: str, kind: str, u: dict) -> None:
        tid = u.get("toolCallId")
        if type(tid) is not str:
            self._error(sid, "tool_call_content_chunk: toolCallId must be a string")
            return
        content = u.get("content")
        if type(content) is not dict:
            self._error(sid, "tool_call_content_chunk: content must be an object")
            return
        if type(content.get("type")) is not str:
            self._error(sid, "tool_call_content_chunk: content.type must be a string")
            return
        s = self._sessions[sid]
        call = s._tool_calls.get(tid)
        if call is None:
            call = s._tool_calls[tid] = {"toolCallId": tid}
            _push_item(call, "content", content)
            s._timeline.append(("toolCall", tid, None))
        else:
            _push_item(call, "content", content)
        self._changes[(sid, "toolCall", tid)] = None

    def _terminal_entry(self, sid: str, tid: str) -> list:
        s = self._sessions[sid]
        entry = s._terminals.get(tid)
        if entry is None:
            cols, scrollback, max_bytes = s._term_args
            # Fields, the terminal, and what it held when the store last wrote to it.
            term = Terminal(cols=cols, scrollback=scrollback, max_bytes=max_bytes)
            entry = [{"terminalId": tid}, term, 0]
            s._terminals[tid] = entry
            s._timeline.append(("terminal", tid, None))
        return entry

    def _terminal_update(self, sid: str, kind: str, u: dict) -> None:
        tid = u.get("terminalId")
        if type(tid) is not str:
            self._error(sid, "terminal_update: terminalId must be a string")
            return
        # A snapshot that is not base64 cannot be read: like any optional object that cannot,
        # it is left out.
        reset = False
        snapshot = b""
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
                    except TerminalDataError:
                        self._notes.append(
                            "terminal_update: output.data is not valid base64 (output ignored)"
                        )
        entry = self._terminal_entry(sid, tid)
        fields = entry[0]
        for k, v in u.items():
            if k != "sessionUpdate" and k != "terminalId" and k != "output":
                _patch(fields, k, v)
        if reset:
            self._hold_terminal_output(sid, tid, entry, entry[1]._reset_for_store(snapshot))
        self._change(sid, "terminal", tid)

    def _terminal_chunk(self, sid: str, kind: str, u: dict) -> None:
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
        self._hold_terminal_output(sid, tid, entry, entry[1]._feed_for_store(raw))
        self._changes[(sid, "terminal", tid)] = None

    def _hold_terminal_output(self, sid: str, tid: str, entry: list, held: int) -> None:
        """Count what the terminal just written holds now (``held``) against
        ``max_terminal_bytes``, and clear the terminals written least recently until the total
        fits (never this one: its own bounds hold it)."""
        self._terminal_held += held - entry[2]
        entry[2] = held
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
            kept = victim[1]._clear_for_store(victim[2])
            if kept is not None:
                self._terminal_held -= victim[2] - kept
                victim[2] = kept
                self._change(victim_sid, "terminal", victim_tid)

    def _set_plan(self, sid: str, pid: str, plan: dict) -> None:
        s = self._sessions[sid]
        new = pid not in s._plans
        s._plans[pid] = plan
        if new:
            s._plan_at[pid] = len(s._timeline)
            s._timeline.append(("plan", pid, None))
        self._change(sid, "plan", pid)

    def _plan_v1(self, sid: str, kind: str, u: dict) -> None:
        if type(u.get("entries")) is not list:
            self._error(sid, "plan: entries must be an array")
            return
        plan = {"type": "items", "planId": "main"}
        for k, v in u.items():
            # v1: null is omission. `type` and `planId` are the synthetic plan's: fields of
            # those names are not kept.
            if v is not None and k not in ("sessionUpdate", "type", "planId"):
                plan[k] = v
        self._set_plan(sid, "main", plan)

    def _plan_update(self, sid: str, kind: str, u: dict) -> None:
        plan = u.get("plan")
        if type(plan) is not dict:
            self._error(sid, "plan_update: plan must be an object")
            return
        pid = plan.get("planId")
        if type(pid) is not str:
            self._error(sid, "plan_update: plan.planId must be a string")
            return
        ptype = plan.get("type")
        if type(ptype) is not str:
            self._error(sid, "plan_update: plan.type must be a string")
            return
        # The required field of each known plan type; other types are kept raw.
        required = _PLAN_REQUIRED.get(ptype)
        if required is not None:
            name, kind_of, reason = required
            if kind_of is list:
                # Present with another type, `entries` reads as `[]` (below).
                unreadable = name not in plan
            else:
                unreadable = type(plan.get(name)) is not kind_of
            if unreadable:
                self._error(sid, reason)
                return
            notes = self._notes
            if not _members_fit(plan, _ONLY_META):
                plan = _repair_members("plan_update", "plan", None, plan, _ONLY_META, notes)
            if ptype == "items":
                # The entries follow the rule of a v1 plan's, one object further down.
                entries = plan["entries"]
                if type(entries) is list:
                    repaired = _repair_items(
                        "plan_update", "plan.entries", entries, _PLAN_ENTRY, self._mode, notes
                    )
                else:
                    notes.append(f"plan_update: plan.entries must be an array{_READ_EMPTY}")
                    repaired = []
                if repaired is not entries:
                    plan = {**plan, "entries": repaired}
        self._set_plan(sid, pid, _without(plan, ()))
        self._plan_extras(sid, kind, u, _PLAN_UPDATE_SKIP)

    def _plan_extras(self, sid: str, kind: str, u: dict, skip: frozenset) -> None:
        """The update's own _meta and unknown fields (beside the plan or plan id) go to
        updateExtras, the last of each kind, as a session-level update's do."""
        if _set_extras(self._sessions[sid]._update_extras, kind, u, skip):
            self._change(sid, "session", "updateExtras")

    def _plan_removed(self, sid: str, kind: str, u: dict) -> None:
        pid = u.get("planId")
        if type(pid) is not str:
            self._error(sid, "plan_removed: planId must be a string")
            return
        s = self._sessions[sid]
        # Removing a plan that is not there changes nothing (and must not grow the change set).
        if s._plans.pop(pid, None) is not None:
            s._remove_plan_entry(pid)
            self._change(sid, "plan", pid)
        self._plan_extras(sid, kind, u, _PLAN_REMOVED_SKIP)

    def _replace(self, sid: str, kind: str, u: dict) -> None:
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
        moved = _set_extras(s._update_extras, kind, u, _REPLACE_SKIP[kind])
        self._change(sid, "session", field)
        if moved:
            self._change(sid, "session", "updateExtras")

    def _info(self, sid: str, kind: str, u: dict) -> None:
        info = self._sessions[sid]._info
        for k, v in u.items():
            if k != "sessionUpdate":
                _patch(info, k, v)
        self._change(sid, "session", "info")

    def _usage(self, sid: str, kind: str, u: dict) -> None:
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

    def _state(self, sid: str, kind: str, u: dict) -> None:
        state = u.get("state")
        if type(state) is not str:
            self._error(sid, "state_update: state must be a string")
            return
        s = self._sessions[sid]
        # `stopReason` is an idle state's; on another it is an unknown field, kept raw.
        if state == "idle":
            stop = u.get("stopReason")
            if type(stop) is not str:
                stop = None
            s._turn_start = None
            skip = _STATE_SKIP
        else:
            stop = None
            skip = _STATE_SKIP_NOT_IDLE
        # Named when set, also to the value it had, or cleared.
        stopped = stop is not None or s.stop_reason_ is not None
        s.stop_reason_ = stop
        s.state_ = state
        extras = s._update_extras
        if extras or not u.keys() <= skip:
            moved = _set_extras(extras, "state_update", u, skip)
        else:
            moved = False  # nothing to keep, and nothing kept before
        self._changes[(sid, "session", "state")] = None
        if stopped:
            self._changes[(sid, "session", "stopReason")] = None
        if moved:
            self._changes[(sid, "session", "updateExtras")] = None

    def _notice(self, sid: str, kind: str, u: dict) -> None:
        if type(u.get("severity")) is not str:
            self._error(sid, "notice: severity must be a string")
            return
        title = u.get("title")
        if type(title) is not str or not title:
            self._error(sid, "notice: title must be a non-empty string")
            return
        self._sessions[sid]._notices.append(_without(u, ("sessionUpdate",)))
        self._change(sid, "session", "notices")

    def _compaction_entry(self, sid: str, cid: str) -> dict:
        s = self._sessions[sid]
        entry = s._compactions.get(cid)
        if entry is None:
            entry = s._compactions[cid] = {"compactionId": cid}
            s._timeline.append(("compaction", cid, None))
        return entry

    def _compaction(self, sid: str, kind: str, u: dict) -> None:
        cid = u.get("compactionId")
        if type(cid) is not str:
            self._error(sid, "compaction_update: compactionId must be a string")
            return
        if type(u.get("status")) is not str:
            self._error(sid, "compaction_update: status must be a string")
            return
        c = self._compaction_entry(sid, cid)
        for k, v in u.items():
            if k == "sessionUpdate" or k == "compactionId":
                continue
            if k == "summary":
                if type(v) is list:
                    if v:
                        c[k] = v
                    else:
                        c.pop(k, None)
                elif v is None:
                    c.pop(k, None)
            else:
                _patch(c, k, v)
        self._change(sid, "compaction", cid)

    def _compaction_chunk(self, sid: str, kind: str, u: dict) -> None:
        cid = u.get("compactionId")
        if type(cid) is not str:
            self._error(sid, "compaction_summary_chunk: compactionId must be a string")
            return
        content = u.get("content")
        if type(content) is not dict:
            self._error(sid, "compaction_summary_chunk: content must be an object")
            return
        _push_item(self._compaction_entry(sid, cid), "summary", content)
        self._change(sid, "compaction", cid)

    def _subagent(self, sid: str, kind: str, u: dict) -> None:
        aid = u.get("subagentSessionId")
        if type(aid) is not str:
            aid = u.get("sessionId")
            if type(aid) is not str:
                self._error(sid, "subagent_update: subagentSessionId must be a string")
                return
        null_clears = self._mode != _V1
        s = self._sessions[sid]
        entry = s._subagents.get(aid)
        if entry is None:
            entry = s._subagents[aid] = {}
        for k, v in u.items():
            if k == "sessionUpdate" or (v is None and not null_clears):
                continue
            _patch(entry, k, v)
        self._change(sid, "subagent", aid)


_CHUNK_ROLES = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "session_message_chunk": "session",
}
_FAST_ROLES = {k: v for k, v in _CHUNK_ROLES.items() if v != "session"}
_UPSERT_ROLES = {
    "user_message": "user",
    "agent_message": "agent",
    "agent_thought": "thought",
    "session_message": "session",
}
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
# plan type -> (its required field, that field's type, the error when it is missing).
_PLAN_REQUIRED = {
    "items": ("entries", list, "plan_update: plan.entries must be an array"),
    "markdown": ("content", str, "plan_update: plan.content must be a string"),
    "file": ("uri", str, "plan_update: plan.uri must be a string"),
}
_STR = ((str,), "a string")
_INT = ((int,), "an integer")
_NUM = ((int, float), "a number")
_ARR = ((list,), "an array")
_OBJ = ((dict,), "an object")
# A field's need: absent or null passes (_OPT); present with its type (_REQ); required, but
# its presence and type are the handler's, with its own error, and only what is inside is
# checked here (_INNER); a required array the schemas mark default-on-error: absent is the
# handler's error, but present with another type (null too) it reads as [] (_DEFAULT).
_OPT, _REQ, _INNER, _DEFAULT = 0, 1, 2, 3
# What is inside a field: nothing checked (None); an object whose members are checked
# ("shaped", fields); an array each item of which is checked ("items", item); one item
# ("one", item). Members are checked by type only: the rules stop one level down.


def _opt(name, ty, inside=None):
    return (name, *ty, _OPT, inside)


def _req(name, ty):
    return (name, *ty, _REQ, None)


def _default(name, item):
    return (name, *_ARR, _DEFAULT, ("items", item))


_META = _opt("_meta", _OBJ)
# An item: (members, by_type) - an object with members and, when by_type is not empty, the
# members of its string `type` (listed in members) as (type, mode, fields), mode None for
# both versions, type _ANY_TYPE for any item of the version; other types stay raw. Before
# initialize only the rules of both are checked.
_ANY_TYPE = "*"
_TOOL_CALL_CONTENT = (
    (_req("type", _STR),),
    (
        ("content", None, (_req("content", _OBJ), _META)),
        (
            "diff",
            _V1,
            (_req("path", _STR), _opt("oldText", _STR), _req("newText", _STR), _META),
        ),
        ("diff", _V2, (_req("changes", _ARR), _opt("patch", _OBJ), _META)),
        ("terminal", None, (_req("terminalId", _STR), _META)),
    ),
)
# A ContentBlock, named by its type; the members of each type stay raw.
_CONTENT_BLOCK = ((_req("type", _STR),), ())
_TOOL_CALL_LOCATION = ((_req("path", _STR), _opt("line", _INT), _META), ())
# An AvailableCommand: `input` is one of several objects.
_AVAILABLE_COMMAND = (
    (_req("name", _STR), _req("description", _STR), _opt("input", _OBJ), _META),
    (),
)
# A SessionConfigOption, named by `id` in v1 and `configId` in v2; `category` is an open
# enum, and the members of each kind of option stay raw.
_CONFIG_OPTION = (
    (_req("name", _STR), _opt("description", _STR), _opt("category", _STR), _META),
    (
        (_ANY_TYPE, _V1, (_req("id", _STR),)),
        (_ANY_TYPE, _V2, (_req("configId", _STR),)),
    ),
)
# priority and status are open enums.
_PLAN_ENTRY = (
    (_req("content", _STR), _req("priority", _STR), _req("status", _STR), _META),
    (),
)
_CHUNK_FIELDS = (_opt("messageId", _STR), _META)
_UPSERT_FIELDS = (_opt("content", _ARR, ("items", _CONTENT_BLOCK)), _META)
_TOOL_CALL_FIELDS = (
    _opt("title", _STR),
    _opt("name", _STR),
    _opt("kind", _STR),
    _opt("status", _STR),
    _opt("content", _ARR, ("items", _TOOL_CALL_CONTENT)),
    _opt("locations", _ARR, ("items", _TOOL_CALL_LOCATION)),
    _META,
)
_ONLY_META = (_META,)
# The JSON type of every optional field of the known variants, read off the v1 and v2 schemas
# (stable and unstable) and, for subagent_update and the session messages, the subagent
# drafts, with the members of the nested objects and the items of the arrays the schemas
# type, one level down (also the one item of a tool_call_content_chunk, the entries of a v1
# plan and, asked by its handler, of a plan_update); `null` passes for each optional one (v2:
# clears; v1: omission). Required fields are checked by the handlers; open enums take any
# string; rawInput/rawOutput and the subagent `state` take anything; unknown fields, and items
# of unknown type, stay raw. What does not fit is repaired as the schemas' decoding marks say
# (`_repair`). The same table and rules are check.rs's FIELD_TYPES and repair.
_FIELD_TYPES = {
    "user_message_chunk": _CHUNK_FIELDS,
    "agent_message_chunk": _CHUNK_FIELDS,
    "agent_thought_chunk": _CHUNK_FIELDS,
    "session_message_chunk": (
        _opt("messageId", _STR),
        _opt("senderSessionId", _STR),
        _opt("recipientSessionId", _STR),
        _META,
    ),
    "user_message": _UPSERT_FIELDS,
    "agent_message": _UPSERT_FIELDS,
    "agent_thought": _UPSERT_FIELDS,
    "session_message": (
        _opt("messageId", _STR),
        _opt("content", _ARR, ("items", _CONTENT_BLOCK)),
        _opt("senderSessionId", _STR),
        _opt("recipientSessionId", _STR),
        _META,
    ),
    "tool_call": _TOOL_CALL_FIELDS,
    "tool_call_update": _TOOL_CALL_FIELDS,
    "tool_call_content_chunk": (
        ("content", *_OBJ, _INNER, ("one", _TOOL_CALL_CONTENT)),
        _META,
    ),
    "terminal_update": (
        _opt("command", _STR),
        _opt("cwd", _STR),
        _opt("output", _OBJ, ("shaped", (_req("data", _STR), _META))),
        _opt(
            "exitStatus",
            _OBJ,
            ("shaped", (_opt("exitCode", _INT), _opt("signal", _STR), _META)),
        ),
        _META,
    ),
    "terminal_output_chunk": _ONLY_META,
    "plan": (_default("entries", _PLAN_ENTRY), _META),
    "plan_update": _ONLY_META,
    "plan_removed": _ONLY_META,
    "available_commands_update": (_default("availableCommands", _AVAILABLE_COMMAND), _META),
    "config_option_update": (_default("configOptions", _CONFIG_OPTION), _META),
    "current_mode_update": _ONLY_META,
    "session_info_update": (_opt("title", _STR), _opt("updatedAt", _STR), _META),
    "usage_update": (
        _opt(
            "cost",
            _OBJ,
            ("shaped", (_req("amount", _NUM), _req("currency", _STR), _META)),
        ),
        _META,
    ),
    "state_update": (
        _opt("stopReason", _STR),
        _opt(
            "usage",
            _OBJ,
            (
                "shaped",
                (
                    _req("totalTokens", _INT),
                    _req("inputTokens", _INT),
                    _req("outputTokens", _INT),
                    _opt("thoughtTokens", _INT),
                    _opt("cachedReadTokens", _INT),
                    _opt("cachedWriteTokens", _INT),
                    _META,
                ),
            ),
        ),
        _META,
    ),
    "notice": (_opt("description", _STR), _META),
    "compaction_update": (
        _opt("summary", _ARR, ("items", _CONTENT_BLOCK)),
        _opt("error", _STR),
        _META,
    ),
    "compaction_summary_chunk": (
        ("content", *_OBJ, _INNER, ("one", _CONTENT_BLOCK)),
        _META,
    ),
    "subagent_update": (
        _opt("name", _STR),
        _opt("task", _STR),
        _opt("title", _STR),
        _opt("description", _STR),
        _opt("capabilities", _OBJ),
        _META,
    ),
}
# The same rules by field name, for walking an update's own keys.
_FIELD_RULES = {
    kind: {field[0]: field for field in fields} for kind, fields in _FIELD_TYPES.items()
}


def _mismatch(v: Any, field: tuple) -> str | None:
    """What value v (None when absent or null) should have been if it does not fit field, by
    type only."""
    _, types, name, need, _ = field
    if need == _INNER or type(v) in types or (v is None and need == _OPT):
        return None
    return name + " or null" if need == _OPT else name


def _at(name: str, index: int | None) -> str:
    # Paths are only spelled out for an error.
    return name if index is None else f"{name}[{index}]"


def _members_fit(o: dict, fields: tuple) -> bool:
    """Whether every member of object o fits its field of fields (`_mismatch` finds nothing).
    Members are checked by type only: the rules stop here, one level down."""
    for name, types, _, need, _ in fields:
        v = o.get(name)
        if type(v) not in types and (v is not None or need != _OPT) and need != _INNER:
            return False
    return True


def _item_fits(v: Any, item: tuple, mode: int) -> bool:
    """Whether one item fits item under mode (`_repair_item` would keep it as it is)."""
    members, by_type = item
    return (
        type(v) is dict
        and _members_fit(v, members)
        and (not by_type or _type_members_fit(v, by_type, mode))
    )


def _type_members_fit(v: dict, by_type: tuple, mode: int) -> bool:
    """Whether object v fits the members its `type` has under mode, as by_type lists them."""
    tag = v.get("type")
    for t, version, fields in by_type:
        if (
            (t is _ANY_TYPE or t == tag)  # the table holds _ANY_TYPE itself
            and (version is None or version == mode)
            and not _members_fit(v, fields)
        ):
            return False
    return True


def _items_fit(v: Any, item: tuple, mode: int) -> bool:
    """Whether every item of v, when it is an array, fits item under mode."""
    if type(v) is list:
        # `_item_fits` for each item, inline: arrays of content blocks and entries are common.
        members, by_type = item
        for x in v:
            if (
                type(x) is not dict
                or not _members_fit(x, members)
                or (by_type and not _type_members_fit(x, by_type, mode))
            ):
                return False
    return True


def _present_fields(kind: str, u: dict) -> Iterator[tuple]:
    """(value, name, types, want, need, inside) of each field of update u (of variant kind) that
    its rules look at: an update's own fields are optional or the handler's, so absent and null
    pass (but a null required array is one that does not fit), and the members of an idle
    state_update are unknown fields on another state."""
    not_idle = kind == "state_update" and u.get("state") != "idle"
    for field in _FIELD_TYPES[kind]:
        name, _, _, need, _ = field
        v = u.get(name)
        if (v is None and (need != _DEFAULT or name not in u)) or (
            not_idle and name in _IDLE_MEMBERS
        ):
            continue
        yield (v, *field)


def _needs_repair(kind: str, u: dict, mode: int) -> bool:
    """Whether a field of update u (of variant kind) does not fit its rule under mode (the
    fields _present_fields gives), found by walking the names that have rules (most kinds
    have as few as an update has keys, or fewer) and testing the update for each."""
    rules = _FIELD_RULES[kind]
    not_idle = kind == "state_update" and u.get("state") != "idle"
    for name in rules:
        if name not in u or (not_idle and name in _IDLE_MEMBERS):
            continue
        v = u[name]
        _, types, _, need, inside = rules[name]
        if v is None:
            if need == _DEFAULT:
                return True  # a required array, null: read as []
            continue
        if type(v) not in types and need != _INNER:
            return True
        if inside is None:
            continue
        how, inner = inside
        if how == "shaped":
            if type(v) is dict and not _members_fit(v, inner):
                return True
        elif how == "items":
            if not _items_fit(v, inner, mode):
                return True
        elif type(v) is dict and not _item_fits(v, inner, mode):
            return True
    return False


# Members only an idle `state_update` has: on another state they are unknown fields.
_IDLE_MEMBERS = ("stopReason", "usage")
# What a field or item that does not fit its rule comes to (the schemas mark every optional
# field `x-deserialize-default-on-error` and every array of items
# `x-deserialize-skip-invalid-items`): the field falls back to its default, absence, and the
# item is left out. Each is an error record; the rest of the update is applied.
_IGNORED = " (ignored)"
_DROPPED = " (item dropped)"
# A required array marked default-on-error that is not one reads as its default.
_READ_EMPTY = " (read as [])"
_ABSENT = object()


class _Refused(Exception):
    """A required part of an update that does not fit: the update is not applied."""


def _repair_members(
    kind: str, name: str, index: int | None, o: dict, fields: tuple, notes: list
) -> dict:
    """Object o (field name, or its item index) with each optional member of fields that does
    not fit left out, each noted; o itself when all fit. Raises _Refused for a required one."""
    fixed = None
    for field in fields:
        key = field[0]
        want = _mismatch(o.get(key), field)
        if want is None:
            continue
        reason = f"{kind}: {_at(name, index)}.{key} must be {want}"
        if field[3] == _REQ:
            raise _Refused(reason)
        notes.append(reason + _IGNORED)
        if fixed is None:
            fixed = dict(o)
        del fixed[key]
    return o if fixed is None else fixed


def _repair_item(
    kind: str, name: str, index: int | None, v: Any, item: tuple, mode: int, notes: list
) -> Any:
    """One item (field name, or its item index) against item, repaired as _repair_members
    repairs an object. Raises _Refused when it cannot be read."""
    if type(v) is not dict:
        raise _Refused(f"{kind}: {_at(name, index)} must be an object")
    members, by_type = item
    own: list = []
    v = _repair_members(kind, name, index, v, members, own)
    for t, version, fields in by_type:
        if t in (_ANY_TYPE, v.get("type")) and (version is None or version == mode):
            v = _repair_members(kind, name, index, v, fields, own)
    notes.extend(own)
    return v


def _repair_items(kind: str, name: str, v: list, item: tuple, mode: int, notes: list) -> list:
    """The items of array v (field name) that can be read, each repaired; v itself when all fit
    as they are. An item that cannot be read is left out and noted."""
    if _items_fit(v, item, mode):
        return v  # the common case, told without the repair's bookkeeping
    out = None
    for i, x in enumerate(v):
        try:
            y = _repair_item(kind, name, i, x, item, mode, notes)
        except _Refused as refused:
            notes.append(str(refused) + _DROPPED)
            y = _ABSENT
        if y is not x and out is None:
            out = v[:i]
        if out is not None and y is not _ABSENT:
            out.append(y)
    return v if out is None else out


def _repair(kind: str, u: dict, mode: int) -> tuple[dict, list]:
    """Update u (of variant kind, with a field _field_error finds wrong) with what does not fit
    its rules repaired, and one reason per part left out. Raises _Refused when a required part
    cannot be read."""
    notes: list = []
    fixed = dict(u)
    for v, name, types, want, need, inside in _present_fields(kind, u):
        new = v
        if need == _DEFAULT and type(v) not in types:
            notes.append(f"{kind}: {name} must be {want}{_READ_EMPTY}")
            new = []
        elif type(v) not in types and need != _INNER:
            notes.append(f"{kind}: {name} must be {want} or null{_IGNORED}")
            new = _ABSENT
        elif inside is not None:
            how, rules = inside
            if how == "shaped":
                if type(v) is dict:
                    own: list = []
                    try:
                        new = _repair_members(kind, name, None, v, rules, own)
                        notes.extend(own)
                    except _Refused as refused:
                        notes.append(f"{refused} ({name} ignored)")
                        new = _ABSENT
            elif how == "items":
                if type(v) is list:
                    new = _repair_items(kind, name, v, rules, mode, notes)
            elif type(v) is dict:  # "one": a required item
                new = _repair_item(kind, name, None, v, rules, mode, notes)
        if new is _ABSENT:
            del fixed[name]
        elif new is not v:
            fixed[name] = new
    return fixed, notes


_HANDLERS = {
    **{k: Sessions._chunk for k in _CHUNK_ROLES},
    **{k: Sessions._upsert_message for k in _UPSERT_ROLES},
    "tool_call": Sessions._tool_call,
    "tool_call_update": Sessions._tool_call,
    "tool_call_content_chunk": Sessions._tool_call_chunk,
    "terminal_update": Sessions._terminal_update,
    "terminal_output_chunk": Sessions._terminal_chunk,
    "plan": Sessions._plan_v1,
    "plan_update": Sessions._plan_update,
    "plan_removed": Sessions._plan_removed,
    **{k: Sessions._replace for k in _REPLACE_FIELDS},
    "session_info_update": Sessions._info,
    "usage_update": Sessions._usage,
    "state_update": Sessions._state,
    "notice": Sessions._notice,
    "compaction_update": Sessions._compaction,
    "compaction_summary_chunk": Sessions._compaction_chunk,
    "subagent_update": Sessions._subagent,
}

# The handlers under each mode: a variant of one protocol version only is unknown under the
# other (and goes to `other`).
_MODE_HANDLERS = {
    mode: {k: h for k, h in _HANDLERS.items() if _OTHER_VERSION.get(k) != mode}
    for mode in (_UNKNOWN, _V1, _V2)
}

_READ_BYTES = 1 << 20


# Sessions' keyword arguments, read off its signature rather than listed again.
_SESSIONS_OPTIONS = frozenset(
    Sessions.__init__.__code__.co_varnames[1 : Sessions.__init__.__code__.co_argcount]
)


def replay(source: str | os.PathLike | BinaryIO, **options: Any) -> Sessions:
    """Reduce a whole NDJSON trace (a path or a binary file) into a new Sessions.

    ``options`` are Sessions' keyword arguments.
    """
    for key in options:
        if key not in _SESSIONS_OPTIONS:
            raise TypeError(f"replay() got an unexpected keyword argument {key!r}")
    store = Sessions(**options)
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            _replay_file(store, f)
    elif hasattr(source, "read"):
        _replay_file(store, source)
    else:
        raise TypeError(
            f"replay() needs a path or a binary file with read(), not {type(source).__name__}"
        )
    store.finish()
    return store


def _replay_file(store: Sessions, f: BinaryIO) -> None:
    while True:
        data = f.read(_READ_BYTES)
        if isinstance(data, str):
            raise TypeError("replay needs a binary file")
        if data is None:
            # A non-blocking stream with nothing to read yet: not the end of the trace.
            raise TypeError("replay needs a blocking binary file: read() returned None")
        if not data:
            break
        store.feed(data)
