"""Shared corpus and fixtures for the acpwire benchmarks.

The corpus is synthetic but shaped like real ACP v2 traffic: mostly ``session/update``
notifications (streamed agent text, tool calls with content, base64 terminal output)
with some requests and responses mixed in. It is generated from a fixed seed, so every
run and every machine benchmarks the same bytes.

Environment:
    ACPWIRE_BENCH_MB   corpus size in MB (10**6 bytes), default 100; use e.g. 2 for a quick run.
"""

from __future__ import annotations

import base64
import json
import os
import random
from collections.abc import Callable

import pytest

SEED = 20250917
CHUNK_SIZE = 64 * 1024
DEFAULT_MB = 100.0


def corpus_bytes_target() -> int:
    raw = os.environ.get("ACPWIRE_BENCH_MB", "")
    mb = float(raw) if raw.strip() else DEFAULT_MB
    if mb <= 0:
        raise ValueError(f"ACPWIRE_BENCH_MB must be positive, got {raw!r}")
    return int(mb * 1_000_000)


# --- building blocks ----------------------------------------------------------

_PROSE = (
    "the function returns an error when the input is empty so we should check the length "
    "before indexing into the buffer and add a regression test for this case then run the "
    "suite again parser config value path file module build crate stream frame line client "
    "session handler async await struct impl trait field option result type schema update "
    "request response notification terminal output chunk message plan tool call status "
    "completed pending running because however first next finally also instead this that"
)
WORDS = tuple(_PROSE.split())

# Text that real agent output carries and that JSON encoders must escape or pass through:
# quotes, backslashes, newlines, tabs and non-ASCII code points of every UTF-8 width.
SPICE = (
    "`parse_duration()`",
    '"quoted"',
    "C:\\Users\\dev\\project",
    "\n\n",
    "\n- ",
    "\t",
    "`Result<T, E>`",
    '{"key": 1}',
    "café",
    "naïve",
    "→",
    "✓",
    "—",
    "🚀",
    "日本語",
)

IDENTS = (
    "buf",
    "frame",
    "offset",
    "len",
    "line",
    "reader",
    "state",
    "cfg",
    "path",
    "value",
    "items",
    "idx",
    "result",
    "decoder",
    "chunk",
)
METHODS = ("parse", "push", "extend", "get", "as_bytes", "trim", "split", "find", "decode", "len")
CRATES = (
    "serde",
    "serde_json",
    "memchr",
    "tokio",
    "regex",
    "clap",
    "anyhow",
    "thiserror",
    "pyo3",
    "jiter",
    "bytes",
    "itoa",
)
KINDS = ("read", "edit", "execute", "search", "fetch", "think", "other")
STATUSES = ("pending", "in_progress", "completed", "completed", "failed")


