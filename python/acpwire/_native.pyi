"""Type stubs for the compiled backend ``acpwire._native``.

``acpwire._pure`` provides the same names with the same signatures.
"""

from collections.abc import Iterator
from os import PathLike
from typing import IO, Any, Literal, final

from typing_extensions import Buffer

from ._errors import DecodeError as DecodeError
from ._errors import EncodeError as EncodeError
from ._errors import FrameError as FrameError
from ._errors import TerminalDataError as TerminalDataError
from ._span import Span as Span
from .types import (
    Change,
    Compaction,
    ContentBlock,
    ErrorRecord,
    JSONInput,
    JsonRpcMessage,
    Message,
    Plan,
    Role,
    SessionSnapshot,
    Subagent,
    TerminalEntry,
    ToolCall,
)

__version__: str
_build: str
__all__ = [
    "DecodeError",
    "EncodeError",
    "FrameDecoder",
    "FrameError",
    "Session",
    "Sessions",
    "Span",
    "Terminal",
    "TerminalDataError",
    "__version__",
    "_b64decode",
    "_build",
    "char_width",
    "dumps",
    "loads",
    "reduce_ndjson",
    "render_text",
]

# Any object with the buffer protocol, as the README says (bytes, bytearray, memoryview,
# array.array, mmap, numpy arrays, ...).
_Buffer = Buffer

# A decoded frame is any JSON value (`acpwire.types.JSONValue`), or `bytes` with `raw=True`.
# It is `Any`, as `json.loads` gives, so that a caller reads `message["method"]` without first
# narrowing a union; annotate the result as `JSONValue` to have every access checked.
_Decoded = Any

@final
class FrameDecoder:
    """Incremental NDJSON decoder: bytes in, JSON-RPC messages out.

    Frames are lines ending in ``\\n`` (a ``\\r`` before it is dropped). Blank lines are
    skipped. A frame holding a JSON array (a batch) yields its entries. Bad frames never stop
    the stream: each becomes a :class:`FrameError` in :attr:`errors`. A line longer than
    ``max_frame_bytes`` is reported and skipped without being buffered. With ``raw=True``,
    frames are returned as ``bytes`` (line ending removed) without being decoded.
    """

    def __new__(cls, max_frame_bytes: int = 33554432, raw: bool = False) -> FrameDecoder: ...
    def feed(self, data: _Buffer) -> list[_Decoded]:
        """Feed bytes; return the messages of every frame they complete, in order."""
    def finish(self) -> list[_Decoded]:
        """End of stream: return the messages of a last frame that had no newline."""
    def take_errors(self) -> list[FrameError]:
        """Return the rejected frames and forget them."""
    # Messages and FrameErrors, in stream order.
    def _feed_events(self, data: _Buffer) -> list[_Decoded | FrameError]: ...
    def _finish_events(self) -> list[_Decoded | FrameError]: ...
    @property
    def errors(self) -> list[FrameError]:
        """Rejected frames not yet taken, oldest first (at most 10,000 are kept)."""
    @property
    def errors_dropped(self) -> int:
        """Errors dropped because more than 10,000 were waiting to be taken."""
    @property
    def buffered(self) -> int:
        """Bytes held while waiting for a newline (never more than max_frame_bytes + 1)."""
    @property
    def frames(self) -> int:
        """Non-blank frames seen so far, good or bad."""
    @property
    def position(self) -> int:
        """Bytes fed so far."""
    @property
    def max_frame_bytes(self) -> int:
        """The longest frame accepted, in bytes; longer ones become ``FrameError``s."""
    @property
    def raw(self) -> bool:
        """True when frames are returned as bytes, undecoded."""

def loads(data: _Buffer | str) -> _Decoded:
    """Decode one JSON document; the same values as ``json.loads``. Raises DecodeError."""

def dumps(obj: object) -> bytes:
    """Encode ``obj`` as compact UTF-8 JSON ending in one ``\\n``.

    Raises EncodeError (a TypeError) for unsupported objects.
    """

