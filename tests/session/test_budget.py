"""The store's budget (docs/behaviour/sessions.md, "The store's budget: `max_bytes`"): its
arguments, ``retained_bytes`` against a cost computed here, eviction of the sessions changed
least recently, payload stubs, message truncation, and both backends alike on random streams."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest

BUDGET_ARGS = ("max_bytes", "max_payload_bytes", "max_message_bytes")


def cost(v: Any) -> int:
    """The cost table of the spec, written again here so that it checks the backends'."""
    if v is None or isinstance(v, bool):
        return 8
    if isinstance(v, (int, float)):
        return 24
    if isinstance(v, str):
        return 48 + len(v.encode())
    if isinstance(v, list):
        return 56 + sum(8 + cost(x) for x in v)
    assert isinstance(v, dict)
    return 64 + sum(40 + cost(k) + cost(x) for k, x in v.items())


def session_cost(snapshot: dict) -> int:
    """1,024 and the snapshot's cost, its empty members (None, [], {}) not counted."""
    kept = {k: v for k, v in snapshot.items() if v is not None and v != [] and v != {}}
    return 1024 + cost(kept)


def upd(sid: str, **update: Any) -> dict:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": sid, "update": update},
    }


def chunk(sid: str, mid: str, text: str) -> dict:
    return upd(
        sid,
        sessionUpdate="agent_message_chunk",
        messageId=mid,
        content={"type": "text", "text": text},
    )


def line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def v2(store: Any) -> None:
    store.feed(
        line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}})
        + line({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}})
    )


def reference_retained(store: Any) -> int:
    """1,024 plus the snapshot's cost per session, 96 plus two UTF-8 lengths per pending
    change (taking the changes)."""
    total = sum(session_cost(store[sid].snapshot()) for sid in store.ids())
    return total + sum(
        96 + len(sid.encode()) + len(eid.encode()) for sid, _, eid in store.changes()
    )


def test_arguments(backend):
    store = backend.Sessions()
    assert store.evicted_sessions == 0
    assert store.retained_bytes == 0
    for name in BUDGET_ARGS:
        backend.Sessions(**{name: None})
        backend.Sessions(**{name: 0})
        with pytest.raises(ValueError, match=f"^{name} must not be negative$"):
            backend.Sessions(**{name: -1})
        with pytest.raises(TypeError):
            backend.Sessions(**{name: "1"})
        with pytest.raises(TypeError):
            backend.Sessions(**{name: 1.0})
    # Every argument is read before any is checked: a wrong type comes before a bad value,
    # and the budget's arguments are read in the signature's order.
    with pytest.raises(TypeError):
        backend.Sessions(scrollback=-1, max_message_bytes="x")
    with pytest.raises(ValueError, match=r"^max_bytes must not be negative$"):
        backend.Sessions(max_bytes=-1, max_message_bytes=-1)
    with pytest.raises(ValueError, match=r"^scrollback must not be negative$"):
        backend.Sessions(scrollback=-1, max_bytes=-1)


def test_retained_bytes_is_the_cost_of_sessions_and_pending_changes(backend):
    store = backend.Sessions(max_bytes=None)
    v2(store)
    store.feed(line(chunk("s1", "m1", "héllo")) + line(chunk("sé", "m2", "x" * 300)))
    store.feed(
        line(
            upd(
                "s1",
                sessionUpdate="tool_call_update",
                toolCallId="c1",
                rawInput={"a": [1, 2.5, None, True, "ü"]},
            )
        )
    )
    data = base64.b64encode(b"line one\r\nline two\x1b[1m bold").decode()
    store.feed(line(upd("s1", sessionUpdate="terminal_output_chunk", terminalId="t", data=data)))
    retained = store.retained_bytes
    assert retained == store.retained_bytes  # a read changes nothing
    assert retained == reference_retained(store)
    # Taken changes cost nothing any more.
    assert store.retained_bytes == sum(session_cost(store[s].snapshot()) for s in store.ids())
    bounded = backend.Sessions(max_bytes=1 << 40)
    v2(bounded)
    bounded.feed(line(chunk("s1", "m1", "a")))
    assert bounded.retained_bytes > 0  # the sessions changed since are costed at a read
    bounded.feed(line(chunk("s1", "m1", "bcd")) + line(chunk("s2", "m1", "e")))
    assert bounded.retained_bytes == reference_retained(bounded)


