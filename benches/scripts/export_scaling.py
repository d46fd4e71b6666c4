"""``acpwire export`` with 2 workers against 1, in the same run, and what a worker holds.

A plain script (not collected by pytest), a minute or two on 2 cores::

    PYTHONPATH=python python benches/scripts/export_scaling.py [--traces 1000] [--rounds 3]

* scaling: ``--traces`` small v2 traces (one fake-agent turn each, a few tens of KiB) are
  exported with ``--jobs 1`` (in this process) and ``--jobs 2`` (a pool of two workers, its
  start-up included), alternating, ``--rounds`` times each; the figure is the median of the
  per-round ratios of the 2-worker time to the 1-worker time (the goal: at most 0.6).
* memory: the same archive plus one large trace (``--big-mb`` MiB of agent text) is exported
  with 2 workers while the workers' peak resident memory (``VmHWM``) is read from ``/proc``;
  it is set beside the peak of a fresh process that reduces the large trace alone, and beside
  the worker peak for an archive of twice the traces. A worker reduces one trace at a time
  (small ones in tasks of up to 1 MiB of files), so its peak follows the largest trace, not
  the archive. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from acpwire import dumps
from acpwire.cli.export import export_traces
from acpwire.cli.fake_agent import TurnConfig, build_turn


def write_trace(path: Path, index: int, config: TurnConfig) -> None:
    session = f"sess_{index:06d}"
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}},
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": session}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]},
        },
        {"jsonrpc": "2.0", "id": 2, "result": {"messageId": "msg_u_0001"}},
    ]
    updates = build_turn(session, 1, 2, config)
    updates.append({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
    lines += [
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session, "update": u},
        }
        for u in updates
    ]
    path.write_bytes(b"".join(dumps(line) for line in lines))


def write_big(path: Path, megabytes: int) -> None:
    session = "sess_big"
    word = {"type": "text", "text": "x" * 1000}
    with open(path, "wb") as fp:
        fp.write(dumps({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": session}}))
        chunk = dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": session,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "messageId": "msg_big",
                        "content": word,
                    },
                },
            }
        )
        fp.write(chunk * (megabytes * 2**20 // len(chunk)))


def worker_peak(run) -> tuple[float, int]:
    """Seconds ``run()`` took, and the largest VmHWM of any process under this one meanwhile."""
    me = os.getpid()
    peaks: dict[int, int] = {}
    done = threading.Event()

    def descendants() -> list[int]:
        parents: dict[int, int] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as fp:
                        parents[int(name)] = int(fp.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    pass
        found, frontier = [], [me]
        while frontier:
            parent = frontier.pop()
            children = [p for p, pp in parents.items() if pp == parent]
            found += children
            frontier += children
        return found

    def watch() -> None:
        while not done.is_set():
            for pid in descendants():
                try:
                    with open(f"/proc/{pid}/status") as fp:
                        for line in fp:
                            if line.startswith("VmHWM:"):
                                peaks[pid] = max(peaks.get(pid, 0), int(line.split()[1]) * 1024)
                except OSError:
                    pass
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.perf_counter()
    try:
        run()
    finally:
        done.set()
        watcher.join()
    return time.perf_counter() - start, max(peaks.values(), default=0)


def alone_peak(path: Path) -> int:
    """Peak RSS of a fresh process that reduces ``path`` alone (the same reducer)."""
    code = (
        "import resource, sys\n"
        "from acpwire.cli.export import reduce_trace\n"
        "reduce_trace(sys.argv[1])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--big-mb", type=int, default=64)
    args = parser.parse_args()
    config = TurnConfig(tokens=120, thoughts=10, tool_calls=3, terminal_bytes=4096)
    with tempfile.TemporaryDirectory(prefix="acpwire-export-") as tmp:
        root = Path(tmp)
        small = root / "small"
        small.mkdir()
        for i in range(args.traces):
            write_trace(small / f"t{i:06d}.ndjson", i, config)
        size = sum(p.stat().st_size for p in small.iterdir())
        print(f"{args.traces} traces, {size / 2**20:.1f} MiB in all; {os.cpu_count()} CPUs")
        if hasattr(os, "getloadavg"):
            # Two workers need two idle cores: on a machine already busy the ratio says little.
            print(f"load average before: {os.getloadavg()[0]:.1f}")
        ratios = []
        for round_ in range(args.rounds):
            times = {}
            # Alternating which goes first, so a drift of the machine hits both alike.
            cpu = {}
            for jobs in (1, 2) if round_ % 2 == 0 else (2, 1):
                start, cpu_start = time.perf_counter(), time.process_time()
                export_traces([str(small)], root / f"out-{jobs}", jobs=jobs)
                times[jobs] = time.perf_counter() - start
                cpu[jobs] = time.process_time() - cpu_start
            ratios.append(times[2] / times[1])
            # With 1 worker this process does all the work: CPU/wall below 1 means the machine
            # gave it less than a core. With 2, its CPU is the writer's, the serial part.
            print(
                f"round {round_ + 1}: 1 worker {times[1]:.2f} s (CPU {cpu[1]:.2f} s), "
                f"2 workers {times[2]:.2f} s (writer CPU {cpu[2]:.2f} s), "
                f"ratio {ratios[-1]:.2f}"
            )
        print(f"2 workers / 1 worker, median of {args.rounds}: {statistics.median(ratios):.2f}")
        if hasattr(os, "getloadavg"):
            print(f"load average after: {os.getloadavg()[0]:.1f}")

        if not os.path.isdir("/proc"):
            print("memory: needs /proc")
            return
        big = root / "big.ndjson"
        write_big(big, args.big_mb)
        alone = alone_peak(big)
        double = root / "double"
        double.mkdir()
        for i in range(2 * args.traces):
            os.link(small / f"t{i % args.traces:06d}.ndjson", double / f"t{i:06d}.ndjson")
        for name, items in (
            ("archive + big trace", [str(small), str(big)]),
            ("2× archive + big trace", [str(double), str(big)]),
            ("archive alone", [str(small)]),
        ):
            seconds, peak = worker_peak(lambda i=items: export_traces(i, root / "mem", jobs=2))
            print(f"{name}: worker peak {peak / 2**20:.0f} MiB ({seconds:.1f} s)")
        print(f"the big trace ({args.big_mb} MiB) reduced alone: peak {alone / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
