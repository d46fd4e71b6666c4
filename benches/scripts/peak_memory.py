"""Peak memory of reducing a large heavy-terminal trace: retained state plus a small margin.

Writes a trace of about --gb GiB (terminal output chunks of one long-running command) to a
temporary file, then reduces it with ``acpwire.replay`` in a fresh process and reports the peak
resident memory (``VmHWM``) above the interpreter's baseline, next to the retained state: the
resident memory still held once the replay is done (the terminal's grid and scrollback, capped
by ``scrollback`` and ``max_bytes``). The goal is peak <= retained state + 64 MB.

    python benches/scripts/peak_memory.py --gb 1
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import os, resource, sys, time
import acpwire


def status_kb(field):
    # VmHWM belongs to this process image; ru_maxrss would also count the parent's memory
    # inherited across fork + exec on Linux.
    try:
        with open("/proc/self/status") as fp:
            for line in fp:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


base = status_kb("VmRSS")
start = time.perf_counter()
store = acpwire.replay(sys.argv[1])
seconds = time.perf_counter() - start
peak = status_kb("VmHWM")
after = status_kb("VmRSS")
[sid] = store.ids()
snap = store[sid].snapshot()
retained = sum(len(t["text"].encode()) for t in snap["terminals"].values())
print(base, peak, after, seconds, retained, len(snap["terminals"]), acpwire.BACKEND)
"""


def write_trace(path: str, target: int) -> int:
    from acpwire.workloads.sessions import heavy_terminal

    piece = heavy_terminal(size_bytes=32_000_000, seed=1)
    lines = piece.splitlines(keepends=True)
    header = [line for line in lines if b"session/update" not in line]
    body = [line for line in lines if b"session/update" in line and b"terminal_update" not in line]
    written = 0
    with open(path, "wb") as fp:
        for line in header + [line for line in lines if b"terminal_update" in line][:1]:
            fp.write(line)
        block = b"".join(body)
        while written < target:
            fp.write(block)
            written += len(block)
    return os.path.getsize(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "heavy.ndjson")
        size = write_trace(path, int(args.gb * 2**30))
        out = subprocess.run(
            [sys.executable, "-c", CHILD, path], capture_output=True, text=True, check=True
        ).stdout.split()
    base_kb, peak_kb, after_kb, seconds, retained, terminals, backend = out
    growth = (int(peak_kb) - int(base_kb)) / 1024
    state = (int(after_kb) - int(base_kb)) / 1024
    print(
        f"{backend}: {size / 2**20:,.0f} MiB trace reduced in {float(seconds):.1f} s "
        f"({size / float(seconds) / 1e6:,.0f} MB/s); resident memory before "
        f"{int(base_kb) / 1024:,.1f} MiB, peak {int(peak_kb) / 1024:,.1f} MiB "
        f"(+{growth:,.1f} MiB); retained state (resident after, over before) {state:,.1f} MiB, "
        f"so peak = retained state + {growth - state:,.1f} MiB; retained terminal text "
        f"{int(retained) / 2**20:,.1f} MiB ({terminals} terminal)"
    )


if __name__ == "__main__":
    main()
