"""``acpwire export``: traces reduced into Parquet tables with stable schemas, in process or in a
pool, a bad file an error row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_export_cases import (
    PROMPTS,
    SAMPLE,
    SESSION,
    TURN_SECONDS,
    archive,
    cumulative_cost,
    recorded_v1,
    updates_per_turn,
)

import acpwire
from acpwire.cli import export
from acpwire.cli.export import TABLES, arrow_schema, expand_paths, export_traces, reduce_trace
from acpwire.cli.export.tables import COLUMNS, _replay, _session_rows

pq = pytest.importorskip("pyarrow.parquet")


def read_rows(out) -> dict[str, list[dict]]:
    return {table: pq.read_table(out / table).to_pylist() for table in TABLES}


def parts(out, table: str) -> list[str]:
    return sorted(p.name for p in (out / table).iterdir())


def test_every_table_has_its_schema_even_when_empty(tmp_path):
    export_traces([], tmp_path / "empty", jobs=1)
    export_traces([str(tmp_path / "missing.ndjson")], tmp_path / "bad", jobs=1)
    export_traces([str(SAMPLE)], tmp_path / "full", jobs=1)
    for out in ("empty", "bad", "full"):
        for table in TABLES:
            [part] = parts(tmp_path / out, table)
            schema = pq.read_schema(tmp_path / out / table / part)
            assert schema.remove_metadata() == arrow_schema(table)
            assert schema.names[:2] == ["trace", "session_id"]
    assert set(COLUMNS) == {
        "sessions",
        "turns",
        "messages",
        "tool_calls",
        "terminals",
        "permissions",
        "errors",
    }


def test_the_sample_trace_gives_one_row_per_entity(tmp_path):
    from acpwire.cli import traces

    export_traces([str(SAMPLE)], tmp_path, jobs=1)
    rows = read_rows(tmp_path)
    store = traces.load(SAMPLE)
    [session_id] = store.ids()
    snapshot = store[session_id].snapshot()
    [session] = rows["sessions"]
    assert session["trace"] == str(SAMPLE) and session["session_id"] == session_id
    assert session["title"] == "Fix parse_duration panic on empty input"
    assert (session["usage_used"], session["cost_amount"], session["cost_currency"]) == (
        22410,
        0.0637,
        "USD",
    )
    assert json.loads(session["usage"]) == snapshot["usage"]
    assert [(m["message_id"], m["role"], m["position"]) for m in rows["messages"]] == [
        (m["id"], m["role"], i) for i, m in enumerate(snapshot["messages"])
    ]
    for row, message in zip(rows["messages"], snapshot["messages"], strict=True):
        texts = [b["text"] for b in message["content"] if b["type"] == "text"]
        assert row["text"] == "".join(texts) and row["blocks"] == len(message["content"])
        assert row["text_bytes"] == len(row["text"].encode())
        assert json.loads(row["content"]) == message["content"]
    agent_text = store[session_id].message_text("msg_a_02")
    assert [r["text"] for r in rows["messages"] if r["message_id"] == "msg_a_02"] == [agent_text]
    calls = {r["tool_call_id"]: r for r in rows["tool_calls"]}
    assert set(calls) == set(snapshot["toolCalls"])
    assert calls["call_03"]["kind"] == "execute" and calls["call_03"]["failed"] is False
    assert json.loads(calls["call_01"]["raw_input"]) == snapshot["toolCalls"]["call_01"]["rawInput"]
    [terminal] = rows["terminals"]
    assert (terminal["terminal_id"], terminal["command"], terminal["exit_code"]) == (
        "term_01",
        "cargo nextest run",
        0,
    )
    assert terminal["text"] == snapshot["terminals"]["term_01"]["text"]
    assert terminal["retained_bytes"] == len(terminal["text"].encode())
    assert terminal["bytes"] == snapshot["terminals"]["term_01"]["bytes"]
    [permission] = rows["permissions"]
    assert (
        permission["tool_call_id"],
        permission["outcome"],
        permission["option_id"],
        permission["option_kind"],
    ) == ("call_02", "selected", "allow-always", "allow_always")
    assert json.loads(permission["request_id"]) == 0
    assert rows["errors"] == []


def test_a_bad_file_is_an_error_row_and_the_rest_goes_on(tmp_path):
    folder = archive(tmp_path)
    missing = str(tmp_path / "missing.ndjson")
    export_traces([str(folder), missing], tmp_path / "out", jobs=1)
    rows = read_rows(tmp_path / "out")
    by_trace = {}
    for error in rows["errors"]:
        by_trace.setdefault(os.path.basename(error["trace"]), []).append(error)
    assert by_trace["missing.ndjson"][0]["reason"] == (
        "cannot read the trace: No such file or directory"
    )
    assert by_trace["d-garbage.ndjson"][0]["reason"].startswith("cannot read the trace: not an")
    [bad_line] = by_trace["c-bad-line.jsonl"]
    assert (bad_line["line"], bad_line["reason"]) == (4, "invalid JSON")
    assert bad_line["offset"] == len(b"".join(SAMPLE.read_bytes().splitlines(True)[:3]))
    # The traces that could be read are all there, the bad line's one included.
    traces = sorted(os.path.basename(s["trace"]) for s in rows["sessions"])
    assert traces == ["a-sample.ndjson", "b-recorded.ndjson", "c-bad-line.jsonl"]


def test_files_directories_and_globs(tmp_path):
    folder = archive(tmp_path)
    names = [os.path.relpath(p, folder) for p in expand_paths([str(folder)])]
    assert names == [
        "a-sample.ndjson",
        "c-bad-line.jsonl",
        "d-garbage.ndjson",
        os.path.join("nested", "b-recorded.ndjson"),
    ]
    assert expand_paths([str(folder / "**" / "b-*.ndjson")]) == [
        str(folder / "nested" / "b-recorded.ndjson")
    ]
    assert expand_paths([str(folder / "a-sample.ndjson"), str(folder / "nothing-*")]) == [
        str(folder / "a-sample.ndjson"),
        str(folder / "nothing-*"),
    ]


def test_rows_are_equal_in_process_and_in_a_pool(tmp_path, monkeypatch):
    folder = archive(tmp_path)
    inline = export_traces([str(folder)], tmp_path / "inline", jobs=1)
    # Tasks of a few hundred bytes, so that this small archive is several parts, written by
    # two workers.
    monkeypatch.setattr(export, "_TASK_MIN_BYTES", 1)
    pooled = export_traces([str(folder)], tmp_path / "pool", jobs=2)
    assert inline == pooled
    assert read_rows(tmp_path / "inline") == read_rows(tmp_path / "pool")
    assert inline["sessions"] == 3 and inline["errors"] == 2
    # One part per table in process; in the pool, the same numbered parts in every table.
    assert all(parts(tmp_path / "inline", t) == ["part-00000.parquet"] for t in TABLES)
    names = parts(tmp_path / "pool", "sessions")
    assert len(names) > 2 and all(parts(tmp_path / "pool", t) == names for t in TABLES)


def test_part_n_of_every_table_holds_the_same_traces(tmp_path, monkeypatch):
    folder = archive(tmp_path)
    monkeypatch.setattr(export, "_TASK_MIN_BYTES", 1)
    export_traces([str(folder), str(tmp_path / "missing.ndjson")], tmp_path / "out", jobs=2)
    paths = expand_paths([str(folder), str(tmp_path / "missing.ndjson")])
    seen: list[str] = []
    for name in parts(tmp_path / "out", "sessions"):
        traces = set()
        for table in TABLES:
            traces |= {
                r["trace"] for r in pq.read_table(tmp_path / "out" / table / name).to_pylist()
            }
        # The parts follow the traces' order, each trace in one part only.
        assert traces and not traces & set(seen)
        seen += sorted(traces, key=paths.index)
    assert seen == paths


def test_a_new_export_replaces_the_parts_of_an_earlier_one(tmp_path, monkeypatch):
    folder = archive(tmp_path)
    monkeypatch.setattr(export, "_TASK_MIN_BYTES", 1)
    export_traces([str(folder)], tmp_path / "out", jobs=2)
    assert len(parts(tmp_path / "out", "turns")) > 1
    # Another file in the folder is not a part and stays.
    (tmp_path / "out" / "turns" / "notes.txt").write_text("mine")
    export_traces([str(folder / "a-sample.ndjson")], tmp_path / "out", jobs=1)
    assert parts(tmp_path / "out", "turns") == ["notes.txt", "part-00000.parquet"]
    turns = pq.read_table(tmp_path / "out" / "turns" / "part-00000.parquet").to_pylist()
    assert {row["trace"] for row in turns} == {str(folder / "a-sample.ndjson")}


def test_duckdb_reads_the_parts_as_pyarrow_does(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    folder = archive(tmp_path)
    monkeypatch.setattr(export, "_TASK_MIN_BYTES", 1)
    export_traces([str(folder)], tmp_path / "out", jobs=2)
    for table in TABLES:
        expected = pq.read_table(tmp_path / "out" / table)
        glob = str(tmp_path / "out" / table / "*.parquet")
        got = duckdb.sql(f"SELECT * FROM read_parquet('{glob}')").arrow()
        if hasattr(got, "read_all"):
            got = got.read_all()
        assert got.schema.names == expected.schema.names
        # DuckDB promises no row order without ORDER BY: the same rows, in any order.
        assert sorted(map(repr, got.to_pylist())) == sorted(map(repr, expected.to_pylist()))
        assert got.num_rows == expected.num_rows > 0 or table in ("terminals", "permissions")


def _env() -> dict[str, str]:
    # The package the test run imports (installed, or the checkout's with PYTHONPATH=python).
    root = str(Path(acpwire.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}


def test_the_command_line(tmp_path):
    folder = archive(tmp_path)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "acpwire",
            "export",
            str(folder / "*.ndjson"),
            "--out",
            str(tmp_path / "out"),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(),
    )
    # d-garbage could not be read: the status says so, and the rest was exported.
    assert result.returncode == 1
    assert "d-garbage.ndjson: cannot read the trace" in result.stderr
    assert result.stdout.startswith("2 traces → ")
    assert len(pq.read_table(tmp_path / "out" / "sessions")) == 1
    # Two workers, from a parent that has not imported pyarrow (so they are forked), writing
    # a part per trace (tasks of at least one byte).
    code = (
        "import sys; from acpwire.cli import export; from acpwire.cli.main import main; "
        "export._TASK_MIN_BYTES = 1; status = main(); "
        "print('parent imported pyarrow:', 'pyarrow' in sys.modules); sys.exit(status)"
    )
    two = str(tmp_path / "two")
    result = subprocess.run(
        [sys.executable, "-c", code, "export", str(folder), "-o", two, "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(),
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("4 traces → ")
    assert len(pq.read_table(tmp_path / "two" / "sessions")) == 3
    assert len(parts(tmp_path / "two", "sessions")) == 4
    assert result.stdout.endswith("parent imported pyarrow: False\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "acpwire",
            "export",
            str(SAMPLE),
            "--out",
            str(tmp_path / "x"),
            "--jobs",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(),
    )
    assert result.returncode == 2 and "--jobs must be at least 1" in result.stderr


def _turns_from_prompts(snapshot: dict) -> list[dict]:
    """Turn entries as the snapshot's ``turns`` holds them, made from its ``prompts``: the
    reducer's timing and cost attribution, tested apart from where the entries come from."""
    return [
        {
            "requestId": p["requestId"],
            "prompt": p["prompt"],
            "stopReason": (p.get("response") or {}).get("stopReason"),
            "cancelRequested": False,
            "usage": (p.get("response") or {}).get("usage"),
            "start": None,
            "end": None,
        }
        for p in snapshot["prompts"]
    ]


