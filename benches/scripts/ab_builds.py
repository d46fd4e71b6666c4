"""Two builds of the extension in one process, alternating round by round.

The machines this project is measured on switch between speeds for tens of seconds at a time,
so two builds are only comparable when they run side by side. Each build is a wheel or a
`_native` shared library; each is loaded under a package name of its own (the installed
`acpwire` supplies the Python parts both use). Every round runs each workload on both builds,
in alternating order; the speedup is the median of the per-round ratios.

    python benches/scripts/ab_builds.py A.whl B.whl [--rounds 14] [--only text,heavy]

The session workloads include the shape matrix's byte layouts (``shape-...``, as
``benches/scripts/shape_matrix.py`` builds them), fed in 64 KiB pieces.

For the release wheels' profile-guided build against a plain one:

    .ci/pgo-wheel /tmp/pgo && pip wheel --no-deps -w /tmp/plain . &&
    python benches/scripts/ab_builds.py /tmp/plain/acpwire-*.whl /tmp/pgo/acpwire-*.whl
"""

from __future__ import annotations

import argparse
import gc
import importlib
import re
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

import orjson

from acpwire.cli.bench.workloads.shapes import shape_matrix
from acpwire.workloads.sessions import heavy_terminal, mixed_sessions, token_stream
from acpwire.workloads.terminal import terminal_corpus

TERMINAL_CHUNK = 64 * 1024
STREAM_PIECE = 1 << 20


def load_build(path: Path, name: str, into: Path) -> Any:
    """The `_native` module of a wheel or shared library, imported as `<name>._native`."""
    package = into / name
    package.mkdir()
    (package / "__init__.py").write_text("")

    def suffix(filename: str) -> str | None:
        return next((s for s in EXTENSION_SUFFIXES if filename.endswith(s)), None)

    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            found = [
                m
                for m in wheel.namelist()
                if Path(m).name.startswith("_native.") and suffix(m) is not None
            ]
            if len(found) != 1:
                raise SystemExit(f"{path}: no extension module for this interpreter in it")
            data = wheel.read(found[0])
            ending = suffix(found[0])
    else:
        ending = suffix(path.name)
        if ending is None:
            raise SystemExit(f"{path}: not an extension module for this interpreter")
        data = path.read_bytes()
    # Whatever the file was called, the module's init function is `PyInit__native`.
    (package / f"_native{ending}").write_bytes(data)
    return importlib.import_module(f"{name}._native")


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def workloads(scale: float = 1.0) -> dict[str, tuple[int, Callable[[Any], Any]]]:
    """Name -> (bytes per run, run(module)), sized by ``scale``."""
    corpus = terminal_corpus(max(10_000, int(10e6 * scale)))
    terminal_chunks = pieces(corpus, TERMINAL_CHUNK)
    streams = {
        "heavy": heavy_terminal(size_bytes=max(100_000, int(24e6 * scale))),
        "token": token_stream(n=max(1000, int(100_000 * scale))),
        "mixed": mixed_sessions(updates=max(1000, int(40_000 * scale))),
    }
    json_data = b"".join(streams.values())
    json_chunks = pieces(json_data, TERMINAL_CHUNK)
    lines = [line for line in json_data.split(b"\n") if line]
    values = [orjson.loads(line) for line in lines]

    def terminal(options: dict, view: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def run(m: Any) -> Any:
            t = m.Terminal(**options)
            for chunk in terminal_chunks:
                t.feed(chunk)
            return view(t)

        return run

    def sessions(data: bytes, piece: int = STREAM_PIECE) -> Callable[[Any], Any]:
        stream = pieces(data, piece)

        def run(m: Any) -> Any:
            store = m.Sessions()
            for piece in stream:
                store.feed(piece)
            store.finish()

        return run

    def raw(m: Any) -> None:
        decoder = m.FrameDecoder(raw=True)
        for chunk in json_chunks:
            decoder.feed(chunk)

    def loads(m: Any) -> None:
        for line in lines:
            m.loads(line)

    def dumps(m: Any) -> None:
        for value in values:
            m.dumps(value)

    shapes = {
        "shape-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"): data
        for name, (data, _) in shape_matrix(max(50_000, int(2_000_000 * scale))).items()
        if not name.startswith("end to end")
    }
    size = len(corpus)
    return {
        "text": (size, terminal({}, lambda t: t.text)),
        "spans": (size, terminal({}, lambda t: t.spans())),
        "screen 200x50": (size, terminal({"cols": 200, "rows": 50}, lambda t: t.screen())),
        **{name: (len(data), sessions(data)) for name, data in streams.items()},
        **{name: (len(data), sessions(data, TERMINAL_CHUNK)) for name, data in shapes.items()},
        "raw framing": (len(json_data), raw),
        "loads": (len(json_data), loads),
        "dumps": (len(json_data), dumps),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the first build (wheel or _native library)")
    parser.add_argument("b", type=Path, help="the second build")
    parser.add_argument("--rounds", type=int, default=14)
    parser.add_argument("--only", help="comma-separated workloads")
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.scale <= 0:
        parser.error("--scale must be positive")
    with tempfile.TemporaryDirectory() as scratch:
        sys.path.insert(0, scratch)
        a = load_build(args.a, "build_a", Path(scratch))
        b = load_build(args.b, "build_b", Path(scratch))
        print(f"A: {args.a.name} ({a._build})\nB: {args.b.name} ({b._build})")
        chosen = workloads(args.scale)
        if args.only:
            names = args.only.split(",")
            unknown = sorted(set(names) - set(chosen))
            if unknown:
                parser.error(f"unknown workloads: {', '.join(unknown)} (have {', '.join(chosen)})")
            chosen = {name: chosen[name] for name in names}
        gc.freeze()
        width = max(len(name) for name in chosen)
        header = f"{'workload':{width}} {'A MB/s':>9} {'B MB/s':>9}"
        print(f"{header}  B/A (median of {args.rounds} rounds)")
        for name, (size, run) in chosen.items():
            times: dict[Any, list[float]] = {a: [], b: []}
            for round_number in range(args.rounds):
                for module in (a, b) if round_number % 2 == 0 else (b, a):
                    start = time.perf_counter()
                    run(module)
                    times[module].append(time.perf_counter() - start)
            ratio = statistics.median(ta / tb for ta, tb in zip(times[a], times[b], strict=True))
            rate_a = size / statistics.median(times[a]) / 1e6
            rate_b = size / statistics.median(times[b]) / 1e6
            print(f"{name:{width}} {rate_a:9.0f} {rate_b:9.0f}  {ratio:.2f}x", flush=True)


if __name__ == "__main__":
    main()
