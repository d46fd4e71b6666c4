"""Many concurrent fake agents, each reduced by ``Sessions`` as its bytes arrive.

``run_agents`` starts N ``acpwire fake-agent`` processes, drives prompts in each over real
pipes, feeds every byte an agent writes into that connection's ``Sessions`` store, and checks
each finished turn exactly: the number of updates and the agent's answer text must equal what
the agent's deterministic turn (``fake_agent.build_turn``) says it sent, and the reduced
snapshot must equal the pure backend's reduction of the very same bytes. To load-test any
agent, with latency percentiles, see ``acpwire load`` (:mod:`acpwire.cli.load`).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from .. import dumps
from .fake_agent import TurnConfig, build_turn

__all__ = ["LoadReport", "rss_bytes", "run_agents"]


def rss_bytes() -> int:
    """Resident memory of this process: current on Linux, peak elsewhere; 0 if unknown."""
    try:
        with open("/proc/self/statm") as fp:
            return int(fp.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


@dataclass
class LoadReport:
    agents: int
    turns: int = 0
    updates: int = 0
    bytes: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    rss_samples: list[tuple[float, int]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "agents": self.agents,
            "turns": self.turns,
            "updates": self.updates,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "updates_per_s": round(self.updates / self.seconds) if self.seconds else 0,
            "failures": self.failures,
            "rss_mb": [(round(t, 1), round(r / 2**20, 1)) for t, r in self.rss_samples],
        }


def _agent_text(config: TurnConfig, session_id: str, turn: int) -> str:
    return "".join(
        u["content"]["text"]
        for u in build_turn(session_id, turn, 2, config)
        if u.get("sessionUpdate") == "agent_message_chunk"
    )


async def _drive(
    index: int,
    backend: Any,
    config: TurnConfig,
    args: list[str],
    deadline: float,
    max_turns: int,
    report: LoadReport,
    check_pure: bool,
) -> None:
    from .. import _pure

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acpwire",
        "fake-agent",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    next_id = 0

    async def send(method: str, params: dict[str, Any]) -> None:
        nonlocal next_id
        next_id += 1
        message = {"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}
        proc.stdin.write(dumps(message))  # type: ignore[union-attr]
        await proc.stdin.drain()  # type: ignore[union-attr]

    try:
        await send("initialize", {"protocolVersion": 2})
        turn = 0
        while turn < max_turns and time.monotonic() < deadline:
            turn += 1
            # A fresh store per turn: what it holds is checked, then dropped, so memory
            # stays flat over a long run unless something leaks.
            store = backend.Sessions()
            received = bytearray()
            await send("session/new", {"cwd": "/tmp", "mcpServers": []})
            session_id = f"sess_{turn:04d}"
            await send("session/prompt", {"sessionId": session_id, "prompt": []})
            while True:
                chunk = await proc.stdout.read(65536)
                if not chunk:
                    report.failures.append(f"agent {index}: closed its output mid-turn")
                    return
                received += chunk
                store.feed(chunk)
                if (
                    session_id in store
                    and store[session_id].state == "idle"
                    and received.endswith(b"\n")
                ):
                    break
            snapshot = store[session_id].snapshot()
            expected_updates = len(build_turn(session_id, 1, 2, config)) + 2
            got_updates = received.count(b'"method":"session/update"')
            if got_updates != expected_updates:
                report.failures.append(
                    f"agent {index} turn {turn}: {got_updates} updates, expected {expected_updates}"
                )
            [answer] = [m for m in snapshot["messages"] if m["role"] == "agent"] or [None]
            text = store[session_id].message_text(answer["id"]) if answer else None
            if text != _agent_text(config, session_id, 1):
                report.failures.append(f"agent {index} turn {turn}: answer text differs")
            if check_pure:
                reference = _pure.Sessions()
                reference.feed(bytes(received))
                if reference[session_id].snapshot() != snapshot:
                    report.failures.append(f"agent {index} turn {turn}: snapshot differs")
            if store.errors:
                report.failures.append(f"agent {index} turn {turn}: errors {store.errors[:3]}")
            report.turns += 1
            report.updates += got_updates
            report.bytes += len(received)
    finally:
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), timeout=10)
        except asyncio.TimeoutError:
            proc.kill()


async def run_agents(
    agents: int,
    *,
    duration: float = 0.0,
    turns: int = 1,
    config: TurnConfig | None = None,
    backend: Any = None,
    check_pure: bool = True,
    sample_every: float = 10.0,
) -> LoadReport:
    """Drive ``agents`` fake agents concurrently for ``turns`` turns each, or, with
    ``duration`` > 0, for that many seconds."""
    if backend is None:
        import acpwire as backend  # the active backend
    config = config or TurnConfig()
    if config.permission:
        # The driver sends prompts and reads updates; it answers no request of the agent's.
        raise ValueError("the load test does not answer permission requests: permission=False")
    args = [
        *(() if config.plan else ("--no-plan",)),
        *(() if config.usage else ("--no-usage",)),
        "--tokens",
        str(config.tokens),
        "--thoughts",
        str(config.thoughts),
        "--tool-calls",
        str(config.tool_calls),
        "--terminal-bytes",
        str(config.terminal_bytes),
        "--terminal-chunk",
        str(config.terminal_chunk),
        "--rate",
        str(config.rate),
        "--seed",
        str(config.seed),
    ]
    report = LoadReport(agents)
    start = time.monotonic()
    deadline = start + duration if duration > 0 else float("inf")
    max_turns = 10**9 if duration > 0 else turns

    async def sample() -> None:
        while True:
            report.rss_samples.append((time.monotonic() - start, rss_bytes()))
            await asyncio.sleep(sample_every)

    sampler = asyncio.ensure_future(sample())
    try:
        await asyncio.gather(
            *(
                _drive(i, backend, config, args, deadline, max_turns, report, check_pure)
                for i in range(agents)
            )
        )
    finally:
        sampler.cancel()
    report.seconds = time.monotonic() - start
    report.rss_samples.append((report.seconds, rss_bytes()))
    return report
