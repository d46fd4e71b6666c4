"""The fake agent, driven over real pipes as a client would drive it."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys

import pytest

import acpwire
from acpwire.aio import read_messages
from acpwire.cli.fake_agent import TurnConfig, build_turn


class Client:
    """A minimal ACP client over a subprocess's pipes."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        assert proc.stdout is not None
        self.messages = read_messages(proc.stdout).__aiter__()
        self.next_id = 1

    async def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(acpwire.dumps(message))
        await self.proc.stdin.drain()

    async def request(self, method: str, params: dict) -> int:
        request_id = self.next_id
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    async def receive(self) -> dict:
        return await asyncio.wait_for(self.messages.__anext__(), timeout=20)

    async def until(self, predicate) -> list[dict]:
        seen = []
        while True:
            message = await self.receive()
            seen.append(message)
            if predicate(message):
                return seen

    async def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return await asyncio.wait_for(self.proc.wait(), timeout=20)


async def start(*options: str) -> Client:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acpwire",
        "fake-agent",
        *options,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    return Client(proc)


async def open_session(client: Client, version: int) -> str:
    init = await client.request("initialize", {"protocolVersion": version})
    [reply] = await client.until(lambda m: m.get("id") == init)
    assert reply["result"]["protocolVersion"] == version
    new = await client.request("session/new", {"cwd": "/tmp", "mcpServers": []})
    [reply] = await client.until(lambda m: m.get("id") == new)
    return reply["result"]["sessionId"]


def is_idle(message: dict) -> bool:
    update = message.get("params", {}).get("update", {})
    return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"


async def test_v2_turn_is_exactly_the_built_turn():
    options = ("--tokens", "40", "--terminal-bytes", "3000", "--terminal-chunk", "700")
    client = await start(*options)
    session = await open_session(client, 2)
    prompt = await client.request(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
    )
    seen = await client.until(is_idle)
    assert await client.close() == 0
    [response] = [m for m in seen if m.get("id") == prompt]
    updates = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
    assert updates[0] == {
        "sessionUpdate": "user_message",
        "messageId": response["result"]["messageId"],
        "content": [{"type": "text", "text": "go"}],
    }
    config = TurnConfig(tokens=40, terminal_bytes=3000, terminal_chunk=700)
    assert updates[1:-1] == build_turn(session, 1, 2, config)
    assert updates[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    pty = b"".join(
        base64.b64decode(u["data"])
        for u in updates
        if u["sessionUpdate"] == "terminal_output_chunk"
    )
    assert len(pty) == 3000 and b"\x1b[K" in pty
    text = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert len(text.split()) == 40


async def test_default_turn_is_a_few_hundred_updates():
    client = await start()
    session = await open_session(client, 2)
    await client.request("session/prompt", {"sessionId": session, "prompt": []})
    seen = await client.until(is_idle)
    await client.close()
    assert 150 <= sum(m.get("method") == "session/update" for m in seen) <= 600


async def test_v1_turn_ends_with_the_prompt_response():
    client = await start("--tokens", "10", "--terminal-bytes", "500")
    session = await open_session(client, 1)
    prompt = await client.request("session/prompt", {"sessionId": session, "prompt": []})
    seen = await client.until(lambda m: m.get("id") == prompt)
    await client.close()
    assert seen[-1]["result"] == {"stopReason": "end_turn"}
    kinds = [m["params"]["update"]["sessionUpdate"] for m in seen[:-1]]
    assert "tool_call" in kinds and "plan" in kinds
    assert "terminal_output_chunk" not in kinds and "state_update" not in kinds
    assert all("messageId" not in m["params"]["update"] for m in seen[:-1])


@pytest.mark.parametrize(("choice", "stop"), [("allow-once", "end_turn"), (None, "cancelled")])
async def test_permission_round_trip(choice, stop):
    client = await start("--permission", "--tokens", "5")
    session = await open_session(client, 2)
    await client.request("session/prompt", {"sessionId": session, "prompt": []})
    seen = await client.until(lambda m: m.get("method") == "session/request_permission")
    ask = seen[-1]
    assert ask["params"]["subject"]["toolCall"]["toolCallId"].startswith("call_")
    outcome = {"outcome": "selected", "optionId": choice} if choice else {"outcome": "cancelled"}
    await client.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": outcome}})
    seen = await client.until(is_idle)
    await client.close()
    assert seen[-1]["params"]["update"]["stopReason"] == stop


async def test_cancel_stops_a_paced_turn():
    client = await start("--rate", "200", "--tokens", "2000")
    session = await open_session(client, 2)
    await client.request("session/prompt", {"sessionId": session, "prompt": []})
    await client.until(lambda m: m.get("method") == "session/update")
    await client.send(
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
    )
    seen = await client.until(is_idle)
    await client.close()
    assert seen[-1]["params"]["update"]["stopReason"] == "cancelled"
    assert len(seen) < 2000


async def test_errors_for_unknown_methods_and_sessions():
    client = await start()
    await open_session(client, 2)
    unknown = await client.request("fs/teleport", {})
    [reply] = await client.until(lambda m: m.get("id") == unknown)
    assert reply["error"]["code"] == -32601
    bad = await client.request("session/prompt", {"sessionId": "nope", "prompt": []})
    [reply] = await client.until(lambda m: m.get("id") == bad)
    assert reply["error"]["code"] == -32602
    await client.close()


def test_turns_are_deterministic():
    config = TurnConfig(seed=7)
    assert build_turn("s", 3, 2, config) == build_turn("s", 3, 2, config)
    assert build_turn("s", 3, 2, config) != build_turn("s", 4, 2, config)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX device")
def test_an_agent_reading_from_dev_null_ends_at_once():
    # /dev/null is a character device epoll refuses: the pipe transport failed inside the loop
    # and the agent hung; it now reads such an input as a file, and ends at its EOF.
    import subprocess

    with open("/dev/null", "rb") as null:
        done = subprocess.run(
            [sys.executable, "-m", "acpwire", "fake-agent"],
            stdin=null,
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"" and b"PermissionError" not in done.stderr


def _ndjson(requests: list) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in requests)


def _one_turn(version: int) -> list:
    """A client's whole side of one turn: initialize, a new session, one prompt."""
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": version}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": "sess_0001", "prompt": []},
        },
    ]


