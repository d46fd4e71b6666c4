"""A deterministic ACP agent over stdio: a load generator for clients and a test peer.

It answers ``initialize`` (protocol version 1 or 2, negotiated: the client's version when it
is 1 or 2, else 2), ``session/new``, ``session/prompt`` and ``session/cancel``, optionally asks
``session/request_permission`` before its edit, and streams a turn whose shape and size are set
by :class:`TurnConfig`: thoughts, a plan, tool calls (read, edit, execute), terminal output
with colours and a progress bar, token-by-token agent message chunks, usage. With no options a
turn is a few hundred updates. The same configuration and prompt number always give the same
bytes, so tests can compare what a client reduced with what the agent sent.
"""

from __future__ import annotations

import asyncio
import base64
import os
import random
import sys
from dataclasses import dataclass, field
from typing import Any

from .. import dumps
from ..aio import read_messages

__all__ = [
    "FakeAgent",
    "TurnConfig",
    "add_pacing_arguments",
    "build_turn",
    "main_async",
    "pacing_options",
]

_WORDS = [
    "the",
    "parser",
    "returns",
    "an",
    "error",
    "when",
    "the",
    "input",
    "is",
    "empty",
    "so",
    "we",
    "check",
    "the",
    "length",
    "before",
    "indexing",
    "into",
    "the",
    "buffer",
    "and",
    "add",
    "a",
    "regression",
    "test",
    "then",
    "run",
    "the",
    "suite",
    "again",
    "while",
    "the",
    "session",
    "keeps",
    "streaming",
    "tokens",
    "to",
    "the",
    "client",
    "which",
    "renders",
    "them",
    "as",
    "they",
    "arrive",
]


@dataclass
class TurnConfig:
    """The size and shape of each prompt turn."""

    tokens: int = 200
    """agent_message_chunk updates in the answer (one word or so each)."""
    thoughts: int = 20
    """agent_thought_chunk updates before the answer."""
    tool_calls: int = 3
    """Tool calls (read, edit, execute, in turn), each with a few status updates."""
    terminal_bytes: int = 8192
    """PTY bytes streamed per execute tool call (v2: terminal_output_chunk; v1: text)."""
    terminal_chunk: int = 1024
    plan: bool = True
    usage: bool = True
    permission: bool = False
    """Ask session/request_permission before the edit and wait for the answer."""
    rate: float = 0.0
    """Updates per second; 0 streams flat out."""
    seed: int = 0
    first_update_delay: float = 0.0
    """Seconds between a prompt and its turn's first update (v2: after the prompt's answer)."""
    turn_delay: float = 0.0
    """Seconds between a turn's last update and its end (the prompt response or idle state)."""
    client_requests: bool = False
    """v1: read and edit tool calls ask the client ``fs/read_text_file`` and
    ``fs/write_text_file``, execute ones run a ``terminal/create`` command there (``wait_for_exit``,
    ``output``, ``release``); each waits for the answer."""
    crash_after: int = 0
    """Exit at once with status 3 and a message on standard error after this many updates in
    all (0: never)."""
    hang_after: int = 0
    """After this many updates in all, write nothing more and never exit by itself (0: never)."""
    extra: dict[str, Any] = field(default_factory=dict)


def _pty_output(size: int, rng: random.Random) -> bytes:
    """Coloured cargo-like output with a progress bar redrawn in place."""
    out = bytearray(b"\x1b[1m\x1b[32m   Compiling\x1b[0m demo v0.1.0\r\n")
    step = 0
    while len(out) < size:
        step += 1
        done = step % 40
        bar = "=" * done + ">" + " " * (39 - done)
        out += f"\r\x1b[K\x1b[1m\x1b[36m    Building\x1b[0m [{bar}] {step}/∞".encode()
        if step % 25 == 0:
            word = rng.choice(_WORDS)
            out += f"\r\n\x1b[33mwarning\x1b[0m: unused `{word}`\r\n".encode()
    return bytes(out[:size])


