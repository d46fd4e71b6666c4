"""``acpwire bench --only shapes``: the shape matrix, acpwire against the naive reducers.

Each shape (``workloads/shapes.py``) is reduced by every contender in the same round, the order
reversed every other round so that no contender always finds the bytes warm; a round's ratio is
a baseline's time ÷ an acpwire backend's on the same bytes, and the figure is the median of the
per-round ratios with their interquartile range. acpwire gets the bytes in 64 KiB pieces, as a
stream reader hands them over; the baselines split lines themselves, as their timed work.

Two more measures: the bytes an opaque payload retains per wire byte (in a subprocess, so that
nothing else the process holds counts: ``tracemalloc`` for the pure backend and the dict
reducer, RSS growth for native), and the time per byte of many distinct sessions ÷ one.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text

from . import baselines
from .workloads.shapes import many_sessions, shape_matrix

__all__ = ["PIECE", "retained_ratio", "run_shapes", "shapes_text", "spread"]

PIECE = 64 * 1024
ACPWIRE = ("native", "pure")


def spread(values: list[float]) -> tuple[float, float, float]:
    """(median, first quartile, third quartile); one value is its own quartiles."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return statistics.median(values), q1, q3


def _modules() -> dict[str, Any]:
    from ... import _pure

    found: dict[str, Any] = {}
    try:
        from ... import _native

        found["native"] = _native
    except ImportError:
        pass
    found["pure"] = _pure
    return found


def _acpwire_runner(module: Any, end_to_end: bool) -> Callable[[list[bytes]], Any]:
    def run(pieces: list[bytes]) -> Any:
        store = module.Sessions()
        for piece in pieces:
            store.feed(piece)
        store.finish()
        if end_to_end:
            for session_id in store.ids():
                store[session_id].snapshot()
        return store

    return run


def _baseline_runner(cls: type, end_to_end: bool) -> Callable[[bytes], Any]:
    def run(data: bytes) -> Any:
        reducer = cls()
        reducer.feed_lines(data.split(b"\n"))
        if end_to_end:
            reducer.message_texts()  # what it has of a snapshot: every message's text
        return reducer

    return run


def _contenders(selected: set[str] | None) -> dict[str, tuple[str, type | Any]]:
    """key -> (label, module or baseline class), in the order they run."""
    found: dict[str, tuple[str, Any]] = {}
    for key, module in _modules().items():
        found[key] = (f"acpwire {key}", module)
    for key, cls in baselines.available().items():
        if key in ("dict", "msgspec"):  # the reducers; the SDK and pyte do other work
            found[key] = (str(getattr(cls, "name", key)), cls)
    if selected:
        found = {k: v for k, v in found.items() if k in selected}
    return found


def _digest(store: Any) -> str:
    from .harness import snapshot_digest

    return snapshot_digest(store)


