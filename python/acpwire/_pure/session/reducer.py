"""Twin of src/session/reducer.rs: the store, and the dispatch of frames and messages.

``Sessions`` takes NDJSON bytes (or decoded messages), frames them, reduces each message to the
sessions it names, and keeps the errors and the changes; a run of plain message chunks takes a
shorter path (``_reduce_lines``). Requests and responses are ``rpc``'s, updates ``updates``'.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import Any

import orjson

from ..._contract import (
    DEFAULT_MAX_FRAME_BYTES,
    DEFAULT_MAX_TERMINAL_BYTES,
    MAX_COLS,
    MAX_ERRORS,
    MAX_SESSION_ERRORS,
)
from ..._errors import FrameError
from .._args import Unpicklable, at_most, buffer_bytes, size
from ..framing import FrameDecoder
from ..json import (
    DIGITS_TO_ZERO,
    LARGE_DOCUMENT,
    MIN_DEEP_SIZE,
    ZEROS,
    block_checks,
    has_long_digit_run,
    maybe_too_deep,
)
from .budget import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_PAYLOAD_BYTES,
    MESSAGE_COST,
    SESSION_ESTIMATE,
    _Budget,
    json_cost,
)
from .check import _needs_repair, _Refused, _repair
from .client_terminals import _ClientTerminals
from .json import _normalize, keeps_only_strings, raw_allowed
from .model import _TERMINAL_MAX_BYTES, Session, _Message, _StoreLock, _TerminalEntry
from .parts import ErrorRecord, IdKey, JsonObject, JsonValue, locked
from .rpc import _AGENT, _Pending, _Rpc, _sender
from .snapshot import _error_dict
from .tables import OTHER_VERSION, UNKNOWN, V1, V2
from .updates import _Updates
from .updates.messages import _CHANGE_KINDS, _CHUNK_ROLES, _FAST_ROLES, _UPSERT_ROLES
from .updates.session_state import _REPLACE_FIELDS

# The message id the fast path of `_reduce_lines` remembers for an anonymous v1 message.
_ANONYMOUS: Any = object()

_EMPTY_BATCH = "empty batch"


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


class _Framer(FrameDecoder):
    """The pure FrameDecoder, reporting each frame's (line, offset) before its values."""

    __slots__ = ()

    def _emit(self, line: bytes, out: list[JsonValue], inline: bool) -> None:
        # JSON values are never tuples, so the marker cannot be mistaken for a message. Its
        # length is the frame's estimate and says whether its payloads are walked; last,
        # whether its opaque values may be kept as JSON text.
        out.append((self._line, self._line_start, len(line), raw_allowed(line)))
        FrameDecoder._emit(self, line, out, inline)


# A session/update handler: (store, sessionId, variant, update).
_Handler = Callable[["Sessions", str, str, JsonObject], None]


