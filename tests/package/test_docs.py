"""The README stays short, the docs hold no dated runs, and the CLI reference is the parsers'."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
# A date or a clock time marks a diary entry ("the run of 2026-03-01 at 20:40"), which ages.
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b[0-2]\d:[0-5]\d\b")


def test_readme_is_short_and_says_how_to_install():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "pip install acpwire" in text
    assert "pip install '.[bench]' && acpwire bench" in text
    assert "pip install '.[test]' && pytest" in text


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_dated_runs(path):
    found = DATED.findall(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: {found}"


def test_cli_reference_is_generated_from_the_parsers():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_cli_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in ("check", "replay", "stats", "bench", "fake-agent", "record"):
        assert f"## `acpwire {command}`" in text


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (ROOT / "docs").rglob("*.md"):
        assert f" {page.relative_to(ROOT / 'docs').as_posix()}\n" in nav, page
