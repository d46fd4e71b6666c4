"""Write starting inputs for the fuzz targets into fuzz/corpus/<target>/ (python fuzz/seeds.py).

The inputs come from the package's own workload generators and sample trace, each prefixed
with the header bytes its target reads (sizes and cut lengths), so that the fuzzers start
from realistic ACP traffic and terminal output rather than from nothing.
"""

import base64
import random
from pathlib import Path

from acpwire.workloads.sessions import heavy_terminal, mixed_sessions, token_stream
from acpwire.workloads.terminal import terminal_corpus

ROOT = Path(__file__).resolve().parent
SAMPLE = ROOT.parent / "python" / "acpwire" / "data" / "sample-v2.ndjson"


def lines_of(data: bytes, count: int, rng: random.Random) -> list[bytes]:
    """Windows of `count` consecutive lines of `data`."""
    lines = data.splitlines(keepends=True)
    out = []
    for _ in range(max(1, len(lines) // count)):
        start = rng.randrange(max(1, len(lines) - count))
        out.append(b"".join(lines[start : start + count]))
    return out


def write(target: str, inputs: list[bytes]) -> None:
    folder = ROOT / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(inputs):
        (folder / f"seed-{i:03d}").write_bytes(data)


def main() -> None:
    rng = random.Random(0)
    traces = [
        SAMPLE.read_bytes(),
        *lines_of(mixed_sessions(sessions=3, updates=400), 25, rng),
        *lines_of(mixed_sessions(sessions=2, updates=300, version=1, seed=1), 25, rng),
        *lines_of(token_stream(n=60), 20, rng),
        *lines_of(heavy_terminal(size_bytes=20_000, chunk_bytes=300), 6, rng),
    ]
    write("sessions", [bytes([rng.randrange(256), rng.randrange(8)]) + t for t in traces])
    write("framing", [bytes([rng.randrange(256), 0]) + t[:2000] for t in traces[:20]])
    pty = terminal_corpus(200_000)
    pieces = [pty[i : i + 1500] for i in range(0, len(pty), 1500)][:60]
    write(
        "terminal",
        [bytes([rng.choice([0, 20, 64]), 5, 10, 40, 3, 7, 100, 250]) + p for p in pieces],
    )
    write("base64", [base64.b64encode(p[:300]) for p in pieces[:30]])
    # The differential fuzzer reads its choices from the input itself: the traces and
    # terminal output as they are.
    write("differential", [t[:4000] for t in traces] + pieces[:40])


if __name__ == "__main__":
    main()
