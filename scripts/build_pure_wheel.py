"""Build the pure-Python wheel, ``acpwire-<version>-py3-none-any.whl``: the package's sources
without the compiled extension, so ``acpwire.BACKEND`` is ``"pure"`` wherever it is installed.

pip ranks a platform wheel above this one and this one above the sdist, so a platform with a
native wheel gets it, and any other gets this fallback instead of a Rust build.

    python scripts/build_pure_wheel.py [--out dist]

The metadata is read from ``pyproject.toml`` (the same fields maturin writes for the native
wheels) and the version from ``Cargo.toml``, its one source. Standard library only (3.11+, for
``tomllib``); the wheel is the same bytes for the same sources.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import sys
import zipfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "acpwire"
# Compiled artefacts of a local build, never part of the pure wheel.
EXCLUDED_SUFFIXES = {".so", ".pyd", ".dylib", ".dll", ".pyc", ".pyo"}
# 1980-01-01, the earliest time a zip entry holds: the same sources give the same wheel bytes.
EPOCH = (1980, 1, 1, 0, 0, 0)


def cargo_version() -> str:
    with (ROOT / "Cargo.toml").open("rb") as fp:
        return str(tomllib.load(fp)["package"]["version"])


def metadata(project: dict, version: str) -> str:
    """Core metadata 2.4 (PEP 639 license expression) from the ``[project]`` table."""
    lines = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        f"License-Expression: {project['license']}",
        *(f"License-File: {name}" for name in project.get("license-files", [])),
        f"Keywords: {','.join(project.get('keywords', []))}",
        *(f"Classifier: {classifier}" for classifier in project.get("classifiers", [])),
        *(f"Project-URL: {label}, {url}" for label, url in project.get("urls", {}).items()),
        *(f"Requires-Dist: {requirement}" for requirement in project.get("dependencies", [])),
    ]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for requirement in requirements:
            spec, _, marker = requirement.partition(";")
            condition = (
                f"({marker.strip()}) and extra == {extra!r}" if marker else f"extra == {extra!r}"
            )
            lines.append(f"Requires-Dist: {spec.strip()}; {condition}".replace("'", '"'))
    lines.append("Description-Content-Type: text/markdown")
    readme = (ROOT / project["readme"]).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def package_files() -> list[Path]:
    files = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix in EXCLUDED_SUFFIXES:
            continue
        files.append(path)
    return files


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build(out: Path) -> Path:
    with (ROOT / "pyproject.toml").open("rb") as fp:
        project = tomllib.load(fp)["project"]
    version = cargo_version()
    name = project["name"]
    dist_info = f"{name}-{version}.dist-info"
    entries: list[tuple[str, bytes]] = [
        (path.relative_to(PACKAGE.parent).as_posix(), path.read_bytes()) for path in package_files()
    ]
    entries += [
        (f"{dist_info}/licenses/{license_file}", (ROOT / license_file).read_bytes())
        for license_file in project.get("license-files", [])
    ]
    scripts = project.get("scripts", {})
    entry_points = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
    wheel = (
        "Wheel-Version: 1.0\nGenerator: acpwire scripts/build_pure_wheel.py\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    entries += [
        (f"{dist_info}/METADATA", metadata(project, version).encode()),
        (f"{dist_info}/WHEEL", wheel.encode()),
        (f"{dist_info}/entry_points.txt", entry_points.encode()),
    ]
    record = [record_line(entry, data) for entry, data in entries]
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))

    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry, data in entries:
            info = zipfile.ZipInfo(entry, date_time=EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="directory for the wheel")
    args = parser.parse_args(argv)
    print(build(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
