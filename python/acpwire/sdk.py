"""Use acpwire under the official ACP Python SDK (``agent-client-protocol``, import ``acp``).

Install with the ``sdk`` extra. The SDK is imported lazily: ``import acpwire`` never needs it,
and :class:`FrameTransport` works on plain asyncio streams without it.

Switching a client takes one line; the call signatures are the SDK's own::

    from acpwire.sdk import spawn_agent_process   # was: from acp import spawn_agent_process
    from acpwire.sdk import connect_to_agent      # was: from acp import connect_to_agent

Both accept two extra keyword arguments: ``max_frame_bytes`` (default 32 MiB; a longer line is
reported and skipped without being buffered) and ``on_error`` (called with each rejected frame
as a :class:`acpwire.FrameError`; by default a warning is logged on the ``acpwire.sdk``
logger). Frames are split and decoded by :class:`acpwire.FrameDecoder`, so a frame of any size
up to the cap gets through: SDK releases up to 0.10 read with ``StreamReader.readline()``, which
fails past the stream's limit (64 KiB for the pipes ``spawn_agent_process`` creates) and ends
the connection; 0.11 and later read lines of any size with no cap at all.

Supported SDK versions: 0.7 to 0.12 (``connect_to_agent`` and ``spawn_stdio_transport`` are
public from 0.7 on). Tested end to end against 0.12.1 and 0.10.1.

* 0.12 and later accept a message-level transport in ``connect_to_agent(client, transport)``;
  :class:`FrameTransport` is one, so messages go from the decoder to the SDK without being
  parsed twice.
* 0.7 to 0.11 only take an ``asyncio.StreamReader``; :class:`FrameStreamReader` is one whose
  ``readline()``/``readuntil()`` return one validated message per call, re-encoded as a single
  line (a float too large for a float, ``1e400``, is re-encoded as ``null``).

A frame refused as invalid JSON is read once more with ``json.loads``, the SDK's own parser,
which also takes lone surrogate escapes and ``NaN``/``Infinity``: what the SDK would deliver is
delivered, and only what it would refuse goes to ``on_error``.

:class:`SessionAccumulator` replaces ``acp.contrib.session_state.SessionAccumulator`` with one
backed by :class:`acpwire.Sessions`; see its docstring.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from . import FrameDecoder, FrameError, _contract, dumps, loads

if TYPE_CHECKING:
    from acp import Agent, Client
    from acp.client.connection import ClientSideConnection
    from acp.contrib.session_state import SessionSnapshot as SdkSessionSnapshot
    from acp.schema import SessionNotification

    from . import Session, Sessions
    from .types import (
        AvailableCommand,
        JSONObject,
        JSONValue,
        PlanEntry,
        SessionSnapshot,
        ToolCall,
    )

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "ByteReader",
    "ByteWriter",
    "FrameStreamReader",
    "FrameTransport",
    "SessionAccumulator",
    "connect_to_agent",
    "spawn_agent_process",
]

# The default cap on one frame, in bytes (FrameDecoder's default), public here as before.
DEFAULT_MAX_FRAME_BYTES = _contract.DEFAULT_MAX_FRAME_BYTES

_LOG = logging.getLogger("acpwire.sdk")
_NOT_AN_OBJECT = "not a JSON-RPC message object"

OnError = Callable[[FrameError], object]
#: A ``SessionAccumulator.subscribe`` callback: ``(snapshot, notification)``.
Subscriber = Callable[["SdkSessionSnapshot | None", "SessionNotification | dict[str, Any]"], None]


class ByteReader(Protocol):
    """What a transport reads the agent's output from: an ``asyncio.StreamReader``, or anything
    with ``async read(n)``."""

    def read(self, n: int, /) -> Awaitable[bytes]: ...


class ByteWriter(Protocol):
    """What a transport writes the agent's input to: an ``asyncio.StreamWriter``, or anything
    with ``write(bytes)`` and ``async drain()``."""

    def write(self, data: bytes, /) -> object: ...
    def drain(self) -> Awaitable[None]: ...


def _log_error(error: FrameError) -> None:
    _LOG.warning("skipped a bad frame from the agent: %s", error)


def _not_an_object(value: object) -> FrameError:
    # The decoder has already consumed the frame, so its line and offset are unknown here.
    return FrameError(_NOT_AN_OBJECT, 0, 0, repr(value)[:64], "expected a JSON object")


class _MessageSource:
    """Pulls JSON-RPC message objects out of a byte reader, reporting and skipping the rest.

    A frame refused as invalid JSON is read once more with ``json.loads``, the SDK's own
    parser, which also takes lone surrogate escapes and ``NaN``/``Infinity``: what the SDK would
    deliver is delivered (a response in such a frame would otherwise never reach its request).
    For that the bytes of the line being received are kept, as the decoder keeps them, up to
    the frame cap.
    """

    def __init__(
        self,
        reader: ByteReader,
        max_frame_bytes: int,
        on_error: OnError | None,
        chunk_size: int,
        receive_timeout: float | None,
    ) -> None:
        if chunk_size <= 0:
            raise ValueError("chunk_size must be positive")
        self._reader = reader
        self._decoder = FrameDecoder(max_frame_bytes=max_frame_bytes)
        self._max = max_frame_bytes
        self._on_error = on_error or _log_error
        self._chunk_size = chunk_size
        self._timeout = receive_timeout
        # Decoded frames (any JSON value), rejected frames, and frames only json.loads reads.
        self._ready: deque[JSONValue | FrameError | _Lenient] = deque()
        self._eof = False
        self.lenient = False
        """Whether the last message came from the ``json.loads`` re-read."""
        # The bytes since the last newline before the chunk being drained (None once past the
        # cap: such a line is refused as too long, never as invalid JSON), that chunk, and
        # where in the stream the two start.
        self._partial: list[bytes] | None = []
        self._held: bytes | None = None
        self._chunk = b""
        self._start = 0

    @property
    def decoder(self) -> FrameDecoder:
        return self._decoder

    async def next(self) -> JSONObject | None:
        while True:
            while self._ready:
                item = self._ready.popleft()
                if isinstance(item, dict):
                    self.lenient = False
                    return item
                if isinstance(item, _Lenient):
                    if isinstance(item.value, dict):
                        self.lenient = True
                        return item.value
                    item = item.value
                elif isinstance(item, FrameError) and item.reason == "invalid JSON":
                    lenient = self._reread(item.offset)
                    if lenient is not None:
                        self._ready.extendleft(_Lenient(v) for v in reversed(lenient))
                        continue
                # A raising on_error propagates: the SDK then ends the connection, which is
                # how a caller makes bad frames fatal.
                self._on_error(item if isinstance(item, FrameError) else _not_an_object(item))
            if self._eof:
                return None
            read = self._reader.read(self._chunk_size)
            chunk = await (read if self._timeout is None else asyncio.wait_for(read, self._timeout))
            self._keep(chunk)
            if chunk:
                self._ready.extend(self._decoder._feed_events(chunk))
            else:
                self._eof = True
                self._ready.extend(self._decoder._finish_events())

    def _keep(self, chunk: bytes) -> None:
        """Hold ``chunk``, about to be fed, after the partial line that precedes it."""
        previous = self._chunk
        if previous:
            end = previous.rfind(b"\n") + 1
            if end:
                self._partial = [previous[end:]]
            elif self._partial is not None:
                self._partial.append(previous)
            if self._partial is not None and sum(map(len, self._partial)) > self._max + 1:
                self._partial = None
        # The partial line ends where the decoder's input does so far.
        held = sum(map(len, self._partial)) if self._partial is not None else 0
        self._start = self._decoder.position - held
        self._chunk = chunk
        self._held = None

    def _reread(self, offset: int) -> list[JSONValue] | None:
        """The messages ``json.loads`` reads in the frame at ``offset``, or None."""
        if self._partial is None:
            return None
        if self._held is None:
            self._held = b"".join([*self._partial, self._chunk])
        begin = offset - self._start
        if begin < 0:
            return None
        end = self._held.find(b"\n", begin)
        frame = self._held[begin : len(self._held) if end < 0 else end].removesuffix(b"\r")
        try:
            value = json.loads(frame)
        except ValueError:
            return None
        if isinstance(value, dict):
            return [value]
        if isinstance(value, list) and value:
            return value  # a batch: its entries, as the decoder gives them
        return None


class _Lenient:
    """A value only ``json.loads`` reads, as queued by :class:`_MessageSource`."""

    __slots__ = ("value",)

    def __init__(self, value: JSONValue) -> None:
        self.value = value


class FrameTransport:
    """A message-level transport for the SDK (0.12+) over a pair of asyncio byte streams.

    It satisfies the SDK's ``Transport`` protocol (``send``/``receive``/``close``), so
    ``acp.connect_to_agent(client, FrameTransport(reader, writer))`` gives a client connection
    that reads with :class:`acpwire.FrameDecoder` and writes with :func:`acpwire.dumps`.

    ``reader`` is the agent's stdout (anything with ``async read(n)``), ``writer`` its stdin
    (``write(bytes)`` and ``async drain()``). Rejected frames, and frames whose JSON is not an
    object, go to ``on_error`` and are skipped. ``receive_timeout`` bounds each read, as the
    SDK's own ``receive_timeout`` does. :meth:`close` leaves the streams open: whoever opened
    them closes them (``spawn_agent_process`` does).
    """

    def __init__(
        self,
        reader: ByteReader,
        writer: ByteWriter,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        on_error: OnError | None = None,
        chunk_size: int = 65536,
        receive_timeout: float | None = None,
    ) -> None:
        self._source = _MessageSource(
            reader, max_frame_bytes, on_error, chunk_size, receive_timeout
        )
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self._closed = False

    @property
    def decoder(self) -> FrameDecoder:
        """The :class:`acpwire.FrameDecoder` in use (for its counters)."""
        return self._source.decoder

    # `dict[str, Any]`, as the SDK's `Transport` protocol has it: the SDK passes its own dicts.
    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line."""
        if self._closed:
            raise ConnectionError("transport closed")
        data = dumps(message)
        # One write per message keeps frames whole; the lock keeps concurrent drains orderly.
        async with self._write_lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> JSONObject | None:
        """The next message object from the agent, or None at end of stream."""
        return await self._source.next()

    async def close(self) -> None:
        """Refuse further sends (idempotent); the streams stay open."""
        self._closed = True