def test_turn_rows_get_their_times_updates_and_cost_from_the_trace(tmp_path):
    trace = str(recorded_v1(tmp_path / "r.ndjson"))
    store, timing = _replay(trace, 1 << 25)
    snapshot = store[SESSION].snapshot()
    snapshot["turns"] = _turns_from_prompts(snapshot)
    rows = {table: [] for table in TABLES}
    _session_rows(trace, SESSION, snapshot, timing, rows)
    turns = rows["turns"]
    assert [t["turn"] for t in turns] == [1, 2]
    assert [t["prompt_text"] for t in turns] == PROMPTS
    assert [t["request_id"] for t in turns] == ["2", "3"]
    for row, seconds in zip(turns, TURN_SECONDS, strict=True):
        assert row["seconds"] == pytest.approx(seconds, abs=1e-5)
        assert row["ended_at"] - row["started_at"] == pytest.approx(seconds, abs=1e-5)
        assert row["updates"] == updates_per_turn()
        assert row["stop_reason"] == "end_turn"
    assert [t["total_tokens"] for t in turns] == [100, 200]
    assert [t["output_tokens"] for t in turns] == [30, 60]
    assert [t["cost_total"] for t in turns] == [cumulative_cost(1), cumulative_cost(2)]
    assert turns[0]["cost"] == pytest.approx(cumulative_cost(1))
    assert turns[1]["cost"] == pytest.approx(cumulative_cost(2) - cumulative_cost(1))


