"""Twin of src/session/budget.rs: the store's budget (``max_bytes``, ``max_payload_bytes``,
``max_message_bytes``) and the cost of what a store retains.

The rules are docs/behaviour/sessions.md's, "The store's budget": payloads over
``max_payload_bytes`` become stubs before a message is reduced, a message's content over
``max_message_bytes`` keeps its head and tail, and past ``max_bytes`` the sessions changed least
recently are evicted whole.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from ..._contract import MAX_ERRORS
from .json import RAW_FRAME_BYTES, RAW_VALUE_COST, _block_text, _Raw, _raw, _stored_block
from .parts import JsonObject, JsonValue, _StoreParts
from .rpc import _INITIALIZE, _NEW, _OTHER
from .snapshot import _error_dict, _turns_view, message_view, terminal_view
from .updates.messages import _CHUNK_ROLES

if TYPE_CHECKING:
    from .model import Session, _Message

# The defaults: large enough that no normal session notices.
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_PAYLOAD_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# What a session costs besides its snapshot, and a pending change besides its two strings.
SESSION_COST = 1024
CHANGE_COST = 96
# What the estimate adds for a session made: more than a count finds a new one
# costs before its first message, which its frame's estimate covers.
SESSION_ESTIMATE = 2 * 1024
# Evictions named in `changes()` until the changes are taken: past it an eviction is only an
# error record and a count, so that a store whose changes are never taken stays bounded.
MAX_EVICTIONS_NAMED = 1000
# Added to the estimate for each frame or applied message besides its size.
MESSAGE_COST = 256
# A `_Message.room` that is never >= 0: its size is tracked exactly (see `_add_block`).
_EXACT = -(1 << 62)
# As good as no bound: an estimate or a message never reaches it.
UNBOUNDED = 1 << 62
_EVICTED = "session evicted: the store was over max_bytes"
_TRUNCATED = "message over max_message_bytes: its middle dropped"


def utf8_len(s: str) -> int:
    # `isascii` reads a flag CPython keeps: only other strings are encoded.
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


def json_cost(v: Any) -> int:
    """The cost of a JSON value, in cost bytes (docs/behaviour/sessions.md, Cost)."""
    t = type(v)
    if t is str:
        return 48 + (len(v) if v.isascii() else len(v.encode("utf-8", "surrogatepass")))
    if t is dict:
        c = 64
        for k, x in v.items():
            c += 88 + (len(k) if k.isascii() else utf8_len(k)) + json_cost(x)
        return c
    if t is list or t is tuple:
        c = 56
        for x in v:
            c += 8 + json_cost(x)
        return c
    if v is None or t is bool:
        return 8
    if t is _Raw:
        return int(v.cost)
    return 24


def _member_cost(key: str, cost: int) -> int:
    """The cost of an object's member ``key`` whose value costs ``cost``."""
    return 88 + (len(key) if key.isascii() else utf8_len(key)) + cost


def _timeline_cost(s: Session) -> int:
    """The cost of the snapshot's ``timeline`` (0 when empty), each entry costed as it would
    be shown (``{type, id, role?}``, a turn by its request id) without being made."""
    turns = s._turns
    c = 56
    shown = 0
    for item in s._timeline:
        if item is None:
            continue
        kind, eid, role = item
        if kind == "turn" and type(eid) is int:
            eid = turns[eid].request_id
        entry = 64 + _member_cost("type", json_cost(kind)) + _member_cost("id", json_cost(eid))
        if role is not None:
            entry += _member_cost("role", json_cost(role))
        c += 8 + entry
        shown += 1
    return c if shown else 0


