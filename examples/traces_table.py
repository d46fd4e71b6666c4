"""Summarise a directory of ACP traces as one table with a row per session: turns, messages,
tool calls and how they ended, terminal output, usage and errors.

    python examples/traces_table.py DIR [--json]

Each ``*.ndjson`` / ``*.jsonl`` file under DIR, plain or recorded by ``acpwire record``, is
reduced by :func:`acpwire.replay`; the table is read from each session's snapshot.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import acpwire
from acpwire.types import SessionSnapshot

COLUMNS = [
    "trace",
    "session",
    "state",
    "stop",
    "turns",
    "messages",
    "tool calls",
    "terminal bytes",
    "errors",
]


def session_row(trace: str, snapshot: SessionSnapshot) -> dict[str, Any]:
    statuses = Counter(str(c.get("status", "pending")) for c in snapshot["toolCalls"].values())
    return {
        "trace": trace,
        "session": snapshot["sessionId"],
        "state": snapshot["state"],
        "stop": snapshot["stopReason"],
        "turns": len(snapshot["turns"]),
        "messages": Counter(m["role"] for m in snapshot["messages"]),
        "tool calls": statuses,
        "terminal bytes": sum(t["bytes"] for t in snapshot["terminals"].values()),
        "errors": len(snapshot["errors"]),
    }


def table(directory: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(p for p in directory.rglob("*") if p.suffix in (".ndjson", ".jsonl")):
        store = acpwire.replay(path)
        for session_id in store.ids():
            rows.append(session_row(str(path.relative_to(directory)), store[session_id].snapshot()))
    return rows


def cell(value: Any) -> str:
    if isinstance(value, Counter):
        return " ".join(f"{key}:{count}" for key, count in sorted(value.items())) or "-"
    return "-" if value is None else str(value)


def render(rows: list[dict[str, Any]]) -> str:
    cells = [COLUMNS] + [[cell(row[column]) for column in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="One row per session of a directory of traces.")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = table(args.directory)
    print(json.dumps(rows, indent=1) if args.json else render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
