"""The public types check: typed uses of the API pass ``mypy --strict``, and misuses are
reported on the very lines that make them (skipped when mypy is not installed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

SNIPPETS = Path(__file__).resolve().parent / "typing_snippets"
PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "python"


def run_mypy(path: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(PACKAGE_ROOT)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--config-file",
            os.devnull,
            "--show-error-codes",
            # The package's own errors are checked in CI; here only the snippet's count.
            "--follow-imports=silent",
            str(path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=PACKAGE_ROOT,
        timeout=300,
    )


def test_typed_usage_checks(tmp_path):
    result = run_mypy(SNIPPETS / "typed_usage.py", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_misuses_are_errors_on_their_lines(tmp_path):
    path = SNIPPETS / "typed_misuse.py"
    expected = {
        number for number, line in enumerate(path.read_text().splitlines(), 1) if "# E:" in line
    }
    result = run_mypy(path, tmp_path)
    reported = {
        int(m.group(1)) for m in re.finditer(r"typed_misuse\.py:(\d+): error", result.stdout)
    }
    assert reported == expected, result.stdout
