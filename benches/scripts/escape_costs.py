"""What tabs after TBC and EL1 on full rows cost, on both backends, against their benign twins.

Each stream is fed to a fresh ``Terminal`` in 64 KiB pieces, in interleaved rounds (every other
round in reverse order), with no width (a transcript: 8,192 columns) and with 200 columns:

- ``tabs after TBC``: ``ESC[3g`` clears every tab stop, then ``CR HT CBT HT BS`` again and
  again: each tab finds no stop and goes to the last column, each back tab to column 0. Its
  twin is the same bytes with the default stops (a stop every 8 columns).
- ``EL1 on full rows``: rows written to the width, then ``BS`` and ``ESC[1K`` 16 times on each:
  every erase blanks the row up to the cursor, the whole row but its last cell. Its twin
  erases to the end of the row instead (``ESC[0K``: two cells), the same bytes.

For each stream and backend it prints the time against the twin's (what the sequence costs
beyond its bytes), that slowdown's pure ÷ native (how far the backends part on it), and for the
erases the time per erased cell at 8,192 columns ÷ at 200 (about 1: linear in the cells).
Medians of per-round ratios; no absolute speeds.

    python benches/scripts/escape_costs.py [--rounds 7] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from acpwire import _pure

_native: ModuleType | None
try:
    _native = importlib.import_module("acpwire._native")
except ImportError:  # the pure backend alone
    _native = None

PIECE = 64 * 1024
WIDTHS = {8192: None, 200: 200}  # a transcript is 8,192 columns wide
REPEATS = 16


def tabs(n: int, cleared: bool) -> bytes:
    return (b"\x1b[3g" if cleared else b"\x1b[0g") + b"\r\t\x1b[Z\t\b" * n


def erases(width: int, rows: int, mode: bytes) -> bytes:
    return b"".join(
        b"x" * width + (b"\b\x1b[" + mode + b"K") * REPEATS + b"\r\n" for _ in range(rows)
    )


def streams(scale: float) -> dict[tuple[str, int], tuple[bytes, bytes, int]]:
    """(stream, width) -> (bytes, its twin's bytes, cells the costly sequences erase)."""
    out = {}
    n = max(1000, int(200_000 * scale))
    for width in WIDTHS:
        out[("tabs after TBC", width)] = (tabs(n, True), tabs(n, False), 0)
        rows = max(10, int(1_000 * scale * 8192 / width))
        erased = rows * REPEATS * (width - 1)
        out[("EL1 on full rows", width)] = (
            erases(width, rows, b"1"),
            erases(width, rows, b"0"),
            erased,
        )
    return out


def runner(module: Any, data: bytes, cols: int | None) -> Callable[[], str]:
    pieces = [data[at : at + PIECE] for at in range(0, len(data), PIECE)]

    def run() -> str:
        terminal = module.Terminal(cols=cols, rows=24)
        for piece in pieces:
            terminal.feed(piece)
        return str(terminal.text)

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    if args.rounds < 1 or not args.scale > 0:
        parser.error("--rounds must be at least 1 and --scale above 0")
    backends = {"pure": _pure} if _native is None else {"native": _native, "pure": _pure}
    work = streams(args.scale)
    runs: dict[tuple[str, int, str, str], Callable[[], str]] = {}
    for (name, width), (data, twin, _) in work.items():
        for key, module in backends.items():
            runs[(name, width, key, "stream")] = runner(module, data, WIDTHS[width])
            runs[(name, width, key, "twin")] = runner(module, twin, WIDTHS[width])
    for name, width in work:
        for which in ("stream", "twin"):
            shown = {runs[(name, width, key, which)]() for key in backends}
            if len(shown) != 1:
                raise SystemExit(f"{name}, {width} columns: the backends show different text")
    times: dict[tuple[str, int, str, str], list[float]] = {k: [] for k in runs}
    for i in range(args.rounds):
        for run_key in list(runs) if i % 2 == 0 else list(reversed(runs)):
            gc.collect()
            start = time.perf_counter()
            runs[run_key]()
            times[run_key].append(time.perf_counter() - start)

    def median_ratio(a: list[float], b: list[float]) -> float:
        return statistics.median(x / y for x, y in zip(a, b, strict=True))

    print(f"medians of per-round ratios, {args.rounds} interleaved rounds, scale {args.scale}")
    print(f"{'stream':18} {'columns':>7}  {'backend':7} {'÷ twin':>8}  {'per cell ÷ 200 cols':>20}")
    slowdowns: dict[tuple[str, int, str], list[float]] = {}
    for (name, width), (_, _, cells) in work.items():
        for key in backends:
            ours = times[(name, width, key, "stream")]
            twins = times[(name, width, key, "twin")]
            slowdowns[(name, width, key)] = [s / t for s, t in zip(ours, twins, strict=True)]
            linear = ""
            if cells and width != 200:
                narrow = times[(name, 200, key, "stream")]
                narrow_cells = work[(name, 200)][2]
                per_cell = [
                    (s / cells) / (n / narrow_cells) for s, n in zip(ours, narrow, strict=True)
                ]
                linear = f"{statistics.median(per_cell):.2f}"
            slowdown = statistics.median(slowdowns[(name, width, key)])
            print(f"{name:18} {width:>7}  {key:7} {slowdown:>7.2f}×  {linear:>20}")
    if "native" in backends:
        print("\nslowdown against the twin, pure's ÷ native's (within 2× of each other: 0.5 to 2)")
        for name, width in work:
            ratio = median_ratio(
                slowdowns[(name, width, "pure")], slowdowns[(name, width, "native")]
            )
            print(f"  {name:18} {width:>7} columns  {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
