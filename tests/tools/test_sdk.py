"""acpwire.sdk against the official ACP Python SDK, over real pipes with real agent processes."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")

import acpwire  # noqa: E402
from acpwire import sdk  # noqa: E402
from acpwire.cli.fake_agent import TurnConfig, build_turn  # noqa: E402

FAKE_AGENT = (sys.executable, "-m", "acpwire", "fake-agent")
# The SDK starts agents with a trimmed environment; this keeps acpwire importable for the agent
# wherever it is installed from.
AGENT_ENV = {"PYTHONPATH": str(Path(acpwire.__file__).resolve().parent.parent)}


@pytest.fixture(autouse=True)
def drop_in_backend(backend, monkeypatch):
    """Every drop-in runs on each backend: its frame decoder, encoder and session store."""
    monkeypatch.setattr(sdk, "FrameDecoder", backend.FrameDecoder)
    monkeypatch.setattr(sdk, "dumps", backend.dumps)
    monkeypatch.setattr(sdk, "_sessions_class", lambda: backend.Sessions)
    return backend


class RecordingClient:
    """An SDK client that keeps every update and allows every permission request."""

    def __init__(self) -> None:
        self.updates: list = []
        self.permissions: list = []

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append((session_id, update))

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        self.permissions.append(tool_call.tool_call_id)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=options[0].option_id)
        )


async def _prompt(conn, session_id: str, text: str = "fix the bug"):
    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[acp.text_block(text)]), timeout=8
    )


async def test_spawn_agent_process_runs_a_v1_session_with_frames_over_64_kib():
    options = ["--tokens", "40", "--terminal-bytes", "150000", "--permission"]
    client = RecordingClient()
    errors: list = []
    async with sdk.spawn_agent_process(
        client, *FAKE_AGENT, *options, env=AGENT_ENV, on_error=errors.append
    ) as (
        conn,
        process,
    ):
        # The SDK speaks protocol version 1; the fake agent follows the client's choice.
        init = await asyncio.wait_for(conn.initialize(protocol_version=acp.PROTOCOL_VERSION), 30)
        assert init.protocol_version == 1
        session = await asyncio.wait_for(conn.new_session(cwd="/tmp"), 30)
        response = await _prompt(conn, session.session_id)
    assert process.returncode == 0
    assert errors == []
    assert response.stop_reason == "end_turn"

    config = TurnConfig(tokens=40, terminal_bytes=150_000, permission=True)
    expected = build_turn(session.session_id, 1, 1, config)
    sent = [u for u in expected if "sessionUpdate" in u]
    assert len(client.updates) == len(sent)
    assert [u.session_update for _, u in client.updates] == [u["sessionUpdate"] for u in sent]
    assert client.permissions == [u["permission"] for u in expected if "permission" in u]

    # The execute call's terminal text arrives whole, in one frame far past 64 KiB.
    texts = [
        block.content.text
        for _, update in client.updates
        if update.session_update == "tool_call_update" and update.content
        for block in update.content
        if getattr(block, "type", None) == "content"
    ]
    assert max(len(t) for t in texts) >= 100_000
    words = "".join(
        u.content.text for _, u in client.updates if u.session_update == "agent_message_chunk"
    )
    assert words == "".join(
        u["content"]["text"] for u in sent if u["sessionUpdate"] == "agent_message_chunk"
    )


# An agent that sends what a stock reader trips on: a 1 MB update, garbage, a bare JSON value
# and a line over the cap, then ends the turn normally.
TINY_AGENT = textwrap.dedent(
    """
    import json, sys

    def send(obj):
        sys.stdout.write(json.dumps(obj) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1,
                  "agentCapabilities": {}, "authMethods": []}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            big = "y" * 1_000_000
            sys.stdout.write("this is not json\\n")
            sys.stdout.write("42\\n")
            sys.stdout.write('"' + "z" * 3_000_000 + '"\\n')
            send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1",
                  "update": {"sessionUpdate": "agent_message_chunk",
                             "content": {"type": "text", "text": big}}}})
            send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    """
)


async def _tiny_agent(tmp_path):
    script = tmp_path / "tiny_agent.py"
    script.write_text(TINY_AGENT)
    # Default StreamReader limit (64 KiB), as the SDK's own spawn helper leaves it.
    return await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )


async def _run_tiny_session(conn, client) -> str:
    await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
    session = await asyncio.wait_for(conn.new_session(cwd="/tmp"), 30)
    response = await _prompt(conn, session.session_id)
    assert len(client.updates) == 1
    assert len(client.updates[0][1].content.text) == 1_000_000
    return response.stop_reason


async def _close(conn, proc) -> None:
    """Close the connection, then the agent's input, and wait for the agent to exit."""
    await conn.close()
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 30)


