"""acpwire bench --only shapes, the bench's colour and its plot: output checked, not exit codes."""

from __future__ import annotations

import base64
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acpwire.cli.bench.command import console
from acpwire.cli.bench.harness import table_text
from acpwire.cli.bench.shapes import shapes_text, spread
from acpwire.cli.bench.workloads.shapes import (
    END_TO_END,
    SHAPES,
    many_sessions,
    opaque_payload,
    shape_matrix,
)

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "acpwire", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=300,
    )


def updates(data: bytes) -> list[dict]:
    frames = [json.loads(line) for line in data.splitlines() if line]
    return [f["params"]["update"] for f in frames if f.get("method") == "session/update"]


def keys_in_order(data: bytes) -> list[list[str]]:
    return [list(json.loads(line)) for line in data.splitlines() if b"session/update" in line]


# -- the generator --------------------------------------------------------------------------


def test_each_shape_is_the_layout_its_row_names():
    matrix = shape_matrix(30_000)
    assert set(matrix) == set(SHAPES) | set(END_TO_END)
    assert all(30_000 <= len(data) < 60_000 for data, _ in matrix.values())
    assert matrix == shape_matrix(30_000)  # the same bytes every time
    ups = {name: updates(data) for name, (data, _) in matrix.items()}
    canonical = ups["v2 agent_message_chunk, canonical"]
    assert all(list(u) == ["sessionUpdate", "messageId", "content"] for u in canonical)
    assert all(list(u["content"]) == ["type", "text"] for u in canonical)
    assert len({u["messageId"] for u in canonical}) < len(canonical) / 10
    v1 = ups["v1 chunk without messageId"]
    assert v1 and all("messageId" not in u for u in v1)
    assert b'"protocolVersion":1' in matrix["v1 chunk without messageId"][0]
    assert all("_meta" in u for u in ups["_meta on every update"])
    assert all(
        list(u["content"]) == ["text", "type"] for u in ups['content {"text":…,"type":"text"}']
    )
    sorted_frames = keys_in_order(matrix["sorted keys"][0])
    assert all(keys == sorted(keys) for keys in sorted_frames)
    assert all(u["content"]["type"] == "resource_link" for u in ups["resource_link chunks"])
    fresh = ups["new messageId every chunk"]
    assert len({u["messageId"] for u in fresh}) == len(fresh)
    frames = [json.loads(line) for line in matrix["1,000 sessions interleaved"][0].splitlines()]
    assert (
        len(
            {
                f["params"]["sessionId"]
                for f in frames
                if "params" in f and "sessionId" in f["params"]
            }
        )
        > 100
    )
    tools = ups["tool calls, 1–3 KB escaped rawInput/rawOutput, _meta"]
    raws = [json.dumps(u.get("rawInput") or u["rawOutput"]) for u in tools]
    assert all(1000 <= len(raw) <= 4000 and "\\u001b" in raw and "\\t" in raw for raw in raws)
    assert all("_meta" in u for u in tools)
    images = [u["content"] for u in ups["4 KB base64 image chunks"]]
    assert all(b["type"] == "image" and len(b["data"]) == 4096 for b in images)
    assert all(len(base64.b64decode(b["data"])) == 3072 for b in images)
    diffs = [u["content"][0] for u in ups["diff content"]]
    assert all(d["type"] == "diff" and d["oldText"] != d["newText"] for d in diffs)
    assert [end for _, end in matrix.values()].count(True) == 2


def test_many_sessions_and_one_are_the_same_kind_of_bytes():
    many, one = many_sessions(500, chunks_each=2), many_sessions(1, chunks_each=1000)
    assert len({u["messageId"] for u in updates(many)}) == 500
    assert len(updates(many)) == len(updates(one)) == 1000
    assert 0.9 < len(many) / len(one) < 1.1


