"""Spawn an ACP agent, send it a prompt, and print its session as it moves: the agent's text as
it streams, thoughts, plan entries, tool calls and their status, and how the turn ended.

    python examples/live_client.py [--prompt TEXT] [--save TRACE] [-- AGENT_CMD ...]

With no command it runs ``acpwire fake-agent``. Reading and drawing are apart: the reader
applies every message to the store as it arrives, and the view draws what ``changes()`` names
at most every ``--interval`` seconds, however fast the agent talks.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import IO, Any

import acpwire
from acp_client import FAKE_AGENT, AgentConnection, visible

# The entity types of `changes()` that name a message, and the role `message_text` takes.
MESSAGE_ROLES = {
    "agentMessage": "agent",
    "thought": "thought",
    "userMessage": "user",
    "sessionMessage": "session",
}


class LiveView:
    """Prints each change once: new text of a message, a tool call's new status, a plan."""

    def __init__(self, store: acpwire.Sessions, out: IO[str]) -> None:
        self.store, self.out = store, out
        self.printed: dict[tuple[str, str], int] = {}  # (role, message id) -> characters shown
        self.status: dict[str, str] = {}  # tool call id -> last status shown

    def draw(self) -> None:
        # A change names the entity; each is read alone, without a snapshot of the session.
        for session_id, kind, entity_id in self.store.changes():
            session = self.store[session_id]
            role = MESSAGE_ROLES.get(kind)
            if role is not None:
                self._message(role, entity_id, session.message_text(entity_id, role) or "")
            elif kind == "toolCall" and (call := session.tool_call(entity_id)) is not None:
                self._tool_call(dict(call))
            elif kind == "plan" and (plan := session.plan(entity_id)) is not None:
                entries = plan.get("entries", [])
                done = sum(e.get("status") == "completed" for e in entries)
                print(f"[plan] {done}/{len(entries)} done", file=self.out)
        self.out.flush()

    def _message(self, role: str, message_id: str, text: str) -> None:
        shown = self.printed.get((role, message_id), 0)
        if len(text) > shown:
            print(f"[{role}] {visible(text[shown:])}", file=self.out)
            self.printed[role, message_id] = len(text)

    def _tool_call(self, call: dict[str, Any]) -> None:
        status = str(call.get("status", "pending"))
        if self.status.get(call["toolCallId"]) != status:
            self.status[call["toolCallId"]] = status
            title = visible(str(call.get("title", call["toolCallId"])))
            print(f"[tool] {title}: {visible(status)}", file=self.out)


async def run(
    command: list[str],
    prompt: str,
    out: IO[str],
    interval: float = 0.05,
    trace: IO[bytes] | None = None,
) -> acpwire.Sessions:
    store = acpwire.Sessions()
    view = LiveView(store, out)
    agent = await AgentConnection.spawn(command, store, trace)

    async def redraw() -> None:
        while True:
            await agent.updated.wait()
            view.draw()
            await asyncio.sleep(interval)

    drawer = asyncio.create_task(redraw())
    try:
        session_id = await agent.start_session()
        await agent.prompt(session_id, prompt)
    finally:
        drawer.cancel()
        await agent.close()
    view.draw()
    print(f"[turn] {store[session_id].stop_reason}", file=out)
    return store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render an ACP agent's session live.")
    parser.add_argument("--prompt", default="Fix the failing test.")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between draws")
    parser.add_argument("--save", type=argparse.FileType("wb"), help="write every message here")
    parser.add_argument("command", nargs="*", help="the agent to run (default: acpwire fake-agent)")
    args = parser.parse_args(argv)
    command = args.command or [*FAKE_AGENT, "--rate", "2000"]
    asyncio.run(run(command, args.prompt, sys.stdout, args.interval, args.save))
    return 0


if __name__ == "__main__":
    sys.exit(main())