def run_shapes(
    *,
    rounds: int = 7,
    scale: float = 1.0,
    contenders: set[str] | None = None,
    memory: bool = True,
    sessions: int | None = None,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> dict[str, Any]:
    """Run the matrix; return a JSON-serializable report (what ``--json`` writes)."""
    chosen = _contenders(contenders)
    ours = [k for k in chosen if k in ACPWIRE]
    theirs = [k for k in chosen if k not in ACPWIRE]
    if not ours or not theirs:
        raise ValueError(
            "the shape matrix needs an acpwire backend (native, pure) "
            "and a baseline (dict, msgspec)"
        )
    size = max(50_000, int(2_000_000 * scale))
    log(f"generating the shape matrix, about {size:,} bytes a shape ...")
    matrix = shape_matrix(size)
    times: dict[tuple[str, str], list[float]] = {}
    finals: dict[tuple[str, str], Any] = {}
    for i in range(rounds):
        log(f"round {i + 1}/{rounds}")
        for shape, (data, end_to_end) in matrix.items():
            pieces = [data[at : at + PIECE] for at in range(0, len(data), PIECE)]
            order = list(chosen) if i % 2 == 0 else list(reversed(chosen))
            for key in order:
                _, impl = chosen[key]
                run: Callable[[Any], Any]
                arg: Any
                if key in ACPWIRE:
                    run, arg = _acpwire_runner(impl, end_to_end), pieces
                else:
                    run, arg = _baseline_runner(impl, end_to_end), data
                gc.collect()
                start = time.perf_counter()
                outcome = run(arg)
                times.setdefault((shape, key), []).append(time.perf_counter() - start)
                if i == 0:
                    finals[(shape, key)] = outcome
                del outcome
    rows = []
    mismatches = []
    for shape, (data, end_to_end) in matrix.items():
        ratios: dict[str, dict[str, Any]] = {}
        for mine in ours:
            for base in theirs:
                per_round = [
                    t / m for t, m in zip(times[(shape, base)], times[(shape, mine)], strict=True)
                ]
                median, q1, q3 = spread(per_round)
                ratios[f"{mine}/{base}"] = {
                    "median": median,
                    "q1": q1,
                    "q3": q3,
                    "min": min(per_round),
                    "max": max(per_round),
                    "per_round": per_round,
                }
        digests = {k: _digest(finals[(shape, k)]) for k in ours}
        if len(set(digests.values())) > 1:
            mismatches.append(f"{shape}: native and pure disagree on the final state")
        rows.append(
            {
                "shape": shape,
                "bytes": len(data),
                "end_to_end": end_to_end,
                "ratios": ratios,
                "check": next(iter(digests.values())),
            }
        )
    report: dict[str, Any] = {
        "kind": "shapes",
        "rounds": rounds,
        "contenders": {k: label for k, (label, _) in chosen.items()},
        "shapes": rows,
        "mismatches": mismatches,
    }
    if memory:
        payload = max(1_000_000, int(28_000_000 * scale))
        log(f"retained bytes of a {payload:,}-byte rawOutput ...")
        report["retained"] = {
            key: retained_ratio(key, payload) for key in [*ours, *theirs] if key != "msgspec"
        }
        if sessions is None:
            sessions = max(1000, int(100_000 * scale))
        log(f"{sessions:,} sessions against one ...")
        report["many_sessions"] = {
            "sessions": sessions,
            **{key: _many_vs_one(chosen[key][1], sessions, rounds) for key in ours},
        }
    return report


def _many_vs_one(module: Any, sessions: int, rounds: int) -> dict[str, float]:
    """Time per byte of ``sessions`` distinct sessions ÷ that of one session, per round."""
    many = many_sessions(sessions, chunks_each=2)
    one = many_sessions(1, chunks_each=2 * sessions)
    inputs = {
        name: [data[at : at + PIECE] for at in range(0, len(data), PIECE)]
        for name, data in (("many", many), ("one", one))
    }
    run = _acpwire_runner(module, end_to_end=False)
    ratios = []
    for i in range(rounds):
        seconds: dict[str, float] = {}
        for name in ("many", "one") if i % 2 == 0 else ("one", "many"):
            gc.collect()
            start = time.perf_counter()
            run(inputs[name])
            seconds[name] = time.perf_counter() - start
        ratios.append((seconds["many"] / len(many)) / (seconds["one"] / len(one)))
    median, q1, q3 = spread(ratios)
    return {"median": median, "q1": q1, "q3": q3}


_RETAINED = r"""
import ctypes, gc, json, sys, tracemalloc
from acpwire.cli.bench.workloads.shapes import opaque_payload
key, size, piece = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = opaque_payload(size)
pieces = [data[at : at + piece] for at in range(0, len(data), piece)]
try:
    trim = ctypes.CDLL("libc.so.6").malloc_trim
except OSError:
    trim = lambda _: 0
def rss():
    gc.collect(); trim(0)
    with open("/proc/self/statm") as fp:
        return int(fp.read().split()[1]) * 4096
if key == "native":
    from acpwire import _native as module
elif key == "pure":
    from acpwire import _pure as module
else:
    from acpwire.cli.bench import baselines
    reducer = baselines.available()[key]()
traced = key != "native"
if traced:
    tracemalloc.start()
before = tracemalloc.get_traced_memory()[0] if traced else rss()
if key in ("native", "pure"):
    store = module.Sessions()
    for p in pieces:
        store.feed(p)
    store.finish()
else:
    reducer.feed_lines(data.split(b"\n"))
gc.collect()
after = tracemalloc.get_traced_memory()[0] if traced else rss()
print(json.dumps({"retained": after - before, "wire": len(data)}))
"""


def retained_ratio(key: str, size: int) -> dict[str, Any]:
    """Bytes one tool call's ``rawOutput`` of about ``size`` bytes leaves retained ÷ its wire
    bytes, measured in a fresh interpreter (tracemalloc, or RSS growth for native)."""
    # The child imports this very package, wherever it was imported from.
    root = str(Path(__file__).resolve().parents[3])
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}
    done = subprocess.run(
        [sys.executable, "-c", _RETAINED, key, str(size), str(PIECE)],
        capture_output=True,
        check=True,
        env=env,
    )
    found = json.loads(done.stdout)
    how = "RSS growth" if key == "native" else "tracemalloc"
    return {"ratio": found["retained"] / found["wire"], "wire": found["wire"], "how": how}


