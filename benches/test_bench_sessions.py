"""Session reduction: Sessions.feed native and pure against the baselines, per workload.

    pytest benches/test_bench_sessions.py --benchmark-only
    ACPWIRE_BENCH_SCALE=0.2 pytest benches/test_bench_sessions.py --benchmark-only   # quicker

``acpwire bench`` runs the same comparison as one interleaved summary; these are the
fine-grained timings (pytest-benchmark statistics, one group per workload).
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pytest_benchmark")
native = pytest.importorskip("acpwire._native")
from acpwire import _pure, baselines  # noqa: E402
from acpwire.bench import message_texts, snapshot_digest, stream_pieces  # noqa: E402
from acpwire.workloads.sessions import heavy_terminal, mixed_sessions, token_stream  # noqa: E402

SCALE = float(os.environ.get("ACPWIRE_BENCH_SCALE", "1"))
# The pure backend is timed on a prefix of each workload (it is much slower).
PURE_BYTES = 4_000_000

WORKLOADS = {
    "tokens": lambda: token_stream(n=int(100_000 * SCALE)),
    "terminal": lambda: heavy_terminal(size_bytes=int(32e6 * SCALE)),
    "mixed": lambda: mixed_sessions(updates=int(50_000 * SCALE)),
}


@pytest.fixture(scope="module", params=list(WORKLOADS))
def workload(request):
    return request.param, WORKLOADS[request.param]()


def reduce_pieces(module, pieces: list[bytes]):
    store = module.Sessions()
    for piece in pieces:
        store.feed(piece)
    store.finish()
    return store


def reduce(module, data: bytes):
    return reduce_pieces(module, stream_pieces(data))


def prefix(data: bytes, size: int) -> bytes:
    return data if len(data) <= size else data[: data.rfind(b"\n", 0, size) + 1]


def test_native(benchmark, workload, record_throughput):
    name, data = workload
    benchmark.group = f"sessions: {name}"
    # Cut into a stream's pieces before timing, as `acpwire bench` does.
    store = benchmark(reduce_pieces, native, stream_pieces(data))
    record_throughput(benchmark, len(data), data.count(b"\n"))
    assert len(store) >= 1


def test_pure(benchmark, workload, record_throughput):
    name, data = workload
    benchmark.group = f"sessions: {name}"
    data = prefix(data, PURE_BYTES)
    store = benchmark.pedantic(reduce_pieces, args=(_pure, stream_pieces(data)), rounds=3)
    assert snapshot_digest(store) == snapshot_digest(reduce(native, data))
    record_throughput(benchmark, len(data), data.count(b"\n"))


@pytest.mark.parametrize("key", ["dict", "msgspec", "sdk"])
def test_baseline(benchmark, workload, key, record_throughput):
    found = baselines.available()
    if key not in found:
        pytest.skip(f"{key} is not installed")
    name, data = workload
    benchmark.group = f"sessions: {name}"
    cls = found[key]
    reducer = benchmark.pedantic(lambda: _feed(cls, data), rounds=3)
    if hasattr(reducer, "message_texts") and name != "mixed":
        assert reducer.message_texts() == message_texts(reduce(native, data))
    record_throughput(benchmark, len(data), data.count(b"\n"))


def _feed(cls, data):
    reducer = cls()
    reducer.feed_lines(data.split(b"\n"))
    return reducer
