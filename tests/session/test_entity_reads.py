"""Per-entity reads (``tool_call``, ``message``, ``terminal_entry``, ``plan``, ``compaction``,
``subagent``): each returns exactly the snapshot's entry for its entity, on both backends, over
the shared session cases, random streams and the mixed-session workload."""

from __future__ import annotations

import json
import random

import pytest
from test_session_cases import _init, _line, load_cases

from acpwire.cli.bench.workloads.sessions import mixed_sessions
from session_streams import random_stream

CASES = load_cases()

# Snapshot key -> the read of one of its entries by id.
KEYED = {
    "toolCalls": "tool_call",
    "terminals": "terminal_entry",
    "plans": "plan",
    "compactions": "compaction",
    "subagents": "subagent",
}


def assert_reads_match(store) -> int:
    """Every entity read of every session of ``store`` equals its snapshot entry (and its
    copy: changing it changes nothing); return how many entities were compared."""
    compared = 0
    for sid in store.ids():
        session = store[sid]
        snapshot = session.snapshot()
        for key, read in KEYED.items():
            for eid, entry in snapshot[key].items():
                got = getattr(session, read)(eid)
                assert got == entry, (sid, key, eid)
                got["changed"] = True
                assert getattr(session, read)(eid) == entry
                compared += 1
            assert getattr(session, read)("no such " + key) is None
        by_key: dict[tuple[str, str], list[dict]] = {}
        for entry in snapshot["messages"]:
            by_key.setdefault((entry["role"], entry["id"]), []).append(entry)
        for (role, mid), entries in by_key.items():
            got = session.message(role, mid)
            if len(entries) == 1:
                assert got == entries[0], (sid, role, mid)
            else:
                # An anonymous message spelled like a real one (`~2`): the id names the real
                # one, which is one of the two.
                assert got in entries, (sid, role, mid)
            compared += 1
        # The same id under another role is another message.
        ids = set(by_key)
        for _role, mid in ids:
            for other in ("user", "agent", "thought", "session"):
                if (other, mid) not in ids:
                    assert session.message(other, mid) is None
        assert session.message("agent", "no such message") is None
        assert session.message("nobody", "m") is None
    return compared


@pytest.mark.parametrize(("case", "mode"), CASES)
def test_case_reads_equal_snapshot_entries(backend, case, mode):
    store = backend.Sessions(**case.get("config", {}))
    frames = _init(case["version"]) if case.get("version") else []
    for step in case["steps"]:
        frames = frames + step.get("frames", [])
    for frame in frames:
        if mode == "feed":
            store.feed(_line(frame) + b"\n")
        else:
            store.apply(backend.loads(_line(frame)))
        assert_reads_match(store)


@pytest.mark.parametrize("seed", range(8))
def test_random_stream_reads_equal_snapshot_entries(backend, seed):
    store = backend.Sessions(terminal_cols=40)
    compared = 0
    for message in random_stream(random.Random(seed)):
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        store.feed(line + b"\n")
        compared += assert_reads_match(store)
    assert compared


@pytest.mark.parametrize("version", [1, 2])
def test_mixed_sessions_reads_equal_snapshot_entries(backend, version):
    store = backend.Sessions()
    store.feed(mixed_sessions(sessions=3, updates=2000, seed=version, version=version))
    store.finish()
    assert assert_reads_match(store) > 100


def test_reads_agree_across_backends(both):
    data = mixed_sessions(sessions=2, updates=300, seed=5)
    stores = [b.Sessions() for b in both]
    for store in stores:
        store.feed(data)
    for sid in stores[0].ids():
        snapshot = stores[0][sid].snapshot()
        for key, read in KEYED.items():
            for eid in snapshot[key]:
                assert getattr(stores[0][sid], read)(eid) == getattr(stores[1][sid], read)(eid)
        for m in snapshot["messages"]:
            assert stores[0][sid].message(m["role"], m["id"]) == stores[1][sid].message(
                m["role"], m["id"]
            )


def test_plan_defaults_to_v1_plan(backend):
    store = backend.Sessions()
    store.apply(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "plan",
                    "entries": [{"content": "a", "priority": "high", "status": "pending"}],
                },
            },
        }
    )
    session = store["s"]
    assert session.plan() == session.snapshot()["plans"]["main"]
    assert session.plan()["entries"][0]["content"] == "a"


@pytest.mark.parametrize("read", [*KEYED.values(), "message"])
def test_reads_refuse_a_non_str_id(backend, read):
    store = backend.Sessions()
    store.apply({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}})
    session = store["s"]
    args = ("agent", 5) if read == "message" else (5,)
    with pytest.raises(TypeError):
        getattr(session, read)(*args)
    # A lone surrogate names nothing: every id comes from JSON.
    args = ("agent", "\ud800") if read == "message" else ("\ud800",)
    assert getattr(session, read)(*args) is None
