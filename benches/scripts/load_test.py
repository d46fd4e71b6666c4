"""Load test: many concurrent fake agents reduced by Sessions for a fixed time.

Every turn of every agent is checked exactly (update count, answer text, and the snapshot
against the pure backend's reduction of the same bytes); resident memory is sampled. Bounded
in time and count; run it by hand (not collected by pytest):

    python benches/scripts/load_test.py --agents 64 --duration 600 --rate 100
"""

from __future__ import annotations

import argparse
import asyncio
import json

from acpwire.fake_agent import TurnConfig
from acpwire.loadtest import run_agents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=64)
    parser.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    parser.add_argument("--rate", type=float, default=100.0, help="updates/s per agent")
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--no-pure-check", action="store_true")
    args = parser.parse_args()
    config = TurnConfig(tokens=args.tokens, rate=args.rate)
    report = asyncio.run(
        run_agents(
            args.agents,
            duration=args.duration,
            config=config,
            check_pure=not args.no_pure_check,
            sample_every=30.0,
        )
    )
    summary = report.as_dict()
    print(json.dumps(summary, indent=1))
    rss = [mb for _, mb in summary["rss_mb"]]
    print(
        f"{summary['turns']} turns, {summary['updates']:,} updates in {summary['seconds']} s "
        f"({summary['updates_per_s']:,}/s); failures: {len(summary['failures'])}; "
        f"RSS MB first/max/last: {rss[0]}/{max(rss)}/{rss[-1]}"
    )


if __name__ == "__main__":
    main()