@final
class Terminal:
    """A display-only terminal: PTY bytes in, what a terminal shows out.

    ``cols=None`` (transcripts): lines of unbounded width, LF also returns to column 0, cursor
    movement within the last ``rows`` lines. ``cols=N``: a real grid that wraps at ``N`` and
    scrolls into scrollback. Retained output is capped by ``scrollback`` lines and
    ``max_bytes``; the oldest lines go first and ``truncated`` becomes True. ``cols`` and
    ``rows`` are at most 65535, the farthest an escape sequence can address (ValueError
    otherwise). ``Session.terminal`` may return a new handle on each call; handles on one
    terminal are equal and hash alike.
    """

    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __new__(
        cls,
        cols: int | None = None,
        rows: int = 24,
        scrollback: int = 10000,
        max_bytes: int = 16777216,
    ) -> Terminal: ...
    def feed(self, data: _Buffer) -> None:
        """Feed raw PTY bytes (chunks may split UTF-8 and escape sequences anywhere)."""
    def feed_base64(self, data: str | _Buffer) -> None:
        """Decode one strict RFC 4648 base64 chunk and feed it.

        Raises TerminalDataError, applying nothing, when the chunk is not valid base64.
        """
    def reset(self, snapshot: _Buffer | None = b"") -> None:
        """Drop all state and start from ``snapshot``'s bytes (replace, never merge)."""
    def reset_base64(self, data: str | _Buffer) -> None:
        """Like ``reset``, from a base64 snapshot; invalid base64 changes nothing."""
    @property
    def text(self) -> str:
        """Retained scrollback plus the screen, trailing blanks trimmed, wrapped rows joined."""
    def lines(self) -> list[str]:
        """The ``text`` view as a list of lines."""
    def spans(self) -> list[list[Span]]:
        """Styled runs per line; adjacent runs of one style are merged.

        Trailing blanks are trimmed back to the last cell that shows: a non-blank, or a blank
        with a background colour, inverse, underline or strike-through (which ``text`` and
        ``lines()`` trim too). A trailing line of such blanks is a row here, not in ``lines()``.
        Runs of one text and style are one ``Span`` object, shared by every row that shows it.
        """
    def screen(self) -> list[str] | None:
        """The visible rows of the active screen (None when ``cols`` is None)."""
    @property
    def cursor(self) -> tuple[int, int] | None:
        """(row, col) on the active screen (None when ``cols`` is None)."""
    @property
    def title(self) -> str:
        """The window title last set with OSC 0 or OSC 2 ("" if never)."""
    @property
    def progress(self) -> tuple[int, int | None] | None:
        """OSC 9;4 progress as (state, percent), or None."""
    @property
    def bell_count(self) -> int:
        """BEL characters executed (not counting those that end an OSC)."""
    @property
    def bytes_fed(self) -> int:
        """Bytes applied since construction or the last reset."""
    @property
    def truncated(self) -> bool:
        """True once scrollback lines were dropped to respect ``scrollback``/``max_bytes``."""
    @property
    def cols(self) -> int | None:
        """The grid's width, or None for a transcript whose lines do not wrap."""
    @property
    def rows(self) -> int:
        """The screen's height."""

def render_text(data: _Buffer) -> str:
    """The ``text`` view of a whole buffer fed to a fresh ``Terminal()``.

    An incomplete UTF-8 sequence at the end becomes U+FFFD, as in
    ``data.decode("utf-8", "replace")``; a ``Terminal`` fed in chunks waits for the rest.
    """

def char_width(cp: int) -> int:
    """Cells the code point ``cp`` takes on its own: 0 for a control character or a mark that
    joins the previous cell, else 1 or 2. ``ValueError`` for a surrogate or a value beyond
    U+10FFFF, ``OverflowError`` for one outside 0 to 2**32 - 1, ``TypeError`` for a non-integer."""

def _b64decode(data: str | _Buffer) -> bytes: ...

