"""The ``acpwire`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import cli
from .fake_agent import TurnConfig


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acpwire",
        description="Fast, exact wire codec for the Agent Client Protocol (ACP).",
    )
    parser.add_argument("--version", action="store_true", help="print the version and backend")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="frame and decode an NDJSON trace; count messages; report every bad frame",
        description=(
            "Frame and decode an ACP NDJSON trace and print message counts by method and by "
            "session/update kind, every bad frame with its line and byte offset, and the "
            "throughput. With no FILE, runs on a small ACP v2 sample trace shipped with the "
            "package. Exit status: 0 clean, 1 bad frames found, 2 the trace could not be read."
        ),
    )
    check.add_argument(
        "file", nargs="?", metavar="FILE", help="trace to check; '-' reads standard input"
    )
    check.add_argument(
        "--max-frame-bytes",
        type=int,
        default=32 * 1024 * 1024,
        metavar="N",
        help="reject frames longer than N bytes (default: 32 MiB)",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")

    agent = commands.add_parser(
        "fake-agent",
        help="run a deterministic ACP agent on stdin/stdout (a load generator and test peer)",
        description=(
            "An ACP agent over stdio. It answers initialize (v1 or v2, as the client asks), "
            "session/new, session/prompt and session/cancel, and streams a deterministic turn "
            "for every prompt: thoughts, a plan, tool calls with terminal output, message "
            "chunks and usage. The options set the size and pace of each turn."
        ),
    )
    defaults = TurnConfig()
    agent.add_argument(
        "--tokens",
        type=int,
        default=defaults.tokens,
        metavar="N",
        help=f"agent_message_chunk updates per turn (default {defaults.tokens})",
    )
    agent.add_argument(
        "--thoughts",
        type=int,
        default=defaults.thoughts,
        metavar="N",
        help=f"agent_thought_chunk updates per turn (default {defaults.thoughts})",
    )
    agent.add_argument(
        "--tool-calls",
        type=int,
        default=defaults.tool_calls,
        metavar="N",
        help=f"tool calls per turn, cycling read/edit/execute (default {defaults.tool_calls})",
    )
    agent.add_argument(
        "--terminal-bytes",
        type=int,
        default=defaults.terminal_bytes,
        metavar="N",
        help=f"PTY bytes per execute tool call (default {defaults.terminal_bytes})",
    )
    agent.add_argument(
        "--terminal-chunk",
        type=int,
        default=defaults.terminal_chunk,
        metavar="N",
        help=f"bytes per terminal_output_chunk (default {defaults.terminal_chunk})",
    )
    agent.add_argument("--no-plan", action="store_true", help="send no plan updates")
    agent.add_argument("--no-usage", action="store_true", help="send no usage_update")
    agent.add_argument(
        "--permission", action="store_true", help="ask session/request_permission before each edit"
    )
    agent.add_argument(
        "--rate",
        type=float,
        default=0.0,
        metavar="UPDATES_PER_S",
        help="pace updates (default 0: flat out)",
    )
    agent.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from . import BACKEND, __version__

        print(f"acpwire {__version__} ({BACKEND} backend)")
        return 0
    if args.command == "check":
        return cli.check(args.file, max_frame_bytes=args.max_frame_bytes, as_json=args.json)
    if args.command == "fake-agent":
        import asyncio

        from .fake_agent import main_async

        config = TurnConfig(
            tokens=args.tokens,
            thoughts=args.thoughts,
            tool_calls=args.tool_calls,
            terminal_bytes=args.terminal_bytes,
            terminal_chunk=args.terminal_chunk,
            plan=not args.no_plan,
            usage=not args.no_usage,
            permission=args.permission,
            rate=args.rate,
            seed=args.seed,
        )
        return asyncio.run(main_async(config))
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