def ratio_style(ratio: float) -> str:
    """Green where acpwire is faster, red where it is slower."""
    return "green" if ratio >= 1 else "red"


def shapes_text(report: dict[str, Any]) -> Text:
    """The matrix as aligned text, styled for a terminal (``.plain`` for the bare text)."""
    out = Text()
    pairs = list(report["shapes"][0]["ratios"]) if report["shapes"] else []
    labels = report["contenders"]
    out.append(
        f"shape matrix: a baseline's time ÷ acpwire's on the same bytes, median of "
        f"{report['rounds']} interleaved rounds (interquartile range); "
        "above 1: acpwire is faster\n",
        style="bold",
    )
    for pair in pairs:
        mine, base = pair.split("/")
        out.append(f"  {pair}: {labels[base]} ÷ {labels[mine]}\n", style="dim")
    width = max(len(row["shape"]) for row in report["shapes"]) + 2
    out.append(f"\n  {'shape':<{width}}", style="bold")
    for pair in pairs:
        out.append(f"{pair:>24}", style="bold")
    out.append("\n")
    for row in report["shapes"]:
        out.append(f"  {row['shape']:<{width}}")
        for pair in pairs:
            cell = row["ratios"][pair]
            figure = f"{cell['median']:.2f}×"
            band = f" ({cell['q1']:.2f}–{cell['q3']:.2f})"
            out.append(f"{figure:>{24 - len(band)}}", style=ratio_style(cell["median"]))
            out.append(band, style="dim")
        out.append("\n")
    retained = report.get("retained")
    if retained:
        out.append("\nopaque payload retained ÷ its wire bytes (one rawOutput, ", style="bold")
        any_row = next(iter(retained.values()))
        out.append(f"{any_row['wire']:,} bytes)\n", style="bold")
        for key, row in retained.items():
            out.append(f"  {labels.get(key, key):<38} {row['ratio']:>6.2f}×  ({row['how']})\n")
    many = report.get("many_sessions")
    if many:
        out.append(
            f"\ntime per byte of {many['sessions']:,} distinct sessions ÷ one session's\n",
            style="bold",
        )
        for key in ACPWIRE:
            if key in many:
                cell = many[key]
                out.append(f"  {labels[key]:<38} {cell['median']:>6.2f}×")
                out.append(f"  ({cell['q1']:.2f}–{cell['q3']:.2f})\n", style="dim")
    if report["mismatches"]:
        out.append("\n!!! ACPWIRE BACKENDS DISAGREE ON THE FINAL STATE:\n", style="bold red")
        for line in report["mismatches"]:
            out.append(f"!!!   {line}\n", style="bold red")
    elif len([k for k in labels if k in ACPWIRE]) > 1:
        out.append("\nnative and pure reached the same final state on every shape\n")
    out.rstrip()
    return out
