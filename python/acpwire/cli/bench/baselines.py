"""What ACP clients in Python run today, as benchmark baselines for ``acpwire bench``.

- ``DictReducer``: ``orjson.loads`` per line and a plain dict reducer (messages appended by id,
  tool calls merged, terminal bytes decoded and kept, plans and usage replaced).
- ``MsgspecReducer``: msgspec typed decoding (a ``Struct`` per message) and the same reducer.
- ``SdkDecoder``: the official SDK's decode path, ``json.loads`` plus the pydantic
  ``SessionNotification`` model (decoding only; its accumulator is far slower still).
- ``PyteTerminal``: base64 decode and a pyte ``Screen`` for terminal output.

They reduce less than ``Sessions`` (no null-vs-omitted, no v1/v2 rules, no rendering), so they
are an upper bound on what such code costs. ``message_texts()`` lets the benchmark check them
against the real reducer on what they do compute: the text of every message.
"""

# No `from __future__ import annotations`: msgspec reads the Struct annotations at run time.

import base64
import json
from typing import Any, ClassVar, Protocol

import orjson

__all__ = ["Baseline", "DictReducer", "MsgspecReducer", "PyteTerminal", "SdkDecoder", "available"]


class Baseline(Protocol):
    """What the benchmark runs of a baseline: made with no arguments, fed the workload's lines."""

    name: ClassVar[str]  # the label of its row in the table

    def __init__(self) -> None: ...

    def feed_lines(self, lines: list[bytes]) -> None: ...


_ROLE = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}


def _text(content: Any) -> str:
    if isinstance(content, dict) and content.get("type") == "text":
        return str(content.get("text", ""))
    return ""


class DictReducer:
    """orjson + dicts: the reducer most clients write first."""

    name: ClassVar[str] = "orjson + dict reducer"

    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, Any]] = {}

    def _session(self, session_id: str) -> dict[str, Any]:
        state = self.sessions.get(session_id)
        if state is None:
            state = self.sessions[session_id] = {
                "messages": {},
                "current": {},
                "tools": {},
                "terminals": {},
                "plans": {},
                "other": [],
            }
        return state

    def feed_lines(self, lines: list[bytes]) -> None:
        loads = orjson.loads
        for line in lines:
            if line.strip():
                self.apply(loads(line))

    def apply(self, message: Any) -> None:
        if not isinstance(message, dict) or message.get("method") != "session/update":
            return
        params = message["params"]
        self.update(params["sessionId"], params["update"])

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        state = self._session(session_id)
        kind = update.get("sessionUpdate")
        role = _ROLE.get(kind)  # type: ignore[arg-type]
        if role is not None:
            message_id = update.get("messageId")
            if message_id is None:
                message_id = state["current"].get(role) or f"~{len(state['messages']) + 1}"
            state["current"] = {role: message_id}
            state["messages"].setdefault((role, message_id), []).append(
                _text(update.get("content"))
            )
        elif kind in ("tool_call", "tool_call_update"):
            state["tools"].setdefault(update["toolCallId"], {}).update(update)
        elif kind == "terminal_output_chunk":
            state["terminals"].setdefault(update["terminalId"], bytearray()).extend(
                base64.b64decode(update["data"])
            )
        elif kind in ("plan", "plan_update"):
            plan = update.get("plan", update)
            state["plans"][plan.get("planId", "main")] = plan
        else:
            state["other"].append(update)

    def message_texts(self) -> dict[tuple[str, str, str], str]:
        return {
            (sid, role, mid): "".join(parts)
            for sid, state in self.sessions.items()
            for (role, mid), parts in state["messages"].items()
        }


class MsgspecReducer(DictReducer):
    """msgspec typed decoding feeding the same reducer."""

    name: ClassVar[str] = "msgspec typed + reducer"

    def __init__(self) -> None:
        super().__init__()
        import msgspec

        class Params(msgspec.Struct):
            sessionId: str
            update: dict[str, Any]

        class Message(msgspec.Struct, omit_defaults=True):
            jsonrpc: str
            method: str | None = None
            # Typed only once the method is known: each method has its own params type.
            params: msgspec.Raw = msgspec.Raw(b"null")
            id: Any = None
            result: Any = None
            error: Any = None

        self._decode = msgspec.json.Decoder(Message).decode
        self._decode_params = msgspec.json.Decoder(Params).decode

    def feed_lines(self, lines: list[bytes]) -> None:
        decode = self._decode
        decode_params = self._decode_params
        for line in lines:
            if not line.strip():
                continue
            message = decode(line)
            if message.method == "session/update":
                params = decode_params(message.params)
                self.update(params.sessionId, params.update)


class SdkDecoder:
    """The official SDK's decode path: json.loads and pydantic validation."""

    name: ClassVar[str] = "official SDK decode (json + pydantic)"

    def __init__(self) -> None:
        from acp import schema  # the agent-client-protocol package

        self._notification = schema.SessionNotification
        self.count = 0

    def feed_lines(self, lines: list[bytes]) -> None:
        validate = self._notification.model_validate
        for line in lines:
            if not line.strip():
                continue
            message = json.loads(line)
            if message.get("method") == "session/update":
                try:
                    validate(message["params"])
                except ValueError:
                    continue  # v2 variants the (v1) SDK does not know
                self.count += 1


class PyteTerminal:
    """Terminal output through pyte, the pure-Python terminal emulator."""

    name: ClassVar[str] = "pyte Screen 200x50"

    def __init__(self) -> None:
        import pyte

        self.screen = pyte.Screen(200, 50)
        self.stream = pyte.ByteStream(self.screen)

    def feed_lines(self, lines: list[bytes]) -> None:
        loads = orjson.loads
        for line in lines:
            if b"terminal_output_chunk" not in line:
                continue
            update = loads(line)["params"]["update"]
            self.stream.feed(base64.b64decode(update["data"]))


def available() -> dict[str, type[Baseline]]:
    """The baselines whose libraries are installed."""
    found: dict[str, type[Baseline]] = {"dict": DictReducer}
    for key, cls, module in (
        ("msgspec", MsgspecReducer, "msgspec"),
        ("sdk", SdkDecoder, "acp"),
        ("pyte", PyteTerminal, "pyte"),
    ):
        try:
            __import__(module)
        except ImportError:
            continue
        found[key] = cls
    return found