class FrameStreamReader(asyncio.StreamReader):
    """An ``asyncio.StreamReader`` that yields one validated JSON-RPC message per line read.

    For SDK releases before 0.12, which only accept a ``StreamReader``. ``readline()`` and
    ``readuntil(b"\\n")`` return the next good message re-encoded by :func:`acpwire.dumps` as a
    single line (whatever its size, up to ``max_frame_bytes`` as received), and ``b""`` at end
    of stream; bad frames go to ``on_error`` and are skipped. Entries of a batch frame come out
    one per line. Byte-level reads (``read``, ``readexactly``) are not supported.
    """

    def __init__(
        self,
        source: ByteReader,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        on_error: OnError | None = None,
        chunk_size: int = 65536,
    ) -> None:
        super().__init__()
        self._source = _MessageSource(source, max_frame_bytes, on_error, chunk_size, None)
        self._done = False

    @property
    def decoder(self) -> FrameDecoder:
        """The :class:`acpwire.FrameDecoder` in use (for its counters)."""
        return self._source.decoder

    async def readline(self) -> bytes:
        """The next message as one line ending in ``\\n``; ``b""`` at end of stream."""
        if self._done:
            return b""
        message = await self._source.next()
        if message is None:
            self._done = True
            return b""
        if self._source.lenient:
            # A message only `json.loads` reads (a lone surrogate, NaN): written as `json`
            # writes it, which the SDK's `json.loads` reads back the same.
            return json.dumps(message, separators=(",", ":")).encode() + b"\n"
        return dumps(message)

    # `object`: the separator StreamReader takes differs between Python versions.
    async def readuntil(self, separator: object = b"\n") -> bytes:
        """Same as :meth:`readline`; only ``b"\\n"`` is supported as the separator."""
        if separator != b"\n":
            raise ValueError("FrameStreamReader only splits on b'\\n'")
        return await self.readline()

    async def read(self, n: int = -1) -> bytes:
        raise NotImplementedError("FrameStreamReader yields whole lines: use readline()")

    async def readexactly(self, n: int) -> bytes:
        raise NotImplementedError("FrameStreamReader yields whole lines: use readline()")

    def at_eof(self) -> bool:
        return self._done


