"""What ``acpwire record`` costs: added latency per frame and throughput, proxy vs direct.

A plain script (not collected by pytest), bounded in time (well under a minute)::

    python benches/scripts/record_overhead.py [--rounds 2000] [--tokens 50000] [--big-mb 32]

The agent is ``acpwire fake-agent`` (v1), started directly or behind
``acpwire.record --out TMP -- fake-agent ...``. The client is a blocking pipe driver that only
splits lines, so the numbers are the agent and the proxy, not a client's JSON parsing.

* latency: ``session/new`` request and its response, one at a time; each round trip crosses
  the proxy twice (one frame each way), so added latency per frame is half the difference of
  the median round trips.
* throughput, live: one fake-agent prompt turn of ``--tokens`` message chunks, flat out
  (bound by the agent, which is Python too).
* throughput, bulk: the agent's output for a turn of small frames (``--tokens``) and for one of
  big frames (``--big-mb`` MiB of terminal text in one execute tool call) is captured once, then
  replayed by ``cat`` flat out, direct and through the proxy: what the proxy itself can carry.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

_PY = sys.executable


class Pipe:
    """A minimal line-oriented client over a subprocess's stdin/stdout."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.out = self.proc.stdin.fileno()
        self.inp = self.proc.stdout.fileno()
        self.buf = bytearray()
        self.scanned = 0
        self.bytes_in = 0

    def send(self, line: bytes) -> None:
        os.write(self.out, line)

    def line(self) -> bytes:
        while True:
            # Scan only what is new: rescanning a growing big frame would be quadratic.
            i = self.buf.find(b"\n", self.scanned)
            if i >= 0:
                frame = bytes(self.buf[:i])
                del self.buf[: i + 1]
                self.scanned = 0
                return frame
            self.scanned = len(self.buf)
            data = os.read(self.inp, 1 << 20)
            if not data:
                raise EOFError("agent closed its output")
            self.bytes_in += len(data)
            self.buf += data

    def until(self, marker: bytes) -> int:
        """Read frames until one containing ``marker``; return how many frames were read."""
        frames = 0
        while True:
            frames += 1
            if marker in self.line():
                return frames

    def drain(self) -> int:
        """Read to EOF; return the bytes read."""
        total = len(self.buf)
        while data := os.read(self.inp, 1 << 20):
            total += len(data)
        return total

    def close(self) -> int:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def _start(agent: list[str], trace: str | None) -> Pipe:
    argv = agent if trace is None else [_PY, "-m", "acpwire.record", "--out", trace, "--", *agent]
    pipe = Pipe(argv)
    pipe.send(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n')
    pipe.until(b'"id":0')
    return pipe


def latency(agent: list[str], trace: str | None, rounds: int, budget: float) -> list[float]:
    pipe = _start(agent, trace)
    times = []
    deadline = time.monotonic() + budget
    for i in range(1, rounds + 1):
        request = (
            b'{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n'
            % i
        )
        t0 = time.perf_counter()
        pipe.send(request)
        pipe.line()
        times.append(time.perf_counter() - t0)
        if time.monotonic() > deadline:
            break
    pipe.close()
    return times


def turn(agent: list[str], trace: str | None) -> tuple[float, int, int]:
    """One prompt turn; return (seconds, frames, bytes) from prompt to its response."""
    pipe = _start(agent, trace)
    pipe.send(
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n'
    )
    pipe.until(b'"id":1')
    start_bytes = pipe.bytes_in - len(pipe.buf)
    t0 = time.perf_counter()
    pipe.send(
        b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_0001",'
        b'"prompt":[{"type":"text","text":"go"}]}}\n'
    )
    frames = pipe.until(b'"stopReason"')
    elapsed = time.perf_counter() - t0
    size = pipe.bytes_in - len(pipe.buf) - start_bytes
    pipe.close()
    return elapsed, frames, size


def capture(agent: list[str], path: str) -> int:
    """Save what ``agent`` writes for one prompt turn (its whole output); return frames."""
    pipe = _start(agent, None)
    with open(path, "wb") as f:
        pipe.send(
            b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n'
            b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_0001",'
            b'"prompt":[{"type":"text","text":"go"}]}}\n'
        )
        frames = 0
        while True:
            frame = pipe.line()
            f.write(frame + b"\n")
            frames += 1
            if b'"stopReason"' in frame:
                break
    pipe.close()
    return frames


def bulk(path: str, trace: str | None) -> float:
    """Seconds to receive all of ``path`` from ``cat path``, direct or through the proxy."""
    pipe = Pipe(
        ["cat", path]
        if trace is None
        else [_PY, "-m", "acpwire.record", "--out", trace, "--", "cat", path]
    )
    pipe.proc.stdin.close()  # type: ignore[union-attr]
    # Timed from the first byte, so interpreter start-up is left out.
    first = os.read(pipe.inp, 1 << 20)
    t0 = time.perf_counter()
    size = len(first) + pipe.drain()
    elapsed = time.perf_counter() - t0
    pipe.proc.wait()
    assert size == os.path.getsize(path), (size, os.path.getsize(path))
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="latency round trips (2000)")
    parser.add_argument("--tokens", type=int, default=50_000, help="small-frame turn size")
    parser.add_argument("--big-mb", type=int, default=32, help="MiB in the big frame (32)")
    parser.add_argument("--repeat", type=int, default=3, help="throughput runs, best kept (3)")
    args = parser.parse_args()
    fake = [_PY, "-m", "acpwire", "fake-agent"]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.ndjson")

        direct = latency(fake, None, args.rounds, 15.0)
        proxied = latency(fake, trace, args.rounds, 15.0)
        d, p = statistics.median(direct), statistics.median(proxied)
        d99 = statistics.quantiles(direct, n=100)[98]
        p99 = statistics.quantiles(proxied, n=100)[98]
        print(f"latency, {len(direct)}/{len(proxied)} round trips (session/new):")
        print(f"  direct  median {d * 1e6:8.1f} us   p99 {d99 * 1e6:8.1f} us")
        print(f"  proxied median {p * 1e6:8.1f} us   p99 {p99 * 1e6:8.1f} us")
        print(f"  added per frame (median): {(p - d) / 2 * 1e6:.1f} us")

        small = [
            *fake,
            "--tokens", str(args.tokens), "--thoughts", "0", "--tool-calls", "0",
            "--no-plan", "--no-usage",
        ]  # fmt: skip
        big = [
            *fake,
            "--tokens", "0", "--thoughts", "0", "--tool-calls", "3", "--no-plan", "--no-usage",
            "--terminal-bytes", str(args.big_mb << 20),
        ]  # fmt: skip
        print("throughput, live fake-agent turn of small frames (agent-bound):")
        rows = {}
        for label, where in (("direct", None), ("proxied", trace)):
            rows[label] = min(turn(small, where) for _ in range(args.repeat))
        for label, (secs, frames, size) in rows.items():
            print(
                f"  {label:7} {frames:7d} frames {size / 2**20:6.1f} MiB in {secs:6.3f} s: "
                f"{frames / secs:9.0f} frames/s {size / 2**20 / secs:7.1f} MiB/s"
            )
        print(f"  proxied/direct: {rows['direct'][0] / rows['proxied'][0]:.2f}")

        print("throughput, a captured stream replayed flat out by cat (proxy-bound):")
        for name, agent in (("small frames", small), ("big frames", big)):
            path = os.path.join(tmp, name.replace(" ", "_") + ".ndjson")
            frames = capture(agent, path)
            size = os.path.getsize(path)
            secs = {
                label: min(bulk(path, where) for _ in range(args.repeat))
                for label, where in (("direct", None), ("proxied", trace))
            }
            print(f"  {name}: {frames} frames, {size / 2**20:.1f} MiB")
            for label, t in secs.items():
                print(
                    f"    {label:7} {t:6.3f} s: {frames / t:9.0f} frames/s "
                    f"{size / 2**20 / t:8.1f} MiB/s"
                )
            print(f"    proxied/direct: {secs['direct'] / secs['proxied']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
