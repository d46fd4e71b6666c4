"""Watch a running tool call's terminal: spawn an agent, prompt it, and redraw the last lines of
the first terminal it opens (or ``--terminal ID``) as its output streams in.

    python examples/terminal_view.py [--rows 20] [--cols 100] [--save TRACE] [-- AGENT_CMD ...]

On a terminal it redraws in place; otherwise each draw is printed after a header line. With no
command it runs ``acpwire fake-agent`` with terminal output, paced so the view has time to move.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import IO

import acpwire
from acp_client import FAKE_AGENT, AgentConnection, visible


class TerminalView:
    def __init__(self, store: acpwire.Sessions, out: IO[str], rows: int, wanted: str | None):
        self.store, self.out, self.rows = store, out, rows
        self.session_id: str | None = None
        self.terminal_id = wanted
        self.in_place = out.isatty()

    def draw(self) -> None:
        moved = False
        for change in self.store.changes():
            session_id, kind, entity_id = change[0], change[1], change[2]
            if kind == "terminal" and self.terminal_id in (None, entity_id):
                self.session_id, self.terminal_id = session_id, entity_id
            moved = moved or (kind == "terminal" and entity_id == self.terminal_id)
        if moved and self.session_id is not None:
            self.out.write(self.frame())
            self.out.flush()

    def frame(self) -> str:
        assert self.session_id is not None and self.terminal_id is not None
        session = self.store[self.session_id]
        terminal = session.terminal(self.terminal_id)
        entry = session.snapshot()["terminals"][self.terminal_id]
        exit_status = entry.get("exitStatus")
        if isinstance(exit_status, dict):
            state = f"exit {exit_status.get('exitCode', exit_status.get('signal'))}"
        else:
            state = "running"
        header = f"--- {self.terminal_id} {visible(str(entry.get('command', '')))}: {state}"
        lines = terminal.text.split("\n")[-self.rows :] if terminal is not None else []
        body = "\n".join([header, *lines]) + "\n"
        # In place: home the cursor and clear below. The lines are a terminal's rendered text,
        # in which the agent's escape sequences were interpreted, not passed on.
        return f"\x1b[H\x1b[J{body}" if self.in_place else body


async def run(
    command: list[str],
    out: IO[str],
    *,
    rows: int = 20,
    cols: int = 100,
    terminal_id: str | None = None,
    interval: float = 0.05,
    trace: IO[bytes] | None = None,
) -> TerminalView:
    store = acpwire.Sessions(terminal_cols=cols)
    view = TerminalView(store, out, rows, terminal_id)
    agent = await AgentConnection.spawn(command, store, trace)

    async def redraw() -> None:
        while True:
            await agent.updated.wait()
            agent.updated.clear()
            view.draw()
            await asyncio.sleep(interval)

    drawer = asyncio.create_task(redraw())
    try:
        session_id = await agent.start_session()
        await agent.prompt(session_id, "Run the tests.")
    finally:
        drawer.cancel()
        await agent.close()
    view.draw()
    return view


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A live view of a tool call's terminal.")
    parser.add_argument("--rows", type=int, default=20, help="lines shown (default 20)")
    parser.add_argument("--cols", type=int, default=100, help="terminal width (default 100)")
    parser.add_argument("--terminal", help="the terminal id to follow (default: the first)")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between draws")
    parser.add_argument("--save", type=argparse.FileType("wb"), help="write every message here")
    parser.add_argument("command", nargs="*", help="the agent to run (default: acpwire fake-agent)")
    args = parser.parse_args(argv)
    command = args.command or [
        *FAKE_AGENT,
        "--tool-calls",
        "3",
        "--terminal-bytes",
        "20000",
        "--terminal-chunk",
        "512",
        "--rate",
        "400",
    ]
    view = asyncio.run(
        run(
            command,
            sys.stdout,
            rows=args.rows,
            cols=args.cols,
            terminal_id=args.terminal,
            interval=args.interval,
            trace=args.save,
        )
    )
    return 0 if view.terminal_id is not None else 1


if __name__ == "__main__":
    sys.exit(main())
