"""``acpwire export TRACES… --out DIR``: many traces reduced into Parquet tables.

Each trace (plain or recorded; files, directories or globs) is reduced on its own by
:func:`~acpwire.cli.export.tables.reduce_trace`, in a pool of worker processes by default,
and its rows are appended to ``DIR/<table>.parquet`` for the tables sessions, turns, messages,
tool_calls, terminals, permissions and errors. A worker holds one trace's store at a time
(or a few small traces, up to 1 MiB of them), and the writer at most a bounded number of
traces' rows, so memory follows the largest trace rather than the archive.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from ..._contract import DEFAULT_MAX_FRAME_BYTES
from .tables import COLUMNS, TABLES, arrow_schema, reduce_trace

__all__ = [
    "COLUMNS",
    "TABLES",
    "add_parser",
    "arrow_schema",
    "expand_paths",
    "export_traces",
    "main",
    "reduce_trace",
    "reduce_traces",
]

_PROG = "acpwire export"
# The file names a directory given as a trace is searched for.
TRACE_SUFFIXES = (".ndjson", ".jsonl")
# Small traces go to a worker together, up to this many bytes, so that per-task costs do not
# dominate an archive of tiny files; a larger trace is a task of its own.
_TASK_BYTES = 1 << 20
# Rows buffered per table before they are written as a row group.
_ROW_GROUP = 50_000


def expand_paths(items: Iterable[str]) -> list[str]:
    """Trace paths from files, directories (searched for ``*.ndjson`` and ``*.jsonl``, in
    name order) and globs (``**`` included). A name that matches nothing is kept as it is,
    so that it becomes an error row rather than vanishing."""
    paths: list[str] = []
    for item in items:
        if glob.has_magic(item):
            matches = sorted(glob.glob(item, recursive=True))
            found = [p for m in matches for p in _files(m)]
            paths.extend(found or [item])
        else:
            paths.extend(_files(item) or [item])
    return paths


def _files(path: str) -> list[str]:
    if not os.path.isdir(path):
        return [path]
    found: list[str] = []
    for folder, dirs, names in os.walk(path):
        dirs.sort()
        found.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(TRACE_SUFFIXES))
    return found


def _reduce_many(paths: Sequence[str], max_frame_bytes: int) -> dict[str, dict[str, list[Any]]]:
    """One task: each trace reduced in turn (its store dropped before the next), the rows of
    all of them by column. Columns of plain values are what the writer turns into Arrow
    arrays fastest, and they keep pyarrow out of the workers (and their start-up)."""
    columns: dict[str, dict[str, list[Any]]] = {
        table: {name: [] for name, _ in COLUMNS[table]} for table in TABLES
    }
    for path in paths:
        for table, rows in reduce_trace(path, max_frame_bytes=max_frame_bytes).items():
            for name, values in columns[table].items():
                values.extend(row[name] for row in rows)
    return columns


def _tasks(paths: Sequence[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for path in paths:
        try:
            length = os.stat(path).st_size
        except OSError:
            length = 0
        if batch and size + length > _TASK_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(path)
        size += length
    if batch:
        yield batch


def reduce_traces(
    paths: Sequence[str], *, jobs: int | None = None, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
) -> Iterator[dict[str, dict[str, list[Any]]]]:
    """The traces' rows as ``{table: {column: values}}`` pieces, in the order of ``paths``
    (a piece holds one trace, or several small ones): reduced in this process with
    ``jobs=1``, else in a pool of ``jobs`` worker processes (default: one per CPU). At most
    twice as many tasks as workers are in flight, so finished pieces never pile up behind a
    slow trace."""
    jobs = jobs or os.cpu_count() or 1
    tasks = list(_tasks(paths))
    if jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            yield _reduce_many(task, max_frame_bytes)
        return
    import multiprocessing

    # Not fork: this process may run threads (pyarrow's), which a forked child would inherit
    # in whatever state they were.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        # Workers fork from a server that has imported the reducer once, instead of each
        # importing it anew.
        context.set_forkserver_preload(["acpwire.cli.export.tables"])
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
        pending: list[Future[dict[str, dict[str, list[Any]]]]] = []
        for task in tasks:
            pending.append(pool.submit(_reduce_many, task, max_frame_bytes))
            if len(pending) >= 2 * jobs:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()


class _TableWriter:
    """Rows appended to ``DIR/<table>.parquet``, a row group per ``_ROW_GROUP`` rows."""

    def __init__(self, out: Path) -> None:
        import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

        out.mkdir(parents=True, exist_ok=True)
        self.schemas = {table: arrow_schema(table) for table in TABLES}
        self.writers = {
            table: pq.ParquetWriter(out / f"{table}.parquet", self.schemas[table])
            for table in TABLES
        }
        self.buffered: dict[str, list[Any]] = {table: [] for table in TABLES}
        self.rows = dict.fromkeys(TABLES, 0)
        self.counts = dict.fromkeys(TABLES, 0)

    def add(self, pieces: dict[str, dict[str, list[Any]]]) -> None:
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        for table, columns in pieces.items():
            piece = pa.Table.from_pydict(columns, schema=self.schemas[table])
            if piece.num_rows:
                self.buffered[table].append(piece)
                self.rows[table] += piece.num_rows
                self.counts[table] += piece.num_rows
            if self.rows[table] >= _ROW_GROUP:
                self._flush(table)

    def _flush(self, table: str) -> None:
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        if self.buffered[table]:
            self.writers[table].write_table(pa.concat_tables(self.buffered[table]))
            self.buffered[table] = []
            self.rows[table] = 0

    def close(self) -> None:
        for table in TABLES:
            self._flush(table)
            # A table with no rows is still a file with its columns.
            self.writers[table].close()


def export_traces(
    items: Iterable[str],
    out: str | Path,
    *,
    jobs: int | None = None,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
) -> dict[str, int]:
    """Reduce the traces ``items`` name (files, directories, globs) into
    ``out/<table>.parquet``; return the row count of each table. Needs pyarrow."""
    paths = expand_paths(items)
    writer = _TableWriter(Path(out))
    try:
        for pieces in reduce_traces(paths, jobs=jobs, max_frame_bytes=max_frame_bytes):
            writer.add(pieces)
    finally:
        writer.close()
    return {"traces": len(paths), **writer.counts}


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``export`` to the ``acpwire`` subcommands (an ``add_subparsers`` result)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "export",
        help="reduce many traces into Parquet tables (sessions, turns, tool calls, ...)",
        description=(
            "Reduce traces (plain ACP NDJSON or 'acpwire record' traces; files, directories "
            "searched for *.ndjson and *.jsonl, or globs) into DIR/<table>.parquet for the "
            f"tables {', '.join(TABLES)}: one row per entity, each with the trace path and "
            "session id. A trace that cannot be read is an errors row and the rest goes on. "
            "Needs pyarrow (pip install 'acpwire[export]'). Exit status: 0, 1 when any trace "
            "could not be read, 2 for a usage error."
        ),
    )
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="trace files, dirs or globs")
    parser.add_argument("--out", "-o", required=True, metavar="DIR", help="output directory")
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (default: one per CPU; 1 reduces in this process)",
    )
    parser.add_argument(
        "--max-frame-bytes",
        type=int,
        default=DEFAULT_MAX_FRAME_BYTES,
        metavar="N",
        help="reject frames longer than N bytes (default: 32 MiB)",
    )
    parser.set_defaults(run=main)
    return parser


def main(args: argparse.Namespace) -> int:
    """Run ``acpwire export`` with parsed ``args``; return the exit status."""
    if args.jobs is not None and args.jobs < 1:
        return _usage("--jobs must be at least 1")
    if args.max_frame_bytes < 1:
        return _usage("--max-frame-bytes must be positive")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return _usage("needs pyarrow: pip install 'acpwire[export]'")
    try:
        counts = export_traces(
            args.traces, args.out, jobs=args.jobs, max_frame_bytes=args.max_frame_bytes
        )
    except OSError as exc:
        return _usage(f"cannot write {args.out}: {exc.strerror or exc}")
    unread = _unreadable(Path(args.out))
    summary = ", ".join(f"{table} {counts[table]:,}" for table in TABLES)
    print(f"{counts['traces']:,} traces → {args.out}: {summary}")
    for path, reason in unread:
        print(f"{_PROG}: {path}: {reason}", file=sys.stderr)
    return 1 if unread else 0


def _unreadable(out: Path) -> list[tuple[str, str]]:
    """The traces that could not be read at all, from the errors table just written."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    errors = pq.read_table(out / "errors.parquet", columns=["trace", "line", "reason"])
    return [
        (row["trace"], row["reason"])
        for row in errors.to_pylist()
        if row["line"] is None and str(row["reason"]).startswith("cannot read the trace")
    ]


def _usage(message: str) -> int:
    print(f"{_PROG}: {message}", file=sys.stderr)
    return 2