def cost_of_session(s: Session) -> int:
    """A session's cost: 1,024 and its snapshot's, the snapshot's empty members (``None``,
    ``[]``, ``{}``) not counted (every new session has a score of them). Computed without the
    snapshot: what the store holds is costed where it is held, and the views of messages and
    terminals are made one at a time, as a count must not copy a session of a million tool
    calls to cost it."""
    c = SESSION_COST + 64
    if s._messages:
        c += _member_cost("messages", 56 + sum(8 + json_cost(message_view(m)) for m in s._messages))
    if s._terminals:
        c += _member_cost(
            "terminals",
            64
            + sum(
                _member_cost(tid, json_cost(terminal_view(entry)))
                for tid, entry in s._terminals.items()
            ),
        )
    timeline = _timeline_cost(s)
    if timeline:
        c += _member_cost("timeline", timeline)
    if s._turns:
        c += _member_cost("turns", json_cost(_turns_view(s)))
    if s._errors:
        c += _member_cost("errors", json_cost([_error_dict(e) for e in s._errors]))
    if s._notices:
        c += _member_cost("notices", json_cost(list(s._notices)))
    shared: tuple[tuple[str, Any], ...] = (
        ("sessionId", s._id),
        ("protocolVersion", s._version[0]),
        ("state", s.state_),
        ("stopReason", s.stop_reason_),
        ("toolCalls", s._tool_calls),
        ("plans", s._plans),
        ("compactions", s._compactions),
        ("usage", s._usage),
        ("info", s._info),
        ("availableCommands", s._available_commands),
        ("configOptions", s._config_options),
        ("currentModeId", s._current_mode_id),
        ("permissions", s._permissions),
        ("prompts", s._prompts),
        ("other", s._other),
        ("subagents", s._subagents),
        ("updateExtras", s._update_extras),
    )
    for key, v in shared:
        if v is None or ((type(v) is list or type(v) is dict) and not v):
            continue
        c += _member_cost(key, json_cost(v))
    return c


def block_size(block: JsonValue) -> int:
    """A content block's share of its message's size: a text block's UTF-8 length, another
    block's cost."""
    text = _block_text(block)
    if text is not None:
        return len(text) if text.isascii() else utf8_len(text)
    return json_cost(block)


def _change_cost(key: tuple[str, str, str]) -> int:
    return CHANGE_COST + utf8_len(key[0]) + utf8_len(key[2])


class _ChangeLog(dict):  # type: ignore[type-arg]
    """The pending changes (an ordered set), which also note each session a change is recorded
    for in ``touched``: the sessions changed since the last count, last changed last."""

    __slots__ = ("touched",)
    touched: dict[str, None]

    def __setitem__(self, key: tuple[str, str, str], value: None) -> None:
        dict.__setitem__(self, key, value)
        touched = self.touched
        sid = key[0]
        # Moved to the end: a dict keeps a key where it was first set.
        touched.pop(sid, None)
        touched[sid] = None


class _Truncation:
    """A message past ``max_message_bytes``: its tail (blocks from ``start`` on are live, with
    their sizes), the tail's size, and what was dropped."""

    __slots__ = ("blocks", "bytes", "size", "sizes", "start", "tail")

    def __init__(self, tail: list[JsonValue], sizes: list[int]) -> None:
        self.tail = tail
        self.sizes = sizes
        self.start = 0
        self.size = sum(sizes)
        self.blocks = 0
        self.bytes = 0

    def live(self) -> list[JsonValue]:
        return self.tail[self.start :]

    def trim(self, half: int) -> None:
        """Drop the tail's first blocks while it is over ``half``; cut a lone text block."""
        tail, sizes, start, size = self.tail, self.sizes, self.start, self.size
        n = len(tail)
        while size > half and n - start > 1:
            size -= sizes[start]
            self.blocks += 1
            self.bytes += sizes[start]
            tail[start] = None
            start += 1
        if size > half and n - start == 1:
            block = tail[start]
            text = _block_text(block)
            if text is not None:
                raw = text.encode("utf-8", "surrogatepass")
                kept = raw[len(raw) - half :]
                # Never part of a character: continuation bytes at the cut go too.
                skip = 0
                while skip < len(kept) and kept[skip] & 0xC0 == 0x80:
                    skip += 1
                kept = kept[skip:]
                kept_text = kept.decode("utf-8", "surrogatepass")
                tail[start] = dict(block, text=kept_text) if isinstance(block, dict) else kept_text
                self.bytes += size - len(kept)
                sizes[start] = size = len(kept)
            else:
                self.blocks += 1
                self.bytes += size
                size = 0
                tail[start] = None
                start += 1
        # The dead prefix goes once it outgrows the live part: O(1) a block, amortized.
        if start and start * 2 > n:
            del tail[:start]
            del sizes[:start]
            start = 0
        self.start, self.size = start, size


