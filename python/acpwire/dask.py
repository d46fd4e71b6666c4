"""Trace archives as Dask DataFrames: the tables of ``acpwire export``, one partition per trace.

``read_traces(paths)`` returns ``{table: dask.dataframe.DataFrame}`` for the tables sessions,
turns, messages, tool_calls, terminals, permissions and errors, with the same columns and rows
as ``acpwire export`` writes; each trace is reduced by acpwire on a worker, once for all the
tables when they are computed together (``dask.compute(*tables.values())``). Columns are
pandas' Arrow-backed dtypes, so integers stay integers where a value is missing and the
schemas are the export's. Needs the ``dask`` extra: ``pip install 'acpwire[dask]'``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._contract import DEFAULT_MAX_FRAME_BYTES
from .cli.export import TABLES, arrow_schema, expand_paths, reduce_trace

__all__ = ["TABLES", "read_traces", "to_pandas"]


def to_pandas(rows: list[dict[str, Any]], table: str) -> Any:
    """``rows`` of ``table`` (as :func:`acpwire.cli.export.reduce_trace` gives them) as a
    pandas DataFrame with the table's Arrow schema."""
    import pandas as pd  # type: ignore[import-untyped, unused-ignore]
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    schema = arrow_schema(table)
    return pa.Table.from_pylist(rows, schema=schema).to_pandas(types_mapper=pd.ArrowDtype)


def _partition(rows: dict[str, list[dict[str, Any]]], table: str) -> Any:
    return to_pandas(rows[table], table)


def read_traces(
    paths: str | Iterable[str], *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
) -> dict[str, Any]:
    """Dask DataFrames of the traces ``paths`` name (files, directories, globs), keyed by
    table, each with one partition per trace. Nothing is read until computed; a trace that
    cannot be read is an ``errors`` row, as in the export."""
    import dask.dataframe as dd
    from dask.delayed import delayed

    files = expand_paths([paths] if isinstance(paths, str) else paths)
    reduced = [
        delayed(reduce_trace, pure=True)(path, max_frame_bytes=max_frame_bytes) for path in files
    ]
    frames = {}
    for table in TABLES:
        meta = to_pandas([], table)
        parts = [delayed(_partition, pure=True)(rows, table) for rows in reduced]
        if not parts:
            frames[table] = dd.from_pandas(meta, npartitions=1)  # type: ignore[no-untyped-call]
            continue
        frames[table] = dd.from_delayed(parts, meta=meta, verify_meta=False)
    return frames
