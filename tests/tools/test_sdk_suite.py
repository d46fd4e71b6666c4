"""The official SDK's own tests of the names acpwire.sdk replaces, run against the drop-ins.

The SDK's sdist (it ships its tests) is read from ``ACPWIRE_SDK_SDIST`` (the ``.tar.gz``, or a
directory holding it), by default ``target/sdk-sdist/``; fetch it with
``pip download --no-deps --no-binary :all: agent-client-protocol==0.12.1 -d target/sdk-sdist``.
Without it, or with another SDK version installed, the tests skip. Each runs the SDK's tests
in a child pytest with ``tests/tools/sdk_suite_plugin.py``, once per backend.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tarfile
from importlib import metadata
from pathlib import Path

import pytest

import acpwire

SDK_VERSION = "0.12.1"
SDIST = f"agent_client_protocol-{SDK_VERSION}.tar.gz"
ROOT = Path(__file__).resolve().parents[2]
# The SDK's test files holding tests of the three names, and how many tests each group keeps.
GROUPS = {
    "session_state_and_spawn": (
        ["tests/contrib/test_contrib_session_state.py", "tests/test_rpc.py"],
        6,
        (),
    ),
    # The loopback tests serve the agent over HTTP and WebSocket (the SDK's `http` extra).
    "http_loopback": (["tests/http/test_loopback.py"], 3, ("uvicorn", "httpx", "websockets")),
}


def _sdist() -> Path | None:
    given = Path(os.environ.get("ACPWIRE_SDK_SDIST") or ROOT / "target" / "sdk-sdist")
    path = given / SDIST if given.is_dir() else given
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def sdk_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sdist = _sdist()
    if sdist is None:
        pytest.skip(f"the SDK sdist {SDIST} is not available (set ACPWIRE_SDK_SDIST)")
    try:
        installed = metadata.version("agent-client-protocol")
    except metadata.PackageNotFoundError:
        pytest.skip("the SDK (agent-client-protocol) is not installed")
    if installed != SDK_VERSION:
        pytest.skip(f"the tests are the SDK {SDK_VERSION}'s; {installed} is installed")
    out = tmp_path_factory.mktemp("sdk")
    with tarfile.open(sdist) as archive:
        archive.extractall(out, filter="data")
    tree = out / f"agent_client_protocol-{SDK_VERSION}"
    if not (tree / "tests").is_dir():
        pytest.skip(f"{sdist} holds no tests/")
    return tree


@pytest.mark.parametrize("group", list(GROUPS))
def test_the_sdk_suite_passes_through_the_drop_ins(sdk_tree, backend, group):
    files, count, needs = GROUPS[group]
    missing = [name for name in needs if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"these SDK tests need {', '.join(missing)}")
    name = backend.__name__.rsplit("_", 1)[-1]  # acpwire._native -> native
    package_root = Path(acpwire.__file__).resolve().parent.parent
    env = {
        **os.environ,
        "ACPWIRE_BACKEND": name,
        "PYTHONPATH": os.pathsep.join([str(package_root), str(Path(__file__).parent)]),
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "sdk_suite_plugin", "--rootdir", str(sdk_tree), *files]
    run = subprocess.run(
        command, cwd=sdk_tree, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-8000:]
    assert f"acpwire backend={name} from {package_root}" in output, output[-2000:]
    assert f"tests through the drop-ins: {count}" in output, output[-2000:]
    passed = re.search(r"(\d+) passed", output)
    assert passed and int(passed.group(1)) == count, output[-2000:]
    assert not re.search(r"\d+ (failed|error|skipped)", output), output[-2000:]
