"""The replay page as a person sees it, in headless Chromium: the DOM after the page ran
holds every block and no script, even when the agent sent markup and script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import acpwire

ROOT = Path(__file__).resolve().parents[2]
# The package the test run imports (installed, or the checkout\'s with PYTHONPATH=python),
# which the commands run here must import too.
PACKAGE_ROOT = Path(acpwire.__file__).resolve().parents[1]
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")


def _update(body: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": body},
    }


def _trace(path: Path) -> Path:
    attack = (
        "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
        "[click](javascript:document.title='pwned') **kept**"
    )
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}},
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": attack},
            }
        ),
        _update(
            {
                "sessionUpdate": "agent_thought_chunk",
                "messageId": "t1",
                "content": {"type": "text", "text": "pondering"},
            }
        ),
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c\u001b1",
                "title": "first tool",
                "status": "failed",
            }
        ),
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c2",
                "title": "second tool",
                "status": "completed",
            }
        ),
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m2",
                "content": {"type": "text", "text": "closing words"},
            }
        ),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _chromium(*args: str) -> subprocess.CompletedProcess[bytes]:
    assert BROWSER is not None
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", *args],
        capture_output=True,
        timeout=120,
        check=True,
    )


@pytest.mark.skipif(BROWSER is None, reason="chromium is not installed (Debian package 'chromium')")
def test_the_page_runs_no_script_and_shows_every_block(tmp_path):
    page = tmp_path / "page.html"
    path = os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "acpwire",
            "replay",
            str(_trace(tmp_path / "t.ndjson")),
            "--format",
            "html",
            "--out",
            str(page),
        ],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    dom = _chromium("--dump-dom", page.as_uri()).stdout.decode()
    # Nothing the agent sent ran: the title is the page's, no script or image element.
    assert "<title>acpwire replay</title>" in dom and "pwned</title>" not in dom
    assert "<script" not in dom and "<img" not in dom and 'href="javascript' not in dom
    assert "&lt;script&gt;" in dom and "<strong>kept</strong>" in dom
    # Every block is there, in order, the collapsible ones as details.
    pieces = ["<strong>kept</strong>", "pondering", "first tool", "second tool", "closing words"]
    positions = [dom.find(p) for p in pieces]
    assert -1 not in positions and positions == sorted(positions)
    assert dom.count("<details") == 3 and '<details class="tool failed" open="">' in dom
    shot = tmp_path / "shot.png"
    _chromium("--window-size=900,700", f"--screenshot={shot}", page.as_uri())
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 1000