def _sdk() -> Any:  # the `acp` module, which may not be installed
    try:
        import acp
    except ImportError as exc:
        raise ImportError(
            "acpwire.sdk needs the official ACP SDK: pip install 'acpwire[sdk]' "
            "(or agent-client-protocol)"
        ) from exc
    return acp


def _takes_transport(acp: Any) -> bool:  # `acp`, the module
    # 0.12 made output_stream optional so that a lone Transport can be passed; earlier
    # releases require a (StreamWriter, StreamReader) pair.
    parameter = inspect.signature(acp.connect_to_agent).parameters.get("output_stream")
    return parameter is not None and parameter.default is None


# `connect_to_agent`'s output stream when none is given: an explicit None goes to the SDK as
# given (SDK 0.10 requires the argument, and refuses None with its own error).
class _Omitted:
    def __repr__(self) -> str:
        return "<omitted>"


_OMITTED: Any = _Omitted()


# The streams are `object`: anything but an (asyncio.StreamWriter, asyncio.StreamReader) pair
# goes to the SDK as given, and the SDK's own parameters are `Any`.
def connect_to_agent(
    client: Client | Callable[[Agent], Client],
    input_stream: object,
    output_stream: object = _OMITTED,
    *,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    on_error: OnError | None = None,
    chunk_size: int = 65536,
    **connection_kwargs: Any,
) -> ClientSideConnection:
    """``acp.connect_to_agent`` reading the agent's frames with :class:`acpwire.FrameDecoder`.

    Same arguments as the SDK's: ``client`` (a ``Client``, or a callable taking the connection
    and returning one), ``input_stream`` the agent's stdin (``asyncio.StreamWriter``),
    ``output_stream`` its stdout (``asyncio.StreamReader``), and keyword arguments for the
    SDK's ``ClientSideConnection``. Returns that ``ClientSideConnection``.

    Anything but that pair of streams (the SDK's message-``Transport`` form, with
    ``output_stream`` left out, or streams of other types) goes to the SDK as given, which
    accepts or refuses it with its own ``TypeError``: only byte streams have frames to read.
    """
    acp = _sdk()
    sdk_connect: Callable[..., ClientSideConnection] = acp.connect_to_agent
    if not (
        isinstance(input_stream, asyncio.StreamWriter)
        and isinstance(output_stream, asyncio.StreamReader)
    ):
        if output_stream is _OMITTED:
            return sdk_connect(client, input_stream, **connection_kwargs)
        return sdk_connect(client, input_stream, output_stream, **connection_kwargs)
    if _takes_transport(acp):
        transport = FrameTransport(
            output_stream,
            input_stream,
            max_frame_bytes=max_frame_bytes,
            on_error=on_error,
            chunk_size=chunk_size,
            # The SDK applies receive_timeout only to its own stdio reader; keep its meaning.
            receive_timeout=connection_kwargs.pop("receive_timeout", None),
        )
        return sdk_connect(client, transport, **connection_kwargs)
    reader = FrameStreamReader(
        output_stream, max_frame_bytes=max_frame_bytes, on_error=on_error, chunk_size=chunk_size
    )
    return sdk_connect(client, input_stream, reader, **connection_kwargs)


