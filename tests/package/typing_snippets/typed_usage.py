"""Typed uses of the public API, which pass mypy --strict (tests/package/test_typing.py)."""

from __future__ import annotations

import acpwire
from acpwire.types import ErrorRecord, JsonRpcRequest, SessionSnapshot, ToolCall


def status_of(store: acpwire.Sessions, sid: str, tid: str) -> str | None:
    snapshot: SessionSnapshot = store[sid].snapshot()
    call: ToolCall = snapshot["toolCalls"][tid]
    status: str | None = snapshot["toolCalls"][tid].get("status")
    assert call["toolCallId"] == tid
    return status


def reads(session: acpwire.Session) -> list[str]:
    out: list[str] = []
    call = session.tool_call("t1")
    if call is not None:
        out.append(call["toolCallId"])
    message = session.message("thought", "m1")
    if message is not None:
        out.append(message["role"])
        out.extend(block["type"] for block in message.get("content", []))
    terminal = session.terminal_entry("term")
    if terminal is not None:
        out.append(terminal["text"])
        exit_code: int | None = terminal.get("exitStatus", {}).get("exitCode")
        out.append(str(exit_code))
    plan = session.plan()
    if plan is not None:
        out.extend(entry["status"] for entry in plan.get("entries", []))
    return out


def errors(store: acpwire.Sessions) -> list[str]:
    records: list[ErrorRecord] = store.errors
    lines = [r["line"] for r in records if r["line"] is not None]
    return [f"{r['reason']} {lines}" for r in records]


def apply(store: acpwire.Sessions) -> None:
    request: JsonRpcRequest = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": []},
    }
    store.apply(request, sender="client")
    store.apply({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
    for sid, kind, eid in store.changes():
        if kind == "toolCall":
            print(sid, eid)
