"""What ``import acpwire`` costs next to ``import orjson``, measured in the same run.

    python benches/scripts/import_cost.py [--runs 15] [--backend native|pure]

Each run is a fresh interpreter with ``-X importtime``; the two imports alternate run by run, so
a machine that changes speed slows both alike. It prints each module's median cumulative import
time in the unit ``-X importtime`` reports, their ratio, and the heaviest modules ``import
acpwire`` pulled in. The figure that matters is the ratio (at most 1 on the native backend).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections import defaultdict


def import_times(module: str, backend: str) -> dict[str, int]:
    """Cumulative microseconds per module imported by ``import module``, from -X importtime."""
    env = {**os.environ, "ACPWIRE_BACKEND": backend}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    times = {}
    started = False  # what `site` imports at start-up is no part of the command's import
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        if started:
            times[name.strip()] = int(cumulative)
        started = started or name == " site"
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--backend", choices=["native", "pure"], default="native")
    args = parser.parse_args(argv)
    totals: dict[str, list[int]] = defaultdict(list)
    pulled: dict[str, list[int]] = defaultdict(list)
    for i in range(args.runs):
        for module in ("acpwire", "orjson")[:: 1 if i % 2 else -1]:
            times = import_times(module, args.backend)
            totals[module].append(times[module])
            if module == "acpwire":
                for name, cumulative in times.items():
                    pulled[name].append(cumulative)
    ours, theirs = (statistics.median(totals[m]) for m in ("acpwire", "orjson"))
    print(f"import acpwire ({args.backend}): {ours:.0f} us median of {args.runs}")
    print(f"import orjson: {theirs:.0f} us median of {args.runs}")
    print(f"ratio acpwire / orjson: {ours / theirs:.2f}")
    heaviest = sorted(pulled.items(), key=lambda item: -statistics.median(item[1]))[1:8]
    print("heaviest modules under import acpwire:")
    for name, cumulative in heaviest:
        print(f"  {name}: {statistics.median(cumulative):.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
