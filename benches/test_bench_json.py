"""Per-message JSON: acpwire's loads/dumps against orjson, msgspec and the standard library.

Each round handles every message of the corpus one call at a time, the way a client
handles a stream; the table's MB/s and msgs/s columns are derived from the median round.

    ACPWIRE_BENCH_MB=20 pytest benches/test_bench_json.py --benchmark-group-by=group
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

pytest.importorskip("pytest_benchmark")

# Spot checks before timing: a fast wrong answer is not a result.
SAMPLE = 500


def _acpwire(module: str, attr: str) -> Callable:
    return getattr(pytest.importorskip(f"acpwire.{module}"), attr)


def _orjson_loads() -> Callable:
    return pytest.importorskip("orjson").loads


def _msgspec_loads() -> Callable:
    # A reusable Decoder is msgspec's fast path for untyped decoding.
    return pytest.importorskip("msgspec.json").Decoder().decode


def _orjson_dumps() -> Callable:
    orjson = pytest.importorskip("orjson")
    option = orjson.OPT_APPEND_NEWLINE

    def dumps(obj) -> bytes:
        return orjson.dumps(obj, option=option)

    return dumps


def _msgspec_dumps() -> Callable:
    encode = pytest.importorskip("msgspec.json").Encoder().encode

    def dumps(obj) -> bytes:
        return encode(obj) + b"\n"

    return dumps


def _json_dumps() -> Callable:
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def dumps(obj) -> bytes:
        return (encode(obj) + "\n").encode()

    return dumps


LOADERS: dict[str, Callable[[], Callable]] = {
    "acpwire-native": lambda: _acpwire("_native", "loads"),
    "acpwire-pure": lambda: _acpwire("_pure", "loads"),
    "orjson": _orjson_loads,
    "msgspec": _msgspec_loads,
    "json": lambda: json.loads,
}

DUMPERS: dict[str, Callable[[], Callable]] = {
    "acpwire-native": lambda: _acpwire("_native", "dumps"),
    "acpwire-pure": lambda: _acpwire("_pure", "dumps"),
    "orjson": _orjson_dumps,
    "msgspec": _msgspec_dumps,
    "json": _json_dumps,
}


def _sample(items: list) -> list:
    step = max(1, len(items) // SAMPLE)
    return items[::step]


@pytest.mark.benchmark(group="loads: per message")
@pytest.mark.parametrize("impl", list(LOADERS))
def test_loads(benchmark, impl, corpus, messages, record_throughput):
    loads = LOADERS[impl]()
    for raw in _sample(messages):
        assert loads(raw) == json.loads(raw)

    def run() -> int:
        for raw in messages:
            loads(raw)
        return len(messages)

    benchmark(run)
    record_throughput(benchmark, len(corpus), len(messages))


@pytest.mark.benchmark(group="dumps: per message")
@pytest.mark.parametrize("impl", list(DUMPERS))
def test_dumps(benchmark, impl, decoded, record_throughput):
    dumps = DUMPERS[impl]()
    for obj in _sample(decoded):
        out = dumps(obj)
        assert out.endswith(b"\n")
        assert out.count(b"\n") == 1
        assert json.loads(out) == obj

    def run() -> int:
        total = 0
        for obj in decoded:
            total += len(dumps(obj))
        return total

    nbytes = benchmark(run)
    record_throughput(benchmark, nbytes, len(decoded))


@pytest.mark.benchmark(group="dumps: per message, fresh objects")
@pytest.mark.parametrize("impl", ["acpwire-native", "orjson"])
def test_dumps_fresh(benchmark, impl, messages, record_throughput):
    """`dumps` of objects never encoded before, as a client encodes the message it just built.

    In `test_dumps` every round after the first finds each non-ASCII str carrying the UTF-8
    that CPython caches when an encoder first asks for it; here each round gets a copy of the
    corpus decoded just before it (untimed), so no str has that cache yet.
    """
    dumps = DUMPERS[impl]()
    loads = json.loads

    def fresh() -> tuple[tuple[list], dict]:
        return ([loads(raw) for raw in messages],), {}

    def run(objects: list) -> int:
        total = 0
        for obj in objects:
            total += len(dumps(obj))
        return total

    nbytes = benchmark.pedantic(run, setup=fresh, rounds=9)
    record_throughput(benchmark, nbytes, len(messages))