# The snapshot's `turns` and a terminal's `source` are part of the session contract; these
# tests read them through the whole export.


def test_turns_table_of_a_recorded_v1_session(tmp_path):
    trace = str(recorded_v1(tmp_path / "r.ndjson"))
    turns = reduce_trace(trace)["turns"]
    assert [(t["turn"], t["prompt_text"], t["stop_reason"]) for t in turns] == [
        (1, PROMPTS[0], "end_turn"),
        (2, PROMPTS[1], "end_turn"),
    ]
    assert [t["seconds"] for t in turns] == pytest.approx(TURN_SECONDS, abs=1e-5)
    assert [t["updates"] for t in turns] == [updates_per_turn()] * 2
    assert [t["total_tokens"] for t in turns] == [100, 200]
    assert all(t["timeline_start"] is not None and t["timeline_end"] is not None for t in turns)
    assert turns[0]["cancel_requested"] is False


def test_turns_table_of_the_v2_sample():
    [turn] = reduce_trace(str(SAMPLE))["turns"]
    assert (turn["message_id"], turn["stop_reason"], turn["request_id"]) == (
        "msg_u_01",
        "end_turn",
        "3",
    )
    assert turn["prompt_text"].startswith("`tally parse-duration")
    # A plain trace has no times: the duration is unknown, not zero.
    assert turn["started_at"] is None and turn["seconds"] is None
    assert turn["updates"] > 0


def test_an_agent_terminal_says_its_source():
    [terminal] = reduce_trace(str(SAMPLE))["terminals"]
    assert terminal["source"] == "agent"
