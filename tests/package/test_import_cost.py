"""What ``import acpwire`` loads: with the native backend neither orjson nor the tools.

Each check runs in a fresh interpreter, since this test process has long since imported both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import acpwire
from conftest import BACKENDS

needs_native = pytest.mark.skipif(
    "native" not in BACKENDS, reason="ACPWIRE_TEST_BACKENDS leaves the native backend out"
)

HEAVY = ("orjson", "acpwire.cli", "acpwire.cli.traces", "rich", "markdown_it", "importlib.metadata")


def loaded_after(code: str, backend: str) -> set[str]:
    env = {**os.environ, "ACPWIRE_BACKEND": backend}
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


@needs_native
def test_native_import_loads_neither_orjson_nor_the_tools():
    loaded = loaded_after("import acpwire; assert acpwire.BACKEND == 'native'", "native")
    assert "acpwire._native" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_pure_import_uses_orjson_and_still_not_the_tools():
    loaded = loaded_after("import acpwire; assert acpwire.BACKEND == 'pure'", "pure")
    assert "orjson" in loaded and "acpwire._native" not in loaded
    assert "acpwire.cli" not in loaded


@pytest.mark.parametrize("backend", BACKENDS)
def test_replay_loads_the_tools_on_first_use(backend):
    loaded = loaded_after("from acpwire import replay; assert callable(replay)", backend)
    assert "acpwire.cli.traces" in loaded


def test_lazy_names_are_listed_and_unknown_ones_raise():
    assert "replay" in dir(acpwire) and "FrameDecoder" in dir(acpwire)
    assert set(acpwire.__all__) <= set(dir(acpwire))
    assert acpwire.replay is acpwire.cli.traces.replay
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        acpwire.no_such_name  # noqa: B018
