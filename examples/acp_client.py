"""A minimal ACP client over an agent's stdio, shared by the examples.

It spawns the agent, sends requests and awaits their responses, grants permission requests,
and applies every message in both directions to an :class:`acpwire.Sessions` store, which
then holds the reduced state of every session for a view to draw.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from typing import IO, Any

import acpwire
from acpwire.aio import read_messages

# The agent the examples talk to by default: deterministic, shipped with acpwire.
FAKE_AGENT = [sys.executable, "-m", "acpwire", "fake-agent"]

# What an agent sends is shown, never obeyed: control characters other than newline and tab
# become visible (as `cat -v` shows them, C1 ones as U+FFFD), so a message cannot move the
# cursor or retitle the terminal reading it.
_VISIBLE = {c: f"^{chr(c ^ 0x40)}" for c in (*range(0x20), 0x7F) if c not in (0x09, 0x0A)}
_VISIBLE.update(dict.fromkeys(range(0x80, 0xA0), "\ufffd"))


def visible(text: str) -> str:
    """``text`` with its control characters made visible; safe to print to a terminal."""
    return text.translate(_VISIBLE)


class AgentConnection:
    """One agent process; ``store`` is the reduced state of everything said so far."""

    def __init__(
        self, process: asyncio.subprocess.Process, store: acpwire.Sessions, trace: IO[bytes] | None
    ) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.store, self.trace = process, store, trace
        self._stdin = process.stdin
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self.updated = asyncio.Event()  # set on every message from the agent
        self._reader = asyncio.create_task(self._read(process.stdout))

    @classmethod
    async def spawn(
        cls, command: Sequence[str], store: acpwire.Sessions, trace: IO[bytes] | None = None
    ) -> AgentConnection:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        return cls(process, store, trace)

    def _send(self, message: dict[str, Any]) -> None:
        frame = acpwire.dumps(message)
        self.store.apply(message, sender="client")
        if self.trace is not None:
            self.trace.write(frame)
        self._stdin.write(frame)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and return its result; an error answer raises ``RuntimeError``."""
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        await self._stdin.drain()
        response = await future
        if "error" in response:
            raise RuntimeError(f"{method} failed: {response['error']}")
        return response.get("result")

    async def start_session(self, protocol_version: int = 2) -> str:
        await self.request("initialize", {"protocolVersion": protocol_version})
        result = await self.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str) -> None:
        """Send one prompt and return when its turn is over (the session is idle again)."""
        prompt = [{"type": "text", "text": text}]
        await self.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
        # v1 ends the turn with the response; v2 answers at once and ends it with an idle state.
        while self.store[session_id].state != "idle":
            if self._reader.done():
                raise ConnectionError("the agent closed its output during the turn")
            self.updated.clear()
            await self.updated.wait()

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        def report(error: acpwire.FrameError) -> None:
            print(f"bad frame from the agent: {error}", file=sys.stderr)

        try:
            async for message in read_messages(stdout, on_error=report):
                if self.trace is not None:
                    self.trace.write(acpwire.dumps(message))
                self.store.apply(message, sender="agent")
                self.updated.set()
                if not isinstance(message, dict):
                    continue
                if message.get("method") == "session/request_permission":
                    self._grant(message)
                elif "method" not in message and message.get("id") in self._pending:
                    self._pending.pop(message["id"]).set_result(message)
        finally:
            for future in self._pending.values():
                future.set_exception(ConnectionError("the agent closed its output"))
            self.updated.set()

    def _grant(self, request: dict[str, Any]) -> None:
        options = request.get("params", {}).get("options", [])
        allow = next((o for o in options if str(o.get("kind", "")).startswith("allow")), None)
        outcome = (
            {"outcome": "selected", "optionId": allow["optionId"]}
            if allow
            else {"outcome": "cancelled"}
        )
        self._send({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": outcome}})

    async def close(self) -> int:
        """Close the agent's input, wait for it to exit, and return its exit status."""
        self._stdin.close()
        status = await self.process.wait()
        await self._reader
        return status