def _serve(requests: list, *options: str, stdout=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "acpwire", "fake-agent", *options],
        input=_ndjson(requests),
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=60,
        check=False,
    )


def test_malformed_requests_get_errors_not_a_crash():
    done = _serve(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1]},
            {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": ["x"]}},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": {}}},
            {"jsonrpc": "2.0", "id": [1], "result": {}},
            # An int, exactly: true and 1.0 are no protocol version.
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "initialize",
                "params": {"protocolVersion": True},
            },
            {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": 1.0}},
        ]
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["error"]["code"] for r in replies[:2]] == [-32602, -32602]
    assert [r["result"]["protocolVersion"] for r in replies[2:]] == [2, 2]


def test_a_permission_request_left_unanswered_at_eof_ends_its_turn_cancelled():
    done = _serve(_one_turn(version=1), "--permission")
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes and devices")
def test_a_failed_standard_output_ends_with_141_or_1_and_no_traceback():
    prompts = _one_turn(version=2)
    data = _ndjson(prompts)
    proc = subprocess.Popen(
        [sys.executable, "-m", "acpwire", "fake-agent", "--terminal-bytes", "200000"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(data)
    proc.stdin.close()
    assert proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `| head -1` does
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 128 + 13 and b"Traceback" not in stderr, stderr
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            done = _serve(prompts, stdout=full)
        assert done.returncode == 1 and b"cannot write standard output" in done.stderr
        assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("option", "value"),
    [("--first-update-delay", "-1"), ("--turn-delay", "nan"), ("--crash-after", "-2")],
)
def test_pacing_options_must_be_non_negative(option, value):
    done = subprocess.run(
        [sys.executable, "-m", "acpwire", "fake-agent", option, value],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and option in done.stderr


async def test_a_v1_turn_with_client_requests_waits_for_each_answer():
    client = await start("--tokens", "2", "--tool-calls", "3", "--client-requests")
    session_id = await open_session(client, 1)
    prompt = await client.request("session/prompt", {"sessionId": session_id, "prompt": []})
    asked = []
    while True:
        message = await client.receive()
        if message.get("id") == prompt and "method" not in message:
            break
        if "method" in message and "id" in message:
            asked.append(message["method"])
            # Refuse the file requests; run the terminal as a client would.
            if message["method"].startswith("fs/"):
                error = {"code": -32601, "message": "no fs here"}
                await client.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            elif message["method"] == "terminal/create":
                result = {"terminalId": "t1"}
                await client.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            else:
                result = {"output": "hello\n", "truncated": False}
                await client.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif message.get("method") == "session/update":
            update = message["params"]["update"]
            if update.get("status") == "completed":
                texts = [c["content"]["text"] for c in update["content"] if c["type"] == "content"]
                asked.append(texts[-1])
    assert asked == [
        "fs/read_text_file",
        "read: refused (no fs here)",
        "fs/write_text_file",
        "write: refused (no fs here)",
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
        "output: hello",
    ]
    assert message["result"] == {"stopReason": "end_turn"}
    await client.close()