def test_the_session_changed_least_recently_is_evicted_first(backend):
    # Sessions a, b, c of one 1,000-byte message each cost about 4,000 apiece: they fit
    # 16,000. `a` changes again, so `b` becomes the session changed least recently; d's frame
    # takes the estimate past the allowance and the count finds about 18,500: b goes, then c,
    # which brings it under 14,000 (16,000 less an eighth). a, changed more recently than both,
    # stays, and so does d, changed last.
    store = backend.Sessions(max_bytes=16_000)
    v2(store)
    for sid in ("a", "b", "c"):
        store.feed(line(chunk(sid, "m", "x" * 1000)))
    assert store.ids() == ["a", "b", "c"]
    assert store.evicted_sessions == 0
    store.changes()
    store.feed(line(chunk("a", "m", "y")))
    store.feed(line(chunk("d", "m", "z" * 3000)))
    assert store.ids() == ["a", "d"]
    assert "b" not in store and "c" not in store
    assert len(store) == 2
    assert store.evicted_sessions == 2
    assert store.changes() == [
        ("a", "agentMessage", "m"),
        ("d", "session", "sessionId"),
        ("d", "agentMessage", "m"),
        ("b", "session", "evicted"),
        ("c", "session", "evicted"),
    ]
    assert [(e["sessionId"], e["reason"]) for e in store.take_errors()] == [
        ("b", "session evicted: the store was over max_bytes"),
        ("c", "session evicted: the store was over max_bytes"),
    ]
    assert store.retained_bytes <= 14_000
    assert store["a"].message_text("m") == "x" * 1000 + "y"


def test_small_sessions_are_counted_by_what_they_hold(backend):
    # A new session's snapshot has a score of empty members (null, [], {}), which cost
    # nothing: a session of one short message costs about 3,000, so 10,000 of them fit a bound
    # of 10,000 * 4,096 with nothing evicted (counted with its empty members, each would cost
    # about 6,000 and many would be evicted).
    sessions = 10_000
    store = backend.Sessions(max_bytes=sessions * 4096)
    v2(store)
    store.feed(b"".join(line(chunk(f"s{i}", "m", "hello")) for i in range(sessions)))
    assert store.evicted_sessions == 0
    assert len(store) == sessions
    store.changes()
    assert store.retained_bytes == sum(session_cost(store[s].snapshot()) for s in store.ids())
    assert 1024 < store.retained_bytes / sessions < 4096


def test_an_evicted_session_s_handle_raises_and_its_id_starts_anew(backend):
    store = backend.Sessions(max_bytes=0)
    v2(store)
    store.feed(line(chunk("s1", "m1", "one")))
    handle = store["s1"]
    store.feed(line(chunk("s2", "m1", "two")))
    assert "s1" not in store
    with pytest.raises(KeyError):
        store["s1"]
    message = 'session "s1" was evicted from its store'
    for read in (
        lambda: handle.snapshot(),
        lambda: handle.state,
        lambda: handle.stop_reason,
        lambda: handle.message_text("m1"),
        lambda: handle.message("agent", "m1"),
        lambda: handle.tool_call("c"),
        lambda: handle.terminal("t"),
        lambda: handle.terminal_entry("t"),
        lambda: handle.plan(),
        lambda: handle.compaction("c"),
        lambda: handle.subagent("x"),
    ):
        with pytest.raises(RuntimeError, match=f"^{message}$"):
            read()
    store.feed(line(chunk("s1", "m1", "again")))
    assert store.ids() == ["s1"]
    assert store["s1"].message_text("m1") == "again"
    with pytest.raises(RuntimeError):
        handle.snapshot()  # the old handle stays evicted


def test_evictions_named_in_changes_are_bounded_until_the_changes_are_taken(backend):
    # A bound of 0: each new session evicts the one before. Past 1,000 evictions since the
    # changes were taken, an eviction is an error record and a count only.
    store = backend.Sessions(max_bytes=0)
    v2(store)
    store.feed(b"".join(line(chunk(f"s{i}", "m", "x")) for i in range(1_101)))
    assert store.evicted_sessions == 1_100
    assert len(store.take_errors()) == 1_100
    named = [c for c in store.changes() if c[1:] == ("session", "evicted")]
    assert named == [(f"s{i}", "session", "evicted") for i in range(1_000)]
    store.feed(line(chunk("late", "m", "x")))
    assert [c for c in store.changes() if c[2] == "evicted"] == [("s1100", "session", "evicted")]


