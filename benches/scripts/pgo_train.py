"""The training run of a profile-guided build (`.ci/pgo-wheel`).

An instrumented extension records which branches and calls its work takes; the final build lays
out code for that. So this runs what the benchmarks measure and users run most, on the package's
own deterministic workloads: framing (raw and decoded), `loads` and `dumps`, terminals in every
view and both modes, and session reduction of the token, heavy-terminal and mixed streams.
It checks nothing: the test suite does that. Run with the instrumented build installed:

    python benches/scripts/pgo_train.py [--scale 1.0]
"""

from __future__ import annotations

import argparse
import base64

from acpwire import _native as native
from acpwire.workloads.sessions import heavy_terminal, mixed_sessions, token_stream
from acpwire.workloads.terminal import terminal_corpus

CHUNK = 64 * 1024


def pieces(data: bytes, size: int = CHUNK) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def framing_and_json(streams: list[bytes], rounds: int) -> None:
    for data in streams:
        chunks = pieces(data)
        lines = [line for line in data.split(b"\n") if line]
        for _ in range(rounds):
            raw = native.FrameDecoder(raw=True)
            for chunk in chunks:
                raw.feed(chunk)
            decoder = native.FrameDecoder()
            values = []
            for chunk in chunks:
                values.extend(decoder.feed(chunk))
            for line in lines:
                native.loads(line)
            for value in values:
                native.dumps(value)


def terminals(corpus: bytes, rounds: int) -> None:
    chunks = pieces(corpus)
    encoded = [base64.b64encode(chunk).decode() for chunk in pieces(corpus, 48 * 1024)]
    for _ in range(rounds):
        for options in ({}, {"cols": 200, "rows": 50}, {"cols": 80, "rows": 24}):
            terminal = native.Terminal(**options)
            for chunk in chunks:
                terminal.feed(chunk)
            _ = terminal.text
            terminal.spans()
            terminal.screen()
        terminal = native.Terminal()
        for chunk in encoded:
            terminal.feed_base64(chunk)
        _ = terminal.text
        native.render_text(corpus[: len(corpus) // 4])


def sessions(streams: list[bytes], rounds: int) -> None:
    for data in streams:
        chunks = pieces(data, 1 << 20)
        for _ in range(rounds):
            store = native.Sessions()
            for chunk in chunks:
                store.feed(chunk)
            store.finish()
            store.changes()
            for session_id in store.ids():
                store[session_id].snapshot()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    scale = parser.parse_args().scale
    if scale <= 0:
        parser.error("--scale must be positive")
    token = token_stream(n=max(1000, int(30_000 * scale)))
    mixed = mixed_sessions(updates=max(1000, int(20_000 * scale)))
    heavy = heavy_terminal(size_bytes=max(100_000, int(8e6 * scale)))
    framing_and_json([token, mixed, heavy], rounds=2)
    terminals(terminal_corpus(max(100_000, int(4e6 * scale))), rounds=2)
    sessions([token, mixed, heavy], rounds=2)


if __name__ == "__main__":
    main()
