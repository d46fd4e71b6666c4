"""Regenerate the performance table of README.md and docs/performance.md.

Every row is a ratio against what a user would otherwise run, measured in one process with the
two contenders interleaved round by round (every other round in reverse order); the figure is
the median of the per-round ratios. Absolute speeds are not printed: on a shared machine they
say more about the machine than about the code.

    python benches/scripts/performance_table.py [--rounds 15] [--scale 0.5] [--print-only]

It prints the table and rewrites it between the ``performance-table`` markers in both files;
``--print-only`` leaves the files alone.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

import acpwire
from acpwire.cli.bench.harness import run_bench
from acpwire.cli.bench.workloads.sessions import mixed_sessions
from acpwire.cli.bench.workloads.terminal import terminal_corpus
from marked_block import rewrite_block

ROOT = Path(__file__).resolve().parents[2]
TARGETS = [ROOT / "README.md", ROOT / "docs" / "performance.md"]
START = "<!-- performance-table: start (benches/scripts/performance_table.py writes this) -->"
END = "<!-- performance-table: end -->"
PIECE = 64 * 1024


def paired(ours: Callable[[], object], theirs: Callable[[], object], rounds: int) -> float:
    """Median over rounds of theirs' time ÷ ours', the two alternating which runs first."""
    ratios = []
    for i in range(rounds):
        times = {}
        for name, run in (("ours", ours), ("theirs", theirs))[:: 1 if i % 2 else -1]:
            gc.collect()
            start = time.perf_counter()
            run()
            times[name] = time.perf_counter() - start
        ratios.append(times["theirs"] / times["ours"])
    return statistics.median(ratios)


def codec_rows(rounds: int, scale: float) -> list[tuple[str, str, float]]:
    data = mixed_sessions(updates=max(1000, int(40_000 * scale)))
    pieces = [data[i : i + PIECE] for i in range(0, len(data), PIECE)]
    lines = [line for line in data.split(b"\n") if line]
    values = [orjson.loads(line) for line in lines]

    def frames(raw: bool) -> Callable[[], object]:
        def run() -> object:
            decoder = acpwire.FrameDecoder(raw=raw)
            for piece in pieces:
                decoder.feed(piece)
            return decoder.finish()

        return run

    loads, dumps = acpwire.loads, acpwire.dumps

    def split_and_loads() -> object:
        return [orjson.loads(x) for x in data.split(b"\n") if x]

    return [
        (
            "framing, raw frames",
            "`bytes.split` of the whole stream",
            paired(frames(True), lambda: data.split(b"\n"), rounds),
        ),
        (
            "framing, decoded (`FrameDecoder`)",
            "`bytes.split` + `orjson.loads`",
            paired(
                frames(False), lambda: [orjson.loads(x) for x in data.split(b"\n") if x], rounds
            ),
        ),
        (
            "`loads`",
            "`orjson.loads`",
            paired(
                lambda: [loads(x) for x in lines], lambda: [orjson.loads(x) for x in lines], rounds
            ),
        ),
        (
            "`dumps`",
            "`orjson.dumps` + newline",
            paired(
                lambda: [dumps(v) for v in values],
                lambda: [orjson.dumps(v) + b"\n" for v in values],
                rounds,
            ),
        ),
    ]


def terminal_rows(rounds: int) -> list[tuple[str, str, float]]:
    try:
        import pyte
    except ImportError:
        return []
    corpus = terminal_corpus(size_bytes=300_000)
    chunks = [corpus[i : i + PIECE] for i in range(0, len(corpus), PIECE)]

    def ours() -> object:
        term = acpwire.Terminal(cols=200, rows=50)
        for chunk in chunks:
            term.feed(chunk)
        return term.screen()

    def theirs() -> object:
        screen = pyte.Screen(200, 50)
        stream = pyte.ByteStream(screen)
        for chunk in chunks:
            stream.feed(chunk)
        return screen.display

    return [("terminal screen, 200×50", "pyte `Screen`", paired(ours, theirs, max(3, rounds // 3)))]


def session_rows(rounds: int, scale: float) -> list[tuple[str, str, float]]:
    report = run_bench(rounds=rounds, scale=scale, progress=False, log=lambda _: None)
    by_key: dict[tuple[str, str], dict] = {}
    for result in report["results"]:
        if not result["excluded"] and result["seconds"]:
            by_key[(result["workload"], result["contender"])] = result

    def per_round(fast: dict, slow: dict) -> float:
        # Rates, not times: a slow contender is timed on a prefix of the workload.
        return statistics.median(
            (fast["bytes"] / f) / (slow["bytes"] / s)
            for f, s in zip(fast["seconds"], slow["seconds"], strict=False)
        )

    rows = []
    for (workload, key), result in by_key.items():
        native = by_key.get((workload, "native"))
        if native is None or key in ("native", "sdk"):
            continue  # the SDK decodes without reducing: not the same work
        if key == "pure":
            dict_reducer = by_key.get((workload, "dict"))
            if dict_reducer is not None:
                rows.append(
                    (
                        f"{workload}: acpwire pure",
                        "orjson + dict reducer (below 1: slower)",
                        per_round(result, dict_reducer),
                    )
                )
            continue
        rows.append((f"{workload}: acpwire native", result["label"], per_round(native, result)))
    return rows


def table(rows: list[tuple[str, str, float]], rounds: int) -> str:
    out = [
        START,
        "",
        "| acpwire | against | ratio |",
        "| --- | --- | --- |",
        *(f"| {what} | {against} | {ratio:.3g}× |" for what, against, ratio in rows),
        "",
        f"Median of per-round ratios, {rounds} interleaved rounds, {acpwire.BACKEND} backend, "
        f"Python {sys.version.split()[0]}; above 1 means acpwire is faster.",
        "",
        END,
    ]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--scale", type=float, default=0.5, help="size of the session workloads")
    parser.add_argument("--print-only", action="store_true", help="write no file")
    args = parser.parse_args()
    rows = codec_rows(args.rounds, args.scale)
    rows += terminal_rows(args.rounds)
    rows += session_rows(args.rounds, args.scale)
    block = table(rows, args.rounds)
    print(block)
    if not args.print_only:
        for path in TARGETS:
            rewrite_block(path, START, END, block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
