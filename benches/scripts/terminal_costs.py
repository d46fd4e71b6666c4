"""What kinds of PTY output the `text` benchmark's time goes to, by taking each away.

A profile of the feed loop is flat: its work is spread over every kind of token. So this times
the benchmark's work (a fresh native ``Terminal`` fed the corpus in 64 KiB pieces, then
``text``) on the corpus and on variants of it, each with one kind of output taken out, in
interleaved rounds:

- ``without SGRs``: every ``ESC[...m`` removed (the text runs either side of one then merge, so
  what goes is the SGR and the run boundary it made);
- ``ASCII only``: each character above U+007F replaced by ``?``, one byte for its two to four.

A variant's time against the corpus's says what that kind of output costs, as far as taking it
out leaves the rest alike: the script checks that each variant's ``text`` is the corpus's (with
those characters as ``?`` for the second), so the rest of the work is the same. Prints each
variant's size, median time and time relative to the corpus.

    python benches/scripts/terminal_costs.py [ROUNDS] [SLICE_MB]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

import acpwire._native as N
from ab_builds import TERMINAL_CHUNK, pieces
from acpwire.workloads.terminal import terminal_corpus

SGR = re.compile(rb"\x1b\[[0-9;:]*m")


def variants(data: bytes) -> dict[str, bytes]:
    return {
        "corpus": data,
        "without SGRs": SGR.sub(b"", data),
        "ASCII only": data.decode("utf-8", "replace").encode("ascii", "replace"),
    }


def work(data: bytes):
    chunks = pieces(data, TERMINAL_CHUNK)

    def run() -> str:
        terminal = N.Terminal()
        for chunk in chunks:
            terminal.feed(chunk)
        return terminal.text

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=15)
    parser.add_argument("slice_mb", nargs="?", type=float, default=10.0, help="corpus size in MB")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("ROUNDS must be at least 1")
    if args.slice_mb <= 0:
        parser.error("SLICE_MB must be positive")
    streams = variants(terminal_corpus(int(args.slice_mb * 1_000_000)))
    runs = {name: work(data) for name, data in streams.items()}
    shown = {name: run() for name, run in runs.items()}
    if shown["without SGRs"] != shown["corpus"]:
        raise SystemExit("the corpus without its SGRs shows other text than the corpus")
    if shown["ASCII only"] != shown["corpus"].encode("ascii", "replace").decode():
        raise SystemExit("the ASCII-only corpus shows other text than the corpus's, as ASCII")
    times: dict[str, list[float]] = {name: [] for name in streams}
    for round_number in range(args.rounds):
        order = list(runs) if round_number % 2 == 0 else list(reversed(runs))
        for name in order:
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["corpus"])
    print(f"{'stream':14} {'MB':>6} {'ms':>8}  time / corpus's (median of {args.rounds} rounds)")
    for name, data in streams.items():
        median = statistics.median(times[name])
        print(f"{name:14} {len(data) / 1e6:6.2f} {median * 1e3:8.2f}  {median / base:.3f}")


if __name__ == "__main__":
    main()
