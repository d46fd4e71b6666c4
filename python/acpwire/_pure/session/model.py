"""Twin of src/session/model.rs: a session's reduced state, its records, and the store's limits.

What one session holds (``Session``, its messages and terminal entries), the error records,
the lock a store shares with its sessions, and the caps that bound them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, final

from ..._contract import (
    MAX_HOLES,
)
from .._args import Unpicklable, str_arg
from ..terminal import Terminal
from . import entity as _entity
from .json import _block_text
from .parts import ErrorRecord, JsonObject, JsonValue, TermArgs, TimelineEntry, locked
from .snapshot import snapshot as _snapshot
from .turns import _Turn, kept_before, remap_turns

if TYPE_CHECKING:
    from ...types import (
        Compaction,
        ContentBlock,
        Message,
        Plan,
        Subagent,
        TerminalEntry,
        ToolCall,
    )

# What one terminal of a store may hold alone by default.
_TERMINAL_MAX_BYTES = 16 * 1024 * 1024


# The fields of every message that has none (never written: see `_Message.own_fields`).
_NO_FIELDS: Any = {}


class _Message:
    # `content` holds each block as `json._stored_block` keeps it: a plain text block as its
    # text (a str), any other block as sent.
    # `room`, `size` and `trunc` keep the content within the store's max_message_bytes (see
    # `budget._Budget._add_block`): the bound less an upper bound of the size while untracked,
    # the exact size once tracked (-1 before), and the truncation once there is one.
    __slots__ = ("content", "fields", "id", "role", "room", "size", "trunc")

    def __init__(self, mid: str, role: str, room: int) -> None:
        self.id = mid
        self.role = role
        self.content: list[JsonValue] | None = None
        # Shared until first written (`own_fields`): most messages have no other field.
        self.fields: JsonObject = _NO_FIELDS
        self.room = room
        self.size = -1
        self.trunc: Any = None

    def own_fields(self) -> JsonObject:
        """The message's fields, to write: its own dict, made on first write."""
        fields = self.fields
        if fields is _NO_FIELDS:
            fields = self.fields = {}
        return fields

    def blocks(self) -> list[JsonValue] | None:
        """The content as shown: the head and the live tail once truncated."""
        trunc = self.trunc
        if trunc is None:
            return self.content
        return [*(self.content or ()), *trunc.tail[trunc.start :]]

    def append(self, block: JsonObject) -> list[JsonValue]:
        """Append one chunk's content block; return the content list."""
        content = self.content
        if content is None:
            content = self.content = [block]
        else:
            content.append(block)
        return content


class _TerminalEntry:
    """A terminal of a session: its fields, the live Terminal, and what it held when the store
    last wrote to it."""

    __slots__ = ("fields", "held", "source_truncated", "term")

    def __init__(self, fields: JsonObject, term: Terminal) -> None:
        self.fields = fields
        self.term = term
        self.held = 0
        # A v1 client terminal's last terminal/output said the client dropped output.
        self.source_truncated = False


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
    def feeding(self) -> Iterator[None]:
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
    def changing(self) -> Iterator[None]:
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


