"""Framing and JSON, acpwire against orjson and msgspec, in interleaved rounds.

Each round runs every contender once over the same corpus (the benchmarks' generator, 8 MB of
realistic ACP NDJSON), so load on a shared machine hits all alike, and every other round runs
them in reverse order, so none always finds its data left in cache by the one before; prints
the best and the median round per contender.

`dumps` is timed twice. The `*_dumps` rounds encode the same decoded corpus every round, so
from the second round on each non-ASCII str carries the UTF-8 that CPython caches the first
time an encoder asks for it. The `*_dumps_fresh` rounds encode a copy decoded just before the
round (untimed), as a client encodes the message it has just built: no str has that cache yet.

    python benches/scripts/interleaved_json.py [ROUNDS]
"""

import gc
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import msgspec
import orjson

import acpwire._native as N
from conftest import generate_corpus

data = generate_corpus(8_000_000)
lines = [line for line in data.split(b"\n") if line]
chunks = [data[i : i + 65536] for i in range(0, len(data), 65536)]
decoded = [orjson.loads(line) for line in lines]
gc.freeze()
ms = msgspec.json.Decoder().decode


def native_loads():
    f = N.loads
    for line in lines:
        f(line)


def orjson_loads():
    f = orjson.loads
    for line in lines:
        f(line)


def msgspec_loads():
    for line in lines:
        ms(line)


def native_frames():
    d = N.FrameDecoder()
    for c in chunks:
        d.feed(c)


def native_raw():
    d = N.FrameDecoder(raw=True)
    for c in chunks:
        d.feed(c)


def split_orjson():
    f = orjson.loads
    for line in data.split(b"\n"):
        if line:
            f(line)


def split_raw():
    data.split(b"\n")


def native_dumps():
    f = N.dumps
    for v in decoded:
        f(v)


def orjson_dumps():
    f = orjson.dumps
    o = orjson.OPT_APPEND_NEWLINE
    for v in decoded:
        f(v, option=o)


def native_dumps_fresh(fresh):
    f = N.dumps
    for v in fresh:
        f(v)


def orjson_dumps_fresh(fresh):
    f = orjson.dumps
    o = orjson.OPT_APPEND_NEWLINE
    for v in fresh:
        f(v, option=o)


fns = [
    native_loads,
    orjson_loads,
    msgspec_loads,
    native_frames,
    split_orjson,
    native_raw,
    split_raw,
    native_dumps,
    orjson_dumps,
    native_dumps_fresh,
    orjson_dumps_fresh,
]
res = {f.__name__: [] for f in fns}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 25
for round_number in range(rounds):
    # Whoever runs second finds the first one's data in cache (the decoded corpus is about the
    # size of L3 here): odd rounds run the contenders in reverse order.
    for f in fns if round_number % 2 == 0 else fns[::-1]:
        if f.__name__.endswith("_fresh"):
            fresh = [orjson.loads(line) for line in lines]
            t = time.perf_counter()
            f(fresh)
            res[f.__name__].append(time.perf_counter() - t)
            del fresh
            continue
        t = time.perf_counter()
        f()
        res[f.__name__].append(time.perf_counter() - t)
print(f"corpus {len(data) / 1e6:.1f} MB, {len(lines)} messages, {rounds} interleaved rounds")
for k, v in res.items():
    best = len(data) / min(v) / 1e6
    median = len(data) / statistics.median(v) / 1e6
    print(f"{k:18s} best {best:8.1f} MB/s   median {median:8.1f} MB/s")
