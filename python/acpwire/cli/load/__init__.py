"""``acpwire load -- AGENT_CMD [ARGS…]``: load-test any ACP agent over stdio.

N agent processes, each with S sessions, each running prompt turns (``--turns`` each, or for
``--duration`` seconds); permission requests answered by a policy, v1 client requests (``fs/*``,
``terminal/*``) answered in a sandbox directory or refused. Every turn is measured (time to first
update and to first agent text, latency, updates, bytes, stop reason, error) and the report gives
p50/p90/p99/mean/max, throughput and the client's own CPU and memory over time.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from ... import dumps
from .driver import BUILTIN_PROMPTS, LoadOptions, LoadRun, prompts_from_file, run_load
from .report import draw_plot, summarise, text_report

__all__ = ["LoadOptions", "LoadRun", "add_parser", "main", "run_load", "summarise"]

_PROG = "acpwire load"


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``load`` to the ``acpwire`` subcommands (an ``add_subparsers`` result)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "load",
        help="load-test any ACP agent: concurrent agents and sessions, latency percentiles",
        description=(
            "Run AGENT_CMD as N concurrent ACP agents over stdio (v1 or v2, as negotiated), "
            "open sessions in each and send prompt turns; measure each turn's time to first "
            "update and to first agent text, latency, updates, bytes and stop reason; report "
            "p50/p90/p99/mean/max, throughput and the client's own CPU and RSS. A crashing or "
            "hanging agent is a counted failure with its standard error's tail. Exit status: "
            "0, 1 when any turn, session or agent failed, 2 for a usage error."
        ),
        epilog="Example: acpwire load --agents 4 --turns 3 --json out.json -- my-agent --acp",
    )
    parser.add_argument(
        "--agents",
        type=_positive_int,
        default=1,
        metavar="N",
        help="agent processes run at once (default 1)",
    )
    parser.add_argument(
        "--sessions",
        type=_positive_int,
        default=1,
        metavar="N",
        help="sessions per agent, run concurrently (default 1)",
    )
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument(
        "--turns",
        type=_positive_int,
        default=None,  # argparse sees a given value equal to a default as no value
        metavar="N",
        help="prompt turns per session (default 1)",
    )
    amount.add_argument(
        "--duration",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="start turns for this long instead of a number of them (each session runs one "
        "at least)",
    )
    parser.add_argument(
        "--prompts",
        metavar="FILE",
        help="prompts, one a line: text, or JSONL (a content block, a list of them, or a "
        f"string per line); default: {len(BUILTIN_PROMPTS)} built-in coding prompts",
    )
    parser.add_argument(
        "--permission",
        choices=("allow", "reject", "cancel"),
        default="allow",
        help="answer to session/request_permission (default allow)",
    )
    parser.add_argument(
        "--client-requests",
        choices=("sandbox", "refuse"),
        default="sandbox",
        help="v1 fs/* and terminal/* requests: answered in the sandbox directory (default), "
        "or refused with an error (and not advertised)",
    )
    parser.add_argument(
        "--sandbox",
        metavar="DIR",
        type=Path,
        help="the agents' working directory and the only place fs/* and "
        "terminal/* reach (default: a temporary directory)",
    )
    parser.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        default=2,
        help="protocol version offered at initialize (default 2)",
    )
    parser.add_argument(
        "--turn-timeout",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="a turn not ended by then fails and its agent is killed (default 120)",
    )
    parser.add_argument(
        "--request-timeout",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="the same for initialize and session/new (default 30)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw a latency histogram and a timeline (needs matplotlib)",
    )
    parser.add_argument(
        "--record",
        metavar="DIR",
        type=Path,
        help="write each agent connection's trace to DIR/agent-NNN.ndjson",
    )
    parser.add_argument(
        "--no-reduce",
        action="store_true",
        help="do not feed the agents' output into acpwire.Sessions",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- AGENT_CMD [ARG ...]",
        help="the agent command line, after --",
    )
    parser.set_defaults(run=main)
    return parser


def main(args: argparse.Namespace) -> int:
    """Run ``acpwire load`` with parsed ``args``; return the exit status."""
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        return _usage("missing the agent command: acpwire load [OPTIONS] -- AGENT_CMD ...")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return _usage("--plot needs matplotlib: pip install 'acpwire[plot]'")
    prompts = list(BUILTIN_PROMPTS)
    if args.prompts:
        try:
            prompts = prompts_from_file(args.prompts)
        except OSError as exc:
            return _usage(f"cannot read {args.prompts}: {exc.strerror or exc}")
        except (ValueError, UnicodeDecodeError) as exc:
            return _usage(str(exc))
    options = LoadOptions(
        command=command,
        agents=args.agents,
        sessions=args.sessions,
        turns=1 if args.turns is None else args.turns,
        duration=args.duration,
        prompts=prompts,
        permission=args.permission,
        client_requests=args.client_requests,
        sandbox=args.sandbox,
        protocol=args.protocol,
        turn_timeout=args.turn_timeout,
        request_timeout=args.request_timeout,
        record_dir=args.record,
        reduce=not args.no_reduce,
    )
    show_progress = not args.no_progress and sys.stderr is not None and sys.stderr.isatty()
    run = _run_with_progress(options) if show_progress else asyncio.run(run_load(options))
    report = summarise(run)
    if args.json:
        try:
            with open(args.json, "wb") as fp:
                fp.write(dumps(report))
        except OSError as exc:
            print(f"{_PROG}: cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if args.plot:
        draw_plot(report, args.plot)
    print("\n".join(text_report(report)))
    return 1 if report["failures"] else 0


def _run_with_progress(options: LoadOptions) -> LoadRun:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    total = None if options.duration > 0 else options.agents * options.sessions * options.turns
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=_stderr_console(),
    ) as progress:
        task = progress.add_task("turns", total=total)
        return asyncio.run(run_load(options, on_turn=lambda: progress.advance(task)))


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(file=sys.stderr)


def _usage(message: str) -> int:
    print(f"{_PROG}: {message}", file=sys.stderr)
    return 2
