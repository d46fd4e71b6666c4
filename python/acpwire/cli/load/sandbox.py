"""The client side of ACP v1's client requests for ``acpwire load``: ``fs/*`` and ``terminal/*``
answered inside one sandbox directory, or refused."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

__all__ = ["ClientRequestRefused", "Sandbox"]

# Output a terminal keeps when the agent names no limit: enough for a test run's log.
_DEFAULT_OUTPUT_LIMIT = 1 << 20
# A file read or written through fs/* larger than this is refused, so an agent cannot make the
# load client hold an unbounded file.
_MAX_FILE_BYTES = 16 << 20


class ClientRequestRefused(Exception):
    """A client request that gets a JSON-RPC error: ``code`` and ``message``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Terminal:
    def __init__(self, process: asyncio.subprocess.Process, limit: int) -> None:
        self.process = process
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.pump = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(65536):
            self.output += chunk
            if len(self.output) > self.limit:
                # The protocol keeps the most recent output, cut at a character boundary.
                cut = len(self.output) - self.limit
                while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                    cut += 1
                del self.output[:cut]
                self.truncated = True

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": _signal_name(-code)}
        return {"exitCode": code, "signal": None}

    def kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class Sandbox:
    """Answers one connection's ``fs/*`` and ``terminal/*`` requests under ``root``.

    Paths must be absolute and lie inside ``root`` once symbolic links are resolved; commands
    run with ``root`` (or a directory inside it) as their working directory. ``refuse`` answers
    every such request with an error instead, as a client without those capabilities would.
    """

    def __init__(self, root: Path, *, refuse: bool = False) -> None:
        self.root = Path(os.path.realpath(root))
        self.refuse = refuse
        self.terminals: dict[str, _Terminal] = {}
        self._next_terminal = 0
        self.served = 0
        """Requests answered with a result."""
        self.failed = 0
        """Requests answered with an error (a path outside the sandbox, a missing file...)."""
        self.refused = 0
        """Requests refused unseen (``refuse``)."""

    async def handle(self, method: str, params: Any) -> Any:
        """The result for the client request ``method``; raises ``ClientRequestRefused``."""
        if self.refuse:
            self.refused += 1
            raise ClientRequestRefused(
                -32601, f"{method} refused: the load client runs with --client-requests refuse"
            )
        try:
            if not isinstance(params, dict):
                raise ClientRequestRefused(-32602, f"{method}: params must be an object")
            result = await self._dispatch(method, params)
        except ClientRequestRefused:
            self.failed += 1
            raise
        self.served += 1
        return result

    async def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "fs/read_text_file":
            return self._read_text_file(params)
        if method == "fs/write_text_file":
            return self._write_text_file(params)
        if method == "terminal/create":
            return await self._create_terminal(params)
        if method in ("terminal/output", "terminal/wait_for_exit", "terminal/kill"):
            terminal = self._terminal(params)
            if method == "terminal/kill":
                terminal.kill()
                return {}
            if method == "terminal/wait_for_exit":
                await terminal.process.wait()
                await terminal.pump
                return terminal.exit_status()
            return {
                "output": terminal.output.decode("utf-8", "replace"),
                "truncated": terminal.truncated,
                "exitStatus": terminal.exit_status(),
            }
        if method == "terminal/release":
            terminal = self._terminal(params)
            terminal.kill()
            del self.terminals[params["terminalId"]]
            return {}
        raise ClientRequestRefused(-32601, f"method not found: {method}")

    def _path(self, params: dict[str, Any], key: str = "path") -> Path:
        value = params.get(key)
        if not isinstance(value, str) or not os.path.isabs(value):
            raise ClientRequestRefused(-32602, f"{key} must be an absolute path, not {value!r}")
        resolved = Path(os.path.realpath(value))
        if resolved != self.root and self.root not in resolved.parents:
            raise ClientRequestRefused(-32602, f"{value} is outside the sandbox {self.root}")
        return resolved

    def _read_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        path = self._path(params)
        try:
            if path.stat().st_size > _MAX_FILE_BYTES:
                raise ClientRequestRefused(-32602, f"{path} is over {_MAX_FILE_BYTES} bytes")
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ClientRequestRefused(-32002, f"cannot read {path}: {exc.strerror}") from None
        line, limit = params.get("line"), params.get("limit")
        if isinstance(line, int) or isinstance(limit, int):
            lines = text.splitlines(keepends=True)
            first = max(line - 1, 0) if isinstance(line, int) else 0
            last = first + limit if isinstance(limit, int) and limit >= 0 else len(lines)
            text = "".join(lines[first:last])
        return {"content": text}

    def _write_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        path = self._path(params)
        content = params.get("content")
        if not isinstance(content, str):
            raise ClientRequestRefused(-32602, "content must be a string")
        if len(content) > _MAX_FILE_BYTES:
            raise ClientRequestRefused(-32602, f"content is over {_MAX_FILE_BYTES} bytes")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise ClientRequestRefused(-32002, f"cannot write {path}: {exc.strerror}") from None
        return {}

    async def _create_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        command = params.get("command")
        args = params.get("args") or []
        if not isinstance(command, str) or not all(isinstance(a, str) for a in args):
            raise ClientRequestRefused(-32602, "command must be a string and args strings")
        cwd = self._path(params, "cwd") if params.get("cwd") is not None else self.root
        env = dict(os.environ)
        for variable in params.get("env") or []:
            if isinstance(variable, dict) and isinstance(variable.get("name"), str):
                env[variable["name"]] = str(variable.get("value", ""))
        limit = params.get("outputByteLimit")
        limit = limit if isinstance(limit, int) and limit >= 0 else _DEFAULT_OUTPUT_LIMIT
        try:
            process = await asyncio.create_subprocess_exec(
                command,
                *args,
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ClientRequestRefused(-32002, f"cannot run {command!r}: {reason}") from None
        self._next_terminal += 1
        terminal_id = f"term_load_{self._next_terminal:04d}"
        self.terminals[terminal_id] = _Terminal(process, limit)
        return {"terminalId": terminal_id}

    def _terminal(self, params: dict[str, Any]) -> _Terminal:
        terminal = self.terminals.get(params.get("terminalId"))  # type: ignore[arg-type]
        if terminal is None:
            raise ClientRequestRefused(-32602, f"unknown terminal {params.get('terminalId')!r}")
        return terminal

    async def close(self) -> None:
        """Kill every terminal still running and wait for them."""
        for terminal in self.terminals.values():
            terminal.kill()
        for terminal in self.terminals.values():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(terminal.process.wait(), timeout=5)
            terminal.pump.cancel()
        self.terminals.clear()
