"""The ``acpwire`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import cli


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
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