@final
class Sessions:
    """All sessions of one connection or trace, keyed by ``params.sessionId``.

    NDJSON bytes go in (``feed``), or decoded messages (``apply``); each session's state comes
    out on demand (``store[session_id].snapshot()``). Bad frames and malformed known updates
    become error records; the rest of the stream is still reduced.

    ``max_terminal_bytes`` bounds what all its terminals hold together, in the units of a
    terminal's ``max_bytes`` (scrollback as counted there, each screen row with cells the
    same way, 8 per style and 8 plus its UTF-8 length per grapheme cluster and per OSC 8
    link): past it, the
    terminals written least recently are cleared (their ``truncated`` set, their fields
    kept). Each terminal's own ``max_bytes`` is at most this.

    ``max_bytes`` bounds everything the store retains, in cost bytes (``retained_bytes``):
    past it, the sessions changed least recently are evicted whole, each an error record and a
    ``[sessionId, "session", "evicted"]`` change. ``max_payload_bytes`` bounds one opaque value
    of an update or request (past it, a stub ``{"dropped": "max_payload_bytes", "cost": N}`` is
    kept), ``max_message_bytes`` one message's content (past it, its head and tail are kept and
    its snapshot says ``truncated``). ``None`` for no bound. The rules are in
    ``docs/behaviour/sessions.md`` ("The store's budget").

    One thread feeds a store; others may read it meanwhile: their calls wait for the running
    ``feed`` to return. A second thread calling ``feed`` at the same time gets RuntimeError.
    """

    def __new__(
        cls,
        max_frame_bytes: int = 33554432,
        terminal_cols: int | None = None,
        scrollback: int = 10000,
        max_terminal_bytes: int = 67108864,
        max_bytes: int | None = 536870912,
        max_payload_bytes: int | None = 67108864,
        max_message_bytes: int | None = 67108864,
    ) -> Sessions: ...
    def feed(self, data: _Buffer) -> int:
        """Frame, decode and reduce NDJSON bytes (without the GIL); return frames consumed."""
    def finish(self) -> int:
        """End of stream: reduce a last line without newline; return frames consumed."""
    def apply(
        self, message: JsonRpcMessage | JSONInput, sender: Literal["client", "agent"] | None = None
    ) -> None:
        """Reduce one decoded JSON-RPC message of either direction.

        ``sender`` (``"client"`` or ``"agent"``; anything else is a ValueError), when known,
        says who sent it: a response then answers the other side's pending request with its
        id. A str that is not valid UTF-8 (a lone surrogate) makes the message an error record.
        """
    def _apply_at(self, message: object, sender: str | None, line: int, offset: int) -> None: ...
    def _record_error(self, reason: str, line: int, offset: int) -> None: ...
    def ids(self) -> list[str]:
        """Session ids in first-seen order."""
    def __len__(self) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __getitem__(self, key: str, /) -> Session: ...
    def __iter__(self) -> Iterator[str]: ...
    @property
    def protocol_version(self) -> int | None: ...
    @property
    def errors(self) -> list[ErrorRecord]:
        """Error records ``{line, offset, sessionId, reason}``, oldest first."""
    def take_errors(self) -> list[ErrorRecord]:
        """Return the error records and forget them."""
    @property
    def errors_dropped(self) -> int: ...
    @property
    def retained_bytes(self) -> int:
        """What the store retains, in cost bytes: its sessions and pending changes.

        Reading it evicts nothing."""
    @property
    def evicted_sessions(self) -> int:
        """Sessions evicted so far to keep the store within ``max_bytes``."""
    def changes(self) -> list[Change]:
        """(sessionId, entity type, id) of everything changed since the last call.

        Deduplicated, in first-change order. Entity types: a message's by its role,
        ``userMessage``, ``agentMessage``, ``thought`` or ``sessionMessage`` (the roles
        ``message_text`` takes: ``user``, ``agent``, ``thought``, ``session``; id: the
        messageId), ``toolCall``, ``terminal``, ``plan``, ``compaction``, ``other`` (id: index
        in ``other``), ``subagent``, and ``session`` (id: the snapshot key that moved, such as
        ``state``, ``prompts`` or ``turns``).
        """

