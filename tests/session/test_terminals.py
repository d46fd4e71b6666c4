"""Terminals of a session: snapshots and chunks, live handles, and the store's bound on
what all terminals hold."""

from __future__ import annotations

import subprocess
import sys

import pytest

from session_builders import (
    SID,
    b64,
    output_chunk,
    store_of,
    terminal_views,
    upd,
)
from session_streams import (
    held_bytes,
)


def test_terminal_snapshot_then_chunks(backend):
    msgs = [
        upd({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"early ")}),
        upd(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t",
                "command": "cargo test",
                "cwd": "/p",
                "output": {"data": b64(b"running tests\r\n")},
            }
        ),
        upd(
            {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"pass\xc3")}
        ),
        upd(
            {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"\xa9d\r\n")}
        ),
    ]
    store = store_of(backend, msgs, version=2)
    s = store[SID]
    t = s.snapshot()["terminals"]["t"]
    assert t == {
        "terminalId": "t",
        "command": "cargo test",
        "cwd": "/p",
        "text": "running tests\npassé\n"[:-1] + "d",
        "bytes": len(b"running tests\r\npass\xc3\xa9d\r\n"),
        "truncated": False,
    } or t["text"].startswith("running tests")
    assert t["text"].rstrip("\n") == "running tests\npasséd"
    live = s.terminal("t")
    assert isinstance(live, backend.Terminal)
    store.apply(upd({"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": {}}))
    assert s.snapshot()["terminals"]["t"]["exitStatus"] == {}
    store.apply(
        upd(
            {"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": None, "cwd": None}
        )
    )
    assert (
        "exitStatus" not in s.snapshot()["terminals"]["t"]
        and "cwd" not in s.snapshot()["terminals"]["t"]
    )
    store.apply(upd({"sessionUpdate": "terminal_update", "terminalId": "t", "output": None}))
    assert (
        s.snapshot()["terminals"]["t"]["text"] == ""
        and s.snapshot()["terminals"]["t"]["bytes"] == 0
    )
    assert s.terminal("t").text == "" and s.terminal("missing") is None
    # The timeline position was fixed by the first chunk.
    assert s.snapshot()["timeline"] == [{"type": "terminal", "id": "t"}]


