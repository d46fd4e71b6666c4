"""Writes the benchmarks' corpora to files for ``cargo bench`` (benches/rust/).

The Rust benches read the same bytes the Python ones generate: the PTY corpus of
``acpwire.workloads.terminal`` and the session traces of ``acpwire.workloads.sessions``, at the
sizes the Python benchmarks use by default. Generating them here keeps one definition of each.

    PYTHONPATH=python python3 benches/scripts/write_corpus.py [--out target/bench-corpus]
        [--scale 1.0]

``cargo bench`` looks in ``target/bench-corpus`` (or ``$ACPWIRE_BENCH_CORPUS_DIR``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from acpwire.workloads.sessions import heavy_terminal, mixed_sessions, token_stream
from acpwire.workloads.terminal import terminal_corpus

ROOT = Path(__file__).resolve().parents[2]


def corpora(scale: float) -> dict[str, bytes]:
    """Each file's name and bytes: the Python benchmarks' defaults, times ``scale``."""
    return {
        "terminal.bin": terminal_corpus(int(10_000_000 * scale)),
        "sessions-tokens.ndjson": token_stream(n=int(100_000 * scale)),
        "sessions-terminal.ndjson": heavy_terminal(size_bytes=int(32e6 * scale)),
        "sessions-mixed.ndjson": mixed_sessions(updates=int(50_000 * scale)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "bench-corpus")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    if args.scale <= 0:
        parser.error("--scale must be positive")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in corpora(args.scale).items():
        (args.out / name).write_bytes(data)
        print(f"{args.out / name}: {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
