"""Terminal ``text`` beside the machine's own speed, to tell a slow build from a slow machine.

The development machines are shared: for tens of seconds at a time they run everything slower,
by up to about 2×. So that a figure can be read against the speed the machine had when it was
taken, each round times two fixed references just before and just after the benchmark's
work (a fresh native ``Terminal`` fed the 10 MB PTY corpus in 64 KiB pieces, then ``text``):

- ``interp``: a loop of CPython bytecode (integer arithmetic), which stays in the core's caches;
- ``hash``: SHA-256 of a 256 KiB buffer, C code on data that stays in the core's caches.

A round counts as taken at the machine's *nominal* speed when every reference timing around it
is within 15% of that reference's best in the run. Prints ``text`` MB/s (median and best) over
all rounds and over the nominal ones, and how many rounds were nominal.

With ``--build`` it times another build of the extension (a wheel, such as the release's
profile-guided one from `.ci/pgo-wheel`, or a `_native` shared library) in place of the
installed one, loaded as `benches/scripts/ab_builds.py` loads its two.

    python benches/scripts/machine_state.py [ROUNDS] [SLICE_MB] [--build WHEEL]
"""

import argparse
import atexit
import hashlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import acpwire._pure as P
from ab_builds import TERMINAL_CHUNK, load_build, pieces
from acpwire.workloads.terminal import terminal_corpus

NOMINAL_WITHIN = 1.15
HASHED = bytes(range(256)) * 1024

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("rounds", nargs="?", type=int, default=60)
parser.add_argument("slice_mb", nargs="?", type=float, default=10.0, help="corpus size in MB")
parser.add_argument("--build", type=Path, help="a wheel or _native library to time instead")
args = parser.parse_args()
if args.rounds < 1:
    parser.error("ROUNDS must be at least 1")
if args.slice_mb <= 0:
    parser.error("SLICE_MB must be positive")
rounds = args.rounds
size = int(args.slice_mb * 1_000_000)
if args.build is None:
    import acpwire._native as N
else:
    scratch = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    sys.path.insert(0, scratch)
    N = load_build(args.build, "timed_build", Path(scratch))
data = terminal_corpus(size)
chunks = pieces(data, TERMINAL_CHUNK)


def interp() -> int:
    total = 0
    for i in range(100_000):
        total += i * i
    return total


def hashed() -> bytes:
    digest = b""
    for _ in range(8):
        digest = hashlib.sha256(HASHED).digest()
    return digest


def text() -> str:
    terminal = N.Terminal()
    for chunk in chunks:
        terminal.feed(chunk)
    return terminal.text


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


references = {"interp": interp, "hash": hashed}
# Per round: each reference before and after, and the round itself.
taken: list[tuple[dict[str, tuple[float, float]], float]] = []
# A fast wrong answer is not a result: the pure twin must agree on a slice.
head = data[:200_000]
native_head, pure_head = N.Terminal(), P.Terminal()
native_head.feed(head)
pure_head.feed(head)
if native_head.text != pure_head.text:
    sys.exit("native and pure text differ on the corpus's first 200 KB")
text()  # the first round pays for the allocator's first pages
for _ in range(rounds):
    before = {name: timed(work) for name, work in references.items()}
    seconds = timed(text)
    after = {name: timed(work) for name, work in references.items()}
    taken.append(({name: (before[name], after[name]) for name in references}, seconds))

best_reference = {name: min(min(pair[name]) for pair, _ in taken) for name in references}
nominal = [
    seconds
    for pair, seconds in taken
    if all(max(pair[name]) <= NOMINAL_WITHIN * best_reference[name] for name in references)
]


def summary(label: str, times: list[float]) -> str:
    if not times:
        return f"{label}: no rounds"
    median = len(data) / statistics.median(times) / 1e6
    best = len(data) / min(times) / 1e6
    return f"{label}: text {median:,.0f} MB/s median, {best:,.0f} best ({len(times)} rounds)"


print(f"{len(data) / 1e6:.1f} MB of PTY output, {rounds} rounds, build: {N._build}")
for name in references:
    spread = [max(pair[name]) / best_reference[name] for pair, _ in taken]
    print(
        f"reference {name}: best {best_reference[name] * 1e3:.2f} ms,"
        f" rounds up to {max(spread):.2f}x slower (median {statistics.median(spread):.2f}x)"
    )
print(summary("all rounds", [seconds for _, seconds in taken]))
print(summary(f"nominal speed (references within {NOMINAL_WITHIN:.2f}x of best)", nominal))