def test_the_opaque_payload_is_one_tool_call_of_the_size_asked():
    data = opaque_payload(200_000)
    (update,) = updates(data)
    assert 180_000 < len(json.dumps(update["rawOutput"])) < 260_000


def test_spread_gives_the_median_and_the_quartiles():
    assert spread([3.0]) == (3.0, 3.0, 3.0)
    assert spread([1.0, 2.0, 3.0, 4.0, 100.0]) == (3.0, 2.0, 4.0)


# -- the command ----------------------------------------------------------------------------


def test_bench_only_shapes_reports_every_shape_and_ratio(tmp_path):
    out = tmp_path / "shapes.json"
    result = cli(
        "bench", "--only", "shapes", "--scale", "0.01", "--rounds", "2", "--no-progress",
        "--json", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""  # --no-progress
    text = result.stdout.decode()
    report = json.loads(out.read_bytes())
    assert report["kind"] == "shapes" and report["mismatches"] == []
    assert [row["shape"] for row in report["shapes"]] == [*SHAPES, *END_TO_END]
    try:
        import msgspec  # noqa: F401

        bases = ["dict", "msgspec"]
    except ImportError:
        bases = ["dict"]
    mine = [k for k in ("native", "pure") if k in report["contenders"]]
    assert "pure" in mine
    pairs = [f"{m}/{b}" for m in mine for b in bases]
    for row in report["shapes"]:
        assert row["shape"] in text
        assert list(row["ratios"]) == pairs
        for cell in row["ratios"].values():
            assert len(cell["per_round"]) == 2 and all(r > 0 for r in cell["per_round"])
            assert cell["min"] <= cell["q1"] <= cell["median"] <= cell["q3"] <= cell["max"]
        assert row["check"]
    # Retained bytes per wire byte, each measured in its own interpreter.
    assert set(report["retained"]) == {*mine, "dict"}
    assert all(0 < r["ratio"] < 100 and r["wire"] >= 1_000_000 for r in report["retained"].values())
    assert report["retained"]["pure"]["how"] == "tracemalloc"
    assert report["many_sessions"]["sessions"] == 1000
    assert all(report["many_sessions"][k]["median"] > 0 for k in mine)
    assert "native and pure reached the same final state on every shape" in text or mine == ["pure"]
    assert "\x1b[" not in text  # not a terminal: no colour


def test_bench_only_shapes_with_chosen_contenders(tmp_path):
    out = tmp_path / "shapes.json"
    result = cli(
        "bench", "--only", "shapes,pure,dict", "--scale", "0.01", "--rounds", "1",
        "--no-progress", "--json", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_bytes())
    assert set(report["contenders"]) == {"pure", "dict"}
    assert all(list(row["ratios"]) == ["pure/dict"] for row in report["shapes"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--only", "shapes", "--trace", os.devnull), b"the built-in shape matrix, not a --trace"),
        (("--only", "shapes,sdk"), b"needs an acpwire backend (native, pure) and a baseline"),
        (
            ("--only", "shapes,native,pure"),
            b"needs an acpwire backend (native, pure) and a baseline",
        ),
        (("--color", "sometimes"), b"argument --color: invalid choice: 'sometimes'"),
    ],
)
def test_bench_shapes_errors(args, message):
    result = cli("bench", "--no-progress", "--scale", "0.01", *args)
    assert result.returncode == 2
    assert message in result.stderr


# -- colour ---------------------------------------------------------------------------------


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _report() -> dict:
    def row(workload, contender, label, rate, excluded=False):
        return {
            "workload": workload, "contender": contender, "label": label, "bytes": 1000,
            "messages": 10, "seconds": [] if excluded else [0.1, 0.2],
            "mb_per_s": None if excluded else rate, "mb_per_s_min": None if excluded else rate / 2,
            "mb_per_s_max": None if excluded else rate * 1.5,
            "messages_per_s": None if excluded else 100.0,
            "check": "could not reduce it: ValueError" if excluded else "snapshot digest ab",
            "excluded": excluded,
        }  # fmt: skip

    return {
        "acpwire": "0", "python": "3", "native_build": None, "mismatches": [],
        "results": [
            row("one", "native", "acpwire native", 100.0),
            row("one", "pure", "acpwire pure", 10.0),
            row("one", "dict", "orjson + dict reducer", 20.0),
            row("two", "native", "acpwire native", 50.0),
            row("two", "dict", "orjson + dict reducer", 0, excluded=True),
        ],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("color", "tty", "no_color", "coloured"),
    [
        ("auto", True, "", True),
        ("auto", True, "1", False),  # NO_COLOR set and not empty
        ("auto", False, "", False),
        ("always", False, "", True),
        ("always", False, "1", True),  # the command line overrides NO_COLOR
        ("never", True, "", False),
    ],
)
def test_bench_colour_follows_the_option_the_terminal_and_no_color(
    monkeypatch, color, tty, no_color, coloured
):
    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    stream = Tty() if tty else io.StringIO()
    text = table_text(_report())
    console(color, stream).print(text, soft_wrap=True)
    written = stream.getvalue()
    assert ("\x1b[" in written) is coloured
    # Styling changes nothing else: the bare text is the plain table.
    plain = __import__("re").sub(r"\x1b\[[0-9;]*m", "", written)
    assert plain == text.plain + "\n"
    assert "not comparable: could not reduce it" in plain


def test_bench_colour_always_on_the_command_line():
    args = (
        "bench",
        "--only",
        "native,pure",
        "--trace",
        str(ROOT / "python/acpwire/data/sample-v2.ndjson"),
    )
    coloured = cli(
        *args, "--rounds", "1", "--no-progress", "--color", "always", env={"NO_COLOR": "1"}
    )
    plain = cli(*args, "--rounds", "1", "--no-progress", env={"NO_COLOR": "1"})
    assert coloured.returncode == plain.returncode == 0, coloured.stderr
    assert b"\x1b[1m" in coloured.stdout and b"\x1b[" not in plain.stdout


def test_shapes_text_marks_slower_ratios_red():
    cell = {"median": 0.5, "q1": 0.4, "q3": 0.6, "min": 0.4, "max": 0.6, "per_round": [0.5]}
    fast = {**cell, "median": 3.0, "q1": 2.0, "q3": 4.0}
    report = {
        "rounds": 1, "contenders": {"pure": "acpwire pure", "dict": "orjson + dict reducer"},
        "shapes": [
            {"shape": "slow", "ratios": {"pure/dict": cell}},
            {"shape": "fast", "ratios": {"pure/dict": fast}},
        ],
        "mismatches": [],
    }  # fmt: skip
    stream = Tty()
    console("always", stream).print(shapes_text(report), soft_wrap=True)
    written = stream.getvalue()
    assert "\x1b[31m" in written and "0.50×" in written.split("\x1b[31m", 1)[1].split("\x1b[0m")[0]
    assert "3.00×" in written.split("\x1b[32m", 1)[1].split("\x1b[0m")[0]


# -- the plot -------------------------------------------------------------------------------


def test_the_plot_has_spread_bars_and_no_gaps():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from acpwire.cli.bench.harness import _bars

    fig, ax = plt.subplots()
    series = {
        "a": {"one": (10.0, 5.0, 15.0), "two": (20.0, 18.0, 22.0)},
        "b": {"one": (30.0, 20.0, 40.0)},  # missing from "two"
        "c": {"one": (7.0, 7.0, 9.0), "two": (8.0, 6.0, 8.0)},
    }
    _bars(ax, ["one", "two"], series)
    bars = [p for p in ax.patches if p.get_height() > 0]
    by_group: dict[int, list] = {}
    for bar in bars:
        by_group.setdefault(round(bar.get_x() + bar.get_width() / 2), []).append(bar)
    assert [len(by_group[0]), len(by_group[1])] == [3, 2]
    for j, group in by_group.items():
        # Side by side, touching, centred on the tick: no hole where "b" is missing.
        group.sort(key=lambda b: b.get_x())
        for left, right in itertools.pairwise(group):
            assert right.get_x() == pytest.approx(left.get_x() + left.get_width())
        centre = (group[0].get_x() + group[-1].get_x() + group[-1].get_width()) / 2
        assert centre == pytest.approx(j)
    assert by_group[1][0].get_facecolor() == by_group[0][0].get_facecolor()  # "a" keeps its colour
    # One spread bar per bar, from low to high.
    segments = [seg for coll in ax.collections for seg in coll.get_segments() if len(seg) == 2]
    spans = sorted((round(s[0][1], 6), round(s[1][1], 6)) for s in segments)
    assert spans == sorted([(5.0, 15.0), (18.0, 22.0), (20.0, 40.0), (7.0, 9.0), (6.0, 8.0)])
    plt.close(fig)


def test_the_shape_matrix_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    from acpwire.cli.bench.harness import plot

    cell = {"median": 2.0, "q1": 1.5, "q3": 2.5, "min": 1.0, "max": 3.0, "per_round": [2.0]}
    report = {
        "kind": "shapes", "rounds": 1,
        "contenders": {"native": "acpwire native", "dict": "orjson + dict reducer"},
        "shapes": [{"shape": s, "ratios": {"native/dict": cell}} for s in ("x", "y")],
        "mismatches": [],
    }  # fmt: skip
    png = tmp_path / "shapes.png"
    plot(report, str(png))
    assert png.read_bytes().startswith(b"\x89PNG")
    png = tmp_path / "bench.png"
    plot(_report(), str(png))
    assert png.read_bytes().startswith(b"\x89PNG")


# -- the scripts ----------------------------------------------------------------------------


def _script(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "benches" / "scripts" / name), *args],
        capture_output=True,
        check=False,
        timeout=300,
    )


