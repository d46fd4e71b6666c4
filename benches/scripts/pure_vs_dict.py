"""The pure backend's ``Sessions`` against the plain orjson + dict reducer, in interleaved rounds.

Times the pure backend feeding a session workload in 1 MiB pieces (as ``acpwire bench`` hands
it) and the dict reducer on the same bytes split into lines, alternating, and prints the median
of each and their ratio (the issue's goal: the pure fallback within 1.5× the dict reducer).

    python benches/scripts/pure_vs_dict.py [tokens|mixed] [ROUNDS] [--without-terminals]
        [--pure-without-gc]

``--without-terminals`` leaves out the workload's terminal updates (the dict reducer decodes
their base64 and emulates nothing); ``--pure-without-gc`` pauses the cycle collector during the
pure runs only. Each shows how much of the gap that part of the pure run accounts for.
"""

import gc
import statistics
import sys
import time

from acpwire import _pure, baselines
from acpwire.bench import stream_pieces
from acpwire.workloads.sessions import mixed_sessions, token_stream

flags = {a for a in sys.argv[1:] if a.startswith("--")}
if unknown := flags - {"--without-terminals", "--pure-without-gc"}:
    sys.exit(f"unknown options: {', '.join(sorted(unknown))}")
positional = [a for a in sys.argv[1:] if not a.startswith("--")]
workload = positional[0] if positional else "mixed"
rounds = int(positional[1]) if len(positional) > 1 else 5
data = token_stream() if workload == "tokens" else mixed_sessions(updates=20_000)
if "--without-terminals" in flags:
    data = b"".join(line + b"\n" for line in data.splitlines() if b'"terminal_' not in line)
pieces = stream_pieces(data)
reducer = baselines.available()["dict"]


def pure() -> None:
    pause = "--pure-without-gc" in flags and gc.isenabled()
    if pause:
        gc.disable()
    try:
        store = _pure.Sessions()
        for piece in pieces:
            store.feed(piece)
        store.finish()
    finally:
        if pause:
            gc.enable()


def with_dicts() -> None:
    reducer().feed_lines(data.split(b"\n"))


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


seconds: dict[str, list[float]] = {"pure": [], "dict": []}
for _ in range(rounds):
    seconds["pure"].append(timed(pure))
    seconds["dict"].append(timed(with_dicts))
pure_s, dict_s = statistics.median(seconds["pure"]), statistics.median(seconds["dict"])
label = " ".join([workload, *sorted(flags)])
print(f"{label}: pure {pure_s * 1e3:.0f} ms, dict reducer {dict_s * 1e3:.0f} ms median")
print(f"pure / dict reducer: {pure_s / dict_s:.2f}x")