def _reasons(errors) -> list[str]:
    return [e.reason for e in errors]


async def test_connect_to_agent_reads_a_1_mb_update_and_skips_bad_frames(tmp_path):
    proc = await _tiny_agent(tmp_path)
    client = RecordingClient()
    errors: list = []
    conn = sdk.connect_to_agent(
        client, proc.stdin, proc.stdout, max_frame_bytes=2_000_000, on_error=errors.append
    )
    try:
        assert await _run_tiny_session(conn, client) == "end_turn"
    finally:
        await _close(conn, proc)
    assert _reasons(errors) == [
        "invalid JSON",
        "not a JSON-RPC message object",
        "frame exceeds max_frame_bytes",
    ]
    assert all(isinstance(e, acpwire.FrameError) for e in errors)


async def test_frame_stream_reader_serves_the_sdk_stream_api(tmp_path):
    # The path SDK releases before 0.12 take; the current SDK accepts it too.
    proc = await _tiny_agent(tmp_path)
    client = RecordingClient()
    errors: list = []
    reader = sdk.FrameStreamReader(proc.stdout, max_frame_bytes=2_000_000, on_error=errors.append)
    conn = acp.connect_to_agent(client, proc.stdin, reader)
    try:
        assert await _run_tiny_session(conn, client) == "end_turn"
    finally:
        await _close(conn, proc)
    assert len(errors) == 3
    assert reader.decoder.frames >= 7


async def test_bad_frames_are_logged_by_default(tmp_path, caplog):
    proc = await _tiny_agent(tmp_path)
    client = RecordingClient()
    conn = sdk.connect_to_agent(client, proc.stdin, proc.stdout, max_frame_bytes=2_000_000)
    try:
        with caplog.at_level("WARNING", logger="acpwire.sdk"):
            assert await _run_tiny_session(conn, client) == "end_turn"
    finally:
        await _close(conn, proc)
    logged = [r for r in caplog.records if r.name == "acpwire.sdk"]
    assert len(logged) == 3
    assert "invalid JSON" in logged[0].getMessage()


async def test_frame_transport_round_trip_over_memory_streams():
    reader = asyncio.StreamReader()
    sent = bytearray()

    class Writer:
        def write(self, data):
            sent.extend(data)

        async def drain(self):
            pass

    transport = sdk.FrameTransport(reader, Writer(), max_frame_bytes=64)
    await transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert sent.endswith(b"\n") and acpwire.loads(bytes(sent))["id"] == 1
    reader.feed_data(b'{"id":1,"result":{}}\n[{"id":2,"result":1},{"id":3,"result":2}]\n')
    reader.feed_data(b'{"unterminated":' + b" " * 100 + b"\n" + b'{"id":4,"result":null}')
    reader.feed_eof()
    got = [await transport.receive() for _ in range(5)]
    assert [m and m["id"] for m in got] == [1, 2, 3, 4, None]
    await transport.close()
    with pytest.raises(ConnectionError):
        await transport.send({"jsonrpc": "2.0", "method": "x"})


async def test_raising_on_error_ends_the_connection(tmp_path):
    proc = await _tiny_agent(tmp_path)
    client = RecordingClient()

    def fatal(error):
        raise error

    conn = sdk.connect_to_agent(client, proc.stdin, proc.stdout, on_error=fatal)
    try:
        await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
        session = await asyncio.wait_for(conn.new_session(cwd="/tmp"), 30)
        with pytest.raises(ConnectionError):
            await _prompt(conn, session.session_id)
    finally:
        await conn.close()
        # Nobody reads the agent any more, so it is stuck writing its big frames.
        proc.kill()
        await asyncio.wait_for(proc.wait(), 30)


def _v1_notifications(config: TurnConfig):
    from acp.schema import SessionNotification

    updates = [u for u in build_turn("s1", 1, 1, config) if "sessionUpdate" in u]
    return [SessionNotification.model_validate({"sessionId": "s1", "update": u}) for u in updates]


