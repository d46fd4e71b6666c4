"""Two threads reducing two streams: does Sessions.feed scale past one core?

Sessions.feed releases the GIL while Rust frames and reduces a buffer, so two threads feeding
two independent stores should take about as long as one thread feeding one. Prints the
sequential time, the two-thread time and their ratio (2.0 = perfect scaling), measured in one
run, best of several rounds.

    python benches/scripts/gil_scaling.py [--messages 200000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import threading
import time

import acpwire
from acpwire.workloads.sessions import heavy_terminal, token_stream

CHUNK = 1 << 20


def reduce(data: bytes) -> None:
    store = acpwire.Sessions()
    for start in range(0, len(data), CHUNK):
        store.feed(data[start : start + CHUNK])
    store.finish()


def sequential(streams: list[bytes]) -> float:
    start = time.perf_counter()
    for data in streams:
        reduce(data)
    return time.perf_counter() - start


def threaded(streams: list[bytes]) -> float:
    threads = [threading.Thread(target=reduce, args=(data,)) for data in streams]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--terminal-mb", type=float, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"backend: {acpwire.BACKEND}")
    for name, streams in (
        ("token stream", [token_stream(n=args.messages, seed=s) for s in (1, 2)]),
        (
            "heavy terminal",
            [heavy_terminal(size_bytes=int(args.terminal_mb * 1e6), seed=s) for s in (1, 2)],
        ),
    ):
        seq = min(sequential(streams) for _ in range(args.rounds))
        par = min(threaded(streams) for _ in range(args.rounds))
        size = sum(map(len, streams)) / 1e6
        print(
            f"{name:15s} 2 x {size / 2:6.1f} MB: one thread {seq * 1e3:7.1f} ms, "
            f"two threads {par * 1e3:7.1f} ms, speed-up {seq / par:4.2f}x"
        )


if __name__ == "__main__":
    main()
