"""``acpwire export TRACES… --out DIR``: many traces reduced into Parquet tables.

Each trace (plain or recorded; files, directories or globs) is reduced on its own by
:func:`~acpwire.cli.export.tables.reduce_trace`. The traces are cut, in order, into tasks;
each task is reduced and written by one process as part files, ``DIR/<table>/part-NNNNN.parquet``
for every table (sessions, turns, messages, tool_calls, terminals, permissions, errors), part
``NNNNN`` of each table holding the rows of the same traces. With ``--jobs 1`` the whole
archive is one task in this process (one part per table); otherwise the tasks run in a pool of
worker processes that write their parts themselves and send back only row counts, so the
parent does next to nothing while they work. A worker holds one trace's store at a time and
at most ``_FLUSH_BYTES`` of traces' rows before writing them out as a row group, so memory
follows the largest trace rather than the archive.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
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
]

_PROG = "acpwire export"
# The file names a directory given as a trace is searched for.
TRACE_SUFFIXES = (".ndjson", ".jsonl")
# A worker writes its buffered rows out as a row group once the traces they came from add up
# to this many bytes: the bound on what it holds besides the trace it is reducing.
_FLUSH_BYTES = 8 << 20
# Task sizes for a pool: about four tasks per worker, so that one worker is not left with a
# long tail while the other idles, within these bounds (fewer, larger parts above the lower
# one; a task that small costs more to start and write than to reduce).
_TASK_MIN_BYTES = 1 << 20
_TASK_MAX_BYTES = 64 << 20
_TASKS_PER_JOB = 4
# The part files of one table; a new export removes those an earlier one left.
_PART_GLOB = "part-*.parquet"


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


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _tasks(paths: Sequence[str], jobs: int) -> list[list[tuple[str, int]]]:
    """``paths`` (with their sizes) cut in order into tasks: one with one job, else about
    ``_TASKS_PER_JOB`` per job, each at least ``_TASK_MIN_BYTES`` of traces (a trace larger
    than a task is a task of its own)."""
    sized = [(path, _size(path)) for path in paths]
    if jobs == 1:
        return [sized] if sized else []
    total = sum(size for _, size in sized)
    limit = min(_TASK_MAX_BYTES, max(_TASK_MIN_BYTES, total // (jobs * _TASKS_PER_JOB)))
    tasks: list[list[tuple[str, int]]] = []
    batch: list[tuple[str, int]] = []
    size = 0
    for path, length in sized:
        if batch and size + length > limit:
            tasks.append(batch)
            batch, size = [], 0
        batch.append((path, length))
        size += length
    if batch:
        tasks.append(batch)
    return tasks


class _PartWriter:
    """One task's rows, written as ``DIR/<table>/<name>`` for every table (an empty table is
    still a file with its columns), a row group each time ``_FLUSH_BYTES`` of traces' rows
    have been buffered."""

    def __init__(self, out: Path, name: str) -> None:
        import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

        self.schemas = {table: arrow_schema(table) for table in TABLES}
        self.writers = {
            table: pq.ParquetWriter(out / table / name, self.schemas[table]) for table in TABLES
        }
        self.columns = _empty_columns()
        self.buffered = 0
        self.counts = dict.fromkeys(TABLES, 0)

    def add(self, rows: dict[str, list[dict[str, Any]]], size: int) -> None:
        for table, table_rows in rows.items():
            self.counts[table] += len(table_rows)
            for name, values in self.columns[table].items():
                values.extend(row[name] for row in table_rows)
        self.buffered += size
        if self.buffered >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        for table, columns in self.columns.items():
            schema = self.schemas[table]
            if columns[schema.names[0]]:
                arrays = [pa.array(columns[f.name], type=f.type) for f in schema]
                self.writers[table].write_table(pa.Table.from_arrays(arrays, schema=schema))
        self.columns = _empty_columns()
        self.buffered = 0

    def close(self) -> None:
        self.flush()
        for writer in self.writers.values():
            writer.close()


def _empty_columns() -> dict[str, dict[str, list[Any]]]:
    return {table: {name: [] for name, _ in COLUMNS[table]} for table in TABLES}


_Result = tuple[dict[str, int], list[tuple[str, str]]]


def _export_task(
    task: Sequence[tuple[str, int]], out: str, name: str, max_frame_bytes: int
) -> _Result:
    """One task: its traces reduced in turn (each store dropped before the next) into the
    part ``name`` of every table. Returns the row counts, and the traces that could not be
    read at all with why, so that the parent need not read the output back."""
    writer = _PartWriter(Path(out), name)
    unread: list[tuple[str, str]] = []
    try:
        for path, size in task:
            rows = reduce_trace(path, max_frame_bytes=max_frame_bytes)
            for error in rows["errors"]:
                reason = str(error["reason"])
                if error["line"] is None and reason.startswith("cannot read the trace"):
                    unread.append((path, reason))
            writer.add(rows, size)
    finally:
        writer.close()
    return writer.counts, unread


def _pool_context() -> Any:
    """The start method for the pool. ``fork`` when this process runs a single thread (the
    command line's case: the parent imports neither pyarrow nor anything that starts
    threads), since the workers then start at once with acpwire already imported; else
    ``forkserver``, as a forked child would inherit other threads' locks in whatever state
    they were. Its server, started once per process, has imported the reducer and pyarrow,
    so that the workers it forks need not."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and _threads() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        # A module that is not installed is skipped by the server; pandas is there because
        # pyarrow imports it, when installed, on the first array it builds.
        context.set_forkserver_preload(["acpwire.cli.export.tables", "pyarrow.parquet", "pandas"])
        return context
    return multiprocessing.get_context("spawn")


