"""Driving ACP agents for ``acpwire load``: one ``Connection`` per agent process, its sessions
and their turns, each turn measured as its bytes arrive."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import os
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import FrameDecoder, dumps, loads
from ..loadtest import rss_bytes
from ..record import Recorder
from .sandbox import ClientRequestRefused, Sandbox

__all__ = ["BUILTIN_PROMPTS", "Failure", "LoadOptions", "LoadRun", "TurnMeasure", "run_load"]

BUILTIN_PROMPTS: list[list[dict[str, Any]]] = [
    [{"type": "text", "text": text}]
    for text in (
        "Read the README and summarise what this project does in three sentences.",
        "Find where the configuration file is parsed and list the options it accepts.",
        "Add a unit test for the function that parses durations, then run the tests.",
        "Explain the error handling in the main module and suggest one improvement.",
    )
]

# How much of an agent's standard error is kept for the failures it explains.
_STDERR_TAIL_BYTES = 4096


@dataclass
class LoadOptions:
    """What ``run_load`` drives, and how."""

    command: list[str]
    agents: int = 1
    sessions: int = 1
    turns: int = 1
    duration: float = 0.0
    """With a value > 0, turns are started until this many seconds have passed since the run
    began, each session's first turn in any case (``turns`` is then ignored)."""
    prompts: list[list[dict[str, Any]]] = field(default_factory=lambda: list(BUILTIN_PROMPTS))
    permission: str = "allow"
    client_requests: str = "sandbox"
    sandbox: Path | None = None
    """Working directory of the agents and root of the fs/terminal answers (default: a
    temporary directory, removed afterwards)."""
    protocol: int = 2
    turn_timeout: float = 120.0
    request_timeout: float = 30.0
    record_dir: Path | None = None
    sample_every: float = 0.5
    reduce: bool = True
    """Also feed every byte an agent writes into a ``Sessions`` store, as a client would."""


@dataclass
class TurnMeasure:
    """One prompt turn as the client saw it; times are seconds."""

    agent: int
    session: str
    turn: int
    start: float
    """When the prompt was sent, since the run started."""
    first_update: float | None = None
    first_text: float | None = None
    seconds: float | None = None
    updates: int = 0
    bytes: int = 0
    stop_reason: str | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "session": self.session,
            "turn": self.turn,
            "start": round(self.start, 6),
            "firstUpdateSeconds": _rounded(self.first_update),
            "firstTextSeconds": _rounded(self.first_text),
            "turnSeconds": _rounded(self.seconds),
            "updates": self.updates,
            "bytes": self.bytes,
            "stopReason": self.stop_reason,
            "error": self.error,
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


@dataclass
class Failure:
    """A turn, a session or a connection that did not complete, and why."""

    agent: int
    reason: str
    session: str | None = None
    turn: int | None = None
    stderr_tail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "session": self.session,
            "turn": self.turn,
            "reason": self.reason,
            "stderrTail": self.stderr_tail,
        }


@dataclass
class LoadRun:
    """Everything ``run_load`` measured."""

    options: LoadOptions
    turns: list[TurnMeasure] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    client_cpu_seconds: float = 0.0
    """CPU time of the thread that ran the client (its event loop)."""
    process_cpu_seconds: float = 0.0
    """CPU time of the whole client process (a progress bar included)."""
    samples: list[dict[str, float]] = field(default_factory=list)
    """``{"t", "cpuPercent", "rssBytes"}`` of the client process over time."""
    protocol_versions: collections.Counter[int] = field(default_factory=collections.Counter)
    permissions: collections.Counter[str] = field(default_factory=collections.Counter)
    client_requests_served: int = 0
    client_requests_refused: int = 0
    client_requests_failed: int = 0
    reduce_errors: int = 0
    bad_frames: int = 0
    """Frames from the agents that were not JSON-RPC messages (invalid JSON, over the cap)."""
    traces: list[str] = field(default_factory=list)


class _AgentGone(Exception):
    pass