def test_the_shape_matrix_script_prints_its_block():
    done = _script(
        "shape_matrix.py", "--rounds", "1", "--scale", "0.01", "--sessions", "1000", "--print-only"
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert text.startswith("<!-- shape-matrix: start") and text.rstrip().endswith("end -->")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "×" in line]
    assert [row.split(" | ")[0][2:] for row in rows] == [*SHAPES, *END_TO_END]
    assert "Time per byte of 1,000 distinct sessions" in text
    assert "--sessions 1000" in text and "MB/s" not in text
    refused = _script("shape_matrix.py", "--rounds", "0")
    assert refused.returncode == 2


def test_the_docs_hold_a_shape_matrix_block():
    text = (ROOT / "docs" / "performance.md").read_text()
    block = text.split("<!-- shape-matrix: start", 1)[1].split("<!-- shape-matrix: end -->")[0]
    assert all(f"| {shape} |" in block for shape in [*SHAPES, *END_TO_END])
    assert "benches/scripts/shape_matrix.py --rounds" in block


def test_the_escape_costs_script_compares_both_backends_with_the_twins():
    done = _script("escape_costs.py", "--rounds", "1", "--scale", "0.01")
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    for stream in ("tabs after TBC", "EL1 on full rows"):
        for width in ("8192", "200"):
            assert any(line.startswith(stream) and width in line for line in text.splitlines())
    assert "pure's ÷ native's" in text or "native" not in text
    assert _script("escape_costs.py", "--scale", "0").returncode == 2


def test_the_batch_peak_script_measures_every_api():
    done = _script("batch_peak.py", "--scale", "0.001")
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "empty objects: 10,000 items" in text and "message chunks: 1,000 items" in text
    for api in ("FrameDecoder.feed", "loads", "Sessions.feed"):
        assert text.count(api) >= 2
    assert _script("batch_peak.py", "--scale", "0").returncode == 2