def test_a_session_alone_over_the_bound_keeps_its_newest_tool_calls(backend):
    bound = 200_000
    store = backend.Sessions(max_bytes=bound)
    store.feed(
        line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    )
    dropped = []
    for start in range(0, 4_000, 100):
        calls = [
            upd("s", sessionUpdate="tool_call", toolCallId=f"c{i:04d}", title="read")
            for i in range(start, start + 100)
        ]
        store.feed(b"".join(map(line, calls)))
        # A client that takes what changed: the store then holds about the bound.
        store.changes()
        dropped += [e["reason"] for e in store.take_errors()]
        assert store.retained_bytes <= bound + bound // 8
    kept = list(store["s"].snapshot()["toolCalls"])
    assert 0 < len(kept) < 4_000
    # The oldest went first: what is left is the newest run, the last call included.
    assert kept == [f"c{i:04d}" for i in range(4_000 - len(kept), 4_000)]
    timeline = [e["id"] for e in store["s"].snapshot()["timeline"] if e["type"] == "toolCall"]
    assert timeline == kept
    counts = [int(r.split()[1]) for r in dropped]
    assert all(r.endswith(" tool calls: the store was over max_bytes") for r in dropped)
    assert sum(counts) == 4_000 - len(kept)


def test_an_evicted_session_s_terminals_leave_the_terminal_budget(backend):
    # Terminal a (session s1) is evicted; then b and c, in s2, fit the terminal bound only
    # if a no longer counts towards it.
    store = backend.Sessions(max_bytes=20_000, max_terminal_bytes=5000)
    v2(store)
    text = base64.b64encode(b"x" * 2000).decode()

    def term(sid: str, tid: str) -> bytes:
        return line(upd(sid, sessionUpdate="terminal_output_chunk", terminalId=tid, data=text))

    store.feed(term("s1", "a"))
    store.feed(line(chunk("s2", "m", "y" * 12_000)))  # over max_bytes: s1 goes
    assert "s1" not in store
    store.feed(term("s2", "b") + term("s2", "c"))
    assert store["s2"].terminal("b").truncated is False
    assert store["s2"].terminal("c").truncated is False


def test_payload_stubs_in_requests_and_applied_messages(backend):
    store = backend.Sessions(max_payload_bytes=500)
    big = "p" * 1000
    store.feed(
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": big}]},
            }
        )
        + line(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s1",
                    "toolCall": {"toolCallId": "c", "rawInput": big},
                    "options": [],
                },
            }
        )
    )
    snap = store["s1"].snapshot()
    prompt_stub = {"dropped": "max_payload_bytes", "cost": cost([{"type": "text", "text": big}])}
    assert snap["prompts"][0]["prompt"] == prompt_stub
    assert snap["turns"][0]["prompt"] == prompt_stub
    tool_stub = {"dropped": "max_payload_bytes", "cost": cost({"toolCallId": "c", "rawInput": big})}
    assert snap["permissions"][0]["toolCall"] == tool_stub
    reasons = [e["reason"] for e in store.take_errors()]
    assert "prompt over max_payload_bytes: kept as a stub" in reasons
    assert "toolCall over max_payload_bytes: kept as a stub" in reasons
    # A message given to `apply` is walked whatever its size; a small payload is kept.
    applied = backend.Sessions(max_payload_bytes=100)
    raw = {"k": "v" * 60}
    applied.apply(upd("s1", sessionUpdate="tool_call_update", toolCallId="c", rawInput=raw))
    applied.apply(upd("s1", sessionUpdate="tool_call_update", toolCallId="d", rawInput="small"))
    calls = applied["s1"].snapshot()["toolCalls"]
    assert calls["c"]["rawInput"] == {"dropped": "max_payload_bytes", "cost": cost(raw)}
    assert calls["d"]["rawInput"] == "small"
    assert [(e["sessionId"], e["reason"]) for e in applied.take_errors()] == [
        ("s1", "rawInput over max_payload_bytes: kept as a stub")
    ]