@contextlib.asynccontextmanager
async def spawn_agent_process(
    to_client: Client | Callable[[Agent], Client],
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    transport_kwargs: Mapping[str, object] | None = None,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    on_error: OnError | None = None,
    **connection_kwargs: Any,
) -> AsyncGenerator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """``acp.spawn_agent_process`` reading the agent's frames with :class:`acpwire.FrameDecoder`.

    Starts the agent with the SDK's ``spawn_stdio_transport`` (same environment, same
    shutdown: close stdin, wait, then terminate and kill) and yields
    ``(ClientSideConnection, process)``, exactly as the SDK's function does.
    """
    acp = _sdk()
    async with acp.spawn_stdio_transport(
        command, *args, env=env, cwd=cwd, **dict(transport_kwargs or {})
    ) as (reader, writer, process):
        conn = connect_to_agent(
            to_client,
            writer,
            reader,
            max_frame_bytes=max_frame_bytes,
            on_error=on_error,
            **connection_kwargs,
        )
        try:
            yield conn, process
        finally:
            await conn.close()


def _sessions_class() -> type[Sessions]:
    import acpwire

    sessions: type[Sessions] | None = getattr(acpwire, "Sessions", None)
    if sessions is None:  # packages built before Sessions was exported
        from ._pure.session import Sessions as pure_sessions

        # The pure class has the native one's API (the stub's), which type checkers see.
        return cast("type[Sessions]", pure_sessions)
    return sessions


