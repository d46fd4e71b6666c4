"""NDJSON framing throughput: acpwire's FrameDecoder against splitting the whole buffer.

The decoders get the corpus as a live stream would deliver it, in 64 KiB pieces; the
baselines get the whole buffer at once, which is the best case for ``bytes.split``.

    ACPWIRE_BENCH_MB=20 pytest benches/test_bench_framing.py --benchmark-columns=min,median,rounds
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_benchmark")

MAX_FRAME = 32 * 1024 * 1024
# Enough of the corpus to spot a wrong result before spending time on timing it.
CHECK_BYTES = 256 * 1024


def backend(name: str):
    return pytest.importorskip(f"acpwire.{name}")


def run_decoder(cls, chunks: list[bytes], raw: bool) -> int:
    decoder = cls(max_frame_bytes=MAX_FRAME, raw=raw)
    n = 0
    for chunk in chunks:
        n += len(decoder.feed(chunk))
    return n + len(decoder.finish())


def check_decoder(cls, corpus: bytes, raw: bool) -> None:
    orjson = pytest.importorskip("orjson")
    head = corpus[: corpus.rindex(b"\n", 0, CHECK_BYTES) + 1]
    decoder = cls(max_frame_bytes=MAX_FRAME, raw=raw)
    # Odd piece size, so frames straddle feeds.
    got = [f for i in range(0, len(head), 4093) for f in decoder.feed(head[i : i + 4093])]
    got += decoder.finish()
    lines = head.split(b"\n")[:-1]
    if raw:
        assert [bytes(f) for f in got] == lines
    else:
        assert got == [orjson.loads(line) for line in lines]


@pytest.mark.benchmark(group="framing: raw frames")
@pytest.mark.parametrize("impl", ["_native", "_pure"])
def test_frame_decoder_raw(benchmark, impl, corpus, corpus_chunks, messages, record_throughput):
    cls = backend(impl).FrameDecoder
    check_decoder(cls, corpus, raw=True)
    assert benchmark(run_decoder, cls, corpus_chunks, True) == len(messages)
    record_throughput(benchmark, len(corpus), len(messages))


@pytest.mark.benchmark(group="framing: raw frames")
def test_baseline_split(benchmark, corpus, messages, record_throughput):
    def split() -> int:
        return sum(1 for line in corpus.split(b"\n") if line)

    assert benchmark(split) == len(messages)
    record_throughput(benchmark, len(corpus), len(messages))


@pytest.mark.benchmark(group="framing: decoded")
@pytest.mark.parametrize("impl", ["_native", "_pure"])
def test_frame_decoder_decoded(benchmark, impl, corpus, corpus_chunks, messages, record_throughput):
    cls = backend(impl).FrameDecoder
    check_decoder(cls, corpus, raw=False)
    assert benchmark(run_decoder, cls, corpus_chunks, False) == len(messages)
    record_throughput(benchmark, len(corpus), len(messages))


@pytest.mark.benchmark(group="framing: decoded")
def test_baseline_split_orjson(benchmark, corpus, messages, record_throughput):
    loads = pytest.importorskip("orjson").loads

    def split_and_parse() -> int:
        n = 0
        for line in corpus.split(b"\n"):
            if line:
                loads(line)
                n += 1
        return n

    assert benchmark(split_and_parse) == len(messages)
    record_throughput(benchmark, len(corpus), len(messages))
