"""Measure the shape matrix and rewrite it in docs/performance.md.

One workload per layout agents send (``acpwire.cli.bench.workloads.shapes``), reduced by both
acpwire backends and by the naive orjson + dict reducer and msgspec, in interleaved rounds; each
figure is the median of the per-round ratios (a baseline's time ÷ acpwire's). Then the bytes an
opaque payload retains per wire byte, and the time per byte of many sessions ÷ one.

    python benches/scripts/shape_matrix.py [--rounds 7] [--scale 0.5] [--sessions 100000]
        [--print-only]

It prints the block and rewrites it between the ``shape-matrix`` markers; ``--print-only``
leaves the file alone. ``acpwire bench --only shapes`` runs the same measurement.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import acpwire
from acpwire.cli.bench.shapes import run_shapes
from marked_block import rewrite_block

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "docs" / "performance.md"
START = "<!-- shape-matrix: start (benches/scripts/shape_matrix.py writes this) -->"
END = "<!-- shape-matrix: end -->"


def block(report: dict[str, Any], command: str) -> str:
    labels = report["contenders"]
    pairs = list(report["shapes"][0]["ratios"])

    def head(pair: str) -> str:
        mine, base = pair.split("/")
        return f"{mine} vs {labels[base]}"

    out = [
        START,
        "",
        "| shape | " + " | ".join(head(p) for p in pairs) + " |",
        "| --- |" + " --- |" * len(pairs),
    ]
    for row in report["shapes"]:
        cells = [f"{row['ratios'][p]['median']:.2f}×" for p in pairs]
        out.append(f"| {row['shape']} | " + " | ".join(cells) + " |")
    out.append("")
    retained = report.get("retained", {})
    if retained:
        wire = next(iter(retained.values()))["wire"]
        out.append(
            f"Retained bytes ÷ wire bytes of one tool call's {wire / 1e6:.0f} MB `rawOutput`:"
        )
        out.append(
            ", ".join(
                f"{labels.get(k, k)} {r['ratio']:.2f}× ({r['how']})" for k, r in retained.items()
            )
            + "."
        )
        out.append("")
    many = report.get("many_sessions")
    if many:
        figures = ", ".join(
            f"{labels[k]} {many[k]['median']:.2f}×" for k in ("native", "pure") if k in many
        )
        out.append(
            f"Time per byte of {many['sessions']:,} distinct sessions ÷ one session's: {figures}."
        )
        out.append("")
    out += [
        f"Median of per-round ratios, {report['rounds']} interleaved rounds, Python "
        f"{sys.version.split()[0]}, acpwire {acpwire.__version__}; above 1 means acpwire is "
        f"faster. Measured with `{command}`.",
        "",
        END,
    ]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--scale", type=float, default=0.5, help="size of the workloads")
    parser.add_argument(
        "--sessions", type=int, default=100_000, help="distinct sessions against one session"
    )
    parser.add_argument("--print-only", action="store_true", help="write no file")
    args = parser.parse_args()
    if args.rounds < 1 or not args.scale > 0:
        parser.error("--rounds must be at least 1 and --scale above 0")
    if args.sessions < 1:
        parser.error("--sessions must be at least 1")
    report = run_shapes(rounds=args.rounds, scale=args.scale, sessions=args.sessions)
    command = (
        f"python benches/scripts/shape_matrix.py --rounds {args.rounds} --scale {args.scale} "
        f"--sessions {args.sessions}"
    )
    text = block(report, command)
    print(text)
    if report["mismatches"]:
        print("\n".join(report["mismatches"]), file=sys.stderr)
        return 1
    if not args.print_only:
        rewrite_block(TARGET, START, END, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