def build_turn(
    session_id: str, turn: int, version: int, config: TurnConfig
) -> list[dict[str, Any]]:
    """The session/update payloads (``update`` objects) of one turn, in order."""
    rng = random.Random(f"{config.seed}/{session_id}/{turn}")
    updates: list[dict[str, Any]] = []
    thought_id = f"msg_t_{turn:04d}"
    answer_id = f"msg_a_{turn:04d}"
    plan_entries = [
        {"content": "Read the code", "priority": "high", "status": "pending"},
        {"content": "Make the change", "priority": "high", "status": "pending"},
        {"content": "Run the tests", "priority": "medium", "status": "pending"},
    ]

    def chunk(kind: str, message_id: str, text: str) -> dict[str, Any]:
        update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
        if version >= 2:
            update["messageId"] = message_id
        return update

    def plan(done: int) -> dict[str, Any]:
        entries = [
            {**e, "status": "completed" if i < done else "pending"}
            for i, e in enumerate(plan_entries)
        ]
        if version >= 2:
            return {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "plan_main", "entries": entries},
            }
        return {"sessionUpdate": "plan", "entries": entries}

    if version >= 2:
        updates.append({"sessionUpdate": "state_update", "state": "running"})
    for _ in range(config.thoughts):
        updates.append(chunk("agent_thought_chunk", thought_id, rng.choice(_WORDS) + " "))
    if config.plan:
        updates.append(plan(0))
    kinds = ["read", "edit", "execute"]
    for index in range(config.tool_calls):
        kind = kinds[index % 3]
        call_id = f"call_{turn:04d}_{index:02d}"
        title = {"read": "Read src/lib.rs", "edit": "Edit src/lib.rs", "execute": "cargo test"}[
            kind
        ]
        if version >= 2:
            updates.append(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id,
                    "title": title,
                    "kind": kind,
                    "status": "pending",
                }
            )
        else:
            updates.append(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id,
                    "title": title,
                    "kind": kind,
                    "status": "pending",
                }
            )
        if kind == "edit" and config.permission:
            updates.append({"permission": call_id, "title": title})
        updates.append(
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
        )
        content: list[dict[str, Any]] = []
        if kind == "read":
            text = " ".join(rng.choice(_WORDS) for _ in range(60))
            content = [{"type": "content", "content": {"type": "text", "text": text}}]
        elif kind == "edit":
            old = "let first = s.as_bytes()[0];\n"
            new = "let Some(&first) = s.as_bytes().first() else {\n    return Err(Empty);\n};\n"
            path = "/work/demo/src/lib.rs"
            if version >= 2:
                patch = f"--- {path}\n+++ {path}\n@@ -1,1 +1,3 @@\n-{old}" + "".join(
                    f"+{line}\n" for line in new.splitlines()
                )
                diff = {
                    "type": "diff",
                    "changes": [{"operation": "modify", "path": path, "fileType": "text"}],
                    "patch": {"format": "git_patch", "text": patch},
                }
            else:
                diff = {"type": "diff", "path": path, "oldText": old, "newText": new}
            content = [diff]
        elif config.terminal_bytes:
            terminal_id = f"term_{turn:04d}_{index:02d}"
            output = _pty_output(config.terminal_bytes, rng)
            if version >= 2:
                updates.append(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call_id,
                        "content": [{"type": "terminal", "terminalId": terminal_id}],
                    }
                )
                updates.append(
                    {
                        "sessionUpdate": "terminal_update",
                        "terminalId": terminal_id,
                        "command": "cargo test",
                        "cwd": "/work/demo",
                    }
                )
                step = max(1, config.terminal_chunk)
                for start in range(0, len(output), step):
                    piece = output[start : start + step]
                    updates.append(
                        {
                            "sessionUpdate": "terminal_output_chunk",
                            "terminalId": terminal_id,
                            "data": base64.b64encode(piece).decode(),
                        }
                    )
                updates.append(
                    {
                        "sessionUpdate": "terminal_update",
                        "terminalId": terminal_id,
                        "exitStatus": {"exitCode": 0},
                    }
                )
            else:
                text = output.decode("utf-8", "replace")
                content = [{"type": "content", "content": {"type": "text", "text": text}}]
        done: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "completed",
        }
        if content:
            done["content"] = content
        updates.append(done)
        if config.plan:
            updates.append(plan(min(index + 1, 3)))
    for i in range(config.tokens):
        word = rng.choice(_WORDS)
        updates.append(chunk("agent_message_chunk", answer_id, word if i == 0 else " " + word))
    if config.usage:
        used = 1000 * turn + 17 * config.tokens
        updates.append(
            {
                "sessionUpdate": "usage_update",
                "used": used,
                "size": 200_000,
                "cost": {"amount": round(used * 3e-6, 6), "currency": "USD"},
            }
        )
    return updates