@final
class Session:
    """One session's reduced state (a live view into its ``Sessions``).

    Each ``store[id]`` may be a new handle; handles on one session of one store are equal and
    hash alike. Once the session is evicted (see ``Sessions``), every read of its handles raises
    RuntimeError; a new session of the same id is another session, with other handles.
    """

    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def state(self) -> str | None: ...
    @property
    def stop_reason(self) -> str | None: ...
    def snapshot(self) -> SessionSnapshot:
        """The session as a JSON-serializable dict (a copy); see docs/behaviour/sessions.md.

        Among its keys: ``turns``, one per prompt turn in order, ``{requestId, prompt,
        messageId?, stopReason, cancelRequested, usage?, error?, joined?, start, end}``
        (``start``: the index in ``timeline`` of the turn's ``{type: "turn", id: requestId}``
        entry; ``end``: the timeline's length when the turn closed, None while it runs), and
        ``terminals``, each with ``source``: ``"agent"`` (v2 updates) or ``"client"`` (v1
        ``terminal/create``, with ``command``, ``args``, ``cwd``, ``env``, ``outputByteLimit``
        as sent, and ``exitStatus``, ``killed``, ``released`` once answered).
        """
    def terminal(self, terminal_id: str) -> Terminal | None:
        """The live terminal of ``terminal_id``, or None."""
    def message_text(self, message_id: str, role: Role | str = "agent") -> str | None:
        """The concatenated text of message (``role``, ``message_id``), or None.

        ``role`` is ``"user"``, ``"agent"``, ``"thought"`` or ``"session"``: a change of type
        ``userMessage``, ``agentMessage``, ``thought`` or ``sessionMessage`` names it.
        """
    # One entity, exactly as its entry of `snapshot()` (a copy, equal to it), without building
    # the rest of the snapshot; None when the session has no such entity.
    def tool_call(self, tool_call_id: str) -> ToolCall | None:
        """``snapshot()["toolCalls"][tool_call_id]``, or None."""
    def message(self, role: Role | str, message_id: str) -> Message | None:
        """Message (``role``, ``message_id``) as its entry of ``snapshot()["messages"]``, or
        None. An anonymous message (``~1``, ...) is found by its id too; where an agent used
        such an id for a real message of the role as well, the id names the real one."""
    def _message_blocks(self, index: int) -> list[ContentBlock] | None:
        """The content blocks of ``snapshot()["messages"][index]`` each as sent (the snapshot
        shows a run of plain text blocks as one), or None; for ``acpwire.sdk``."""
    def terminal_entry(self, terminal_id: str) -> TerminalEntry | None:
        """``snapshot()["terminals"][terminal_id]`` (``text`` rendered now), or None;
        ``terminal`` gives the live Terminal instead."""
    def plan(self, plan_id: str = "main") -> Plan | None:
        """``snapshot()["plans"][plan_id]``, or None; v1's one plan is ``"main"``."""
    def compaction(self, compaction_id: str) -> Compaction | None:
        """``snapshot()["compactions"][compaction_id]``, or None."""
    def subagent(self, subagent_id: str) -> Subagent | None:
        """``snapshot()["subagents"][subagent_id]``, or None."""

def reduce_ndjson(
    source: str | PathLike[str] | IO[bytes],
    *,
    max_frame_bytes: int = 33554432,
    terminal_cols: int | None = None,
    scrollback: int = 10000,
    max_terminal_bytes: int = 67108864,
    max_bytes: int | None = 536870912,
    max_payload_bytes: int | None = 67108864,
    max_message_bytes: int | None = 67108864,
) -> Sessions:
    """Reduce a whole NDJSON trace (a path or a binary file) into a new Sessions."""
