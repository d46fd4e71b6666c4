"""Peak memory of one batch frame against its size, on both backends.

Each measurement runs in a fresh interpreter: the frame is built, the peak RSS is reset
(``/proc/self/clear_refs``), the frame is decoded or reduced, and the growth of the peak RSS is
divided by the frame's bytes. For the pure backend ``tracemalloc``'s peak is given too, and
for reference the size of the decoded value itself (``orjson.loads``'s result, traced): a batch
of ten million ``{}`` is 3 bytes an item on the wire and a Python dict an item once decoded, so
whatever returns the items costs that much at least.

    python benches/scripts/batch_peak.py [--scale 1.0]

``--scale 1.0`` is the batch of 10,000,000 ``{}`` (30 MB) and a batch of 100,000 message chunks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import ctypes, gc, json, sys, tracemalloc
backend, api, shape = sys.argv[1:4]
n, traced = int(sys.argv[4]), sys.argv[5] == "1"
if shape == "empty objects":
    frame = b"[" + b",".join([b"{}"] * n) + b"]\n"
else:
    item = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text",'
        b'"text":"the parser reads each frame once and appends the chunk in place "}}}}'
    )
    frame = b"[" + b",".join([item] * n) + b"]\n"
if backend == "reference":
    import orjson
else:
    module = __import__("acpwire._" + backend, fromlist=["_"])
def status(key):
    with open("/proc/self/status") as fp:
        for line in fp:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
gc.collect()
try:
    ctypes.CDLL("libc.so.6").malloc_trim(0)
except OSError:
    pass
with open("/proc/self/clear_refs", "w") as fp:
    fp.write("5")  # resets VmHWM to the current RSS
before = status("VmHWM")
if traced:
    tracemalloc.start()
if backend == "reference":
    result = orjson.loads(frame)
elif api == "FrameDecoder.feed":
    result = module.FrameDecoder(max_frame_bytes=len(frame) + 1).feed(frame)
elif api == "loads":
    result = module.loads(frame)
else:
    result = module.Sessions(); result.feed(frame); result.finish()
peak = tracemalloc.get_traced_memory()[1] if traced else None
current = tracemalloc.get_traced_memory()[0] if traced else None
rss = status("VmHWM") - before
print(json.dumps({"frame": len(frame), "rss": rss, "traced_peak": peak, "traced_kept": current}))
"""


def measure(backend: str, api: str, shape: str, n: int, traced: bool) -> dict[str, int]:
    # The child imports the acpwire this interpreter imports, wherever it is installed.
    import acpwire

    package_root = str(Path(acpwire.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": package_root + (os.pathsep + path if path else "")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, backend, api, shape, str(n), "1" if traced else "0"],
        capture_output=True,
        check=True,
        env=env,
        timeout=600,
    )
    found: dict[str, int] = json.loads(done.stdout)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    if not args.scale > 0:
        parser.error("--scale must be above 0")
    shapes = {
        "empty objects": max(10_000, int(10_000_000 * args.scale)),
        "message chunks": max(1_000, int(100_000 * args.scale)),
    }
    try:
        import acpwire._native  # noqa: F401

        backends = ["native", "pure"]
    except ImportError:
        backends = ["pure"]
    print("peak growth ÷ frame bytes (RSS; tracemalloc for pure), one fresh interpreter each")
    for shape, n in shapes.items():
        value = measure("reference", "", shape, n, traced=True)
        size = value["frame"]
        print(
            f"\n{shape}: {n:,} items, {size / 1e6:.1f} MB; the decoded value alone "
            f"(orjson.loads, traced) is {value['traced_kept'] / size:.1f}× the frame, "
            f"orjson.loads peaks at {value['traced_peak'] / size:.1f}×"
        )
        for backend in backends:
            for api in ("FrameDecoder.feed", "loads", "Sessions.feed"):
                rss = measure(backend, api, shape, n, traced=False)
                line = f"  {backend:6} {api:18} RSS {rss['rss'] / size:6.1f}×"
                if backend == "pure":
                    traced = measure(backend, api, shape, n, traced=True)
                    line += f"   tracemalloc peak {traced['traced_peak'] / size:6.1f}×"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
