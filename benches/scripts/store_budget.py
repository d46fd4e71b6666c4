"""Peak memory of a store under a hostile or runaway agent, against its ``max_bytes`` budget.

Each workload runs in a fresh process per backend: the stream is generated piece by piece
(never held whole) and fed to one ``Sessions`` store in 1 MiB pieces; the figure is the peak
resident memory (``VmHWM``) above the resident memory once the store was made, next to the
store's ``max_bytes``. The goal: peak growth <= ``max_bytes`` + 64 MiB, and the store still
reduces a new session correctly afterwards. Linux only (``/proc``)::

    PYTHONPATH=python python benches/scripts/store_budget.py [--only raw_input,one_message]
        [--max-bytes 268435456] [--backends native,pure] [--scale 1.0]

Workloads (``--scale`` shrinks them for a quick look):

* ``raw_input``: 20 tool calls, each with a 30 MB ``rawInput`` (a list of short log lines).
* ``one_message``: 2 GB of text chunks (1 KiB each) into one agent message.
* ``sessions``: 1,000,000 distinct sessions, one text chunk each.
* ``tool_calls``: 1,000,000 tool calls in one session.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
import acpwire

workload, max_bytes, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
max_bytes = None if max_bytes == "none" else int(max_bytes)
PIECE = 1 << 20


def status_kb(field):
    with open("/proc/self/status") as fp:
        for line in fp:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field)


def update(sid, body):
    return (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'
        + sid.encode()
        + b'","update":'
        + body
        + b"}}\n"
    )


def frames():
    if workload == "raw_input":
        # Each frame in pieces, so that the generator holds no more than a piece of it.
        line = json.dumps({"path": "src/x.rs", "line": 1, "text": "fn main() { \"\\t\" }"})
        count = int(30_000_000 * scale) // (len(line) + 1)
        per_piece = max(1, PIECE // (len(line) + 1))
        for i in range(20):
            yield update("s", b'{"sessionUpdate":"tool_call","toolCallId":"t%d","title":"grep",'
                         b'"rawInput":{"hits":[' % i)[:-3]
            for start in range(0, count, per_piece):
                n = min(per_piece, count - start)
                yield (b"," if start else b"") + ",".join([line] * n).encode()
            yield b"]}}}}\n"
    elif workload == "one_message":
        text = ("x" * 1023 + " ").encode()
        chunk = update("s", b'{"sessionUpdate":"agent_message_chunk","content":'
                            b'{"type":"text","text":"' + text + b'"}}')
        for _ in range(int(2_000_000_000 * scale) // 1024):
            yield chunk
    elif workload == "sessions":
        for i in range(int(1_000_000 * scale)):
            yield update("sess_%07d" % i, b'{"sessionUpdate":"agent_message_chunk","content":'
                                          b'{"type":"text","text":"hello"}}')
    elif workload == "tool_calls":
        for i in range(int(1_000_000 * scale)):
            yield update("s", b'{"sessionUpdate":"tool_call","toolCallId":"call_%07d",'
                              b'"title":"Read file","kind":"read","status":"completed"}' % i)
    else:
        raise SystemExit("unknown workload " + workload)


store = acpwire.Sessions() if max_bytes == -1 else acpwire.Sessions(max_bytes=max_bytes)
base = status_kb("VmRSS")
start = time.perf_counter()
buffer = bytearray()
for frame in frames():
    buffer += frame
    if len(buffer) >= PIECE:
        store.feed(bytes(buffer))
        buffer.clear()
store.feed(bytes(buffer))
store.finish()
seconds = time.perf_counter() - start
peak = status_kb("VmHWM")
# Still usable: a new session reduces as it would in an empty store.
store.feed(update("fresh", b'{"sessionUpdate":"agent_message_chunk","content":'
                           b'{"type":"text","text":"still here"}}'))
usable = store["fresh"].message_text(store["fresh"].snapshot()["messages"][0]["id"], "agent")
print(json.dumps({
    "backend": acpwire.BACKEND, "peak_growth": (peak - base) * 1024, "seconds": seconds,
    "usable": usable == "still here", "sessions": len(store),
    "errors": sorted({e["reason"] for e in store.errors}),
    "evicted": getattr(store, "evicted_sessions", None),
    "retained": getattr(store, "retained_bytes", None),
}))
"""

WORKLOADS = ("raw_input", "one_message", "sessions", "tool_calls")
MIB = 1 << 20


def run(workload: str, backend: str, max_bytes: str, scale: float) -> dict[str, object]:
    env = {"ACPWIRE_BACKEND": backend, "PYTHONPATH": str(Path(__file__).parents[2] / "python")}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, workload, max_bytes, str(scale)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        return {"backend": backend, "error": out.stderr.strip().splitlines()[-1:]}
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--backends", default="native,pure")
    parser.add_argument(
        "--max-bytes",
        default="-1",
        help="the store's max_bytes; -1 (the default): the store's own default",
    )
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    print(f"max_bytes={args.max_bytes}  scale={args.scale}")
    header = f"{'workload':12} {'backend':7} {'peak growth':>12} {'seconds':>8}"
    print(header + "  usable  evicted  errors")
    for workload in args.only.split(","):
        for backend in args.backends.split(","):
            r = run(workload, backend, args.max_bytes, args.scale)
            if "error" in r:
                print(f"{workload:12} {backend:7} error: {r['error']}")
                continue
            growth = int(r["peak_growth"]) / MIB  # type: ignore[call-overload]
            print(
                f"{workload:12} {backend:7} {growth:9.0f} MiB {r['seconds']:8.1f}  "
                f"{r['usable']!s:6}  {r['evicted']!s:7}  {'; '.join(r['errors'])}"  # type: ignore[arg-type]
            )


if __name__ == "__main__":
    main()