def test_session_accumulator_matches_the_sdk_snapshot():
    from acp.contrib.session_state import SessionAccumulator as Stock

    notifications = _v1_notifications(TurnConfig(tokens=30, thoughts=5, terminal_bytes=2000))
    stock, ours = Stock(), sdk.SessionAccumulator()
    seen = []
    unsubscribe = ours.subscribe(lambda snapshot, note: seen.append((snapshot, note)))
    returned = []
    for note in notifications:
        # apply returns the SDK's snapshot, as the SDK's apply does, each as of its update.
        returned.append((stock.apply(note), ours.apply(note)))
    unsubscribe()
    assert [note for _, note in seen] == notifications
    assert all(got is mine for (got, _), (_, mine) in zip(seen, returned, strict=True))
    for theirs, mine in returned:
        assert mine.model_dump() == theirs.model_dump()
        assert type(mine) is type(theirs) and mine == theirs
    assert ours.snapshot().model_dump() == stock.snapshot().model_dump()
    assert ours.session_id == "s1"
    assert (
        len(ours.agent_messages) == 30 and ours.tool_calls["call_0001_00"]["status"] == "completed"
    )


def test_session_accumulator_snapshot_is_the_sdk_type_and_keeps_its_moment():
    from acp.contrib.session_state import SessionSnapshot

    acc = sdk.SessionAccumulator()
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a"}}
    first = acc.apply({"sessionId": "one", "update": chunk})
    # isinstance and class checks do not build it.
    assert isinstance(first, SessionSnapshot) and first.__class__ is SessionSnapshot
    assert type(first) is not SessionSnapshot
    second = acc.apply({"sessionId": "one", "update": chunk})
    other = acc.apply({"sessionId": "two", "update": chunk})  # a new session resets
    acc.apply({"sessionId": "two", "update": chunk})
    # Read after later updates, each still shows the state its own update left.
    assert (first.session_id, len(first.agent_messages)) == ("one", 1)
    assert (second.session_id, len(second.agent_messages)) == ("one", 2)
    assert (other.session_id, len(other.agent_messages)) == ("two", 1)
    assert type(first) is SessionSnapshot and first.agent_messages[0].content.text == "a"
    assert acc.snapshot().agent_messages == second.agent_messages
    with pytest.raises(Exception, match="frozen"):
        first.session_id = "x"


def test_session_accumulator_takes_plain_dicts_of_v1_and_v2():
    config = TurnConfig(tokens=5, thoughts=2, terminal_bytes=100)
    for version in (1, 2):
        acc = sdk.SessionAccumulator(protocol_version=version)
        for update in build_turn("s2", 1, version, config):
            if "sessionUpdate" in update:
                params = {"sessionId": "s2", "update": update}
                # Both forms: the params alone, and the whole JSON-RPC message.
                message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
                acc.apply(params if version == 1 else message)
        assert "".join(c["content"]["text"] for c in acc.agent_messages) == "".join(
            u["content"]["text"]
            for u in build_turn("s2", 1, version, config)
            if u.get("sessionUpdate") == "agent_message_chunk"
        )
        assert [e["status"] for e in acc.plan_entries] == ["completed"] * 3
        assert acc.sessions.errors == []


def test_session_accumulator_session_change_and_errors():
    from acp.contrib.session_state import (
        SessionNotificationMismatchError,
        SessionSnapshotUnavailableError,
    )

    acc = sdk.SessionAccumulator()
    with pytest.raises(SessionSnapshotUnavailableError):
        acc.snapshot()
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a"}}
    acc.apply({"sessionId": "one", "update": chunk})
    acc.apply({"sessionId": "two", "update": chunk})
    assert acc.session_id == "two" and len(acc.agent_messages) == 1
    strict = sdk.SessionAccumulator(auto_reset_on_session_change=False)
    strict.apply({"sessionId": "one", "update": chunk})
    with pytest.raises(SessionNotificationMismatchError):
        strict.apply({"sessionId": "two", "update": chunk})
    with pytest.raises(TypeError):
        strict.apply(42)


def test_session_accumulator_keeps_explicit_nulls_apart_from_omitted_fields():
    from acp.schema import SessionNotification

    acc = sdk.SessionAccumulator(protocol_version=2)
    start = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "title": "t",
        "status": "pending",
    }
    acc.apply(SessionNotification.model_validate({"sessionId": "s", "update": start}))
    # v2 rules: an omitted field stays, an explicit null clears.
    patch = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": None}
    acc.apply(SessionNotification.model_validate({"sessionId": "s", "update": patch}))
    assert acc.tool_calls["c"] == {"toolCallId": "c", "status": "pending"}


