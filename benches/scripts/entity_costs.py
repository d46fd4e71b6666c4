"""What a session, a tool call and a message cost a store, and many sessions against one.

A plain script (not collected by pytest)::

    PYTHONPATH=python python benches/scripts/entity_costs.py [--count 200000] [--rounds 5]
        [--write]

* memory: for each kind, a fresh process feeds ``--count`` of it to a store without a budget
  (``max_bytes=None``) and prints the resident memory grown per entity, with the changes taken
  as a live client takes them and left pending. The figures include what each entity carries
  (a few short fields, a five-letter chunk).
* time: 100,000 chunks to 100,000 new sessions against the same chunks to one session, in
  stores without a budget, fed alternately ``--rounds`` times; the figure is the median of
  the per-round ratios of time (the aim: at most 2).

``--write`` measures the memory on both backends and rewrites the table in
docs/performance.md (between its ``entity-costs`` markers) instead.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

KINDS = ("empty_sessions", "sessions", "tool_calls", "messages")

CHILD = r"""
import sys
import acpwire

kind, take, count = sys.argv[1], sys.argv[2] == "taken", int(sys.argv[3])


def rss():
    with open("/proc/self/status") as fp:
        for line in fp:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("VmRSS")


def frame(i):
    if kind == "empty_sessions":
        update, sid = b'{"sessionUpdate":"session_info_update"}', b"sess_%07d" % i
    elif kind == "sessions":
        update = b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}'
        sid = b"sess_%07d" % i
    elif kind == "tool_calls":
        update = (b'{"sessionUpdate":"tool_call","toolCallId":"call_%07d","title":"Read file",'
                  b'"kind":"read","status":"completed"}' % i)
        sid = b"s"
    else:
        update = (b'{"sessionUpdate":"agent_message_chunk","messageId":"m%07d",'
                  b'"content":{"type":"text","text":"hello"}}' % i)
        sid = b"s"
    return (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + sid
            + b'","update":' + update + b"}}\n")


store = acpwire.Sessions(max_bytes=None)
base = rss()
buffer = bytearray()
for i in range(count):
    buffer += frame(i)
    if len(buffer) > 1 << 20:
        store.feed(bytes(buffer))
        buffer.clear()
        if take:
            store.changes()
store.feed(bytes(buffer))
if take:
    store.changes()
print((rss() - base) / count)
"""


def chunks(sessions: int, count: int) -> bytes:
    out = bytearray()
    for i in range(count):
        sid = b"sess_%07d" % (i % sessions)
        out += (
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + sid + b'",'
            b'"update":{"sessionUpdate":"agent_message_chunk","messageId":"m1",'
            b'"content":{"type":"text","text":"hello world, some text"}}}}\n'
        )
    return bytes(out)


ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "docs" / "performance.md"
START = "<!-- entity-costs: start (benches/scripts/entity_costs.py --write writes this) -->"
END = "<!-- entity-costs: end -->"
NAMES = {
    "empty_sessions": "a session with no entity",
    "sessions": "a session with one message",
    "tool_calls": "a tool call",
    "messages": "a message",
}


def memory(backend: str, count: int) -> dict[str, tuple[float, float]]:
    """Resident bytes per entity of each kind, changes taken and pending, on ``backend``."""
    out = {}
    for kind in KINDS:
        figures = []
        for take in ("taken", "pending"):
            done = subprocess.run(
                [sys.executable, "-c", CHILD, kind, take, str(count)],
                capture_output=True,
                text=True,
                check=True,
                env={"PYTHONPATH": str(ROOT / "python"), "ACPWIRE_BACKEND": backend},
            )
            figures.append(float(done.stdout))
        out[kind] = (figures[0], figures[1])
    return out


def many_to_one(rounds: int) -> float:
    """Time per byte of 100,000 chunks to 100,000 new sessions ÷ to one session (median)."""
    import acpwire

    one, many = chunks(1, 100_000), chunks(100_000, 100_000)
    ratios = []
    for _ in range(rounds):
        start = time.perf_counter()
        acpwire.Sessions(max_bytes=None).feed(one)
        middle = time.perf_counter()
        acpwire.Sessions(max_bytes=None).feed(many)
        end = time.perf_counter()
        ratios.append((end - middle) / (middle - start))
    return statistics.median(ratios)


def block(figures: dict[str, dict[str, tuple[float, float]]], count: int) -> str:
    backends = list(figures)
    head = " | ".join(f"{b}, changes taken | {b}, pending" for b in backends)
    lines = [START, "", f"| entity | {head} |", "| --- |" + " --- |" * (2 * len(backends))]
    for kind in KINDS:
        cells = " | ".join(
            f"{figures[b][kind][0]:,.0f} | {figures[b][kind][1]:,.0f}" for b in backends
        )
        lines.append(f"| {NAMES[kind]} | {cells} |")
    lines += [
        "",
        f"Bytes of resident memory grown per entity, {count:,} of each in a fresh process, in a"
        " store without a budget, each with a few short fields or a five-letter chunk."
        " Measured with `python benches/scripts/entity_costs.py --write`.",
        "",
        END,
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--write", action="store_true", help="both backends' memory, rewritten in the docs"
    )
    args = parser.parse_args()
    import acpwire

    if args.write:
        from marked_block import rewrite_block

        figures = {b: memory(b, args.count) for b in ("native", "pure")}
        text = block(figures, args.count)
        print(text)
        rewrite_block(TARGET, START, END, text)
        return
    print(f"backend {acpwire.BACKEND}; bytes of resident memory per entity")
    for kind, (taken, pending) in memory(acpwire.BACKEND, args.count).items():
        print(f"{kind:15} changes taken {taken:6.0f}   changes pending {pending:6.0f}")
    ratio = many_to_one(args.rounds)
    print(f"100,000 sessions / one session, time per byte: {ratio:.2f}")


if __name__ == "__main__":
    main()