class Sessions(_Updates, _Rpc, _ClientTerminals, _Budget, Unpicklable):
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
        max_bytes: what the store may retain, in cost bytes (None: no bound); past it the
            sessions changed least recently are evicted whole.
        max_payload_bytes: the largest opaque value of an update or request kept (None: no
            bound); a larger one is kept as a stub ``{"dropped": "max_payload_bytes", "cost"}``.
        max_message_bytes: the largest content of one message (None: no bound); a larger one
            keeps its head and tail and says what was dropped (``truncated``).
    """

    __slots__ = (
        "_allowance",
        "_block",
        "_changes",
        "_cost",
        "_decoder",
        "_errors",
        "_errors_dropped",
        "_estimate",
        "_evicted",
        "_evictions_named",
        "_handlers",
        "_lock",
        "_lru",
        "_max_bytes",
        "_max_message",
        "_max_payload",
        "_message_room",
        "_mode",
        "_notes",
        "_order",
        "_payload_walk",
        "_pending",
        "_pos",
        "_sender",
        "_sessions",
        "_sessions_cost",
        "_shared_version",
        "_term_args",
        "_terminal_budget",
        "_terminal_held",
        "_terminal_order",
        "_touched",
        "_version",
        "_version_changes_named",
    )

    def __init__(
        self,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        terminal_cols: int | None = None,
        scrollback: int = 10_000,
        max_terminal_bytes: int = DEFAULT_MAX_TERMINAL_BYTES,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        max_payload_bytes: int | None = DEFAULT_MAX_PAYLOAD_BYTES,
        max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        # Every argument read before any is checked, in the binding's order.
        max_frame_bytes = size(max_frame_bytes)
        terminal_cols = None if terminal_cols is None else size(terminal_cols)
        scrollback = size(scrollback)
        max_terminal_bytes = size(max_terminal_bytes)
        budget = [
            None if b is None else size(b)
            for b in (max_bytes, max_payload_bytes, max_message_bytes)
        ]
        self._decoder = _Framer(max_frame_bytes)
        if terminal_cols is not None:
            if terminal_cols < 1:
                raise ValueError("terminal_cols must be at least 1 (or None)")
            at_most("terminal_cols", terminal_cols, MAX_COLS)
        if scrollback < 0:
            raise ValueError("scrollback must not be negative")
        if max_terminal_bytes < 0:
            raise ValueError("max_terminal_bytes must not be negative")
        for name, bound in zip(
            ("max_bytes", "max_payload_bytes", "max_message_bytes"), budget, strict=True
        ):
            if bound is not None and bound < 0:
                raise ValueError(f"{name} must not be negative")
        self._budget_init(*budget)
        self._term_args = (
            terminal_cols,
            scrollback,
            min(_TERMINAL_MAX_BYTES, max_terminal_bytes),
        )
        self._terminal_budget = max_terminal_bytes
        # What the terminals held when last written, together; and the terminals written
        # since created or cleared, least recently written first.
        self._terminal_held = 0
        self._terminal_order: OrderedDict[tuple[str, str], _TerminalEntry] = OrderedDict()
        self._version: int | None = None
        # `_version` as every session reads it; the first sessions (in `_order`) whose version
        # change is in `_changes` already.
        self._shared_version: list[JsonValue] = [None]
        self._version_changes_named = 0
        # The rules in force: UNKNOWN before `initialize`, then V1 or V2.
        self._mode = UNKNOWN
        self._handlers: dict[str, _Handler] = _MODE_HANDLERS[UNKNOWN]
        self._sessions: dict[str, Session] = {}
        self._order: list[str] = []
        # Oldest first: past MAX_PENDING the oldest is forgotten. An OrderedDict, because
        # dropping the first entry of a plain dict over and over makes finding it O(n).
        self._pending: OrderedDict[tuple[int, IdKey], _Pending] = OrderedDict()
        self._errors: deque[ErrorRecord] = deque()
        self._errors_dropped = 0
        # Error records for the parts of the update being applied that were left out: recorded
        # once its handler has applied it, dropped if the handler refuses it (its one record).
        self._notes: list[str] = []
        # Deduplicated, in first-change order: a dict as an ordered set (setting a key that is
        # there already leaves it where it is).
        self._changes: dict[tuple[str, str, str], None] = self._new_changes()
        # Where the message being applied is: (line, offset), None (one given to `apply`), or
        # the index of a line of the block `_reduce_lines` is reducing (see `_block_pos`).
        self._pos: tuple[int, int] | int | None = None
        # (first line number, its offset, the lines, where they start or None) of that block.
        self._block: tuple[int, int, list[bytes], list[int] | None] | None = None
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
        # A line over the cap or over LARGE_DOCUMENT (not for orjson), or a digit run orjson
        # may read differently from jiter, is left to the decoder. Newlines map to blanks, so
        # no run spans two lines: only when the block has one is each line searched.
        cap = min(decoder._max, LARGE_DOCUMENT)
        digits, deep = block_checks(block, len(lines))
        check_each = len(block) > cap or digits is True
        # Long lines: the block's digit search is made once a line keeps a number.
        digits_each = digits is None
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        roles = _FAST_ROLES
        # Lines are placed by their index here (`_pos`); `_block_pos` gives a line's number and
        # offset when an error record needs them.
        self._block = (first_line, base, lines, None)
        # The message the previous line appended to: the next chunk of the same message only
        # appends (its session, message, current message and change record are in place).
        last_sid = last_role = last_mid = None
        last_msg: Any = None
        # Where sessions (or one session's messages) interleave, every message a chunk in this
        # block went to, by (session, role, messageId), as (session, index, message): a later
        # chunk of it appends and makes it current (the change record, made by the first
        # chunk, cannot have been taken during the block, but is made again: it says the
        # session changed last). A count may evict sessions, so it empties this.
        chunk_targets: dict[tuple[str, str, str], tuple[Session, int, _Message]] = {}
        dispatch = self._dispatch
        # The sessions changed since the last count, when a bound reads them.
        touched = None if self._max_bytes is None else self._touched
        # Frames longer than this are walked (see `_stub_payloads`).
        walk = self._payload_walk
        # The estimate is kept here as what may still be added before a count (`left`), written
        # back around the calls that add to it; a line's share is taken once it was reduced,
        # and the count runs before the next line.
        allowance = self._allowance
        left = allowance - self._estimate
        evicted = self._evicted
        for i, line in enumerate(lines):
            if left < 0:
                self._estimate = allowance - left
                self._pos = i - 1
                self._count()
                allowance = left = self._allowance
                last_sid = None
                chunk_targets.clear()
                evicted = self._evicted
            # A refused line's `value` is never read: it is bound all the same, so that type
            # checkers see it bound where it is read.
            if check_each and (len(line) > cap or ZEROS in line.translate(DIGITS_TO_ZERO)):
                refused, value = True, None
            else:
                try:
                    value = loads(line)
                except decode_error:
                    refused, value = True, None
                else:
                    refused = deep and len(line) >= MIN_DEEP_SIZE and maybe_too_deep(line, value)
                    if digits_each and not refused and not keeps_only_strings(value, roles):
                        if digits is None:
                            digits = has_long_digit_run(block)
                        refused = digits and ZEROS in line.translate(DIGITS_TO_ZERO)
            if refused:
                # The decoder decides, as for a line fed alone.
                last_sid = None
                self._estimate = allowance - left
                self._reduce_frame(line, *self._block_pos(i))
                # It counts for itself, and a count may have evicted sessions.
                allowance = self._allowance
                left = allowance - self._estimate
                if self._evicted != evicted:
                    chunk_targets.clear()
                    evicted = self._evicted
                continue
            cost = (len(line) << 2) + MESSAGE_COST
            if len(line) > walk:
                self._pos = i
                # A stub's error record may make the session, which adds to the estimate.
                self._estimate = allowance - left
                self._stub_payloads(value, raw_allowed(line))
                left = allowance - self._estimate
            if (
                type(value) is not dict
                or value.get("method") != "session/update"
                or "id" in value  # sent with an id, it is tracked as a request
            ):
                last_sid = None
                self._pos = i
                self._estimate = allowance - left
                if type(value) is list:
                    self._batch(value)
                else:
                    self._message(value)
                left = allowance - self._estimate - cost
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
                # Not read when kind is None; bound so that type checkers see them bound (and u
                # an update) where they are read.
                sid, u = None, {}
            if type(kind) is not str or type(sid) is not str:
                last_sid = None
                self._pos = i
                self._estimate = allowance - left
                self._session_update(value.get("params"))
                left = allowance - self._estimate - cost
                continue
            # A chunk's `_meta`, an object or null, is not kept (as on the general path); other
            # fields, or a `_meta` the general path would repair, go there.
            has_meta = "_meta" in u
            if (
                role is not None
                and len(u) == 2 + ("messageId" in u) + has_meta
                and (not has_meta or type(u["_meta"]) is dict or u["_meta"] is None)
            ):
                mid = u.get("messageId")
                content = u.get("content")
                ctype = content.get("type") if type(content) is dict else None
                # (`content` is a dict when `ctype` is a str: said again for type checkers.)
                anonymous = mid is None and self._mode != V2
                if (type(mid) is str or anonymous) and type(ctype) is str and type(content) is dict:
                    # An upper bound of the block's size: a text block's UTF-8 is at most its
                    # line, and no value costs more than 64 times its JSON text.
                    chunk_text = content.get("text")
                    stored: JsonValue = content
                    if ctype == "text" and type(chunk_text) is str:
                        line_len = len(line)
                        if len(content) == 2:
                            # A plain text block is kept as its text (see `_Message`).
                            stored = chunk_text
                    else:
                        line_len = len(line) << 6
                    if anonymous and not (
                        last_mid is _ANONYMOUS and sid == last_sid and role == last_role
                    ):
                        # A v1 chunk of an anonymous message that does not follow one of the
                        # same session and role: the general path places it, and the next may
                        # follow it here (nothing comes between, so it goes on that message).
                        self._pos = i
                        self._estimate = allowance - left
                        dispatch(sid, kind, u)
                        left = allowance - self._estimate - cost
                        session = self._sessions.get(sid)
                        if session is not None and session._current is not None:
                            last_msg = session._messages[session._current]
                            last_sid, last_role, last_mid = sid, role, _ANONYMOUS
                        else:
                            last_sid = None
                        continue
                    if anonymous:
                        mid = _ANONYMOUS
                    if mid == last_mid and sid == last_sid and role == last_role:
                        # Within max_message_bytes by the estimate: appended as it comes.
                        room = last_msg.room - line_len
                        if room >= 0:
                            last_msg.room = room
                            last_msg.content.append(stored)
                        else:
                            self._pos = i
                            self._add_block(sid, last_msg, stored, line_len)
                        left -= cost
                        continue
                    # An anonymous chunk went on above: past this the message has an id.
                    assert type(mid) is str
                    key = (sid, role, mid)
                    target = chunk_targets.get(key)
                    self._pos = i
                    if target is not None:
                        target[0]._current = target[1]
                        last_msg = target[2]
                        room = last_msg.room - line_len
                        if room >= 0:
                            last_msg.room = room
                            last_msg.append(stored)
                        else:
                            self._add_block(sid, last_msg, stored, line_len)
                        if touched is not None:
                            # Its change record is in place: the session is changed last.
                            touched.pop(sid, None)
                            touched[sid] = None
                    else:
                        self._estimate = allowance - left
                        target = chunk_targets[key] = self._append_chunk(
                            sid, role, mid, stored, line_len
                        )
                        left = allowance - self._estimate
                        last_msg = target[2]
                    last_sid, last_role, last_mid = sid, role, mid
                    left -= cost
                    continue
            last_sid = None
            self._pos = i
            self._estimate = allowance - left
            # `_session_update` once these types are known.
            dispatch(sid, kind, u)
            left = allowance - self._estimate - cost
        self._estimate = allowance - left
        if left < 0:
            self._pos = len(lines) - 1
            self._count()
        self._block = self._pos = None
        decoder._line = first_line + len(lines)
        decoder._position = decoder._line_start = base + len(block) + 1

    def _block_pos(self, i: int) -> tuple[int, int]:
        """(line number, offset) of line ``i`` of the block `_reduce_lines` is reducing."""
        assert self._block is not None, "only while a block is reduced"
        first_line, base, lines, starts = self._block
        if starts is None:
            # Where each line starts, less the newlines before it: computed once a block.
            starts = list(accumulate(map(len, lines), initial=base))
            self._block = (first_line, base, lines, starts)
        return first_line + i, starts[i] + i

    def _append_chunk(
        self, sid: str, role: str, mid: str, content: JsonValue, line_len: int
    ) -> tuple[Session, int, _Message]:
        """Apply a message chunk with an id and object content, as `_chunk` does.

        Returns (session, message index, message).
        """
        s = self._sessions.get(sid)
        if s is None:
            s = self._session(sid)
        key = (role, mid)
        index = s._message_index.get(key)
        if index is None:
            room = self._message_room
            if self._max_message is not None:
                room -= line_len
            if room >= 0:
                # A new message made with its first block, as `_message_index` and
                # `_add_block` would (a stream may start a message every chunk).
                m = _Message(mid, role, room)
                m.content = [content]
                index = s._current = s._add_message(m, key)
                self._changes[(sid, _CHANGE_KINDS[role], mid)] = None
                return (s, index, m)
            index = self._message_index(sid, role, mid)
        s._current = index
        m = s._messages[index]
        self._add_block(sid, m, content, line_len)
        self._changes[(sid, _CHANGE_KINDS[role], mid)] = None
        return (s, index, m)

    def _reduce_frame(self, line: bytes, number: int, offset: int) -> None:
        """One line, by the decoder's rules, as line ``number`` starting at byte ``offset``."""
        decoder = self._decoder
        decoder._line = number
        decoder._line_start = offset
        decoder._frames -= 1
        out: list[JsonValue] = []
        decoder._emit(line, out, True)
        self._run(out)

    def _batch(self, items: list[JsonValue]) -> None:
        if not items:
            self._error(None, _EMPTY_BATCH)
            return
        for item in items:
            self._message(item)

    def _run(self, items: list[JsonValue]) -> None:
        message = self._message
        update = self._session_update
        # The estimate of the frame being reduced (once a value of it was), and whether its
        # payloads are walked: both from its marker, (line, offset, length).
        frame_cost = pending = 0
        walk = raw = False
        for item in items:
            kind = type(item)
            if kind is tuple:
                if pending:
                    self._account(pending)
                    pending = 0
                self._pos = item
                frame_cost = (item[2] << 2) + MESSAGE_COST
                raw = item[3]
                walk = item[2] > self._payload_walk
                continue
            if kind is FrameError or isinstance(item, FrameError):
                self._pos = (item.line, item.offset)
                self._error(None, item.reason)
                continue
            if walk:
                self._stub_payloads(item, raw)
            pending = frame_cost
            if kind is dict:
                if item.get("method") == "session/update" and "id" not in item:
                    update(item.get("params"))
                else:
                    message(item)
            else:
                message(item)
        if pending:
            self._account(pending)

    def apply(self, message: Any, sender: str | None = None) -> None:
        """Reduce one decoded JSON-RPC message of either direction (a list applies each entry).

        ``sender`` (``"client"`` or ``"agent"``), when known, says who sent it: a response then
        answers the other side's pending request with its id. A message holding a str that is
        not valid UTF-8 (a lone surrogate) is not applied: it becomes one error record. Error
        records from it have no line or offset.
        """
        with self._lock.changing():
            self._apply_at(message, sender, None, None)

    @locked
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
        # The message's cost as given, before stubs replace anything.
        cost = 0 if self._max_bytes is None else json_cost(value) + MESSAGE_COST
        if self._max_payload is not None:
            self._stub_payloads(value)
        try:
            if type(value) is list:
                self._batch(value)
            else:
                self._message(value)
        finally:
            self._sender = None
        if self._max_bytes is not None:
            self._pos = pos
            self._account(cost)

    @locked
    def _record_error(self, reason: str, line: int, offset: int) -> None:
        """Record an error at (line, offset) for a frame of a trace that could not be applied."""
        self._pos = (line, offset)
        self._error(None, reason)

    # -- queries -----------------------------------------------------------------------------

    @locked
    def ids(self) -> list[str]:
        """Session ids in first-seen order."""
        return list(self._order)

    @locked
    def __len__(self) -> int:
        return len(self._order)

    @locked
    def __contains__(self, session_id: object) -> bool:
        # Any other key is absent, hashable or not, as in the native store.
        return isinstance(session_id, str) and session_id in self._sessions

    @locked
    def __getitem__(self, session_id: str) -> Session:
        if not isinstance(session_id, str):
            raise KeyError(session_id)
        return self._sessions[session_id]

    @locked
    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    @property
    @locked
    def protocol_version(self) -> int | None:
        """The negotiated protocol version, None before ``initialize``."""
        return self._version

    @property
    @locked
    def errors(self) -> list[JsonObject]:
        """Error records not yet taken, oldest first: ``{line, offset, sessionId, reason}``."""
        return [_error_dict(e) for e in self._errors]

    def take_errors(self) -> list[JsonObject]:
        """Return the error records and forget them."""
        with self._lock.changing():
            taken = self.errors
            self._errors.clear()
        return taken

    @property
    def retained_bytes(self) -> int:
        """What the store retains, in cost bytes: its sessions (1,024 plus the cost of each
        snapshot) and its pending changes (96 plus the UTF-8 lengths of the session id and id
        of each). Evicts nothing."""
        with self._lock.changing():
            return self._retained()

    @property
    @locked
    def evicted_sessions(self) -> int:
        """Sessions evicted because the store was over ``max_bytes``."""
        return self._evicted

    @property
    @locked
    def errors_dropped(self) -> int:
        """Errors dropped because more than 10,000 were waiting to be taken."""
        return self._errors_dropped

    def changes(self) -> list[tuple[str, str, str]]:
        """(sessionId, entity type, id) of everything changed since the last call.

        Deduplicated, in first-change order. Entity types: a message's by its role,
        ``userMessage``, ``agentMessage``, ``thought`` or ``sessionMessage`` (the roles
        ``message_text`` takes: ``user``, ``agent``, ``thought``, ``session``; id: the
        messageId), ``toolCall``, ``terminal``, ``plan``, ``compaction``, ``other`` (id: index
        in ``other``), ``subagent``, and ``session`` (id: the snapshot key that moved, such as
        ``state``, ``prompts`` or ``turns``).
        """
        with self._lock.changing():
            out = list(self._changes)
            self._changes = self._new_changes()
            self._evictions_named = 0
            self._version_changes_named = 0
        return out

    @locked
    def __repr__(self) -> str:
        return f"Sessions({len(self._order)} sessions)"

    # -- bookkeeping -------------------------------------------------------------------------

    def _error(self, sid: str | None, reason: str) -> None:
        # An error while an update is applied refuses it: what was left out of it is moot.
        if self._notes:
            self._notes = []
        pos = self._pos
        if isinstance(pos, int):
            pos = self._block_pos(pos)
        record: ErrorRecord = (
            (None, None, sid, reason) if pos is None else (pos[0], pos[1], sid, reason)
        )
        if sid is not None:
            s = self._session(sid)
            kept = s._errors
            if kept is None:
                kept = s._errors = deque(maxlen=MAX_SESSION_ERRORS)
            kept.append(record)
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
            self._estimate += SESSION_ESTIMATE
            self._sessions[sid] = session
            self._order.append(sid)
            self._change(sid, "session", "sessionId")
        return session

    def _set_version(self, part: str, message: JsonObject) -> None:
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
        self._mode = V1 if value < 2 else V2
        self._handlers = _MODE_HANDLERS[self._mode]
        # Every session's version moved; the sessions named for it since the changes were
        # last taken need not be named again (walking them all at each switch of version
        # would be quadratic).
        for sid in self._order[self._version_changes_named :]:
            self._change(sid, "session", "protocolVersion")
        self._version_changes_named = len(self._order)

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

    def _dispatch(self, sid: str, kind: str, u: JsonObject) -> None:
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


_HANDLERS: dict[str, _Handler] = {
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
    mode: {k: h for k, h in _HANDLERS.items() if OTHER_VERSION.get(k) != mode}
    for mode in (UNKNOWN, V1, V2)
}
