"""Shared fixtures: every API test runs once per backend."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

# ACPWIRE_TEST_BACKENDS=pure runs the suite where the extension cannot be built; by default a
# missing extension fails the native half instead of skipping it.
BACKENDS = [
    name.strip()
    for name in os.environ.get("ACPWIRE_TEST_BACKENDS", "native,pure").split(",")
    if name.strip()
]


def load_backend(name: str) -> ModuleType:
    return importlib.import_module({"native": "acpwire._native", "pure": "acpwire._pure"}[name])


@pytest.fixture(params=BACKENDS, scope="session")
def backend(request: pytest.FixtureRequest) -> ModuleType:
    """The API module of one backend (``acpwire._native`` or ``acpwire._pure``)."""
    return load_backend(request.param)


@pytest.fixture(scope="session")
def both() -> tuple[ModuleType, ModuleType]:
    """Both backends, for differential tests."""
    if BACKENDS != ["native", "pure"]:
        pytest.skip("differential tests need both backends")
    return load_backend("native"), load_backend("pure")


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared spec and conformance data beside the project; skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    return SHARED
