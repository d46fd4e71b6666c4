"""Traces for the export and Dask tests (no tests here): the packaged v2 sample, a recorded v1
session made from the fake agent's turns (with times, usage and cost), and broken ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from acpwire.cli.fake_agent import TurnConfig, build_turn

SAMPLE = Path(__file__).resolve().parents[2] / "python" / "acpwire" / "data" / "sample-v2.ndjson"
CONFIG = TurnConfig(tokens=6, thoughts=2, tool_calls=3, terminal_bytes=600, plan=False)
SESSION = "sess_0001"
PROMPTS = ["fix the parser", "now add a test"]
# Seconds each recorded turn lasts, from its prompt to its answer.
TURN_SECONDS = [0.25, 0.5]


def recorded_v1(path: Path) -> Path:
    """A recorded v1 session: initialize, session/new, then one turn per prompt, each its
    fake-agent updates (usage_update last, with the session's cumulative cost) and the
    answer with stopReason and token usage."""
    records: list[dict] = []
    t = 0.0

    def add(sender: str, message: dict, step: float = 0.001) -> None:
        nonlocal t
        t = round(t + step, 6)
        records.append({"t": t, "dir": sender, "msg": message})

    add(
        "client",
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
    )
    add("agent", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}})
    add(
        "client",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/w", "mcpServers": []},
        },
    )
    add("agent", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SESSION}})
    for number, (text, seconds) in enumerate(zip(PROMPTS, TURN_SECONDS, strict=True), 1):
        request_id = 1 + number
        add(
            "client",
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "session/prompt",
                "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": text}]},
            },
            step=1.0,
        )
        updates = build_turn(SESSION, number, 1, CONFIG)
        step = round(seconds / (len(updates) + 1), 6)
        for update in updates:
            add(
                "agent",
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": SESSION, "update": update},
                },
                step,
            )
        add(
            "agent",
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {
                    "stopReason": "end_turn",
                    "usage": {
                        "totalTokens": 100 * number,
                        "inputTokens": 70,
                        "outputTokens": 30 * number,
                    },
                },
            },
            seconds - step * len(updates),
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def updates_per_turn() -> int:
    return len(build_turn(SESSION, 1, 1, CONFIG))


def cumulative_cost(turn: int) -> float:
    [usage] = [
        u for u in build_turn(SESSION, turn, 1, CONFIG) if u["sessionUpdate"] == "usage_update"
    ]
    return usage["cost"]["amount"]


def archive(root: Path) -> Path:
    """A directory of traces: the sample, the recorded v1 session, one with a bad line in it,
    one that is no trace at all, and a file the directory search skips."""
    folder = root / "traces"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(SAMPLE, folder / "a-sample.ndjson")
    recorded_v1(folder / "nested" / "b-recorded.ndjson")
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    (folder / "c-bad-line.jsonl").write_bytes(b"".join([*lines[:3], b"{oops\n", *lines[3:]]))
    (folder / "d-garbage.ndjson").write_bytes(b"this is\nno trace\n")
    (folder / "notes.txt").write_text("not a trace")
    return folder