class FakeAgent:
    """One agent connection: reads requests, writes responses and updates."""

    def __init__(self, writer: asyncio.StreamWriter | Any, config: TurnConfig | None = None):
        self.config = config or TurnConfig()
        self.writer = writer
        self.version = 2
        self.sessions = 0
        self.turns: dict[str, int] = {}
        self.running: dict[str, asyncio.Task[None]] = {}
        # Every turn started, kept until `main_async` collects how each ended.
        self.tasks: list[asyncio.Task[None]] = []
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_request_id = 0
        self.sent_updates = 0
        self.cwds: dict[str, str] = {}
        self.hung = False

    async def send(self, message: dict[str, Any]) -> None:
        if self.hung:
            await asyncio.Event().wait()  # never set: nothing is written again
        self.writer.write(dumps(message))
        await self.writer.drain()

    async def respond(self, request_id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def fail(self, request_id: Any, code: int, message: str) -> None:
        await self.send(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )

    async def handle(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params")
        if method is None:
            # Only a response to one of ours (an int id) can settle a permission request.
            future = self.pending.pop(request_id, None) if type(request_id) is int else None
            if future is not None and not future.done():
                future.set_result(message)
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            if request_id is not None:
                await self.fail(request_id, -32602, "params must be an object")
            return
        if method == "initialize":
            asked = params.get("protocolVersion")
            # An int, exactly: True and 1.0 compare equal to 1 but are no version.
            self.version = asked if type(asked) is int and asked in (1, 2) else 2
            info = {"name": "acpwire-fake-agent", "title": "acpwire fake agent", "version": "1"}
            result: dict[str, Any] = {"protocolVersion": self.version}
            if self.version >= 2:
                result["info"] = info
                result["capabilities"] = {"session": {"prompt": {}}}
            else:
                result["agentInfo"] = info
                result["agentCapabilities"] = {"loadSession": False}
            result["authMethods"] = []
            await self.respond(request_id, result)
        elif method == "session/new":
            self.sessions += 1
            session_id = f"sess_{self.sessions:04d}"
            self.turns[session_id] = 0
            cwd = params.get("cwd")
            self.cwds[session_id] = cwd if isinstance(cwd, str) else "/"
            await self.respond(request_id, {"sessionId": session_id})
        elif method == "session/prompt":
            asked_id = params.get("sessionId")
            if not isinstance(asked_id, str) or asked_id not in self.turns:
                await self.fail(request_id, -32602, f"unknown session {asked_id!r}")
                return
            session_id = asked_id
            if session_id in self.running:
                await self.fail(request_id, -32600, "a prompt is already running")
                return
            self.turns[session_id] += 1
            task = asyncio.ensure_future(
                self.turn(session_id, self.turns[session_id], request_id, params.get("prompt"))
            )
            self.running[session_id] = task
            self.tasks.append(task)
            task.add_done_callback(lambda done: self._ended(session_id, done))
        elif method == "session/cancel":
            cancelled = params.get("sessionId")
            running = self.running.get(cancelled) if isinstance(cancelled, str) else None
            if running is not None:
                running.cancel()
        elif request_id is not None:
            await self.fail(request_id, -32601, f"method not found: {method}")

    def _ended(self, session_id: str, task: asyncio.Task[None]) -> None:
        # The next turn of the session may already be running: only this one is forgotten.
        if self.running.get(session_id) is task:
            del self.running[session_id]

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        await self.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session_id, "update": update},
            }
        )
        self.sent_updates += 1
        if self.config.crash_after and self.sent_updates >= self.config.crash_after:
            print(
                f"acpwire fake-agent: crashing after {self.sent_updates} updates (--crash-after)",
                file=sys.stderr,
                flush=True,
            )
            os._exit(3)  # abruptly, as a crash: no turn is ended, nothing is flushed
        if self.config.hang_after and self.sent_updates >= self.config.hang_after:
            print(
                f"acpwire fake-agent: hanging after {self.sent_updates} updates (--hang-after)",
                file=sys.stderr,
                flush=True,
            )
            self.hung = True
        if self.config.rate > 0:
            await asyncio.sleep(1.0 / self.config.rate)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the client ``method`` and wait for its answer (the whole response)."""
        request_id = self.next_request_id
        self.next_request_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        answer: dict[str, Any] = await future
        return answer

    async def ask_client(self, session_id: str, kind: str, call_id: str) -> list[dict[str, Any]]:
        """The v1 client requests a tool call of ``kind`` makes; the tool call content they give."""
        path = os.path.join(self.cwds.get(session_id, "/"), "notes.txt")
        lines: list[str] = []
        if kind == "read":
            answer = await self.request(
                "fs/read_text_file", {"sessionId": session_id, "path": path}
            )
            lines.append(_described("read", answer))
        elif kind == "edit":
            answer = await self.request(
                "fs/write_text_file",
                {"sessionId": session_id, "path": path, "content": f"edited by {call_id}\n"},
            )
            lines.append(_described("write", answer))
        else:
            answer = await self.request(
                "terminal/create",
                {"sessionId": session_id, "command": "echo", "args": [call_id]},
            )
            terminal_id = (answer.get("result") or {}).get("terminalId")
            if not isinstance(terminal_id, str):
                return [_text_content(_described("terminal", answer))]
            ids = {"sessionId": session_id, "terminalId": terminal_id}
            await self.request("terminal/wait_for_exit", ids)
            lines.append(_described("output", await self.request("terminal/output", ids)))
            await self.request("terminal/release", ids)
        return [_text_content(line) for line in lines]

    async def ask_permission(self, session_id: str, call_id: str, title: str) -> dict[str, Any]:
        options = [
            {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
        ]
        params: dict[str, Any]
        if self.version >= 2:
            params = {
                "sessionId": session_id,
                "title": f"Allow: {title}?",
                "subject": {"type": "tool_call", "toolCall": {"toolCallId": call_id}},
                "options": options,
            }
        else:
            params = {
                "sessionId": session_id,
                "toolCall": {"toolCallId": call_id, "title": title},
                "options": options,
            }
        return await self.request("session/request_permission", params)

    async def turn(self, session_id: str, turn: int, request_id: Any, prompt: Any) -> None:
        stop_reason = "end_turn"
        user_id = f"msg_u_{turn:04d}"
        try:
            if self.version >= 2:
                await self.respond(request_id, {"messageId": user_id})
            if self.config.first_update_delay > 0:
                await asyncio.sleep(self.config.first_update_delay)
            if self.version >= 2:
                await self.update(
                    session_id,
                    {
                        "sessionUpdate": "user_message",
                        "messageId": user_id,
                        "content": prompt or [],
                    },
                )
            asks = self.config.client_requests and self.version == 1
            for update in build_turn(session_id, turn, self.version, self.config):
                if asks and update.get("status") == "completed" and "toolCallId" in update:
                    kind = ["read", "edit", "execute"][int(update["toolCallId"][-2:]) % 3]
                    contents = await self.ask_client(session_id, kind, update["toolCallId"])
                    update = {**update, "content": [*update.get("content", []), *contents]}
                if "permission" in update:
                    answer = await self.ask_permission(
                        session_id, update["permission"], update["title"]
                    )
                    outcome = (answer.get("result") or {}).get("outcome") or {}
                    if outcome.get("outcome") == "cancelled":
                        stop_reason = "cancelled"
                        break
                    continue
                await self.update(session_id, update)
            if self.config.turn_delay > 0:
                await asyncio.sleep(self.config.turn_delay)
        except asyncio.CancelledError:
            stop_reason = "cancelled"
        # Over once its end is sent: the client may send the next prompt on seeing it.
        if self.running.get(session_id) is asyncio.current_task():
            del self.running[session_id]
        if self.version >= 2:
            await self.update(
                session_id,
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop_reason},
            )
        else:
            await self.respond(request_id, {"stopReason": stop_reason})


def _text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _described(what: str, answer: dict[str, Any]) -> str:
    """One line saying how the client answered a request."""
    if "error" in answer:
        error = answer["error"]
        message = error.get("message") if isinstance(error, dict) else error
        return f"{what}: refused ({message})"
    result = answer.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), str):
        return f"{what}: {len(result['content'])} characters"
    if isinstance(result, dict) and isinstance(result.get("output"), str):
        return f"{what}: {result['output'].strip()}"
    return f"{what}: done"


def add_pacing_arguments(parser: Any) -> None:
    """Add the options that pace the fake agent, or make it fail, to its argument parser."""
    parser.add_argument(
        "--first-update-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long after a prompt before its first update (default 0)",
    )
    parser.add_argument(
        "--turn-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long after a turn's last update before ending it (default 0)",
    )
    parser.add_argument(
        "--client-requests",
        action="store_true",
        help="v1: ask the client fs/read_text_file, fs/write_text_file and terminal/* "
        "requests during tool calls",
    )
    parser.add_argument(
        "--crash-after",
        type=int,
        default=0,
        metavar="N",
        help="exit with status 3 after N updates in all (default 0: never)",
    )
    parser.add_argument(
        "--hang-after",
        type=int,
        default=0,
        metavar="N",
        help="stop writing, and never exit, after N updates in all (default 0: never)",
    )


def pacing_options(args: Any) -> dict[str, Any]:
    """The ``TurnConfig`` fields that :func:`add_pacing_arguments`' options set."""
    for name in ("first_update_delay", "turn_delay"):
        value = getattr(args, name)
        if not value >= 0 or value == float("inf"):
            raise SystemExit(f"acpwire fake-agent: --{name.replace('_', '-')} must be finite >= 0")
    for name in ("crash_after", "hang_after"):
        if getattr(args, name) < 0:
            raise SystemExit(f"acpwire fake-agent: --{name.replace('_', '-')} must be >= 0")
    return {
        "first_update_delay": args.first_update_delay,
        "turn_delay": args.turn_delay,
        "client_requests": args.client_requests,
        "crash_after": args.crash_after,
        "hang_after": args.hang_after,
    }


