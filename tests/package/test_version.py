"""The version has one source, ``Cargo.toml``; everything that states it agrees with it."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

import acpwire
from acpwire import _version

ROOT = Path(__file__).resolve().parents[2]


def table(path: Path, name: str) -> str:
    """The body of one TOML table (tomllib is 3.11+; the package supports 3.10)."""
    text = path.read_text(encoding="utf-8")
    match = re.search(
        rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[)", text, flags=re.MULTILINE | re.DOTALL
    )
    assert match, f"no [{name}] in {path.name}"
    return match.group(1)


def cargo_version() -> str:
    match = re.search(r'^version = "([^"]+)"', table(ROOT / "Cargo.toml", "package"), re.MULTILINE)
    assert match
    return match.group(1)


def test_python_version_is_cargos():
    assert acpwire.__version__ == _version.__version__ == cargo_version()


def test_pyproject_takes_the_version_from_cargo():
    project = table(ROOT / "pyproject.toml", "project")
    # maturin fills a dynamic version from Cargo.toml; a static one would be a second source.
    assert re.search(r'^dynamic = \[[^]]*"version"', project, re.MULTILINE)
    assert not re.search(r"^version\s*=", project, re.MULTILINE)


def test_changelog_names_the_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d[^\]]*)\]", text, flags=re.MULTILINE)
    assert releases and releases[0] == cargo_version(), releases[:3]
    assert re.search(r"^## \[Unreleased\]", text, flags=re.MULTILINE)


def test_installed_metadata_agrees_when_installed():
    try:
        installed = metadata.version("acpwire")
    except metadata.PackageNotFoundError:
        pytest.skip("acpwire is not installed: a source tree has no metadata to compare")
    assert installed == cargo_version()
