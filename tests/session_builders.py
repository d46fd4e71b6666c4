"""Builders of session messages and stores shared by the session tests."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import HealthCheck, settings

SID = "sess_abc123def456"


SEEDED = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def upd(update: dict, sid: str = SID) -> dict:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": sid, "update": update},
    }


def init(version: int, rid: Any = 0) -> list[dict]:
    return [
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "initialize",
            "params": {"protocolVersion": version},
        },
        {"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": version}},
    ]


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def ndjson(messages: list[Any]) -> bytes:
    out = []
    for m in messages:
        out.append(m if isinstance(m, bytes) else json.dumps(m).encode())
    return b"\n".join(out) + b"\n"


def store_of(backend, messages: list[dict], version: int | None = None, **options):
    store = backend.Sessions(**options)
    if version is not None:
        for m in init(version):
            store.apply(m)
    for m in messages:
        store.apply(m)
    return store


def snap(backend, messages: list[dict], version: int | None = None, sid: str = SID) -> dict:
    return store_of(backend, messages, version)[sid].snapshot()


TOOL_FIELDS = {
    "title": "Read",
    "kind": "read",
    "status": "pending",
    "content": [{"type": "content", "content": text("x")}],
    "locations": [{"path": "/a", "line": 3}],
    "rawInput": {"path": "/a"},
    "rawOutput": {"ok": True},
    "_meta": {"m": 1},
    "name": "read_file",
}


def output_chunk(tid: str, data: bytes, sid: str = SID) -> dict:
    return upd(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": tid, "data": b64(data)}, sid=sid
    )


def terminal_views(store, sid: str = SID) -> dict:
    return {
        tid: (t["text"], t["truncated"]) for tid, t in store[sid].snapshot()["terminals"].items()
    }


def prompt_request(rid: Any = 2) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "session/prompt",
        "params": {"sessionId": SID, "prompt": [text("go")]},
    }


def rpc_request(rid: Any, method: str, **params: Any) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"sessionId": SID, **params}}


def rpc_result(rid: Any, result: Any) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def rpc_error(rid: Any) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32002, "message": "not found"}}
