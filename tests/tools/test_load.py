"""Sessions reducing many concurrent fake agents, checked turn by turn."""

from __future__ import annotations

import sys
import threading

import pytest

from acpwire.cli.bench.workloads.sessions import token_stream
from acpwire.cli.fake_agent import TurnConfig
from acpwire.cli.loadtest import run_agents


async def test_concurrent_agents_are_reduced_exactly(backend):
    config = TurnConfig(tokens=60, thoughts=5, terminal_bytes=4000, terminal_chunk=512)
    report = await run_agents(8, turns=2, config=config, backend=backend)
    assert report.failures == []
    assert report.turns == 16
    assert report.updates == 16 * (len_turn(config) + 2)


def len_turn(config: TurnConfig) -> int:
    from acpwire.cli.fake_agent import build_turn

    return len(build_turn("sess_0001", 1, 2, config))


def test_feed_releases_the_gil(both):
    """While one thread is inside Sessions.feed, another thread keeps running Python."""
    native, _ = both
    data = token_stream(n=60_000)
    ticks = 0
    done = threading.Event()

    def spin() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    store = native.Sessions()
    try:
        # No Python code runs in this thread between the two reads but the feed itself: if
        # it kept the GIL, the spinner could not have counted in between.
        before = ticks
        store.feed(data)
        after = ticks
    finally:
        done.set()
        spinner.join()
    assert len(store) == 1
    assert after > before


@pytest.mark.parametrize("agents", [2])
async def test_load_report_shape(agents):
    report = await run_agents(agents, turns=1, config=TurnConfig(tokens=5, tool_calls=0))
    summary = report.as_dict()
    assert summary["turns"] == agents and summary["failures"] == []
    assert summary["rss_mb"]
    if sys.platform != "win32":  # no resident-memory reading there
        assert all(mb > 0 for _, mb in summary["rss_mb"])


def texts(store, session_id: str, chunks: int) -> list[str | None]:
    """The text of each message of a `token_stream` of `chunks` chunks (400 per message)."""
    session = store[session_id]
    return [session.message_text(f"msg_agent_{k:06d}") for k in range(chunks // 400)]


def test_reading_while_another_thread_feeds_waits_for_the_feed(backend):
    """Reads and drains during a GIL-free feed on another thread wait for it to return: they
    see the store before or after a feed call, never an error or a half-reduced state."""
    head = token_stream(n=10)
    store = backend.Sessions()
    store.feed(head)
    [session_id] = store.ids()
    session = store[session_id]
    # More chunks for the same session: the same 40,000 again and again, which appends.
    body = token_stream(n=40_000).split(b"\n", 4)[-1] * 5
    pieces = [body[i : i + (1 << 20)] for i in range(0, len(body), 1 << 20)]
    feeder = threading.Thread(target=lambda: [store.feed(p) for p in pieces])
    reads = 0
    feeder.start()
    while feeder.is_alive():
        snapshot = session.snapshot()
        assert snapshot["sessionId"] == session_id
        store.changes()
        assert session_id in store and len(store) == 1
        reads += 1
    feeder.join()
    reference = backend.Sessions()
    reference.feed(head + body)
    assert texts(store, session_id, 40_000) == texts(reference, session_id, 40_000)
    assert reads > 0


def test_a_second_feeder_is_refused(backend):
    """Two threads feeding one store would interleave two streams: the second gets an error
    naming the problem while the first is inside `feed`, and the first is unaffected."""
    # The handshake, then 40,000 chunks over and over (appending to the same messages), for
    # a feed that lasts a while.
    *head, body = token_stream(n=40_000).split(b"\n", 4)
    data = b"\n".join(head) + b"\n" + body * (10 if backend.__name__.endswith("native") else 2)
    store = backend.Sessions()
    started = threading.Event()

    def feed() -> None:
        started.set()
        store.feed(data)

    feeder = threading.Thread(target=feed)
    feeder.start()
    started.wait()
    refusals = []
    while feeder.is_alive():
        try:
            store.feed(b"")
        except RuntimeError as exc:
            refusals.append(str(exc))
    feeder.join()
    assert refusals and all("fed by another thread" in r for r in refusals)
    reference = backend.Sessions()
    reference.feed(data)
    [session_id] = reference.ids()
    assert texts(store, session_id, 40_000) == texts(reference, session_id, 40_000)


def test_terminal_handle_reads_wait_while_another_thread_feeds(backend):
    """A session's live Terminal is shared under a mutex: reading it while another thread feeds
    the store waits for the current piece instead of failing, and ends on the exact state."""
    from acpwire.cli.bench.workloads.sessions import heavy_terminal

    data = heavy_terminal(size_bytes=2_000_000)
    lines = data.split(b"\n")
    head, body = b"\n".join(lines[:6]) + b"\n", b"\n".join(lines[6:])
    reference = backend.Sessions()
    reference.feed(data)
    reference.finish()
    [session_id] = reference.ids()
    want = reference[session_id].snapshot()["terminals"]

    store = backend.Sessions()
    store.feed(head)
    [terminal_id] = store[session_id].snapshot()["terminals"]
    terminal = store[session_id].terminal(terminal_id)
    seen: list[int] = []

    def feed() -> None:
        for i in range(0, len(body), 65536):
            store.feed(body[i : i + 65536])
        store.finish()

    feeder = threading.Thread(target=feed)
    feeder.start()
    while feeder.is_alive():
        seen.append(len(terminal.text))
    feeder.join()
    assert store[session_id].snapshot()["terminals"] == want
    assert terminal.text == want[terminal_id]["text"]


async def test_load_turns_without_plan_or_usage_are_counted_as_such():
    for config in (
        TurnConfig(tokens=5, tool_calls=0, plan=False),
        TurnConfig(tokens=5, usage=False),
    ):
        report = await run_agents(1, turns=1, config=config, check_pure=False)
        assert report.as_dict()["failures"] == [] and report.turns == 1


async def test_load_refuses_turns_that_ask_permission():
    with pytest.raises(ValueError, match="permission"):
        await run_agents(1, turns=1, config=TurnConfig(tokens=5, permission=True))
