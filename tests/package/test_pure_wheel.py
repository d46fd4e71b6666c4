"""``scripts/build_pure_wheel.py``: a py3-none-any wheel of the sources, without the extension."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import acpwire

pytest.importorskip("tomllib", reason="the wheel script reads pyproject.toml with tomllib (3.11+)")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pure-dist")
    script = ROOT / "scripts" / "build_pure_wheel.py"
    subprocess.run(
        [sys.executable, str(script), "--out", str(out)], check=True, text=True, capture_output=True
    )
    (built,) = out.iterdir()
    return built


def test_name_and_tags(wheel):
    assert wheel.name == f"acpwire-{acpwire.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        info = archive.read(f"acpwire-{acpwire.__version__}.dist-info/WHEEL").decode()
    assert "Root-Is-Purelib: true" in info and "Tag: py3-none-any" in info


def test_holds_the_sources_and_no_compiled_file(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert not [n for n in names if n.endswith((".so", ".pyd", ".dylib", ".pyc"))]
    assert not [n for n in names if "__pycache__" in n]
    sources = {
        p.relative_to(ROOT / "python").as_posix()
        for p in (ROOT / "python" / "acpwire").rglob("*")
        if p.is_file()
        and p.suffix in (".py", ".pyi", ".typed", ".ndjson")
        and "__pycache__" not in p.parts
    }
    assert sources <= set(names), sorted(sources - set(names))[:5]


def test_metadata_is_the_projects(wheel):
    dist_info = f"acpwire-{acpwire.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        meta = Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
        licenses = {n for n in archive.namelist() if n.startswith(f"{dist_info}/licenses/")}
    assert meta["Version"] == acpwire.__version__
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    assert licenses == {f"{dist_info}/licenses/LICENSE-MIT", f"{dist_info}/licenses/LICENSE-APACHE"}
    assert "orjson>=3.11.7" in meta.get_all("Requires-Dist")
    assert {"test", "sdk", "docs", "export", "dask"} <= set(meta.get_all("Provides-Extra"))
    assert 'pytest>=8; extra == "test"' in meta.get_all("Requires-Dist")
    assert any(url.startswith("Documentation, ") for url in meta.get_all("Project-URL"))
    assert "acpwire = acpwire.__main__:main" in entry_points


def test_record_hashes_every_file(wheel):
    with zipfile.ZipFile(wheel) as archive:
        record_name = f"acpwire-{acpwire.__version__}.dist-info/RECORD"
        rows = [line.split(",") for line in archive.read(record_name).decode().splitlines()]
        listed = {name for name, _, _ in rows}
        assert listed == set(archive.namelist())
        for name, digest, size in rows:
            if name == record_name:
                assert digest == size == ""
                continue
            data = archive.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert (digest, int(size)) == (f"sha256={expected.decode()}", len(data)), name
