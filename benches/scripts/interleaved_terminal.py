"""The terminal's 200x50 screen against pyte's on the same bytes, in interleaved rounds.

Each round renders the same slice of the benchmarks' PTY corpus (``terminal_corpus``) with
acpwire's native ``Terminal(cols=200, rows=50)`` and with a pyte ``Screen(200, 50)`` fed
through a ``ByteStream``, both in 64 KiB pieces, so load on a shared machine hits both alike.
Prints the best and the median MB/s of each and the speed ratio (of the medians, and the
median of the per-round ratios).

    python benches/scripts/interleaved_terminal.py [ROUNDS] [SLICE_MB]
"""

import statistics
import sys
import time

import pyte

import acpwire._native as N
from acpwire.workloads.terminal import terminal_corpus

CHUNK = 64 * 1024
# Native rounds repeat the render to last about as long as a measurable fraction of pyte's.
NATIVE_REPEATS = 50

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
size = int(float(sys.argv[2]) * 1_000_000) if len(sys.argv) > 2 else 1_000_000
data = terminal_corpus(max(size, 1_000_000))[:size]
chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def native() -> list[str]:
    terminal = N.Terminal(cols=200, rows=50)
    for chunk in chunks:
        terminal.feed(chunk)
    return terminal.screen()


def with_pyte() -> list[str]:
    screen = pyte.Screen(200, 50)
    stream = pyte.ByteStream(screen)
    for chunk in chunks:
        stream.feed(chunk)
    return screen.display


def timed(render, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        render()
    return (time.perf_counter() - start) / repeats


seconds: dict[str, list[float]] = {"native": [], "pyte": []}
for _ in range(rounds):
    seconds["native"].append(timed(native, NATIVE_REPEATS))
    seconds["pyte"].append(timed(with_pyte, 1))
print(f"{len(data) / 1e6:.1f} MB of PTY output, screen 200x50, {rounds} interleaved rounds")
for name, times in seconds.items():
    best = len(data) / min(times) / 1e6
    median = len(data) / statistics.median(times) / 1e6
    print(f"{name:7s} best {best:9.2f} MB/s   median {median:9.2f} MB/s")
per_round = [p / n for p, n in zip(seconds["pyte"], seconds["native"], strict=True)]
ratio = statistics.median(seconds["pyte"]) / statistics.median(seconds["native"])
print(f"native / pyte: {ratio:.0f}x (medians), {statistics.median(per_round):.0f}x (per round)")