def test_truncation_of_many_small_blocks(backend):
    # 200,000 blocks into a message bounded at 1,000 bytes: each append is O(1) amortized, so
    # this runs in a moment; a tail trimmed by slicing would take minutes.
    store = backend.Sessions(max_message_bytes=1000)
    v2(store)
    n = 200_000
    block = b"".join(line(chunk("s1", "m", "abcd")) for _ in range(1000))
    for _ in range(n // 1000):
        store.feed(block)
    snap = store["s1"].snapshot()
    message = snap["messages"][0]
    assert list(message)[-1] == "truncated"
    # 125 blocks of 4 bytes kept in each half, each half's shown as one text block.
    kept = 250
    assert message["content"] == [{"type": "text", "text": "abcd" * 125}] * 2
    assert message["truncated"] == {"blocks": n - kept, "bytes": 4 * (n - kept)}
    assert store["s1"].message_text("m") == "abcd" * kept
    assert [e["reason"] for e in store.take_errors()] == [
        "message over max_message_bytes: its middle dropped"
    ]


def _random_stream(rng: random.Random) -> list[dict]:
    sids = [f"s{i}" for i in range(rng.randint(1, 6))]
    out: list[dict] = []
    for n in range(rng.randint(20, 120)):
        sid = rng.choice(sids)
        pick = rng.random()
        if pick < 0.45:
            text = rng.choice(["a", "bc", "é" * rng.randint(1, 9), "z" * rng.randint(10, 200)])
            out.append(chunk(sid, rng.choice(["m1", "m2"]), text))
        elif pick < 0.55:
            block = {"type": "image", "mimeType": "image/png", "data": "A" * rng.randint(1, 300)}
            out.append(upd(sid, sessionUpdate="agent_message_chunk", messageId="m1", content=block))
        elif pick < 0.62:
            content = [{"type": "text", "text": "u" * rng.randint(0, 80)} for _ in range(3)]
            out.append(upd(sid, sessionUpdate="agent_message", messageId="m2", content=content))
        elif pick < 0.8:
            out.append(
                upd(
                    sid,
                    sessionUpdate="tool_call_update",
                    toolCallId=f"c{rng.randint(0, 3)}",
                    rawInput={"q": "r" * rng.randint(0, 400)},
                )
            )
        elif pick < 0.9:
            data = base64.b64encode(b"out " * rng.randint(1, 100)).decode()
            out.append(upd(sid, sessionUpdate="terminal_output_chunk", terminalId="t", data=data))
        else:
            out.append(
                {
                    "jsonrpc": "2.0",
                    "id": n + 10,
                    "method": "session/prompt",
                    "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "p" * 300}]},
                }
            )
    return out


def test_differential_random_streams_small_bounds(both):
    native, pure = both
    if not hasattr(native.Sessions(), "evicted_sessions"):
        pytest.skip("the native Sessions has no budget yet")
    rng = random.Random(33)
    for _ in range(60):
        config = {
            "max_bytes": rng.choice([0, 3000, 9000, 30_000, None]),
            "max_payload_bytes": rng.choice([0, 100, 400, None]),
            "max_message_bytes": rng.choice([0, 10, 300, None]),
        }
        frames = _random_stream(rng)
        takes = [rng.random() < 0.5 for _ in range(0, len(frames), 7)]
        for mode in ("feed", "apply"):
            results = []
            for backend in (native, pure):
                store = backend.Sessions(**config)
                if mode == "feed":
                    v2(store)
                steps = []
                for take, at in zip(takes, range(0, len(frames), 7), strict=True):
                    part = frames[at : at + 7]
                    if mode == "feed":
                        store.feed(b"".join(map(line, part)))
                    else:
                        for frame in part:
                            store.apply(frame)
                    steps.append(
                        (
                            store.ids(),
                            store.evicted_sessions,
                            store.retained_bytes,
                            store.changes() if take else None,
                        )
                    )
                snaps = {sid: store[sid].snapshot() for sid in store.ids()}
                results.append((steps, snaps, store.take_errors(), store.changes()))
            assert results[0] == results[1], (config, mode)


def test_pure_counts_a_session_as_its_snapshot_costs_without_making_it():
    # The pure store's count costs what a session holds where it is held (a count must not
    # copy a session of a million tool calls); it must equal the snapshot's cost.
    from acpwire._pure.session.budget import cost_of_session
    from acpwire._pure.session.reducer import Sessions
    from session_builders import ndjson
    from session_streams import random_stream

    costed = 0
    for seed in range(120):
        store = Sessions(max_bytes=None)
        store.feed(ndjson(random_stream(random.Random(seed), n=80)))
        for sid, s in store._sessions.items():
            assert cost_of_session(s) == session_cost(store[sid].snapshot()), seed
            costed += 1
    assert costed > 100