class _FileWriter:
    """A writer for standard output when it is a regular file (asyncio pipes refuse those)."""

    def __init__(self, fp: Any) -> None:
        self.fp = fp

    def write(self, data: bytes) -> None:
        self.fp.write(data)

    async def drain(self) -> None:
        self.fp.flush()


class _FileReader:
    """A reader for standard input when it is a regular file."""

    def __init__(self, fp: Any) -> None:
        self.fp = fp

    async def read(self, size: int) -> bytes:
        # A blocking read, in a thread so the turns being streamed keep going meanwhile.
        read = self.fp.read1 if hasattr(self.fp, "read1") else self.fp.read
        return await asyncio.to_thread(read, size)


def _is_stream(fp: Any) -> bool:
    """Whether asyncio's pipe transports can serve ``fp`` (never on Windows)."""
    import os
    import selectors
    import stat

    if sys.platform == "win32":
        return False
    mode = os.fstat(fp.fileno()).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    # Some character devices cannot be polled (epoll refuses /dev/null), and the transport
    # would fail only later, inside the event loop: ask the selector first.
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fp.fileno(), selectors.EVENT_READ | selectors.EVENT_WRITE)
        except (OSError, ValueError):
            return False
    return True


async def _stdio() -> tuple[Any, Any]:
    loop = asyncio.get_running_loop()
    if _is_stream(sys.stdin):
        reader: Any = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:
        reader = _FileReader(sys.stdin.buffer)
    if not _is_stream(sys.stdout):
        return reader, _FileWriter(sys.stdout.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def main_async(config: TurnConfig) -> int:
    """Serve one client on standard input/output until it closes its end."""
    reader, writer = await _stdio()
    agent = FakeAgent(writer, config)

    def report(error: Exception) -> None:
        print(f"acpwire fake-agent: {error}", file=sys.stderr)

    try:
        async for message in read_messages(reader, on_error=report):
            await agent.handle(message)
    except OSError as exc:
        return _write_failed(exc)
    # End of input: let the turns already started finish (a scripted client may send its
    # prompts and close its end at once); a vanished client makes their writes fail instead.
    # A permission request can no longer be answered: its turn ends as cancelled.
    for future in agent.pending.values():
        future.cancel()
    for outcome in await asyncio.gather(*agent.tasks, return_exceptions=True):
        if isinstance(outcome, OSError):
            return _write_failed(outcome)
    return 0


def _write_failed(exc: OSError) -> int:
    """The status for a standard output that failed: 141 when its reader went away (as for any
    tool stopped by SIGPIPE), else 1 with the reason."""
    if isinstance(exc, (BrokenPipeError, ConnectionResetError)):
        return 128 + 13
    print(f"acpwire fake-agent: cannot write standard output: {exc}", file=sys.stderr)
    return 1