def _threads() -> int:
    """This process's OS threads (native ones included, which ``threading`` does not see);
    a large number when they cannot be counted, so that nothing is forked blindly."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1 << 30


def _prepare(out: Path) -> None:
    for table in TABLES:
        folder = out / table
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob(_PART_GLOB):
            stale.unlink()


def _export(
    items: Iterable[str], out: str | Path, jobs: int | None, max_frame_bytes: int
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    paths = expand_paths(items)
    jobs = jobs or os.cpu_count() or 1
    out = Path(out)
    _prepare(out)
    # No trace is still one task, so that every table is a part with its columns.
    tasks = _tasks(paths, jobs) or [[]]
    # Wide enough that the names sort in task order, which is the order of the traces.
    width = max(5, len(str(len(tasks) - 1)))
    names = [f"part-{index:0{width}d}.parquet" for index in range(len(tasks))]
    results: list[_Result]
    if jobs == 1 or len(tasks) == 1:
        results = [_export_task(tasks[0], str(out), names[0], max_frame_bytes)]
    else:
        workers = min(jobs, len(tasks))
        with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool:
            results = list(
                pool.map(
                    _export_task,
                    tasks,
                    [str(out)] * len(tasks),
                    names,
                    [max_frame_bytes] * len(tasks),
                )
            )
    counts = {"traces": len(paths), **dict.fromkeys(TABLES, 0)}
    unread: list[tuple[str, str]] = []
    for task_counts, task_unread in results:
        for table, count in task_counts.items():
            counts[table] += count
        unread.extend(task_unread)
    return counts, unread


def export_traces(
    items: Iterable[str],
    out: str | Path,
    *,
    jobs: int | None = None,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
) -> dict[str, int]:
    """Reduce the traces ``items`` name (files, directories, globs) into the part files
    ``out/<table>/part-NNNNN.parquet`` (part files an earlier export left there are removed
    first); return the number of traces and the row count of each table. ``jobs`` worker
    processes (default one per CPU) write the parts; ``jobs=1`` writes one part per table in
    this process. Needs pyarrow."""
    counts, _ = _export(items, out, jobs, max_frame_bytes)
    return counts


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``export`` to the ``acpwire`` subcommands (an ``add_subparsers`` result)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "export",
        help="reduce many traces into Parquet tables (sessions, turns, tool calls, ...)",
        description=(
            "Reduce traces (plain ACP NDJSON or 'acpwire record' traces; files, directories "
            "searched for *.ndjson and *.jsonl, or globs) into the part files "
            "DIR/<table>/part-NNNNN.parquet (read a table as the folder DIR/<table> or the glob "
            f"DIR/<table>/*.parquet) for the tables {', '.join(TABLES)}: one row per entity, "
            "each with the trace path and session id. Part NNNNN of every table holds the rows "
            "of the same traces, in trace order; part files already in DIR/<table> are "
            "replaced. A trace that cannot be read is an errors row and the rest goes on. "
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
        help="worker processes, each writing its own parts (default: one per CPU; 1 reduces "
        "in this process, into one part per table)",
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
    # Found, not imported: pyarrow starts threads, and a parent without any forks its workers.
    if importlib.util.find_spec("pyarrow") is None:
        return _usage("needs pyarrow: pip install 'acpwire[export]'")
    try:
        counts, unread = _export(args.traces, args.out, args.jobs, args.max_frame_bytes)
    except OSError as exc:
        return _usage(f"cannot write {args.out}: {exc.strerror or exc}")
    summary = ", ".join(f"{table} {counts[table]:,}" for table in TABLES)
    print(f"{counts['traces']:,} traces → {args.out}: {summary}")
    for path, reason in unread:
        print(f"{_PROG}: {path}: {reason}", file=sys.stderr)
    return 1 if unread else 0


def _usage(message: str) -> int:
    print(f"{_PROG}: {message}", file=sys.stderr)
    return 2
