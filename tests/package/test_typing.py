"""The public types check: typed uses of the API pass ``mypy --strict`` and pyright's strict
mode (basedpyright), and misuses are reported on the very lines that make them. Each checker
is skipped when it is not installed."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SNIPPETS = Path(__file__).resolve().parent / "typing_snippets"
PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "python"


def run_mypy(path: Path, tmp_path: Path) -> tuple[int, str]:
    env = {**os.environ, "MYPYPATH": str(PACKAGE_ROOT)}
    result = subprocess.run(
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
    return result.returncode, result.stdout + result.stderr


def run_pyright(path: Path, tmp_path: Path) -> tuple[int, str]:
    config = tmp_path / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.10",
                "extraPaths": [str(PACKAGE_ROOT)],
                "include": [str(path)],
            }
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "basedpyright", "-p", str(config)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    return result.returncode, result.stdout + result.stderr


CHECKERS = {
    "mypy": (run_mypy, "mypy", r"{name}:(\d+): error"),
    "pyright": (run_pyright, "basedpyright", r"{name}:(\d+):\d+ - error"),
}


@pytest.fixture(params=sorted(CHECKERS))
def checker(request: pytest.FixtureRequest):
    run, module, pattern = CHECKERS[request.param]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    return run, pattern


def test_typed_usage_checks(checker, tmp_path):
    run, _ = checker
    returncode, output = run(SNIPPETS / "typed_usage.py", tmp_path)
    assert returncode == 0, output


def test_misuses_are_errors_on_their_lines(checker, tmp_path):
    run, pattern = checker
    path = SNIPPETS / "typed_misuse.py"
    expected = {
        number for number, line in enumerate(path.read_text().splitlines(), 1) if "# E:" in line
    }
    returncode, output = run(path, tmp_path)
    reported = {
        int(m.group(1)) for m in re.finditer(pattern.format(name=re.escape(path.name)), output)
    }
    assert returncode != 0
    assert reported == expected, output
