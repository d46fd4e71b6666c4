"""``acpwire load`` against ``acpwire fake-agent``: measured latencies follow the agent's
configured delays, update counts are exact, failures are counted and never hang the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acpwire.cli.fake_agent import TurnConfig, build_turn
from acpwire.cli.load import LoadOptions, run_load, summarise
from acpwire.cli.load.driver import prompts_from_file
from acpwire.cli.load.report import percentile
from acpwire.cli.load.sandbox import ClientRequestRefused, Sandbox

FAKE_AGENT = [sys.executable, "-m", "acpwire", "fake-agent"]
# Small turns: a loaded 2-core machine still runs them in well under a second.
SMALL = ["--tokens", "12", "--thoughts", "3", "--tool-calls", "3", "--terminal-bytes", "1500"]
SMALL_CONFIG = TurnConfig(tokens=12, thoughts=3, tool_calls=3, terminal_bytes=1500)
# Measured times are never shorter than the delays (less the clock's rounding); they may be
# much longer on a busy machine, so the upper side is generous.
EARLY = 0.005
LATE = 1.5


@pytest.fixture(autouse=True)
def _agents_import_this_acpwire(monkeypatch):
    """The agents run in the sandbox directory: they find this package by an absolute path."""
    import acpwire

    package_root = str(Path(acpwire.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package_root, *sys.path]))


def updates_per_turn(version: int, config: TurnConfig = SMALL_CONFIG, turn: int = 1) -> int:
    # v2 adds the prompt's echo (user_message) and the idle state_update that ends the turn.
    return len(build_turn("sess_0001", turn, version, config)) + (2 if version >= 2 else 0)


def options(*agent_args: str, **overrides) -> LoadOptions:
    return LoadOptions(command=[*FAKE_AGENT, *SMALL, *agent_args], **overrides)


async def test_latencies_follow_the_agents_delays_and_update_counts_are_exact():
    first, turn_end, rate = 0.15, 0.1, 200.0
    run = await run_load(
        options(
            "--first-update-delay",
            str(first),
            "--turn-delay",
            str(turn_end),
            "--rate",
            str(rate),
            agents=2,
            sessions=2,
            turns=2,
        )
    )
    report = summarise(run)
    assert report["failures"] == 0, report["failureDetails"]
    assert report["turns"] == 8 and report["protocolVersions"] == {"2": 2}
    expected = updates_per_turn(2)
    assert [t.updates for t in run.turns] == [expected] * 8
    assert report["updates"] == 8 * expected
    # Every update is paced by 1/rate after it is sent; the first waits for the delay.
    paced = (expected - 1) / rate
    for turn in run.turns:
        assert first - EARLY <= turn.first_update <= first + LATE
        assert turn.first_update <= turn.first_text <= turn.seconds
        assert first + paced + turn_end - EARLY <= turn.seconds <= first + paced + turn_end + LATE
        assert turn.stop_reason == "end_turn" and turn.error is None
    stats = report["measures"]["turnSeconds"]
    assert stats["count"] == 8
    assert stats["p50"] <= stats["p90"] <= stats["p99"] <= stats["max"]
    assert min(t.seconds for t in run.turns) <= stats["mean"] <= stats["max"]
    assert report["measures"]["updatesPerTurn"]["max"] == expected
    assert report["client"]["cpuMicrosecondsPerUpdate"] > 0
    assert report["client"]["reduceErrors"] == 0


async def test_turn_bytes_are_the_frames_of_the_turn():
    run = await run_load(options(protocol=1))
    [turn] = run.turns
    # The v1 turn: its updates and the prompt's answer, each frame with its newline.
    import acpwire

    session_updates = [
        acpwire.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "sess_0001", "update": u},
            }
        )
        for u in build_turn("sess_0001", 1, 1, SMALL_CONFIG)
    ]
    answer = acpwire.dumps({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}})
    assert turn.updates == len(session_updates)
    assert turn.bytes == sum(map(len, session_updates)) + len(answer)


@pytest.mark.parametrize(
    ("policy", "stop"), [("allow", "end_turn"), ("reject", "end_turn"), ("cancel", "cancelled")]
)
async def test_permission_policies(policy, stop):
    run = await run_load(options("--permission", protocol=1, permission=policy, turns=2))
    report = summarise(run)
    assert report["failures"] == 0
    assert report["permissions"] == {policy: 2}
    assert report["stopReasons"] == {stop: 2}
    if policy != "cancel":
        assert [t.updates for t in run.turns] == [updates_per_turn(1)] * 2


async def test_v1_client_requests_are_answered_in_the_sandbox(tmp_path):
    run = await run_load(options("--client-requests", protocol=1, sandbox=tmp_path))
    report = summarise(run)
    assert report["failures"] == 0
    # read (of a file not there yet: an error answer), write, then terminal/create,
    # wait_for_exit, output and release.
    assert report["clientRequests"] == {"served": 5, "failed": 1, "refused": 0}
    assert (tmp_path / "notes.txt").read_text() == "edited by call_0001_01\n"
    assert [t.updates for t in run.turns] == [updates_per_turn(1)]


async def test_v1_client_requests_can_be_refused(tmp_path):
    run = await run_load(
        options("--client-requests", protocol=1, sandbox=tmp_path, client_requests="refuse")
    )
    report = summarise(run)
    assert report["failures"] == 0 and report["stopReasons"] == {"end_turn": 1}
    assert report["clientRequests"] == {"served": 0, "failed": 0, "refused": 3}
    assert not (tmp_path / "notes.txt").exists()


async def test_the_sandbox_refuses_paths_outside_it(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret").write_text("no")
    (root / "link").symlink_to(tmp_path / "secret")
    sandbox = Sandbox(root)
    for path in (
        str(tmp_path / "secret"),
        str(root / "link"),
        "relative.txt",
        str(root / ".." / "secret"),
    ):
        with pytest.raises(ClientRequestRefused):
            await sandbox.handle("fs/read_text_file", {"sessionId": "s", "path": path})
    await sandbox.handle("fs/write_text_file", {"path": str(root / "a.txt"), "content": "1\n2\n"})
    answer = await sandbox.handle("fs/read_text_file", {"path": str(root / "a.txt"), "line": 2})
    assert answer == {"content": "2\n"}
    with pytest.raises(ClientRequestRefused, match="outside the sandbox"):
        await sandbox.handle("terminal/create", {"command": "true", "cwd": str(tmp_path)})
    with pytest.raises(ClientRequestRefused, match="method not found"):
        await sandbox.handle("fs/delete", {})
    assert (sandbox.served, sandbox.failed) == (2, 6)


async def test_a_crashing_agent_is_a_failure_with_its_stderr_tail():
    start = time.monotonic()
    run = await run_load(options("--crash-after", "5", sessions=2, turns=3))
    report = summarise(run)
    assert report["turns"] == 0 and report["failures"] == 2
    for failure in report["failureDetails"]:
        assert failure["reason"] == "the agent exited with status 3"
        assert "crashing after 5 updates" in failure["stderrTail"]
    assert time.monotonic() - start < 30


async def test_a_hanging_agent_is_killed_at_the_turn_timeout():
    start = time.monotonic()
    run = await run_load(options("--hang-after", "5", turns=3, agents=2, turn_timeout=0.5))
    report = summarise(run)
    assert report["turns"] == 0 and report["failures"] == 2
    assert {f["reason"] for f in report["failureDetails"]} == {"the turn did not end within 0.5 s"}
    assert all("hanging after 5" in f["stderrTail"] for f in report["failureDetails"])
    assert time.monotonic() - start < 30


async def test_an_agent_that_is_no_acp_agent_fails_at_initialize():
    run = await run_load(LoadOptions(command=[sys.executable, "-c", "import sys; sys.exit(5)"]))
    [failure] = run.failures
    assert failure.reason == "the agent exited with status 5" and failure.session is None
    run = await run_load(LoadOptions(command=["/nonexistent/agent"]))
    assert run.failures[0].reason.startswith("cannot run '/nonexistent/agent'")


async def test_a_duration_run_stops_by_itself():
    start = time.monotonic()
    run = await run_load(options("--rate", "500", duration=0.6, sessions=2))
    took = time.monotonic() - start
    report = summarise(run)
    # Each session runs one turn at least, however slowly its agent started; no other turn
    # starts after the deadline.
    assert report["failures"] == 0 and report["turns"] >= 2
    assert all(t.start < 0.6 + EARLY for t in run.turns if t.turn > 1)
    assert took < 0.6 + 10


def test_percentiles_interpolate_between_ranks():
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    assert percentile(values, 0.5) == 5.5
    assert percentile(values, 0.9) == pytest.approx(9.1)
    assert percentile(values, 0.99) == pytest.approx(9.91)
    assert percentile([3.0], 0.99) == 3.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_prompts_from_text_and_jsonl_files(tmp_path):
    text = tmp_path / "p.txt"
    text.write_text("first prompt\n\nsecond {not json}\n")
    assert prompts_from_file(str(text)) == [
        [{"type": "text", "text": "first prompt"}],
        [{"type": "text", "text": "second {not json}"}],
    ]
    jsonl = tmp_path / "p.jsonl"
    block = {"type": "resource_link", "name": "a.rs", "uri": "file:///a.rs"}
    jsonl.write_text(json.dumps("plain") + "\n" + json.dumps(block) + "\n" + json.dumps([block]))
    assert prompts_from_file(str(jsonl)) == [[{"type": "text", "text": "plain"}], [block], [block]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"ok"\n42\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: a prompt is"):
        prompts_from_file(str(bad))


def _load_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "acpwire", "load", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def test_cli_json_report_and_recorded_traces(tmp_path):
    from acpwire.cli import traces

    prompts = tmp_path / "prompts.txt"
    prompts.write_text("say hello\nsay goodbye\n")
    out = tmp_path / "report.json"
    result = _load_cli(
        "--agents",
        "2",
        "--turns",
        "2",
        "--prompts",
        str(prompts),
        "--json",
        str(out),
        "--record",
        str(tmp_path / "traces"),
        "--",
        *FAKE_AGENT,
        *SMALL,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "4 turns" in result.stdout and "µs per update" in result.stdout
    report = json.loads(out.read_text())
    assert report["turns"] == 4 and report["failures"] == 0
    assert report["updates"] == 4 * updates_per_turn(2)
    for name in (
        "firstUpdateSeconds",
        "firstTextSeconds",
        "turnSeconds",
        "updatesPerTurn",
        "bytesPerTurn",
    ):
        assert set(report["measures"][name]) == {"count", "p50", "p90", "p99", "mean", "max"}
    assert report["client"]["samples"] and report["client"]["peakRssBytes"] > 0
    assert len(report["traces"]) == 2
    for path in report["traces"]:
        store = traces.load(path)
        [session_id] = store.ids()
        snapshot = store[session_id].snapshot()
        sent = [p["prompt"] for p in snapshot["prompts"]]
        assert [b["text"] for [b] in sent] in (
            ["say hello", "say goodbye"],
            ["say goodbye", "say hello"],
        )
        assert snapshot["state"] == "idle" and store.errors == []


def test_cli_usage_errors(tmp_path):
    result = _load_cli("--turns", "1", cwd=tmp_path)
    assert result.returncode == 2 and "missing the agent command" in result.stderr
    result = _load_cli("--turns", "1", "--duration", "2", "--", "x", cwd=tmp_path)
    assert result.returncode == 2 and "not allowed with" in result.stderr
    result = _load_cli("--prompts", str(tmp_path / "none"), "--", "x", cwd=tmp_path)
    assert result.returncode == 2 and "cannot read" in result.stderr


def test_cli_failures_set_the_exit_status(tmp_path):
    result = _load_cli("--", *FAKE_AGENT, *SMALL, "--crash-after", "3", cwd=tmp_path)
    assert result.returncode == 1
    assert "failure: agent 0 session sess_0001 turn 1: the agent exited with status 3" in (
        result.stdout
    )
    assert "| acpwire fake-agent: crashing after 3 updates" in result.stdout


def test_plot_without_matplotlib_is_a_clear_error(tmp_path, monkeypatch, capsys):
    from acpwire.cli.main import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    status = main(["load", "--plot", str(tmp_path / "p.png"), "--", *FAKE_AGENT])
    assert status == 2
    assert "--plot needs matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "p.png").exists()


def test_plot_draws_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    result = _load_cli(
        "--turns",
        "2",
        "--plot",
        str(tmp_path / "p.png"),
        "--",
        *FAKE_AGENT,
        *SMALL,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")


async def test_frames_that_are_no_messages_are_counted():
    # An agent that answers initialize, then writes a line that is not JSON and closes.
    agent = (
        "import sys\n"
        "sys.stdin.readline()\n"
        'sys.stdout.write(\'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}\\n\')\n'
        "sys.stdout.write('not json\\n'); sys.stdout.flush()\n"
        "sys.stdin.readline()\n"
    )
    run = await run_load(LoadOptions(command=[sys.executable, "-c", agent]))
    report = summarise(run)
    assert report["badFrames"] == 1 and report["client"]["reduceErrors"] == 1
    [failure] = report["failureDetails"]
    assert failure["reason"] == "the agent exited with status 0"
