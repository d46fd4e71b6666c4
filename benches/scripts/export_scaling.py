"""``acpwire export`` with 2 workers against 1, in the same run, and what a worker holds.

A plain script (not collected by pytest), a minute or two on 2 cores::

    PYTHONPATH=python python benches/scripts/export_scaling.py [--traces 1000] [--rounds 5]

* scaling: ``--traces`` small v2 traces (one fake-agent turn each, a few tens of KiB) are
  exported with ``--jobs 1`` (in this process) and ``--jobs 2`` (a pool of two workers, each
  writing its own part files, its start-up included), in interleaved rounds, ``--rounds``
  times each, after one untimed export of each (pyarrow's import and the pool's forkserver
  are paid once per process, not per export); the figure is the median of the per-round
  ratios of the 2-worker time to the 1-worker time (the goal: at most 0.6). Each run also
  says how many cores the whole machine kept busy meanwhile (``/proc/stat``): with 1 worker
  on an otherwise idle 2-core machine that is about 1, with 2 about 2; more with 1 worker
  means other work was sharing the cores, and then the ratio says more about the machine
  than about the export. With Linux's ``sched_autogroup`` on, the cores are shared between
  sessions first: while another session keeps them busy, this run's processes together get
  about one session's share, so 2 workers cannot beat 1 (the script says so when it is on).
  ``--cli`` times fresh ``python -m acpwire export`` processes instead, interpreter start and
  imports included.
* memory: the same archive plus one large trace (``--big-mb`` MiB of agent text) is exported
  with 2 workers while the workers' peak resident memory (``VmHWM``) is read from ``/proc``;
  it is set beside the peak of a fresh process that exports the large trace alone, and beside
  the worker peak for an archive of twice the traces. A worker reduces one trace at a time
  and writes its rows out every few MiB of traces, so its peak follows the largest trace, not
  the archive. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import os
import resource
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


def _autogroup() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as fp:
            return fp.read().strip() == "1"
    except OSError:
        return False


def busy_cores() -> tuple[float, float]:
    """The machine's busy and total CPU time so far, from ``/proc/stat`` (in ticks)."""
    with open("/proc/stat") as fp:
        fields = [int(v) for v in fp.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def own_cpu() -> float:
    """CPU seconds of this process and of the children it waited for (with ``--cli``, the
    export process and its pool workers, which it waits for in turn)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(run) -> tuple[float, float, float]:
    """Wall seconds ``run()`` took; how many cores the whole machine kept busy meanwhile (this
    run's processes and everyone else's: near 2 on 2 cores means the run had to share them,
    and its times say as much about the machine as about the export); and how many cores
    this run's own processes got (CPU over wall seconds; workers a forkserver started, as in
    process, are not counted)."""
    start, (busy, total), cpu = time.perf_counter(), busy_cores(), own_cpu()
    run()
    seconds = time.perf_counter() - start
    busy_end, total_end = busy_cores()
    machine = (os.cpu_count() or 1) * (busy_end - busy) / max(total_end - total, 1)
    return seconds, machine, (own_cpu() - cpu) / seconds


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


def alone_peak(path: Path, out: Path) -> int:
    """Peak RSS of a fresh process that exports ``path`` alone, in process (the same reducer
    and writer a worker runs): what one trace needs."""
    code = (
        "import resource, sys\n"
        "from acpwire.cli.export import export_traces\n"
        "export_traces([sys.argv[1]], sys.argv[2], jobs=1)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--big-mb", type=int, default=64)
    parser.add_argument("--cli", action="store_true", help="time fresh acpwire processes")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory part")
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
        out = root / "out"

        def export(jobs: int) -> None:
            if args.cli:
                command = [sys.executable, "-m", "acpwire", "export", str(small), "-o", str(out)]
                subprocess.run([*command, "--jobs", str(jobs)], check=True, capture_output=True)
            else:
                export_traces([str(small)], out, jobs=jobs)

        for jobs in (1, 2):
            export(jobs)
        ratios = []
        for round_ in range(args.rounds):
            times, cores, got = {}, {}, {}
            # Alternating which goes first, so that a drift of the machine hits both alike.
            for jobs in (1, 2) if round_ % 2 == 0 else (2, 1):
                times[jobs], cores[jobs], got[jobs] = timed(lambda j=jobs: export(j))
            ratios.append(times[2] / times[1])
            print(
                f"round {round_ + 1}: 1 worker {times[1]:.2f} s, 2 workers {times[2]:.2f} s, "
                f"ratio {ratios[-1]:.2f} (machine busy: {cores[1]:.1f} and {cores[2]:.1f} "
                "cores)"
                + (f", the export got {got[1]:.1f} and {got[2]:.1f} cores" if args.cli else "")
            )
        mode = "fresh processes" if args.cli else "in this process"
        print(
            f"2 workers / 1 worker ({mode}), median of {args.rounds}: "
            f"{statistics.median(ratios):.2f}"
        )
        if hasattr(os, "getloadavg"):
            print(f"load average after: {os.getloadavg()[0]:.1f}")
        if _autogroup():
            # The scheduler shares the cores between sessions first, then between the
            # processes of each: while another session keeps a core busy, this one gets at
            # most its share whatever the number of workers (`--cli` shows what it got).
            print(
                "note: sched_autogroup is on: while other sessions keep the cores busy, this "
                "run's processes together get one session's share, however many workers"
            )

        if args.no_memory:
            return
        if not os.path.isdir("/proc"):
            print("memory: needs /proc")
            return
        big = root / "big.ndjson"
        write_big(big, args.big_mb)
        alone = alone_peak(big, root / "alone")
        double = root / "double"
        double.mkdir()
        for i in range(2 * args.traces):
            os.link(small / f"t{i % args.traces:06d}.ndjson", double / f"t{i:06d}.ndjson")
        peaks = {}
        for name, items in (
            ("archive", [str(small)]),
            ("archive + big trace", [str(small), str(big)]),
            ("2× archive + big trace", [str(double), str(big)]),
        ):
            seconds, peaks[name] = worker_peak(
                lambda i=items: export_traces(i, root / "mem", jobs=2)
            )
            print(f"{name}: worker peak {peaks[name] / 2**20:.0f} MiB ({seconds:.1f} s)")
        print(f"the big trace ({args.big_mb} MiB) exported alone: peak {alone / 2**20:.0f} MiB")
        grown = peaks["2× archive + big trace"] / peaks["archive + big trace"]
        print(
            f"worker peak / big trace alone: {peaks['archive + big trace'] / alone:.2f} "
            f"({args.traces} traces), {peaks['2× archive + big trace'] / alone:.2f} "
            f"({2 * args.traces}); doubling the archive changed it ×{grown:.2f}"
        )


if __name__ == "__main__":
    main()