class _Gen:
    """Message factory; all randomness flows from one seeded ``random.Random``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.sessions = [f"sess_{self.rng.getrandbits(48):012x}" for _ in range(3)]
        self.next_id = 0
        self.next_msg = 0
        self.next_call = 0
        self.pty_lines = self._pty_pool()

    # building blocks shared by the message kinds
    def sid(self) -> str:
        return self.rng.choice(self.sessions)

    def text(self, lo: int, hi: int) -> str:
        rng = self.rng
        target = rng.randint(lo, hi)
        out: list[str] = []
        size = 0
        while size < target:
            piece = rng.choice(SPICE) if rng.random() < 0.06 else rng.choice(WORDS)
            out.append(piece)
            size += len(piece) + 1
        return " ".join(out)

    def code(self, lo: int, hi: int) -> str:
        rng = self.rng
        target = rng.randint(lo, hi)
        lines: list[str] = []
        size = 0
        while size < target:
            a, b = rng.choice(IDENTS), rng.choice(IDENTS)
            line = f"    let {a} = {b}.{rng.choice(METHODS)}({rng.choice(IDENTS)})?;"
            if rng.random() < 0.1:
                line = f'    return Err(Error::new("unexpected {a} at {{}}", {b}));'
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)

    def _pty_pool(self) -> list[bytes]:
        rng = self.rng
        pool: list[str] = []
        for i in range(160):
            crate = rng.choice(CRATES)
            ver = f"{rng.randint(0, 3)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"
            pool.append(f"\x1b[1m\x1b[32m{'Compiling':>12}\x1b[0m {crate} v{ver}\r\n")
            done = i % 40 + 1
            bar = "=" * (done * 25 // 40) + ">" + " " * (25 - done * 25 // 40)
            pool.append(
                f"\x1b[1m\x1b[36m{'Building':>12}\x1b[0m [{bar}] {done}/40: {crate}\x1b[K\r"
            )
            name = f"{rng.choice(IDENTS)}_{rng.choice(IDENTS)}"
            pool.append(f"test {crate}::tests::{name} ... \x1b[32mok\x1b[0m\r\n")
        pool += [
            "\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `offset`\x1b[0m\r\n",
            "\x1b[0m\x1b[1m\x1b[38;5;12m  --> \x1b[0m\x1b[0msrc/frame.rs:42:9\x1b[0m\r\n",
            "  \x1b[32m✓\x1b[39m decodes split UTF-8 \x1b[2m(3 ms)\x1b[22m\r\n",
            "\x1b[31m✗ 1 failed\x1b[39m — see log above\r\n",
        ]
        return [line.encode() for line in pool]

    # message kinds
    def update(self, update: dict) -> dict:
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": self.sid(), "update": update},
        }

    def message_chunk(self, kind: str = "agent_message_chunk") -> dict:
        if self.rng.random() < 0.05:
            self.next_msg += 1
        return self.update(
            {
                "sessionUpdate": kind,
                "messageId": f"msg_{self.next_msg:06d}",
                "content": {"type": "text", "text": self.text(150, 250)},
            }
        )

    def tool_call(self) -> dict:
        rng = self.rng
        self.next_call += 1
        path = f"/home/dev/src/acme/src/{rng.choice(IDENTS)}.rs"
        update: dict = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": f"call_{self.next_call:06d}",
            "title": f"{rng.choice(('Read', 'Edit', 'Search', 'Run'))} {path}",
            "kind": rng.choice(KINDS),
            "status": rng.choice(STATUSES),
            "locations": [{"path": path, "line": rng.randint(1, 900)}],
            "rawInput": {"path": path, "limit": rng.randint(50, 400), "recursive": False},
        }
        if rng.random() < 0.25:
            update["content"] = [
                {
                    "type": "diff",
                    "changes": [{"operation": "modify", "path": path, "fileType": "text"}],
                    "patch": {
                        "format": "git_patch",
                        "text": f"diff --git {path} {path}\n--- {path}\n+++ {path}\n"
                        f"@@ -10,3 +10,4 @@\n{self.code(100, 600)}\n",
                    },
                }
            ]
        else:
            update["content"] = [
                {"type": "content", "content": {"type": "text", "text": self.code(300, 1500)}}
            ]
        return self.update(update)

    def tool_status(self) -> dict:
        return self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": f"call_{self.rng.randint(1, self.next_call + 1):06d}",
                "status": self.rng.choice(STATUSES),
                "rawOutput": None if self.rng.random() < 0.5 else {"exitCode": 0, "ms": 41.5},
            }
        )

    def tool_content_chunk(self) -> dict:
        return self.update(
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": f"call_{self.next_call:06d}",
                "content": {
                    "type": "content",
                    "content": {"type": "text", "text": self.text(80, 400)},
                },
            }
        )

    def terminal_chunk(self) -> dict:
        rng = self.rng
        size = rng.randint(1024, 4096)
        parts: list[bytes] = []
        total = 0
        while total < size:
            line = rng.choice(self.pty_lines)
            parts.append(line)
            total += len(line)
        # Cut at an arbitrary byte, as a PTY read does: escapes and UTF-8 may be split.
        data = b"".join(parts)[:size]
        return self.update(
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": f"term_{self.next_call % 50:03d}",
                "data": base64.b64encode(data).decode("ascii"),
            }
        )

    def plan(self) -> dict:
        rng = self.rng
        entries = [
            {
                "content": self.text(20, 80),
                "priority": rng.choice(("high", "medium", "low")),
                "status": rng.choice(("pending", "in_progress", "completed")),
            }
            for _ in range(rng.randint(2, 7))
        ]
        return self.update(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "plan_1", "entries": entries},
            }
        )

    def usage(self) -> dict:
        rng = self.rng
        used = rng.randint(1_000, 199_000)
        return self.update(
            {
                "sessionUpdate": "usage_update",
                "used": used,
                "size": 200_000,
                "cost": {"amount": round(used * 3e-6, 6), "currency": "USD"},
            }
        )

    def exchange(self) -> list[dict]:
        """A request and its response: a prompt from the client or a permission ask."""
        self.next_id += 1
        rid = self.next_id
        if self.rng.random() < 0.5:
            self.next_msg += 1
            return [
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "method": "session/prompt",
                    "params": {
                        "sessionId": self.sid(),
                        "prompt": [{"type": "text", "text": self.text(40, 400)}],
                    },
                },
                {"jsonrpc": "2.0", "id": rid, "result": {"messageId": f"msg_{self.next_msg:06d}"}},
            ]
        return [
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "session/request_permission",
                "params": {
                    "sessionId": self.sid(),
                    "title": "Allow running cargo test?",
                    "subject": {
                        "type": "tool_call",
                        "toolCall": {"toolCallId": f"call_{self.next_call:06d}"},
                    },
                    "options": [
                        {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
                        {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
                    ],
                },
            },
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}},
            },
        ]


def generate_corpus(target_bytes: int, seed: int = SEED) -> bytes:
    """Deterministic NDJSON of at least ``target_bytes`` bytes, one message per line."""
    gen = _Gen(seed)
    makers: list[Callable[[], dict | list[dict]]] = [
        gen.message_chunk,
        lambda: gen.message_chunk("agent_thought_chunk"),
        gen.tool_call,
        gen.tool_status,
        gen.tool_content_chunk,
        gen.terminal_chunk,
        gen.plan,
        gen.usage,
        gen.exchange,
    ]
    weights = [50, 5, 12, 6, 4, 14, 2, 3, 4]
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    out: list[bytes] = []
    size = 0
    while size < target_bytes:
        made = gen.rng.choices(makers, weights)[0]()
        for msg in made if isinstance(made, list) else [made]:
            line = dumps(msg).encode() + b"\n"
            out.append(line)
            size += len(line)
    return b"".join(out)


# --- fixtures -------------------------------------------------------------------


@pytest.fixture(scope="session")
def corpus() -> bytes:
    """The NDJSON corpus; every line is one JSON-RPC object, every line ends in ``\\n``."""
    return generate_corpus(corpus_bytes_target())


@pytest.fixture(scope="session")
def corpus_chunks(corpus: bytes) -> list[bytes]:
    """The corpus cut into 64 KiB pieces ahead of time, so slicing is not timed."""
    return [corpus[i : i + CHUNK_SIZE] for i in range(0, len(corpus), CHUNK_SIZE)]


@pytest.fixture(scope="session")
def messages(corpus: bytes) -> list[bytes]:
    """One bytes object per message, without the newline."""
    return corpus.split(b"\n")[:-1]


@pytest.fixture(scope="session")
def decoded(messages: list[bytes]) -> list[object]:
    """The messages as Python objects, the input for the ``dumps`` benchmarks."""
    return [json.loads(m) for m in messages]


# (group, name, MB/s, msgs/s) of each benchmark that ran, for the closing summary.
_THROUGHPUT: list[tuple[str, str, float, int]] = []


def _record_throughput(benchmark, nbytes: int, nmessages: int) -> None:
    """Put MB/s and messages/s, derived from the timing stats, in ``extra_info``."""
    meta = benchmark.stats
    # No stats when timing is off (--benchmark-disable): nothing to derive.
    if meta is None or not meta.stats:
        return
    stats = meta.stats
    info = benchmark.extra_info
    info["MB"] = round(nbytes / 1e6, 2)
    info["MB/s"] = round(nbytes / stats.median / 1e6, 1)
    info["MB/s best"] = round(nbytes / stats.min / 1e6, 1)
    info["msgs/s"] = round(nmessages / stats.median)
    _THROUGHPUT.append((benchmark.group or "", benchmark.name, info["MB/s"], info["msgs/s"]))


def pytest_terminal_summary(terminalreporter) -> None:
    # pytest-benchmark's table shows times only; extra_info reaches just its JSON output.
    if not _THROUGHPUT:
        return
    terminalreporter.section("throughput (median round)")
    width = max(len(name) for _, name, _, _ in _THROUGHPUT)
    for group, name, mbps, msgs in sorted(_THROUGHPUT):
        terminalreporter.write_line(
            f"{group:<22} {name:<{width}} {mbps:>9.1f} MB/s {msgs:>11,} msg/s"
        )


@pytest.fixture
def record_throughput() -> Callable[..., None]:
    """``record_throughput(benchmark, nbytes, nmessages)``; call it after the benchmark ran."""
    return _record_throughput
