"""``acpwire.dask.read_traces`` on a ``dask.distributed.LocalCluster``: the export's tables and
rows, one partition per trace."""

from __future__ import annotations

import pytest
from test_export_cases import archive

dask = pytest.importorskip("dask")
pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from acpwire.cli import export  # noqa: E402
from acpwire.cli.export import TABLES, arrow_schema, expand_paths, export_traces  # noqa: E402
from acpwire.dask import read_traces  # noqa: E402


def as_rows(frame, table: str) -> list[dict]:
    return pa.Table.from_pandas(frame, schema=arrow_schema(table), preserve_index=False).to_pylist()


@pytest.fixture(scope="module")
def client():
    # Threads in this process: no worker start-up cost, and the reducer is the same code.
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as connected,
    ):
        yield connected


def test_the_same_rows_as_the_export_in_process_and_in_a_pool(tmp_path, client, monkeypatch):
    folder = archive(tmp_path)
    # Small tasks, so that the pool writes several parts of this small archive.
    monkeypatch.setattr(export, "_TASK_MIN_BYTES", 1)
    missing = str(tmp_path / "missing.ndjson")
    paths = [str(folder), missing]
    export_traces(paths, tmp_path / "inline", jobs=1)
    export_traces(paths, tmp_path / "pool", jobs=2)
    frames = read_traces(paths)
    assert set(frames) == set(TABLES)
    files = expand_paths(paths)
    computed = dask.compute(*frames.values())
    for (table, frame), result in zip(frames.items(), computed, strict=True):
        assert frame.npartitions == len(files)
        assert list(frame.columns) == arrow_schema(table).names
        rows = as_rows(result, table)
        assert rows == pq.read_table(tmp_path / "inline" / table).to_pylist()
        assert rows == pq.read_table(tmp_path / "pool" / table).to_pylist()
    sessions = computed[list(frames).index("sessions")]
    assert len(sessions) == 3
    assert str(sessions["usage_used"].dtype) == "int64[pyarrow]"


def test_a_query_runs_on_the_cluster(tmp_path, client):
    folder = archive(tmp_path)
    calls = read_traces(str(folder))["tool_calls"]
    by_kind = calls.groupby("kind")["tool_call_id"].count().compute().to_dict()
    export_traces([str(folder)], tmp_path / "out", jobs=1)
    expected: dict[str, int] = {}
    for row in pq.read_table(tmp_path / "out" / "tool_calls").to_pylist():
        expected[row["kind"]] = expected.get(row["kind"], 0) + 1
    assert by_kind == expected and sum(by_kind.values()) > 0


def test_no_traces_give_empty_tables_with_their_columns(client):
    frames = read_traces([])
    for table, frame in frames.items():
        result = frame.compute()
        assert len(result) == 0 and list(result.columns) == arrow_schema(table).names
