"""Terminal rendering: native views, the pure twin, and pyte, on one realistic PTY corpus.

The corpus (``acpwire.workloads.terminal.terminal_corpus``) is coloured cargo/rustc output,
npm/pip/tqdm progress bars redrawn with ``\\r`` and ``ESC[K``, pytest output, unicode and OSC 8
links. Each round feeds it in 64 KiB chunks to a fresh terminal and takes one view. The pure
twin and pyte are timed on a slice (they are orders of magnitude slower); MB/s is per byte fed.

    ACPWIRE_BENCH_TERMINAL_MB=10 pytest benches/test_bench_terminal.py --benchmark-only
"""

from __future__ import annotations

import base64
import binascii
import os

import pytest

pytest.importorskip("pytest_benchmark")
native = pytest.importorskip("acpwire._native")
pure = pytest.importorskip("acpwire._pure")
from acpwire.workloads.terminal import terminal_corpus  # noqa: E402

CHUNK = 64 * 1024
SLOW_SLICE = 1_000_000


@pytest.fixture(scope="module")
def pty_bytes() -> bytes:
    mb = float(os.environ.get("ACPWIRE_BENCH_TERMINAL_MB", "10"))
    return terminal_corpus(int(mb * 1_000_000))


def chunked(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def render(module, chunks, view, **options):
    terminal = module.Terminal(**options)
    for chunk in chunks:
        terminal.feed(chunk)
    return view(terminal)


VIEWS = {
    "text": (lambda t: t.text, {}),
    "spans": (lambda t: t.spans(), {}),
    "screen 200x50": (lambda t: t.screen(), {"cols": 200, "rows": 50}),
}


@pytest.mark.benchmark(group="terminal")
@pytest.mark.parametrize("view", list(VIEWS))
def test_native(benchmark, pty_bytes, view, record_throughput):
    take, options = VIEWS[view]
    chunks = chunked(pty_bytes)
    result = benchmark(render, native, chunks, take, **options)
    # A fast wrong answer is not a result: the twin must agree on a slice.
    head = chunked(pty_bytes[:200_000])
    assert render(native, head, take, **options) == render(pure, head, take, **options)
    assert result
    record_throughput(benchmark, len(pty_bytes), len(chunks))


@pytest.mark.benchmark(group="terminal")
@pytest.mark.parametrize("view", ["text", "screen 200x50"])
def test_pure(benchmark, pty_bytes, view, record_throughput):
    take, options = VIEWS[view]
    data = pty_bytes[:SLOW_SLICE]
    chunks = chunked(data)
    benchmark.pedantic(render, args=(pure, chunks, take), kwargs=options, rounds=3)
    record_throughput(benchmark, len(data), len(chunks))


@pytest.mark.benchmark(group="terminal")
def test_pyte_screen(benchmark, pty_bytes, record_throughput):
    pyte = pytest.importorskip("pyte")
    data = pty_bytes[:SLOW_SLICE]
    chunks = chunked(data)

    def run():
        screen = pyte.Screen(200, 50)
        stream = pyte.ByteStream(screen)
        for chunk in chunks:
            stream.feed(chunk)
        return screen.display

    benchmark.pedantic(run, rounds=3)
    record_throughput(benchmark, len(data), len(chunks))


@pytest.fixture(scope="module")
def b64_chunks(pty_bytes) -> list[bytes]:
    return [base64.b64encode(c) for c in chunked(pty_bytes[:4_000_000])]


@pytest.mark.benchmark(group="base64 decode")
def test_b64_native(benchmark, b64_chunks, record_throughput):
    decode = native._b64decode
    assert decode(b64_chunks[0]) == base64.b64decode(b64_chunks[0])
    benchmark(lambda: [decode(c) for c in b64_chunks])
    record_throughput(benchmark, sum(map(len, b64_chunks)), len(b64_chunks))


@pytest.mark.benchmark(group="base64 decode")
def test_b64_binascii(benchmark, b64_chunks, record_throughput):
    benchmark(lambda: [binascii.a2b_base64(c) for c in b64_chunks])
    record_throughput(benchmark, sum(map(len, b64_chunks)), len(b64_chunks))


@pytest.mark.benchmark(group="base64 decode")
def test_b64_pybase64(benchmark, b64_chunks, record_throughput):
    pybase64 = pytest.importorskip("pybase64")
    benchmark(lambda: [pybase64.b64decode(c, validate=True) for c in b64_chunks])
    record_throughput(benchmark, sum(map(len, b64_chunks)), len(b64_chunks))
