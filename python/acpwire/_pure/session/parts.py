"""The store state that the handler classes of ``Sessions`` share, declared for type checkers.

``Sessions`` (``reducer.py``) is made of handler classes, one per module (``rpc``,
``client_terminals``, and one per update family); each reads the store's state and calls the
others' methods. ``_StoreParts``, their common base, declares those attributes and methods, so
that each handler is checked against them; at run time it adds nothing (no slots, no methods).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Literal

from ..terminal import _locked

# A decoded JSON value, and a JSON object: what messages, updates and entities are made of.
JsonValue = Any
JsonObject = dict[str, JsonValue]

# The terminal's `_locked` (run a method holding `self._lock`): a generic decorator, so type
# checkers see each method it wraps with that method's own signature.
locked = _locked

if TYPE_CHECKING:
    from .model import Session, _Message, _TerminalEntry
    from .rpc import _Pending

# The key of a tracked request id: a string or an integer as it is, ("f", hex) for a float.
IdKey = str | int | tuple[str, str]
# An error record: (line, offset, sessionId, reason); line and offset None for `apply`.
ErrorRecord = tuple[int | None, int | None, str | None, str]
# A timeline entry: (type, id, role); a turn's id is its index in the session's turns.
TimelineEntry = tuple[str, str | int, str | None]
# A store's terminal options: (cols, scrollback, max_bytes).
TermArgs = tuple[int | None, int, int]

# The protocol tables' field rules (tables.py): (name, types, type name, need, inside), inside
# being None, ("shaped", fields), ("items", item) or ("one", item); an item is (members,
# by_type), by_type holding (type, version or None for both, fields).
FieldRule = tuple[str, tuple[type, ...], str, int, "RuleInside | None"]
FieldRules = tuple[FieldRule, ...]
ItemRule = tuple[FieldRules, tuple[tuple[str, int | None, FieldRules], ...]]
RuleInside = tuple[Literal["shaped"], FieldRules] | tuple[Literal["items", "one"], ItemRule]


class _StoreParts:
    """What the handler classes of ``Sessions`` read and call (defined by ``Sessions`` and by
    the handler classes themselves)."""

    # Slotless at run time, as each handler class is; the type checker, seeing no slots here,
    # takes the attributes declared below as ones the handlers may set.
    if not TYPE_CHECKING:
        __slots__ = ()

    if TYPE_CHECKING:
        _sessions: dict[str, Session]
        _changes: dict[tuple[str, str, str], None]
        _mode: int
        _sender: int | None
        _notes: list[str]
        _pending: OrderedDict[tuple[int, IdKey], _Pending]
        _terminal_held: int
        _terminal_budget: int
        _terminal_order: OrderedDict[tuple[str, str], _TerminalEntry]
        _message_room: int

        def _error(self, sid: str | None, reason: str) -> None: ...
        def _change(self, sid: str, kind: str, eid: str) -> None: ...
        def _session(self, sid: str) -> Session: ...
        def _add_block(
            self, sid: str, m: _Message, block: JsonValue, bound_of: int = -1
        ) -> None: ...
        def _replace_content(
            self, sid: str, m: _Message, blocks: list[JsonValue] | None
        ) -> None: ...
        def _set_version(self, part: str, message: JsonObject) -> None: ...
        def _params_session(self, method: str, params: JsonValue) -> str | None: ...
        def _terminal_entry(self, sid: str, tid: str, source: str = "agent") -> _TerminalEntry: ...
        def _hold_terminal_output(
            self, sid: str, tid: str, entry: _TerminalEntry, held: int
        ) -> None: ...
        def _terminal_pending(self, method: str, params: JsonValue) -> _Pending: ...
        def _terminal_created(
            self, sid: str, fields: JsonObject, has_result: bool, result: JsonValue
        ) -> None: ...
        def _terminal_answered(
            self, sid: str, tid: str, method: str, has_result: bool, result: JsonValue
        ) -> None: ...