def _as_params(notification: SessionNotification | dict[str, Any]) -> dict[str, Any]:
    """``{"sessionId", "update"}`` from an SDK ``SessionNotification`` or a plain dict."""
    if isinstance(notification, dict):
        given = notification.get("params") if "method" in notification else notification
        if not isinstance(given, dict):
            raise TypeError("a session/update message needs params to be an object")
        return given
    dump = getattr(notification, "model_dump", None)
    if dump is None:
        raise TypeError(
            f"expected a SessionNotification or a dict, not {type(notification).__name__}"
        )
    # exclude_unset keeps an explicit null apart from an omitted field, as on the wire.
    params: dict[str, Any] = dump(mode="json", by_alias=True, exclude_unset=True)
    update = params.get("update")
    kind = getattr(getattr(notification, "update", None), "session_update", None)
    if isinstance(update, dict) and kind is not None:
        # The discriminator has a default, so a model built in code may not count it as set.
        update.setdefault("sessionUpdate", kind)
    params.setdefault("sessionId", notification.session_id)
    return params


class SessionAccumulator:
    """``acp.contrib.session_state.SessionAccumulator``, in linear time, backed by ``Sessions``.

    Same constructor, ``session_id``, :meth:`apply`, :meth:`snapshot`, :meth:`subscribe` and
    :meth:`reset`. It accepts the SDK's ``SessionNotification`` models or plain dicts (the
    notification's params, or the whole JSON-RPC message), of protocol v1 or v2.

    :meth:`apply` returns the SDK's ``SessionSnapshot`` of the state after that update, as the
    SDK's does, and subscribers get the same object. The SDK deep-copies the whole session into
    it on every ``apply`` (quadratic over a turn); here it is lazy: built on its first attribute
    access, from the live state or, once later updates are applied, by replaying the updates up
    to its own (so the updates since the last session change are kept). ``isinstance`` checks
    do not build it. Without the SDK installed, ``apply`` returns None.

    Beside the SDK's API, the live state reads as wire dicts, without the SDK's models:
    ``tool_calls``, ``plan_entries``, ``current_mode_id``, ``available_commands``,
    ``user_messages``, ``agent_messages``, ``agent_thoughts``; ``sessions`` is the store.

    ``protocol_version`` picks the update rules: 1 (the default, what the SDK speaks), 2, or
    None to accept the variants of both.
    """

    def __init__(
        self, *, auto_reset_on_session_change: bool = True, protocol_version: int | None = 1
    ) -> None:
        self._auto_reset = auto_reset_on_session_change
        self._version = protocol_version
        self._subscribers: list[Subscriber] = []
        self.reset()

    def reset(self) -> None:
        """Clear all accumulated state."""
        self.session_id: str | None = None
        # The params applied since the reset, encoded (a dict is the caller's and may change;
        # its JSON is also smaller than a copy): a snapshot read after later updates replays
        # them. A new list, so that snapshots taken before the reset keep theirs.
        self._history: list[bytes] = []
        self.sessions = _sessions_class()()
        """The underlying :class:`acpwire.Sessions` store."""
        if self._version is not None:
            # Sessions takes its rules from the initialize exchange; replay one.
            self.sessions.apply(
                {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                 "params": {"protocolVersion": self._version}}
            )  # fmt: skip
            self.sessions.apply(
                {"jsonrpc": "2.0", "id": "init", "result": {"protocolVersion": self._version}}
            )

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(snapshot, notification)`` after every :meth:`apply`; returns an
        ``unsubscribe`` callable."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def apply(
        self, notification: SessionNotification | dict[str, Any]
    ) -> SdkSessionSnapshot | None:
        """Reduce one session/update notification; return the SDK's ``SessionSnapshot`` of the
        state after it, built lazily (None when the SDK is not installed)."""
        params = _as_params(notification)
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            raise ValueError("a session/update notification needs a string sessionId")
        if self.session_id is None:
            self.session_id = session_id
        elif session_id != self.session_id:
            if not self._auto_reset:
                raise _mismatch_error(self.session_id, session_id)
            self.reset()
            self.session_id = session_id
        self._reduce(params)
        self._history.append(dumps(params))
        snapshot = _lazy_snapshot(self, self._history, len(self._history))
        for callback in list(self._subscribers):
            callback(snapshot, notification)
        return snapshot

    def _reduce(self, params: dict[str, Any]) -> None:
        self.sessions.apply({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def _snapshot_at(self, history: list[bytes], count: int) -> SdkSessionSnapshot:
        """The SDK snapshot after ``history[:count]``: from the live state while it is that."""
        if history is self._history and count == len(history):
            return self.snapshot()
        replay = SessionAccumulator(protocol_version=self._version)
        replay.session_id = loads(history[0])["sessionId"]
        for params in history[:count]:
            replay._reduce(loads(params))
        return replay.snapshot()

    # -- the snapshot's fields, read from the live state ---------------------------------------

    def _session(self) -> Session:
        if self.session_id is None or self.session_id not in self.sessions:
            raise _unavailable_error()
        return self.sessions[self.session_id]

    def _state(self) -> SessionSnapshot:
        return self._session().snapshot()

    def _chunks(self, role: str, kind: str) -> tuple[dict[str, object], ...]:
        session = self._session()
        return _chunks(session, session.snapshot(), role, kind)

    @property
    def tool_calls(self) -> dict[str, ToolCall]:
        """Tool calls by id, as wire dicts (``toolCallId``, ``title``, ``status``, ...)."""
        return self._state()["toolCalls"]

    @property
    def plan_entries(self) -> tuple[PlanEntry, ...]:
        """Entries of the latest plan."""
        return _plan_entries(self._state())

    @property
    def current_mode_id(self) -> str | None:
        return self._state()["currentModeId"]

    @property
    def available_commands(self) -> tuple[AvailableCommand, ...]:
        return _commands(self._state())

    @property
    def user_messages(self) -> tuple[dict[str, object], ...]:
        """One ``user_message_chunk`` dict per content block, in order."""
        return self._chunks("user", "user_message_chunk")

    @property
    def agent_messages(self) -> tuple[dict[str, object], ...]:
        """One ``agent_message_chunk`` dict per content block, in order."""
        return self._chunks("agent", "agent_message_chunk")

    @property
    def agent_thoughts(self) -> tuple[dict[str, object], ...]:
        """One ``agent_thought_chunk`` dict per content block, in order."""
        return self._chunks("thought", "agent_thought_chunk")

    def snapshot(self) -> SdkSessionSnapshot:
        """A frozen ``acp.contrib.session_state.SessionSnapshot`` of the current state."""
        from acp import schema
        from acp.contrib.session_state import SessionSnapshot, ToolCallView

        session = self._session()
        state = session.snapshot()
        tool_calls = {}
        for call_id, call in state["toolCalls"].items():
            # Validating through the SDK's own update model turns wire dicts into its types.
            model = schema.ToolCallProgress.model_validate(
                {**call, "sessionUpdate": "tool_call_update", "toolCallId": call_id}
            )
            tool_calls[call_id] = ToolCallView(
                tool_call_id=call_id,
                title=model.title,
                kind=model.kind,
                status=model.status,
                content=tuple(model.content) if model.content else None,
                locations=tuple(model.locations) if model.locations else None,
                raw_input=model.raw_input,
                raw_output=model.raw_output,
            )
        return SessionSnapshot(
            session_id=state["sessionId"],
            tool_calls=tool_calls,
            plan_entries=tuple(schema.PlanEntry.model_validate(e) for e in _plan_entries(state)),
            current_mode_id=state["currentModeId"],
            available_commands=tuple(
                schema.AvailableCommand.model_validate(c) for c in _commands(state)
            ),
            user_messages=tuple(
                schema.UserMessageChunk.model_validate(c)
                for c in _chunks(session, state, "user", "user_message_chunk")
            ),
            agent_messages=tuple(
                schema.AgentMessageChunk.model_validate(c)
                for c in _chunks(session, state, "agent", "agent_message_chunk")
            ),
            agent_thoughts=tuple(
                schema.AgentThoughtChunk.model_validate(c)
                for c in _chunks(session, state, "thought", "agent_thought_chunk")
            ),
        )


def _plan_entries(state: SessionSnapshot) -> tuple[PlanEntry, ...]:
    plans = list(state["plans"].values())
    return tuple(plans[-1].get("entries") or ()) if plans else ()


def _commands(state: SessionSnapshot) -> tuple[AvailableCommand, ...]:
    return tuple(state["availableCommands"] or ())


def _chunks(
    session: Session, state: SessionSnapshot, role: str, kind: str
) -> tuple[dict[str, object], ...]:
    # One chunk per block as sent: the snapshot shows a run of plain text blocks as one.
    out: list[dict[str, object]] = []
    for index, message in enumerate(state["messages"]):
        if message["role"] != role:
            continue
        for block in session._message_blocks(index) or ():
            chunk: dict[str, object] = {"sessionUpdate": kind, "content": block}
            if not message["id"].startswith("~"):  # "~n": v1 message without an id
                chunk["messageId"] = message["id"]
            out.append(chunk)
    return tuple(out)


def _lazy_snapshot(
    accumulator: SessionAccumulator, history: list[bytes], count: int
) -> SdkSessionSnapshot | None:
    cls = _pending_snapshot_class()
    if cls is None:
        return None
    snapshot = object.__new__(cls)
    object.__setattr__(snapshot, "__dict__", {_PENDING: (accumulator, history, count)})
    return snapshot


_PENDING = "_acpwire_pending"
# Read on the class without building the snapshot: what isinstance and pydantic's class-level
# checks look up.
_CLASS_LEVEL = frozenset({"__class__", "__pydantic_decorators__", "__pydantic_generic_metadata__"})
_PENDING_CLASS: list[type[SdkSessionSnapshot]] = []


def _pending_snapshot_class() -> type[SdkSessionSnapshot] | None:
    """A ``SessionSnapshot`` subclass whose instances build themselves on first access, then
    become plain ``SessionSnapshot`` instances (None without the SDK)."""
    if _PENDING_CLASS:
        return _PENDING_CLASS[0]
    try:
        from acp.contrib.session_state import SessionSnapshot
    except ImportError:
        return None

    class PendingSessionSnapshot(SessionSnapshot):
        def __getattribute__(self, name: str) -> Any:
            if name in _CLASS_LEVEL:
                return SessionSnapshot if name == "__class__" else getattr(SessionSnapshot, name)
            pending = object.__getattribute__(self, "__dict__").get(_PENDING)
            if pending is not None:
                accumulator, history, count = pending
                built = accumulator._snapshot_at(history, count)
                for slot in ("__pydantic_fields_set__", "__pydantic_extra__"):
                    object.__setattr__(self, slot, getattr(built, slot))
                object.__setattr__(self, "__pydantic_private__", built.__pydantic_private__)
                object.__setattr__(self, "__dict__", dict(built.__dict__))
                # From here on it is a plain SessionSnapshot (same layout), at no cost per read.
                object.__setattr__(self, "__class__", SessionSnapshot)
            return getattr(self, name)

    _PENDING_CLASS.append(PendingSessionSnapshot)
    return PendingSessionSnapshot


def _mismatch_error(expected: str, actual: str) -> Exception:
    try:
        from acp.contrib.session_state import SessionNotificationMismatchError
    except ImportError:
        return ValueError(
            f"SessionAccumulator received notification for {actual}, expected {expected}"
        )
    return SessionNotificationMismatchError(expected, actual)


def _unavailable_error() -> Exception:
    try:
        from acp.contrib.session_state import SessionSnapshotUnavailableError
    except ImportError:
        return RuntimeError("SessionAccumulator has not processed any notifications yet")
    return SessionSnapshotUnavailableError()