def test_session_accumulator_apply_builds_no_snapshot():
    # What made the SDK's accumulator quadratic is a deep-copied snapshot on every apply; here
    # apply hands the update to the store once and returns a snapshot that builds itself when
    # read (the store's own updates are linear: benches/scripts/linear_time.py). Counted, not
    # timed.
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "w "}}
    notes = _v1_notifications(TurnConfig(tokens=0, thoughts=0, tool_calls=0, plan=False))
    acc = sdk.SessionAccumulator()
    for note in notes:
        acc.apply(note)
    calls = {"apply": 0, "snapshot": 0}

    class CountingStore:
        def __init__(self, store):
            self._store = store

        def apply(self, message):
            calls["apply"] += 1
            self._store.apply(message)

        def __getitem__(self, session_id):
            session = self._store[session_id]

            class CountingSession:
                def snapshot(self):
                    calls["snapshot"] += 1
                    return session.snapshot()

                def _message_blocks(self, index):
                    return session._message_blocks(index)

            return CountingSession()

        def __contains__(self, session_id):
            return session_id in self._store

    acc.sessions = CountingStore(acc.sessions)
    for _ in range(20_000):
        snapshot = acc.apply({"sessionId": "s1", "update": chunk})
    assert calls == {"apply": 20_000, "snapshot": 0}
    # Built on its first read, once: from the live state, as it is the latest.
    assert len(snapshot.agent_messages) == 20_000
    assert len(snapshot.user_messages) == 0
    assert calls == {"apply": 20_000, "snapshot": 1}
    assert len(acc.agent_messages) == 20_000
    assert calls["snapshot"] == 2


async def test_connect_to_agent_hands_other_forms_to_the_sdk():
    reader = asyncio.StreamReader()
    # Streams the SDK refuses are refused with its own error, not accepted and left to fail.
    with pytest.raises(TypeError, match="requires asyncio StreamWriter/StreamReader"):
        sdk.connect_to_agent(RecordingClient(), reader, None)
    if not sdk._takes_transport(acp):
        pytest.skip("this SDK takes no message transport")
    # The SDK 0.12 form: one message Transport, no output stream.
    transport = sdk.FrameTransport(asyncio.StreamReader(), None)
    conn = sdk.connect_to_agent(RecordingClient(), transport)
    assert type(conn).__name__ == "ClientSideConnection"
    await conn.close()


class _Chunks:
    """A byte reader handing out fixed pieces, then EOF."""

    def __init__(self, data: bytes, size: int) -> None:
        self.pieces = [data[i : i + size] for i in range(0, len(data), size)]

    async def read(self, n: int) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


# Frames the SDK's `json.loads` reads though strict JSON refuses them (a lone surrogate escape,
# NaN, Infinity), between good and bad ones; the last has no newline.
_LENIENT = (
    b'{"id":1,"result":{}}\n'
    b'{"id":2,"result":{"_meta":{"note":"\\ud83d"}}}\r\n'
    b"{broken\n"
    b'{"id":3,"result":{"cost":NaN}}\n'
    + b'{"id":4,"result":{"pad":"'
    + b"x" * 300
    + b'","inf":-Infinity}}\n'
    b'[{"id":5,"result":NaN},{"id":6,"result":2}]\n'
    b"[NaN]\n"
    b'{"id":7,"result":"\\udc00"}'
)


@pytest.mark.parametrize("size", [1, 7, 64, 4096])
async def test_frames_only_json_loads_reads_are_delivered_as_the_sdk_delivers_them(size):
    import json
    import math

    expected = [json.loads(line) for line in _LENIENT.splitlines() if line != b"{broken"]
    expected = [m for line in expected for m in (line if isinstance(line, list) else [line])]
    errors: list = []
    transport = sdk.FrameTransport(_Chunks(_LENIENT, size), None, on_error=errors.append)
    got = []
    while (message := await transport.receive()) is not None:
        got.append(message)
    # The SDK drops a batch entry that is no object; so does the transport, reporting it.
    assert [m.get("id") for m in got] == [1, 2, 3, 4, 5, 6, 7]
    assert json.dumps(got) == json.dumps([m for m in expected if isinstance(m, dict)])
    assert math.isnan(got[2]["result"]["cost"]) and got[6]["result"] == "\udc00"
    assert [e.reason for e in errors] == ["invalid JSON", "not a JSON-RPC message object"]
    # Through SDK 0.7-0.11 each comes out as a line the SDK's `json.loads` reads back alike.
    reader = sdk.FrameStreamReader(_Chunks(_LENIENT, size), on_error=lambda e: None)
    lines = []
    while line := await reader.readline():
        lines.append(json.loads(line))
    assert json.dumps(lines) == json.dumps(got)