# The shared empty containers a session's rare parts start as (see `Session._own`): never
# written, which `tests/session/test_pure_sharing.py` checks after every shared case.
_NO_ENTRIES: Any = {}
_NO_ITEMS: Any = []


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
        "_tail_message",
        "_term_args",
        "_terminals",
        "_timeline",
        "_timeline_dropped",
        "_timeline_holes",
        "_tool_calls",
        "_turn_cancelled_to",
        "_turn_record",
        "_turn_refused",
        "_turn_start",
        "_turns",
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
    def _of_store(
        cls, sid: str, version: list[JsonValue], term_args: TermArgs, lock: _StoreLock
    ) -> Session:
        session = cls.__new__(cls)
        session._init(sid, version, term_args, lock)
        return session

    def _init(
        self, sid: str, version: list[JsonValue], term_args: TermArgs, lock: _StoreLock
    ) -> None:
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
        self._message_index: dict[tuple[str, str] | tuple[str, str, bool], int] = {}
        self._current: int | None = None
        self._anonymous = 0
        self._tool_calls: dict[str, JsonObject] = {}
        # The parts most sessions never use start as the shared empty containers and are
        # made on first write (`_own`): eight empty ones were most of an idle session.
        self._terminals: dict[str, _TerminalEntry] = _NO_ENTRIES
        self._plans: dict[str, JsonObject] = _NO_ENTRIES
        self._compactions: dict[str, JsonObject] = _NO_ENTRIES
        self._subagents: dict[str, JsonObject] = _NO_ENTRIES
        self._usage: JsonObject | None = None
        self._info: JsonObject = {}
        self._available_commands: list[JsonValue] | None = None
        self._config_options: list[JsonValue] | None = None
        self._current_mode_id: str | None = None
        self._update_extras: JsonObject = _NO_ENTRIES
        self._permissions: list[JsonObject] = _NO_ITEMS
        self._prompts: list[JsonObject] = []
        # The turn going on, if one is: until the last prompt's v1 response or error response,
        # or (v2) an idle state_update or an error answer to each of its prompts. In v2 a
        # prompt sent meanwhile joins the turn (the work it contributes to). Only an ongoing
        # turn can be cancelled. Its first prompt, its prompts answered with an error, and
        # where the prompts a cancel has marked end.
        self._turn_start: int | None = None
        self._turn_refused = 0
        self._turn_cancelled_to = 0
        # Its record in `_turns`, every prompt turn in order.
        self._turn_record = 0
        self._turns: list[_Turn] = []
        # Made on first use, as `_errors`: an empty deque costs 760 bytes, most of a session.
        self._notices: deque[JsonObject] | None = None
        self._other: list[JsonValue] = _NO_ITEMS
        # (type, id, role) in first-seen order; None where a removed plan's entry was.
        self._timeline: list[TimelineEntry | None] = []
        # Where each plan's entry is in the timeline, so that removing a plan is O(1).
        self._plan_at: dict[str, int] = _NO_ENTRIES
        self._timeline_holes = 0
        # Holes compacted out of the timeline: with its length, the entries ever placed there.
        self._timeline_dropped = 0
        # The message placed last and the count of entries placed once it was: while that
        # count has not moved, the message is the timeline's last entry.
        self._tail_message: tuple[int, int] | None = None
        self._errors: deque[ErrorRecord] | None = None
        self._term_args = term_args

    def _own(self, name: str) -> Any:
        """Container ``name`` of this session, made its own if it is still a shared empty one;
        every write to a part that starts shared goes through here."""
        value = getattr(self, name)
        if value is _NO_ENTRIES:
            value = {}
            setattr(self, name, value)
        elif value is _NO_ITEMS:
            value = []
            setattr(self, name, value)
        return value

    @property
    def id(self) -> str:
        """The session id."""
        return self._id

    def _add_message(self, m: _Message, key: tuple[str, str] | tuple[str, str, bool]) -> int:
        """Add message ``m``, found by ``key``, last on the timeline; return its index."""
        index = len(self._messages)
        self._messages.append(m)
        self._message_index[key] = index
        timeline = self._timeline
        timeline.append(("message", m.id, m.role))
        self._tail_message = (index, self._timeline_dropped + len(timeline))
        return index

    def _is_timeline_tail(self, index: int) -> bool:
        """Whether message ``index`` is still the timeline's last entry."""
        return self._tail_message == (index, self._timeline_dropped + len(self._timeline))

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
            self._compact_timeline()

    def _compact_timeline(self) -> None:
        """Drop the holes of removed entries from the timeline."""
        timeline = self._timeline
        if self._turns:
            remap_turns(self, kept_before(timeline))
        timeline = self._timeline = [t for t in timeline if t is not None]
        self._timeline_dropped += self._timeline_holes
        self._timeline_holes = 0
        if self._plan_at:
            self._plan_at = {
                t[1]: i
                for i, t in enumerate(timeline)
                if t is not None and t[0] == "plan" and type(t[1]) is str
            }

    def _drop_tool_calls(self, ids: list[str]) -> None:
        """Remove tool calls ``ids`` and their timeline entries (see the store's budget)."""
        tool_calls = self._tool_calls
        for tid in ids:
            del tool_calls[tid]
        gone = set(ids)
        timeline = self._timeline
        for i, entry in enumerate(timeline):
            if entry is not None and entry[0] == "toolCall" and entry[1] in gone:
                timeline[i] = None
                self._timeline_holes += 1
        self._compact_timeline()

    @property
    @locked
    def state(self) -> str | None:
        """The foreground state (``running``, ``idle``, ``requires_action`` or any other string
        sent), None before the first report. In v1 a prompt sets ``running``, its response
        ``idle``."""
        return self.state_

    @property
    @locked
    def stop_reason(self) -> str | None:
        """Why the last turn stopped (only while idle)."""
        return self.stop_reason_

    @locked
    def terminal(self, terminal_id: str) -> Terminal | None:
        """The live Terminal ``terminal_id`` (None if the session has no such terminal)."""
        entry = self._terminals.get(str_arg(terminal_id))
        return None if entry is None else entry.term

    @locked
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
        for block in self._messages[index].blocks() or ():
            text = _block_text(block)
            if text is not None:
                parts.append(text)
        return "".join(parts)

    @locked
    def tool_call(self, tool_call_id: str) -> ToolCall | None:
        """Tool call ``tool_call_id`` as ``snapshot()["toolCalls"][tool_call_id]`` (a copy),
        or None; the rest of the snapshot is not built."""
        return _entity.tool_call(self, str_arg(tool_call_id))

    @locked
    def message(self, role: str, message_id: str) -> Message | None:
        """Message (``role``, ``message_id``) as its entry of ``snapshot()["messages"]`` (a
        copy), or None. ``role`` is ``"user"``, ``"agent"``, ``"thought"`` or ``"session"``."""
        return _entity.message(self, str_arg(role), str_arg(message_id))

    @locked
    def _message_blocks(self, index: int) -> list[ContentBlock] | None:
        """The content blocks of the ``index``th entry of ``snapshot()["messages"]`` each as
        sent (a copy), for ``acpwire.sdk``; None without it."""
        return _entity.message_blocks(self, index)

    @locked
    def terminal_entry(self, terminal_id: str) -> TerminalEntry | None:
        """Terminal ``terminal_id`` as ``snapshot()["terminals"][terminal_id]`` (a copy, its
        ``text`` rendered now), or None. ``terminal`` gives the live Terminal instead."""
        return _entity.terminal(self, str_arg(terminal_id))

    @locked
    def plan(self, plan_id: str = "main") -> Plan | None:
        """Plan ``plan_id`` as ``snapshot()["plans"][plan_id]`` (a copy), or None; v1's one
        plan is ``"main"``."""
        return _entity.plan(self, str_arg(plan_id))

    @locked
    def compaction(self, compaction_id: str) -> Compaction | None:
        """Compaction ``compaction_id`` as ``snapshot()["compactions"][compaction_id]`` (a
        copy), or None."""
        return _entity.compaction(self, str_arg(compaction_id))

    @locked
    def subagent(self, subagent_id: str) -> Subagent | None:
        """Subagent ``subagent_id`` as ``snapshot()["subagents"][subagent_id]`` (a copy), or
        None."""
        return _entity.subagent(self, str_arg(subagent_id))

    @locked
    def snapshot(self) -> JsonObject:
        """The session as a JSON-serializable dict (a copy).

        Top-level keys, always present: ``sessionId``, ``protocolVersion``, ``state``,
        ``stopReason``, ``messages`` (list of ``{id, role, content?, _meta?, ...}`` in timeline
        order), ``toolCalls`` (by id), ``terminals`` (by id: ``terminalId``, ``source``
        (``agent`` or ``client``), ``command?``, ``cwd?``, ``exitStatus?``, ``_meta?``,
        ``text``, ``bytes``, ``truncated``), ``plans`` (by planId), ``compactions`` (by id),
        ``usage``, ``info``, ``availableCommands``, ``configOptions``, ``currentModeId``,
        ``permissions`` and ``prompts`` (request order, with ``response`` or ``error`` once
        answered), ``turns`` (one per prompt turn: ``requestId``, ``prompt``, ``messageId?``,
        ``stopReason``, ``cancelRequested``, ``usage?``, ``error?``, ``joined?``, ``start`` and
        ``end`` in the timeline), ``notices`` (the last 100), ``other`` (raw unknown updates),
        ``timeline`` (``{type, id}`` plus ``role`` for messages; a turn's id is its request
        id), ``errors`` (this session's, the last 1000), ``subagents`` (by id) and
        ``updateExtras``.
        Inside entities, a field never set or cleared is absent.
        """
        return _snapshot(self)

    @locked
    def __repr__(self) -> str:
        return f"Session({self._id!r}, state={self.state_!r}, messages={len(self._messages)})"


@final
class _EvictedSession(Session):
    """A handle of a session its store evicted (past ``max_bytes``): every read raises."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("__") and name not in ("__repr__", "__str__"):
            return object.__getattribute__(self, name)
        sid = object.__getattribute__(self, "_id")
        if name in ("__repr__", "__str__"):
            return lambda: f"Session({sid!r}, evicted)"
        raise RuntimeError('session "' + sid + '" was evicted from its store')