class _Turn:
    __slots__ = ("answered", "done", "idle", "measure", "request_id", "started", "version")

    def __init__(self, measure: TurnMeasure, started: float, version: int) -> None:
        self.measure = measure
        self.started = started
        self.version = version
        self.request_id: int | None = None
        self.answered = False
        # A v2 idle state seen before the prompt's answer: (its stopReason,), the turn ending
        # when the answer comes.
        self.idle: tuple[Any] | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def finish(self, stop_reason: Any = None, error: str | None = None) -> None:
        if self.done.done():
            return
        self.measure.seconds = time.monotonic() - self.started
        self.measure.stop_reason = None if stop_reason is None else str(stop_reason)
        self.measure.error = error
        self.done.set_result(None)


class Connection:
    """One agent process: its pipes, its requests in flight and its sessions' current turns."""

    def __init__(self, index: int, run: LoadRun, root: Path, clock: Callable[[], float]) -> None:
        self.index = index
        self.run = run
        self.options = run.options
        self.clock = clock
        self.sandbox = Sandbox(root, refuse=self.options.client_requests == "refuse")
        self.root = root
        self.process: asyncio.subprocess.Process | None = None
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.prompt_turns: dict[int, _Turn] = {}
        self.current: dict[str, _Turn] = {}
        self.ids = itertools.count(1)
        self.decoder = FrameDecoder(raw=True)
        self.store: Any = None
        self.stderr_tail = bytearray()
        self.gone: str | None = None
        self.version = self.options.protocol
        self.recorder: Recorder | None = None
        self.tasks: list[asyncio.Task[Any]] = []
        self.failures: list[Failure] = []

    # -- the process and its pipes --

    async def start(self) -> None:
        if self.options.record_dir is not None:
            path = self.options.record_dir / f"agent-{self.index:03d}.ndjson"
            self.recorder = Recorder(open(path, "wb", buffering=1 << 16))  # noqa: SIM115
            self.run.traces.append(str(path))
        if self.options.reduce:
            from ... import Sessions

            self.store = Sessions()
        self.process = await asyncio.create_subprocess_exec(
            *self.options.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.root,
            # Its own process group: the whole agent (and what it starts) can be stopped.
            start_new_session=os.name == "posix",
        )
        self.tasks.append(asyncio.ensure_future(self._read_output()))
        self.tasks.append(asyncio.ensure_future(self._read_stderr()))

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr_tail += chunk
            del self.stderr_tail[:-_STDERR_TAIL_BYTES]

    async def _read_output(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        try:
            while chunk := await self.process.stdout.read(65536):
                if self.recorder is not None:
                    self.recorder.feed("agent", chunk)
                if self.store is not None:
                    self.store.feed(chunk)
                for frame in self.decoder.feed(chunk):
                    try:
                        message = loads(frame)
                    except ValueError:
                        self.run.bad_frames += 1
                        continue
                    size = len(frame) + 1
                    for item in message if isinstance(message, list) else [message]:
                        if isinstance(item, dict):
                            self._received(item, size)
                # Frames over the cap, or an empty batch: counted, never obeyed.
                self.run.bad_frames += len(self.decoder.take_errors())
        finally:
            if self.recorder is not None:
                self.recorder.finish("agent")
            status = None
            with contextlib.suppress(asyncio.TimeoutError):
                # Its exit follows the end of its output at once, unless it closed that alone.
                status = await asyncio.wait_for(self.process.wait(), timeout=5)
            reason = self.gone or (
                "the agent closed its output"
                if status is None
                else f"the agent exited with status {_status_text(status)}"
            )
            self._lose(reason)

    def _lose(self, reason: str) -> None:
        """The connection is over: every request and turn in flight fails with ``reason``."""
        self.gone = self.gone or reason
        for future in self.pending.values():
            if not future.done():
                future.set_exception(_AgentGone(self.gone))
        self.pending.clear()
        for turn in self.current.values():
            turn.finish(error=self.gone)

    async def write(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        if self.gone:
            raise _AgentGone(self.gone)
        data = dumps(message)
        if self.recorder is not None:
            self.recorder.feed("client", data)
        try:
            self.process.stdin.write(data)
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise _AgentGone("the agent closed its input") from None

    async def request(self, method: str, params: dict[str, Any], turn: _Turn | None = None) -> Any:
        """Send a request; its result, or ``_AgentGone`` / ``RuntimeError`` for an error."""
        request_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        if turn is not None:
            # A prompt's answer is awaited through its turn.
            turn.request_id = request_id
            self.prompt_turns[request_id] = turn
            await self.write(message)
            return None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        await self.write(message)
        try:
            answer = await asyncio.wait_for(future, timeout=self.options.request_timeout)
        except asyncio.TimeoutError:
            raise _AgentGone(
                f"no answer to {method} within {self.options.request_timeout:g} s"
            ) from None
        if "error" in answer:
            raise RuntimeError(f"{method} failed: {_error_text(answer['error'])}")
        return answer.get("result")

    # -- what the agent sends --

    def _received(self, message: dict[str, Any], size: int) -> None:
        method = message.get("method")
        if method is None:
            request_id = message.get("id")
            future = self.pending.pop(request_id, None) if type(request_id) is int else None
            if future is not None and not future.done():
                future.set_result(message)
            turn = self.prompt_turns.pop(request_id, None) if type(request_id) is int else None
            if turn is not None:
                self._prompt_answered(turn, message, size)
            return
        if "id" in message:
            self.tasks.append(asyncio.ensure_future(self._answer(message)))
            return
        if method != "session/update":
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        turn = self.current.get(params.get("sessionId"))  # type: ignore[arg-type]
        if turn is None or turn.done.done():
            return  # an update outside a turn (a session's history, a late one) is not timed
        update = params.get("update")
        update = update if isinstance(update, dict) else {}
        now = time.monotonic() - turn.started
        measure = turn.measure
        measure.updates += 1
        measure.bytes += size
        if measure.first_update is None:
            measure.first_update = now
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk" and measure.first_text is None:
            content = update.get("content")
            if isinstance(content, dict) and content.get("type") == "text":
                measure.first_text = now
        if kind == "state_update" and update.get("state") == "idle" and turn.version >= 2:
            if turn.answered:
                turn.finish(update.get("stopReason"))
            else:
                turn.idle = (update.get("stopReason"),)

    def _prompt_answered(self, turn: _Turn, message: dict[str, Any], size: int) -> None:
        turn.measure.bytes += size
        turn.answered = True
        if "error" in message:
            turn.finish(error=f"session/prompt failed: {_error_text(message['error'])}")
            return
        result = message.get("result")
        result = result if isinstance(result, dict) else {}
        if turn.version < 2 or "stopReason" in result:
            # v1: the answer ends the turn; v2 acknowledges it, and idle ends it.
            turn.finish(result.get("stopReason"))
        elif turn.idle is not None:
            turn.finish(turn.idle[0])

    async def _answer(self, message: dict[str, Any]) -> None:
        method = str(message.get("method"))
        params = message.get("params")
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            if method == "session/request_permission":
                reply["result"] = self._permission(params)
            else:
                reply["result"] = await self.sandbox.handle(method, params)
        except ClientRequestRefused as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        with contextlib.suppress(_AgentGone):
            await self.write(reply)

    def _permission(self, params: Any) -> dict[str, Any]:
        policy = self.options.permission
        self.run.permissions[policy] += 1
        options = params.get("options") if isinstance(params, dict) else None
        options = [o for o in options or [] if isinstance(o, dict)]
        if policy != "cancel":
            kinds = (
                ("allow_once", "allow_always")
                if policy == "allow"
                else ("reject_once", "reject_always")
            )
            for option in options:
                if option.get("kind") in kinds and "optionId" in option:
                    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        # No option of that kind: cancelled is the one answer every agent understands.
        return {"outcome": {"outcome": "cancelled"}}

    # -- sessions and turns --

    async def drive(self, should_start: Callable[[int], bool], on_turn: Callable[[], None]) -> None:
        """Initialize, open the sessions and run their turns until ``should_start`` says no."""
        try:
            await self.start()
        except OSError as exc:
            self._fail(f"cannot run {self.options.command[0]!r}: {exc.strerror or exc}")
            return
        try:
            capable = self.options.client_requests == "sandbox"
            result = await self.request(
                "initialize",
                {
                    "protocolVersion": self.options.protocol,
                    "clientCapabilities": {
                        "fs": {"readTextFile": capable, "writeTextFile": capable},
                        "terminal": capable,
                    },
                    "clientInfo": {"name": "acpwire-load", "version": "1"},
                },
            )
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if type(version) is not int or version not in (1, 2):
                raise RuntimeError(f"initialize: unsupported protocolVersion {version!r}")
            self.version = version
            self.run.protocol_versions[version] += 1
        except (_AgentGone, RuntimeError) as exc:
            self._fail(str(exc))
            return
        await asyncio.gather(
            *(self._session(k, should_start, on_turn) for k in range(self.options.sessions))
        )

    async def _session(
        self, slot: int, should_start: Callable[[int], bool], on_turn: Callable[[], None]
    ) -> None:
        try:
            result = await self.request("session/new", {"cwd": str(self.root), "mcpServers": []})
            session_id = result.get("sessionId") if isinstance(result, dict) else None
            if not isinstance(session_id, str):
                raise RuntimeError(f"session/new: no sessionId in {result!r}")
        except (_AgentGone, RuntimeError) as exc:
            self._fail(str(exc))
            return
        number = 0
        prompts = self.options.prompts
        while not self.gone and should_start(number):
            number += 1
            prompt = prompts[(self.index + slot + number - 1) % len(prompts)]
            started = time.monotonic()
            measure = TurnMeasure(self.index, session_id, number, self.clock())
            turn = _Turn(measure, started, self.version)
            self.current[session_id] = turn
            try:
                await self.request(
                    "session/prompt", {"sessionId": session_id, "prompt": prompt}, turn
                )
                await asyncio.wait_for(asyncio.shield(turn.done), self.options.turn_timeout)
            except _AgentGone as exc:
                turn.finish(error=str(exc))
            except asyncio.TimeoutError:
                reason = f"the turn did not end within {self.options.turn_timeout:g} s"
                turn.finish(error=reason)
                self.kill(reason)
            self.run.turns.append(measure)
            if measure.error is not None:
                self._fail(measure.error, session_id, number)
            on_turn()

    def _fail(self, reason: str, session: str | None = None, turn: int | None = None) -> None:
        failure = Failure(self.index, reason, session, turn)
        self.failures.append(failure)
        self.run.failures.append(failure)

    def kill(self, reason: str) -> None:
        """Stop a hung agent now: its whole process group."""
        self._lose(reason)
        if self.process is not None and self.process.returncode is None:
            _signal_group(self.process, signal.SIGKILL)

    async def close(self) -> None:
        """End the connection: close the agent's input, give it 5 s to exit, then stop it."""
        process = self.process
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            for sig, wait in ((None, 5.0), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                if sig is not None:
                    _signal_group(process, sig)
                try:
                    await asyncio.wait_for(process.wait(), timeout=wait)
                    break
                except asyncio.TimeoutError:
                    continue
        # Its output and error streams end once it (and what held them) is gone.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self.tasks, return_exceptions=True), 5)
        for task in self.tasks:
            task.cancel()
        await self.sandbox.close()
        self.run.client_requests_served += self.sandbox.served
        self.run.client_requests_refused += self.sandbox.refused
        self.run.client_requests_failed += self.sandbox.failed
        if self.store is not None:
            self.run.reduce_errors += len(self.store.errors)
        if self.recorder is not None:
            self.recorder.close()
        tail = _tail_text(self.stderr_tail)
        for failure in self.failures:
            failure.stderr_tail = tail


def _signal_group(process: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "posix":
            os.killpg(process.pid, sig)
        else:
            process.kill()


def _tail_text(data: bytes | bytearray) -> str:
    """The last lines of an agent's standard error, as text (at most the kept bytes)."""
    text = data.decode("utf-8", "replace")
    return "\n".join(text.splitlines()[-20:])


def _status_text(status: int) -> str:
    if status < 0:
        try:
            return f"{128 - status} (signal {signal.Signals(-status).name})"
        except ValueError:
            return f"{128 - status} (signal {-status})"
    return str(status)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('message')} (code {error.get('code')})"
    return repr(error)


def _cpu_seconds() -> float:
    return time.process_time()


async def run_load(options: LoadOptions, on_turn: Callable[[], None] | None = None) -> LoadRun:
    """Drive ``options.agents`` agent processes concurrently; return what was measured.

    Never waits longer than the run's bound: a turn that does not end within
    ``turn_timeout`` fails and its agent is killed; an agent that exits fails the turns it
    had in flight; at the end each agent gets 5 s to exit after its input is closed.
    """
    if options.record_dir is not None:
        options.record_dir.mkdir(parents=True, exist_ok=True)
    run = LoadRun(options)
    start = time.monotonic()
    cpu_start = _cpu_seconds()
    # The event loop's own thread does all the client's work (reading, framing, measuring,
    # reducing); a progress bar's refresh thread is not part of it.
    loop_cpu_start = time.thread_time()
    deadline = start + options.duration if options.duration > 0 else None

    def clock() -> float:
        return time.monotonic() - start

    def should_start(done: int) -> bool:
        if deadline is not None:
            # Every session runs a turn, however long its agent took to start.
            return done == 0 or time.monotonic() < deadline
        return done < options.turns

    async def sample() -> None:
        last_wall, last_cpu = time.monotonic(), _cpu_seconds()
        while True:
            await asyncio.sleep(options.sample_every)
            wall, cpu = time.monotonic(), _cpu_seconds()
            percent = 100 * (cpu - last_cpu) / (wall - last_wall) if wall > last_wall else 0.0
            run.samples.append(
                {
                    "t": round(wall - start, 3),
                    "cpuPercent": round(percent, 1),
                    "rssBytes": rss_bytes(),
                }
            )
            last_wall, last_cpu = wall, cpu

    with contextlib.ExitStack() as stack:
        if options.sandbox is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="acpwire-load-")))
        else:
            root = options.sandbox
            root.mkdir(parents=True, exist_ok=True)
        connections = [Connection(i, run, root.resolve(), clock) for i in range(options.agents)]
        sampler = asyncio.ensure_future(sample())
        try:
            await asyncio.gather(
                *(c.drive(should_start, on_turn or (lambda: None)) for c in connections)
            )
        finally:
            await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)
            sampler.cancel()
        run.seconds = time.monotonic() - start
        run.client_cpu_seconds = time.thread_time() - loop_cpu_start
        run.process_cpu_seconds = _cpu_seconds() - cpu_start
        run.samples.append({"t": round(run.seconds, 3), "cpuPercent": 0.0, "rssBytes": rss_bytes()})
    return run


def prompts_from_file(path: str) -> list[list[dict[str, Any]]]:
    """Prompts, one a line: text, or JSON (a content block, a list of them, or a string).

    A file whose every non-blank line is JSON is read as JSONL; otherwise each line is text.
    """
    with open(path, encoding="utf-8") as fp:
        lines = [line.rstrip("\r\n") for line in fp if line.strip()]
    if not lines:
        raise ValueError(f"{path}: no prompt in the file")
    parsed: list[Any] = []
    for line in lines:
        try:
            parsed.append(loads(line))
        except ValueError:
            return [[{"type": "text", "text": line}] for line in lines]
    prompts: list[list[dict[str, Any]]] = []
    for number, value in enumerate(parsed, 1):
        if isinstance(value, str):
            value = [{"type": "text", "text": value}]
        elif isinstance(value, dict):
            value = [value]
        if not (
            isinstance(value, list)
            and value
            and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in value)
        ):
            raise ValueError(
                f"{path}:{number}: a prompt is a content block, a list of them, or a string"
            )
        prompts.append(value)
    return prompts