class _Budget(_StoreParts):
    """The store's budget (a part of Sessions)."""

    __slots__ = ()

    if TYPE_CHECKING:
        _max_bytes: int | None
        _max_payload: int | None
        _max_message: int | None
        _message_room: int
        _payload_walk: int
        _estimate: int
        _allowance: int
        _touched: dict[str, None]
        _lru: OrderedDict[str, None]
        _cost: dict[str, int]
        _sessions_cost: int
        _evicted: int
        _evictions_named: int
        _order: list[str]
        _version_changes_named: int
        _errors: Any
        _errors_dropped: int
        _pos: Any

        def _block_pos(self, i: int) -> tuple[int, int]: ...

    def _budget_init(
        self, max_bytes: int | None, max_payload: int | None, max_message: int | None
    ) -> None:
        self._max_bytes = max_bytes
        self._max_payload = max_payload
        self._max_message = max_message
        self._message_room = UNBOUNDED if max_message is None else max_message
        # Frames up to this long are never walked for payloads (no value costs more than 64
        # times its JSON text), nor for values to keep as JSON text (see `_stub_payloads`).
        stubs_from = UNBOUNDED if max_payload is None else max_payload // 64
        self._payload_walk = min(stubs_from, RAW_FRAME_BYTES - 1)
        self._estimate = 0
        self._allowance = UNBOUNDED if max_bytes is None else max_bytes
        self._touched = {}
        self._lru = OrderedDict()
        self._cost = {}
        self._sessions_cost = 0
        self._evicted = 0
        self._evictions_named = 0

    def _new_changes(self) -> dict[tuple[str, str, str], None]:
        # Without a bound nothing reads which sessions changed: a plain dict, as fast as before.
        if self._max_bytes is None:
            return {}
        log = _ChangeLog()
        log.touched = self._touched
        return log

    # -- payloads ----------------------------------------------------------------------------

    def _stub_payloads(self, msg: Any, raw: bool = False) -> None:
        """Replace each payload of ``msg`` (decoded, ours to change) over
        ``max_payload_bytes`` by its stub, each with its error record; with ``raw``, keep
        each large ``rawInput`` or ``rawOutput`` of an update as its JSON text."""
        if self._max_payload is None and not raw:
            return
        if type(msg) is list:
            for item in msg:
                self._stub_payloads(item, raw)
            return
        if type(msg) is not dict:
            return
        method = msg.get("method")
        params = msg.get("params")
        if type(method) is not str or type(params) is not dict:
            return
        sid = params.get("sessionId")
        if type(sid) is not str:
            sid = None
        if method == "session/update":
            u = params.get("update")
            if type(u) is dict:
                kind = u.get("sessionUpdate")
                chunk = type(kind) is str and kind in _CHUNK_ROLES
                self._stub_members(u, "sessionUpdate", sid, chunk, raw)
        else:
            self._stub_members(params, "sessionId", sid, False, False)

    def _stub_members(
        self, obj: JsonObject, skip: str, sid: str | None, chunk: bool, raw: bool
    ) -> None:
        limit = self._max_payload
        for k, v in obj.items():
            if k == skip:
                continue
            if (
                chunk
                and k == "content"
                and type(v) is dict
                and v.get("type") == "text"
                and type(v.get("text")) is str
            ):
                continue  # a chunk's text is the message's: max_message_bytes bounds it
            as_text = (
                raw
                and (k == "rawInput" or k == "rawOutput")
                and (type(v) is dict or type(v) is list)
            )
            if limit is None and not as_text:
                continue
            cost = json_cost(v)
            # Only values change, so the iteration goes on over the same keys.
            if limit is not None and cost > limit:
                obj[k] = {"dropped": "max_payload_bytes", "cost": cost}
                self._error(sid, f"{k} over max_payload_bytes: kept as a stub")
            elif as_text and cost >= RAW_VALUE_COST:
                obj[k] = _raw(v, cost)

    # -- messages ----------------------------------------------------------------------------

    def _add_block(self, sid: str, m: _Message, block: JsonValue, bound_of: int = -1) -> None:
        """Append a content block to message ``m`` within ``max_message_bytes``.

        Until a message may be near the bound its size is not tracked: ``room`` is the bound
        less an upper bound of its size (``bound_of`` each block, when the caller has one from
        its line, else its exact size). Once that goes negative the size is computed and
        tracked exactly.
        """
        block = _stored_block(block)
        bound = self._max_message
        if bound is None:
            m.append(block)
            return
        size = -1
        if m.room >= 0:
            if bound_of >= 0:
                room = m.room - bound_of
            else:
                size = block_size(block)
                room = m.room - size
            if room >= 0:
                m.room = room
                m.append(block)
                return
            m.room = _EXACT
            m.size = sum(map(block_size, m.content or ()))
        if size < 0:
            size = block_size(block)
        trunc = m.trunc
        if trunc is not None:
            trunc.tail.append(block)
            trunc.sizes.append(size)
            trunc.size += size
            trunc.trim(bound - bound // 2)
            return
        if m.size + size <= bound:
            m.append(block)
            m.size += size
            return
        # The split: the head is the longest run of first blocks within half the bound.
        content = m.content or []
        sizes = list(map(block_size, content))
        half = bound // 2
        head_size = k = 0
        while k < len(content) and head_size + sizes[k] <= half:
            head_size += sizes[k]
            k += 1
        m.content = content[:k]
        m.size = head_size
        trunc = m.trunc = _Truncation([*content[k:], block], [*sizes[k:], size])
        trunc.trim(bound - half)
        # Not a refusal of the update being applied: what it left out is still recorded.
        notes = self._notes
        self._error(sid, _TRUNCATED)
        self._notes = notes

    def _replace_content(self, sid: str, m: _Message, blocks: list[JsonValue] | None) -> None:
        """An upsert's content: the message starts again (no truncation), then each block is
        appended."""
        m.trunc = None
        m.content = None
        bound = self._max_message
        if bound is None or not blocks:
            m.content = [_stored_block(block) for block in blocks] if blocks else None
            m.room = self._message_room
            m.size = -1
            return
        m.room = _EXACT
        m.size = 0
        for block in blocks:
            self._add_block(sid, m, block)
        if m.trunc is None:
            # Back to the estimate, its exact size as the start.
            m.room = bound - m.size
            m.size = -1

    # -- counting and eviction ---------------------------------------------------------------

    def _account(self, cost: int) -> None:
        """Add a frame's or message's estimate; count when it passes the allowance."""
        self._estimate += cost
        if self._estimate > self._allowance:
            self._count()

    def _refresh(self) -> dict[str, int]:
        """Cost the sessions changed since the last count; return the pending changes' cost by
        session (the total under the key ``""`` is not used: see ``_total``)."""
        sessions = self._sessions
        cost = self._cost
        lru = self._lru
        acc = self._sessions_cost
        touched = self._touched
        if self._max_bytes is None:
            # Nothing tracked what changed: every session is costed.
            touched = dict.fromkeys(sessions)
        for sid in touched:
            s = sessions.get(sid)
            if s is None:
                continue
            c = cost_of_session(s)
            acc += c - cost.get(sid, 0)
            cost[sid] = c
            if sid in lru:
                lru.move_to_end(sid)
            else:
                lru[sid] = None
        self._touched.clear()
        self._sessions_cost = acc
        per: dict[str, int] = {}
        for key in self._changes:
            per[key[0]] = per.get(key[0], 0) + _change_cost(key)
        return per

    def _count(self) -> None:
        per = self._refresh()
        total = self._sessions_cost + sum(per.values())
        max_bytes = self._max_bytes
        assert max_bytes is not None
        if total > max_bytes:
            target = max_bytes - max_bytes // 8
            lru = self._lru
            last = next(reversed(lru)) if lru else None
            evicted: list[str] = []
            for sid in lru:
                if total <= target or sid == last:
                    break
                total = max(0, total - self._cost[sid] - per.get(sid, 0))
                if self._evictions_named + len(evicted) < MAX_EVICTIONS_NAMED:
                    total += CHANGE_COST + utf8_len(sid) + 7
                evicted.append(sid)
            if evicted:
                self._evict(evicted)
            if total > target and last is not None:
                total = self._shed_tool_calls(last, total, target)
        self._allowance = max(max_bytes - total, max_bytes // 8)
        self._estimate = 0

    def _shed_tool_calls(self, sid: str, total: int, target: int) -> int:
        """Drop the oldest tool calls of session ``sid`` (the one changed last, never evicted)
        while ``total`` is over ``target``; return the total counted again."""
        s = self._sessions[sid]
        sid_len = utf8_len(sid)
        ids = []
        for tid, fields in s._tool_calls.items():
            if total <= target:
                break
            # Its `toolCalls` member and its timeline entry `{type, id}`.
            tid_len = utf8_len(tid)
            freed = 40 + 48 + tid_len + json_cost(fields)
            freed += 8 + 64 + (40 + 52 + 56) + (40 + 50 + 48 + tid_len)
            total = max(0, total - freed) + CHANGE_COST + sid_len + tid_len
            ids.append(tid)
        if not ids:
            return total
        s._drop_tool_calls(ids)
        changes = self._changes
        for tid in ids:
            changes[(sid, "toolCall", tid)] = None
        self._error(sid, f"dropped {len(ids)} tool calls: the store was over max_bytes")
        return self._retained()

    def _evict(self, evicted: list[str]) -> None:
        gone = set(evicted)
        named = self._version_changes_named
        if named:
            self._version_changes_named = sum(1 for sid in self._order[:named] if sid not in gone)
        self._order = [sid for sid in self._order if sid not in gone]
        # The pending changes without the evicted sessions', in one pass.
        old = self._changes
        new = self._new_changes()
        put = dict.__setitem__
        for key in old:
            if key[0] not in gone:
                put(new, key, None)
        self._changes = new
        # Their requests stay pending, so that an answer cannot answer another request, but
        # change nothing (a later message naming the session starts a new one).
        for what in self._pending.values():
            if what.sid in gone and what.kind != _INITIALIZE and what.kind != _NEW:
                what.kind = _OTHER
        pos = self._pos
        if isinstance(pos, int):
            pos = self._block_pos(pos)
        line, offset = (None, None) if pos is None else (pos[0], pos[1])
        errors = self._errors
        for sid in evicted:
            s = self._sessions.pop(sid)
            self._sessions_cost -= self._cost.pop(sid)
            del self._lru[sid]
            for tid, entry in s._terminals.items():
                self._terminal_held -= entry.held
                self._terminal_order.pop((sid, tid), None)
            if self._evictions_named < MAX_EVICTIONS_NAMED:
                self._evictions_named += 1
                put(new, (sid, "session", "evicted"), None)
            if len(errors) == MAX_ERRORS:
                errors.popleft()
                self._errors_dropped += 1
            errors.append((line, offset, sid, _EVICTED))
            self._evicted += 1
            _drop_session(s)

    # -- queries -----------------------------------------------------------------------------

    def _retained(self) -> int:
        per = self._refresh()
        return self._sessions_cost + sum(per.values())


def _drop_session(s: Session) -> None:
    """Make ``s`` an evicted handle: every read raises, and what it held is freed."""
    from .model import Session, _EvictedSession

    for name in Session.__slots__:
        if name != "_id" and name != "_lock":
            with suppress(AttributeError):
                delattr(s, name)
    s.__class__ = _EvictedSession
