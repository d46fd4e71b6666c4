"""The ``acpwire`` command line: the argparse entry, dispatching to one module per subcommand."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Callable, Sequence

from .._contract import DEFAULT_MAX_FRAME_BYTES
from . import export, load
from .fake_agent import TurnConfig, add_pacing_arguments, pacing_options
from .render import FORMATS


def _count(least: int) -> Callable[[str], int]:
    """An argparse type: an int of at least ``least``, else a usage error (exit status 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
        return value

    return parse


POSITIVE = _count(1)
NON_NEGATIVE = _count(0)


def _columns(text: str) -> int:
    """An argparse type: a terminal width, 1 to 65535."""
    value = POSITIVE(text)
    if value > 65_535:
        raise argparse.ArgumentTypeError(f"must be at most 65535, not {value}")
    return value


def _finite(least: float, *, inclusive: bool) -> Callable[[str], float]:
    """An argparse type: a finite float above ``least`` (or equal to it, if ``inclusive``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
        if not math.isfinite(value) or value < least or (value == least and not inclusive):
            bound = f"at least {least}" if inclusive else f"above {least}"
            raise argparse.ArgumentTypeError(f"must be a finite number {bound}, not {text}")
        return value

    return parse


def _add_color(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the output: auto (default: on a terminal, unless NO_COLOR is set), "
        "always, never",
    )


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
            "package; with several, prints a row per trace and a total. Exit status: 0 clean, "
            "1 bad frames found, 2 a trace could not be read."
        ),
    )
    check.add_argument(
        "file",
        nargs="*",
        metavar="FILE",
        help="traces to check: files, directories (their *.ndjson and *.jsonl) or globs; "
        "'-' reads standard input",
    )
    check.add_argument(
        "--max-frame-bytes",
        type=POSITIVE,
        default=DEFAULT_MAX_FRAME_BYTES,
        metavar="N",
        help="reject frames longer than N bytes (default: 32 MiB)",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_color(check)

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
    bench = commands.add_parser(
        "bench",
        help="compare acpwire with the codecs and reducers in use today, on one workload",
        description=(
            "Reduce the same ACP traffic with acpwire (native and pure) and every baseline "
            "that is installed (orjson + dict reducer, msgspec typed decoding, the official "
            "SDK's json + pydantic decode path, pyte for terminal screens), in interleaved "
            "rounds, and print MB/s, messages/s and the ratio to native. With no --trace it "
            "runs the package's built-in workloads: a token stream, a heavy terminal session "
            "and a mixed multi-session stream. Exit status: 0, or 1 if final states disagree."
        ),
    )
    bench.add_argument("--trace", metavar="FILE", help="benchmark this NDJSON trace instead")
    bench.add_argument(
        "--rounds", type=POSITIVE, default=5, help="rounds per contender (default 5)"
    )
    bench.add_argument(
        "--scale",
        type=_finite(0.0, inclusive=False),
        default=1.0,
        help="size of the built-in workloads (default 1.0, about a minute on 2 cores)",
    )
    bench.add_argument(
        "--only",
        metavar="NAMES",
        help="comma-separated contenders: native, pure, dict, msgspec, sdk, pyte; "
        "'shapes' runs the shape matrix instead (one workload per layout agents send)",
    )
    bench.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the results: on a terminal unless NO_COLOR is set (auto), always, never",
    )
    bench.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    bench.add_argument("--plot", metavar="OUT.png", help="also draw a bar chart (matplotlib)")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")

    replay = commands.add_parser(
        "replay",
        help="render each session of a trace as it looked: messages, tool calls, terminals",
        description=(
            "Reduce a trace (plain ACP NDJSON, or records written by 'acpwire record') and "
            "render each session: user and agent messages, thoughts, tool calls with their "
            "content and diffs, plans, and terminals with their colours. Exit status: 0 on "
            "success, 1 when the trace had bad frames, 2 when it could not be read or a "
            "--session is unknown."
        ),
    )
    replay.add_argument("trace", metavar="TRACE", help="trace file; '-' reads standard input")
    replay.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="ansi (default on a terminal), text (default otherwise), markdown, json (the "
        "snapshot), html (a self-contained page)",
    )
    replay.add_argument("--session", metavar="ID", help="render only this session")
    replay.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    replay.add_argument("--hide-thoughts", action="store_true", help="leave agent thoughts out")
    replay.add_argument(
        "--follow",
        action="store_true",
        help="keep reading the trace as it grows and re-render on every change (Ctrl-C stops)",
    )
    replay.add_argument(
        "--terminal-cols",
        type=_columns,
        default=None,
        metavar="N",
        help="render terminals on an N-column grid (default: unbounded lines)",
    )
    _add_color(replay)

    stats = commands.add_parser(
        "stats",
        help="per-session counts: turns, stop reasons, messages, tool calls, terminals, usage",
        description=(
            "Per session: turns, stop reasons, messages and chunks, tool calls by kind and "
            "status, terminal bytes in and retained, usage and cost, errors; with a recorded "
            "trace also time to first update and updates per second per turn. Several traces: "
            "a row per trace and a total. Exit status: 0, 1 when a trace had bad frames, 2 "
            "when one could not be read."
        ),
    )
    stats.add_argument(
        "trace",
        nargs="+",
        metavar="TRACE",
        help="traces: files, directories (their *.ndjson and *.jsonl) or globs; '-' reads "
        "standard input",
    )
    stats.add_argument("--json", action="store_true", help="print the statistics as JSON")
    _add_color(stats)

    commands.add_parser(
        "record",
        help="proxy a client and an agent over stdio, writing every frame to a trace",
        description="acpwire record --out TRACE -- AGENT_CMD ... (see 'acpwire record --help')",
        add_help=False,
    )

    defaults = TurnConfig()
    agent.add_argument(
        "--tokens",
        type=NON_NEGATIVE,
        default=defaults.tokens,
        metavar="N",
        help=f"agent_message_chunk updates per turn (default {defaults.tokens})",
    )
    agent.add_argument(
        "--thoughts",
        type=NON_NEGATIVE,
        default=defaults.thoughts,
        metavar="N",
        help=f"agent_thought_chunk updates per turn (default {defaults.thoughts})",
    )
    agent.add_argument(
        "--tool-calls",
        type=NON_NEGATIVE,
        default=defaults.tool_calls,
        metavar="N",
        help=f"tool calls per turn, cycling read/edit/execute (default {defaults.tool_calls})",
    )
    agent.add_argument(
        "--terminal-bytes",
        type=NON_NEGATIVE,
        default=defaults.terminal_bytes,
        metavar="N",
        help=f"PTY bytes per execute tool call (default {defaults.terminal_bytes})",
    )
    agent.add_argument(
        "--terminal-chunk",
        type=POSITIVE,
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
        type=_finite(0.0, inclusive=True),
        default=0.0,
        metavar="UPDATES_PER_S",
        help="pace updates (default 0: flat out)",
    )
    agent.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    add_pacing_arguments(agent)
    load.add_parser(commands)
    export.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status."""
    try:
        status = _run(argv)
        # What is still buffered is written here, where a reader that went away is caught.
        if sys.stdout is not None and not sys.stdout.closed:
            sys.stdout.flush()
        return status
    except KeyboardInterrupt:
        # Ctrl-C: stop without a traceback, with the status a shell reports for SIGINT.
        return 128 + 2
    except BrokenPipeError:
        # Whoever read the output stopped early (`acpwire check | head`): end quietly with
        # the status a shell reports for a tool stopped by SIGPIPE. Standard output is
        # pointed at /dev/null first, so the interpreter's last flush cannot fail again.
        _drop_stdout()
        return 128 + 13
    except OSError as exc:
        # Commands report what they cannot read or write to a named file themselves: what
        # gets here is standard output failing (a full disk, an I/O error).
        _drop_stdout()
        print(f"acpwire: cannot write standard output: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _drop_stdout() -> None:
    """Point standard output at /dev/null, dropping what is buffered for it."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _run(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["record"]:
        # The proxy has its own parser: everything after `--` is the agent's command line.
        from .record import main as record_main

        return record_main(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    writes_stdout = not (args.command == "replay" and args.out) and args.command != "fake-agent"
    if writes_stdout and sys.stdout is None:
        # Started with standard output closed (`acpwire check >&-`).
        print("acpwire: standard output is closed", file=sys.stderr)
        return 2
    if args.version:
        from .. import BACKEND, __version__

        print(f"acpwire {__version__} ({BACKEND} backend)")
        return 0
    if getattr(args, "run", None) is not None:  # commands that dispatch themselves
        return int(args.run(args))
    if args.command == "check":
        from .check import check
        from .output import use_color

        return check(
            args.file,
            max_frame_bytes=args.max_frame_bytes,
            as_json=args.json,
            color=not args.json and use_color(args.color),
        )
    if args.command == "bench":
        from .bench.command import bench

        return bench(
            trace=args.trace,
            rounds=args.rounds,
            scale=args.scale,
            only=args.only,
            json_out=args.json,
            plot_out=args.plot,
            progress=not args.no_progress,
            color=args.color,
        )
    if args.command == "replay":
        from .replay import replay_command

        return replay_command(
            args.trace,
            fmt=args.format,
            session=args.session,
            out=args.out,
            thoughts=not args.hide_thoughts,
            follow=args.follow,
            terminal_cols=args.terminal_cols,
            color=args.color,
        )
    if args.command == "stats":
        from .output import use_color
        from .stats import stats

        return stats(args.trace, as_json=args.json, color=not args.json and use_color(args.color))
    if args.command == "fake-agent":
        import asyncio

        from .fake_agent import main_async

        if sys.stdin is None or sys.stdout is None:
            print("acpwire fake-agent: standard input or output is closed", file=sys.stderr)
            return 2

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
            **pacing_options(args),
        )
        return asyncio.run(main_async(config))
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
