"""A batch frame's peak memory stays that of its decoded items plus a small multiple of the frame.

Measured with tracemalloc, which counts Python allocations: the values either backend builds
and every transient object of the pure backend (the native backend's own buffers are measured
in benches/scripts/batch_peak.py, by RSS). The yardstick is ``orjson.loads`` of the same frame:
what building the items costs at least.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson
import pytest

ITEMS = 30_000
# Past the decoded items, at most this many bytes per frame byte: a copy of the frame and the
# checks made on it, not an object per item (which the depth check once made).
SLACK = 3


def traced_peak(run: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        kept = run()
        peak = tracemalloc.get_traced_memory()[1]
        del kept
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    "item",
    [b"{}", b"[]", b'{"jsonrpc":"2.0","method":"x","params":{"a":[1,{"b":null}]}}'],
    ids=["empty objects", "empty lists", "nested messages"],
)
@pytest.mark.parametrize("api", ["FrameDecoder.feed", "loads", "Sessions.feed"])
def test_a_batch_frame_peaks_at_its_items_plus_a_few_frames(backend, item, api):
    frame = b"[" + b",".join([item] * ITEMS) + b"]\n"

    def run() -> Any:
        if api == "FrameDecoder.feed":
            return backend.FrameDecoder(max_frame_bytes=len(frame)).feed(frame)
        if api == "loads":
            return backend.loads(frame)
        store = backend.Sessions()
        store.feed(frame)
        store.finish()
        return store

    run()  # first-use allocations (interned keys, caches) are not the frame's
    floor = traced_peak(lambda: orjson.loads(frame))
    peak = traced_peak(run)
    assert peak <= floor + SLACK * len(frame), (peak / len(frame), floor / len(frame))
