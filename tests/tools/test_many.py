"""check and stats over several traces, directories and globs; what the three commands agree
on; error responses per session; colour and NO_COLOR; a record of a 200-deep frame."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import acpwire

SAMPLE = Path(str(resources.files("acpwire") / "data" / "sample-v2.ndjson"))
ROOT = Path(__file__).resolve().parents[2]
# The package the test run imports (installed, or the checkout\'s with PYTHONPATH=python),
# which the commands run here must import too.
PACKAGE_ROOT = Path(acpwire.__file__).resolve().parents[1]
SGR = b"\x1b["


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    path = os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])
    environment = {**os.environ, "PYTHONPATH": path}
    environment.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "acpwire", *args],
        capture_output=True,
        env={**environment, **(env or {})},
        check=False,
        timeout=300,
    )


def traces(directory: Path) -> dict[str, Path]:
    directory.mkdir(exist_ok=True)
    (directory / "nested").mkdir(exist_ok=True)
    clean = directory / "a.ndjson"
    clean.write_bytes(SAMPLE.read_bytes())
    bad = directory / "nested" / "b.jsonl"
    bad.write_bytes(SAMPLE.read_bytes() + b"{broken\n[]\n")
    ignored = directory / "notes.txt"
    ignored.write_text("not a trace")
    return {"clean": clean, "bad": bad, "ignored": ignored}


def test_check_takes_files_directories_and_globs_with_a_row_each_and_a_total(tmp_path):
    found = traces(tmp_path / "t")
    size = len(SAMPLE.read_bytes())
    result = cli("check", str(tmp_path / "t"))
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode()
    table = text.split("\n\n")[0].splitlines()
    rows = [line for line in table if line.startswith((str(tmp_path), "total"))]
    assert [r.split()[0] for r in rows] == [str(found["clean"]), str(found["bad"]), "total"]
    assert rows[0].split()[1:] == [f"{size:,}", "65", "65", "0"]
    assert rows[2].split()[1:] == [f"{2 * size + 11:,}", "132", "130", "2"]
    assert f"{found['bad']}: 2 bad frame(s):" in text and "line 67, byte" in text
    # A glob, a file named twice, and one that is missing: exit 2, the others still checked.
    result = cli("check", str(tmp_path / "t" / "*.ndjson"), str(found["clean"]), "--json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert [r["trace"] for r in report["traces"]] == [str(found["clean"])]
    assert report["total"] == {
        "traces": 1,
        "unreadable": 0,
        "bytes": size,
        "frames": 65,
        "messages": 65,
        "badFrames": 0,
    }
    result = cli("check", str(found["clean"]), str(tmp_path / "missing*.ndjson"), "--json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["unreadable"] == [
        {"trace": str(tmp_path / "missing*.ndjson"), "error": "no trace matches"}
    ]
    # One trace keeps the one-trace report.
    single = json.loads(cli("check", str(found["clean"]), "--json").stdout)
    assert single["frames"] == 65 and "traces" not in single


def test_stats_takes_several_traces_with_a_row_each_and_a_total(tmp_path):
    found = traces(tmp_path / "t")
    result = cli("stats", str(found["clean"]), str(tmp_path / "t" / "**" / "*.jsonl"))
    assert result.returncode == 1, result.stderr
    rows = result.stdout.decode().splitlines()
    assert rows[0].split() == [
        "trace",
        "sessions",
        "turns",
        "messages",
        "tool",
        "calls",
        "error",
        "responses",
        "bad",
        "frames",
    ]
    assert rows[1].split() == [str(found["clean"]), "1", "1", "4", "4", "0", "0"]
    assert rows[2].split() == [str(found["bad"]), "1", "1", "4", "4", "0", "2"]
    assert rows[3].split() == ["total", "2", "2", "8", "8", "0", "2"]
    report = json.loads(cli("stats", str(tmp_path / "t"), "--json").stdout)
    assert [t["trace"] for t in report["traces"]] == [str(found["clean"]), str(found["bad"])]
    assert report["total"]["badFrames"] == 2 and report["total"]["traces"] == 2
    assert cli("stats", str(found["clean"]), str(tmp_path / "nope.ndjson")).returncode == 2


def _v1_with_errors() -> list[dict[str, Any]]:
    def request(rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}

    def error(rid: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "no"}}

    return [
        request(0, "initialize", {"protocolVersion": 1}),
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}},
        request(1, "session/new", {"cwd": "/"}),
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "a"}},
        request(2, "session/new", {"cwd": "/"}),
        {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "b"}},
        request(3, "session/prompt", {"sessionId": "a", "prompt": []}),
        error(3),
        request([4], "session/prompt", {"sessionId": "a", "prompt": []}),
        error([4]),
        request({"k": 5}, "session/prompt", {"sessionId": "b", "prompt": []}),
        {"jsonrpc": "2.0", "id": {"k": 5}, "result": {"stopReason": "refusal"}},
        request(6, "session/load", {}),
        error(6),
    ]


def test_stats_counts_error_responses_per_session_whatever_the_ids_type(tmp_path):
    trace = tmp_path / "errors.ndjson"
    trace.write_text("".join(json.dumps(m) + "\n" for m in _v1_with_errors()))
    result = cli("stats", str(trace), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["sessions"]["a"]["errorResponses"] == 2
    assert report["sessions"]["b"]["errorResponses"] == 0
    assert report["sessions"]["b"]["stopReasons"] == {"refusal": 1}
    assert report["errorResponses"] == 3  # the one to session/load belongs to no session
    assert "error responses: 2" in cli("stats", str(trace)).stdout.decode()


def test_trace_stats_is_documented_and_typed():
    from acpwire.stats import TraceStats, trace_stats

    doc = inspect.getdoc(trace_stats) or ""
    assert "frameErrors" in doc and "errorResponses" in doc and "timed" in doc
    hints = inspect.get_annotations(trace_stats, eval_str=True)
    assert hints["return"] is TraceStats
    assert set(TraceStats.__annotations__) == {"sessions", "frameErrors", "errorResponses", "timed"}
    report = trace_stats(SAMPLE)
    assert set(report) == set(TraceStats.__annotations__)


def _record_of_depth(depth: int) -> bytes:
    inner: Any = 1
    for _ in range(depth - 2):
        inner = [inner]
    message = {"jsonrpc": "2.0", "method": "x/deep", "params": {"a": inner}}
    return json.dumps({"t": 0.5, "dir": "agent", "msg": message}).encode() + b"\n"


def test_a_record_of_a_frame_as_deep_as_a_plain_one_may_be_reads_as_the_plain_one(tmp_path):
    recorded = tmp_path / "deep.ndjson"
    recorded.write_bytes(_record_of_depth(200))
    plain = tmp_path / "plain.ndjson"
    plain.write_bytes(json.dumps(json.loads(_record_of_depth(200))["msg"]).encode() + b"\n")
    for trace in (plain, recorded):
        for command in ("check", "stats", "replay"):
            result = cli(command, str(trace))
            assert result.returncode == 0, (trace.name, command, result.stderr)
    checked = json.loads(cli("check", str(recorded), "--json").stdout)
    assert checked["methods"] == {"x/deep": 1} and checked["errors"] == []
    # One level deeper is a bad frame in both, by every command. Alone in a file, it is
    # still one bad frame to check; stats and replay refuse a file holding no message.
    first = {"jsonrpc": "2.0", "method": "x/first", "params": {}}
    recorded.write_bytes(
        json.dumps({"t": 0, "dir": "agent", "msg": first}).encode() + b"\n" + _record_of_depth(201)
    )
    deeper = json.dumps(json.loads(_record_of_depth(201))["msg"]).encode() + b"\n"
    plain.write_bytes(json.dumps(first).encode() + b"\n" + deeper)
    for trace in (plain, recorded):
        for command in ("check", "stats", "replay"):
            assert cli(command, str(trace)).returncode == 1, (trace.name, command)
    plain.write_bytes(deeper)
    assert cli("check", str(plain)).returncode == 1
    for command in ("stats", "replay"):
        result = cli(command, str(plain))
        assert result.returncode == 2 and b"not an NDJSON trace" in result.stderr, command


@pytest.mark.parametrize(
    "command",
    [("check", str(SAMPLE)), ("stats", str(SAMPLE)), ("replay", str(SAMPLE), "--format", "ansi")],
)
def test_colour_is_asked_for_or_refused_and_no_color_is_honoured(command):
    assert SGR in cli(*command, "--color", "always").stdout
    assert SGR not in cli(*command, "--color", "never").stdout
    if command[0] != "replay":
        assert SGR not in cli(*command).stdout  # auto: not a terminal
    else:
        assert SGR in cli(*command).stdout  # ANSI asked for by name
    no_color = cli(*command, env={"NO_COLOR": "1"}).stdout
    assert b"\x1b[3" not in no_color and b"\x1b[9" not in no_color and b";5;" not in no_color
    plain = cli(*command, "--color", "never").stdout.replace(b"\x1b[0m", b"")
    assert b"Session" in plain or b"by method" in plain or b"session" in plain


def test_an_unknown_session_is_refused_with_the_known_ids_escaped(tmp_path):
    trace = tmp_path / "t.ndjson"
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    hostile = "\x1b]52;c;ZXZpbA==\x07\x1b]0;t\x07\x1b[2J"
    lines = [
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": f"s{i}{hostile}", "update": update},
        }
        for i in range(25)
    ]
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = cli("replay", str(trace), "--session", "nope\x1b[2J")
    assert result.returncode == 2
    assert b"\x1b" not in result.stderr and b"\x07" not in result.stderr
    assert b"s0^[]52;c;ZXZpbA==^G" in result.stderr and b"nope^[[2J" in result.stderr
    assert b"(5 more)" in result.stderr


def _bad_frames_by_command(trace: Path) -> dict[str, set[tuple[int, int, str]]]:
    checked = json.loads(cli("check", str(trace), "--json").stdout)
    stats = json.loads(cli("stats", str(trace), "--json").stdout)
    replayed = cli("replay", str(trace), "--format", "json").stderr.decode()
    pattern = re.compile(r"line (\d+), byte (\d+): (.+)$", re.M)
    return {
        "check": {(e["line"], e["offset"], e["reason"]) for e in checked["errors"]},
        "stats": {(e["line"], e["offset"], e["reason"]) for e in stats["frameErrors"]},
        "replay": {(int(a), int(b), r) for a, b, r in pattern.findall(replayed)},
    }


def test_check_stats_and_replay_name_the_same_bad_frames(tmp_path):
    good = SAMPLE.read_bytes().splitlines()
    bad = [b"{broken", b"\xff\xfe", b'{"jsonrpc":"2.0","method":"x"} trailing', b"[]"]
    plain = tmp_path / "plain.ndjson"
    plain.write_bytes(b"\n".join([*good[:3], *bad, *good[3:]]) + b"\n")
    found = _bad_frames_by_command(plain)
    assert len(found["check"]) == 4
    assert found["check"] == found["stats"] == found["replay"]
    # Recorded: raw records (the recorder's way of keeping what was not JSON) and an empty batch.
    records = [
        json.dumps({"t": i / 10, "dir": "agent", "msg": json.loads(line)})
        for i, line in enumerate(good)
    ]
    records[4:4] = [
        json.dumps({"t": 0.35, "dir": "agent", "raw": "{broken"}),
        json.dumps({"t": 0.36, "dir": "agent", "raw": "x", "error": "not a reason"}),
        json.dumps({"t": 0.37, "dir": "client", "msg": []}),
        "{not a record",
    ]
    recorded = tmp_path / "recorded.ndjson"
    recorded.write_text("\n".join(records) + "\n")
    found = _bad_frames_by_command(recorded)
    assert {line for line, _, _ in found["check"]} == {5, 6, 7, 8}
    assert found["check"] == found["stats"] == found["replay"]
