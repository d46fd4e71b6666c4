"""The cost of taking ``spans()`` of a fed terminal, and of freeing what it returned.

Feeds the benchmarks' PTY corpus (``terminal_corpus``, 10 MB by default) to a native
``Terminal`` once, then times 15 calls to ``spans()`` and the release of each result; prints
the medians and how many runs and distinct spans the view holds.

    python benches/scripts/spans_view.py [MB]
"""

import statistics
import sys
import time

import acpwire._native as N
from acpwire.workloads.terminal import terminal_corpus

CHUNK = 64 * 1024

size = int(float(sys.argv[1]) * 1_000_000) if len(sys.argv) > 1 else 10_000_000
data = terminal_corpus(size)
terminal = N.Terminal()
for i in range(0, len(data), CHUNK):
    terminal.feed(data[i : i + CHUNK])

make, free = [], []
for _ in range(15):
    start = time.perf_counter()
    spans = terminal.spans()
    made = time.perf_counter()
    runs = sum(map(len, spans))
    distinct = len({id(span) for row in spans for span in row})
    freeing = time.perf_counter()
    del spans
    make.append(made - start)
    free.append(time.perf_counter() - freeing)
print(f"{len(data) / 1e6:.1f} MB fed; spans() of {runs:,} runs, {distinct:,} objects")
made_ms, free_ms = statistics.median(make) * 1e3, statistics.median(free) * 1e3
print(f"make {made_ms:.2f} ms median, free {free_ms:.2f} ms")