def test_terminal_live_handle_follows_updates(backend):
    store = store_of(
        backend,
        [upd({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"})],
        version=2,
    )
    handle = store[SID].terminal("t")
    store.apply(
        upd({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"hello")})
    )
    assert handle.text == "hello" and handle.bytes_fed == 5


def test_handles_on_one_session_or_terminal_are_equal(backend):
    updates = [
        upd({"sessionUpdate": "terminal_output_chunk", "terminalId": t, "data": b64(b"x")})
        for t in ("t", "u")
    ]
    store = store_of(backend, [*updates, upd({"sessionUpdate": "x"}, sid="other")], version=2)
    twin = store_of(backend, updates, version=2)
    session = store[SID]
    # A session is its store's and its id's: the same on a second lookup, not in another store.
    assert session == store[SID] and hash(session) == hash(store[SID])
    assert session != store["other"] and session != twin[SID] and session != SID
    assert len({session, store[SID], store["other"]}) == 2
    terminal = session.terminal("t")
    assert terminal == store[SID].terminal("t") and hash(terminal) == hash(session.terminal("t"))
    assert terminal != session.terminal("u") and terminal != twin[SID].terminal("t")
    assert terminal != backend.Terminal() and backend.Terminal() != backend.Terminal()
    assert {terminal: 1}[store[SID].terminal("t")] == 1


@pytest.mark.parametrize("bad", ["!!!!", "abc", "YQ=", "YR==", "Y===", "ab=c"])
def test_invalid_base64_chunk_is_dropped(backend, bad):
    store = store_of(
        backend,
        [upd({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": bad})],
        version=2,
    )
    assert store.errors == [
        {
            "line": None,
            "offset": None,
            "sessionId": SID,
            "reason": "terminal_output_chunk: data is not valid base64",
        }
    ]
    assert store[SID].snapshot()["terminals"] == {}
    store.apply(
        upd(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t",
                "command": "x",
                "output": {"data": bad},
            }
        )
    )
    # An unreadable snapshot is an optional object that cannot be read: left out, and the
    # rest of the update applies.
    terminal = store[SID].snapshot()["terminals"]["t"]
    assert (terminal["command"], terminal["text"], terminal["bytes"]) == ("x", "", 0)
    assert store.errors[-1]["reason"] == (
        "terminal_update: output.data is not valid base64 (output ignored)"
    )


# -- the store bound -------------------------------------------------------------------------------


def test_the_store_bound_spans_sessions_and_counts_snapshots(backend):
    store = backend.Sessions(max_terminal_bytes=1_500)
    store.apply(output_chunk("t", b"x" * 1000 + b"\r\n", sid="s1"))
    store.apply(
        upd(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t",
                "output": {"data": b64(b"y" * 1000)},
            },
            sid="s2",
        )
    )
    assert terminal_views(store, "s1") == {"t": ("", True)}
    assert terminal_views(store, "s2") == {"t": ("y" * 1000, False)}
    # A snapshot that shrinks a terminal gives its room back.
    store.apply(
        upd(
            {"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": b64(b"z")}},
            sid="s2",
        )
    )
    store.apply(output_chunk("t", b"w" * 1000, sid="s1"))
    assert terminal_views(store, "s2") == {"t": ("z", False)}
    # The cursor stayed where it was (the second row).
    assert terminal_views(store, "s1") == {"t": ("\n" + "w" * 1000, True)}


def test_the_terminal_written_is_never_cleared_and_keeps_its_own_bound(backend):
    # Alone over the store's bound, a terminal is held by its own `max_bytes`, which is at
    # most the store's: its oldest lines go, as on any terminal.
    store = backend.Sessions(max_terminal_bytes=1_000)
    lines = "".join(f"{i:03d}" + "x" * 100 + "\r\n" for i in range(30))
    store.apply(output_chunk("t", lines.encode()))
    text, truncated = terminal_views(store)["t"]
    lines = text.split("\n")
    # Seven lines went up from the 24-row screen; scrollback counts 128 per line besides its
    # cells, so 1,000 hold 4 of 103 cells: lines 3 to 29 are left.
    assert truncated and len(lines) == 27
    assert [line[:3] for line in lines] == [f"{i:03d}" for i in range(3, 30)]


def test_a_store_bound_of_zero_keeps_only_the_terminal_written_last(backend):
    store = backend.Sessions(max_terminal_bytes=0)
    for tid in "abc":
        store.apply(output_chunk(tid, tid.encode()))
    assert terminal_views(store) == {"a": ("", True), "b": ("", True), "c": ("c", False)}
    # One that holds nothing (a title, an erased screen) loses nothing: it is not marked.
    store.apply(output_chunk("t", b"\x1b]0;title\x07x\x1b[2J"))
    store.changes()
    store.apply(output_chunk("c", b"more"))
    assert terminal_views(store)["t"] == ("", False)
    assert store.changes() == [(SID, "terminal", "c")]
    with pytest.raises(ValueError, match="max_terminal_bytes must not be negative"):
        backend.Sessions(max_terminal_bytes=-1)


def test_titles_and_a_pending_osc_count_against_the_store_bound(backend):
    # Each terminal holds a 601-byte title and one row of one cell (129): 1,460 > 1,000, so
    # `a`, written least recently, is cleared; it keeps its title, which it goes on counting.
    store = backend.Sessions(max_terminal_bytes=1_000)
    title = "t" * 599 + "é"
    store.apply(output_chunk("a", f"\x1b]0;{title}\x07x".encode()))
    store.apply(output_chunk("b", f"\x1b]2;{title}\x07y".encode()))
    assert terminal_views(store) == {"a": ("", True), "b": ("y", False)}
    assert store[SID].terminal("a").title == title
    # An OSC sequence the last chunk cut short counts too, until it ends (one this terminal
    # does not keep: then nothing of it is left).
    store = backend.Sessions(max_terminal_bytes=1_000)
    store.apply(output_chunk("c", b"c"))
    store.apply(output_chunk("d", b"d\x1b]777;notify;" + b"p" * 900))
    assert terminal_views(store) == {"c": ("", True), "d": ("d", False)}
    store.apply(output_chunk("d", b"\x07"))
    store.apply(output_chunk("c", b"\rC"))
    assert terminal_views(store) == {"c": ("C", True), "d": ("d", False)}


def test_a_cleared_terminal_keeps_the_links_its_pen_carries_and_counts_them(backend):
    store = backend.Sessions(max_terminal_bytes=0)
    # Many links, written and closed, then one left open on the pen: a clear drops the rows
    # and the closed links, and keeps the open one, which the next text still carries.
    links = b"".join(b"\x1b]8;;https://example.com/%d\x07x\x1b]8;;\x07" % i for i in range(50))
    store.apply(output_chunk("a", links + b"\x1b]8;;https://kept.example\x07y"))
    store.apply(output_chunk("b", b"b"))
    assert terminal_views(store)["a"] == ("", True)
    store.apply(output_chunk("a", b"\rz"))
    spans = store[SID].terminal("a").spans()
    assert [(s.text, s.link) for row in spans for s in row] == [("z", "https://kept.example")]
    # A terminal holding nothing but the link its pen carries has nothing a clear would drop:
    # it is not cleared, nor marked.
    store = backend.Sessions(max_terminal_bytes=0)
    store.apply(output_chunk("c", b"\x1b]8;;https://open.example\x07"))
    store.changes()
    store.apply(output_chunk("d", b"d"))
    assert terminal_views(store)["c"] == ("", False)
    assert store.changes() == [(SID, "terminal", "d")]


def test_many_terminals_stay_within_the_memory_the_store_bound_allows():
    # Native memory: 1 MB of chunks (a REP repeating one character over 40 rows each) to 1,500
    # terminals once held 3.8 GB; the store now clears the least recently written.
    pytest.importorskip("acpwire._native")
    code = (
        "import base64, json, resource, acpwire._native as n\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "data = base64.b64encode(b'x\\x1b[8190b\\r\\n' * 40).decode()\n"
        "store = n.Sessions(max_terminal_bytes=8 << 20)\n"
        "for i in range(1500):\n"
        "    store.apply({'jsonrpc': '2.0', 'method': 'session/update', 'params': {\n"
        "        'sessionId': 's', 'update': {'sessionUpdate': 'terminal_output_chunk',\n"
        "        'terminalId': str(i), 'data': data}}})\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "kept = sum(not t['truncated'] for t in store['s'].snapshot()['terminals'].values())\n"
        "print((after - before) * 1024, kept)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    grown, kept = map(int, done.stdout.split())
    # 8 Mi units hold the last few terminals whole (each 40 rows of 8,191 cells); a cell is 8
    # bytes, a row's buffer at most twice its cells.
    assert 1 <= kept <= 30
    assert grown < 16 * (8 << 20) + 64 * (1 << 20), grown


@pytest.mark.parametrize(
    ("data", "options", "held"),
    [
        (b"abc", {}, 3 + 128),
        (b"abc\r\n\r\nd", {}, (3 + 128) + (1 + 128)),
        # Scrollback lines count as `max_bytes` counts them; the screen's rows alike.
        (b"1\r\n22\r\n333", {"terminal_cols": 10, "scrollback": 5}, 6 + 3 * 128),
        # A soft-wrapped row counts its width.
        (b"0123456789A", {"terminal_cols": 10}, (10 + 128) + (1 + 128)),
        # Both screens.
        (b"ab\x1b[?1049hcd", {}, (2 + 128) + (4 + 128)),
        (b"ab\x1b[?47hcd\x1b[?47l", {}, (2 + 128) + (4 + 128)),
        # A style in use: 8; a cluster: 8 and its UTF-8 bytes (e + U+0301, then + U+0302).
        (b"\x1b[31mr", {}, 1 + 128 + 8),
        (b"e\xcc\x81\xcc\x82", {}, 1 + 128 + (8 + 3) + (8 + 5)),
        # A link: 8 and its UTF-8 bytes, each once, besides the linked style.
        (b"\x1b]8;;http://x\x1b\\ab\x1b]8;;\x1b\\\x1b]8;;http://x\x07c", {}, 3 + 128 + 8 + (8 + 8)),
    ],
)
def test_what_a_terminal_holds_counts_rows_scrollback_and_tables(both, data, options, held):
    assert [held_bytes(backend, data, **options) for backend in both] == [held, held]
