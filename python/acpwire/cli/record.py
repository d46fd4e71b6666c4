"""``acpwire record``: a transparent stdio proxy that records an ACP session to an NDJSON trace.

The proxy sits between a client (our stdin/stdout) and an agent subprocess. Bytes are
forwarded unchanged, in both directions, as soon as a read returns them; framing happens on
the side, for the trace only. Each trace line is one frame::

    {"t":0.012345,"dir":"client","msg":{...the frame's JSON, byte for byte...}}
    {"t":0.013001,"dir":"agent","raw":"the frame text, when it is not valid JSON"}

``t`` is seconds since the recording started (monotonic clock), taken when the proxy read the
bytes that completed the frame; it never decreases from one line to the next. ``dir`` is the
sender. A frame longer than ``--max-frame-bytes`` is still forwarded whole, but the trace only
keeps its first 64 bytes: ``{"t":…,"dir":…,"raw":"<excerpt>","error":"frame exceeds
max_frame_bytes"}``. A frame that is not valid UTF-8 is recorded raw with U+FFFD for its bad
bytes and ``"error":"invalid UTF-8"``. Blank lines are not frames; a line ending ``\\r\\n`` is
recorded without the ``\\r``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

from .. import FrameDecoder, FrameError, dumps, loads

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "Recorder", "build_parser", "main"]

DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 16
_FLUSH_INTERVAL = 0.05
_PROG = "acpwire record"


class Recorder:
    """Writes trace lines for frames read in one or more directions (thread-safe).

    ``out`` is a binary file. :meth:`feed` splits a direction's bytes into frames with its own
    ``FrameDecoder(raw=True)`` and writes one line per frame; :meth:`finish` flushes a final
    frame that had no newline. A failed trace write is reported once on stderr and tracing
    stops; forwarding is never affected.
    """

    def __init__(
        self,
        out: IO[bytes],
        directions: Sequence[str] = ("client", "agent"),
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        start: float | None = None,
    ) -> None:
        self._out = out
        self._start = time.monotonic() if start is None else start
        self._decoders = {
            d: FrameDecoder(max_frame_bytes=max_frame_bytes, raw=True) for d in directions
        }
        self._tags = {d: b',"dir":' + dumps(d)[:-1] for d in directions}
        self._lock = threading.Lock()
        self._last = 0.0
        self._flushed = 0.0
        self._broken = False
        self._closed = False
        self.frames = 0
        """Trace lines written."""

    def feed(self, direction: str, data: bytes) -> None:
        """Record the frames that ``data``, read now from ``direction``, completes."""
        now = time.monotonic() - self._start
        self._write(direction, now, self._decoders[direction]._feed_events(data))

    def finish(self, direction: str) -> None:
        """End of ``direction``'s stream: record a last frame that had no newline."""
        now = time.monotonic() - self._start
        self._write(direction, now, self._decoders[direction]._finish_events())

    def flush(self) -> None:
        """Write out buffered trace lines."""
        with self._lock:
            if self._closed or self._broken:
                return
            try:
                self._out.flush()
            except OSError as exc:
                self._broken = True
                self._report(exc)

    def close(self) -> None:
        """Flush and close the trace; later feeds are ignored."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._out.close()
            except OSError as exc:
                # A trace that already failed was reported then: once is enough.
                if not self._broken:
                    self._broken = True
                    self._report(exc)

    def _write(self, direction: str, now: float, events: list[Any]) -> None:
        if not events:
            return
        tag = self._tags[direction]
        # Validation is the costly part; done outside the lock so the directions overlap.
        bodies = [_body(event) for event in events]
        with self._lock:
            if self._closed or self._broken:
                return
            # Two directions race for the lock; clamping keeps t non-decreasing in file order
            # (the difference is the few microseconds the other thread held the lock).
            now = self._last = max(now, self._last)
            head = b'{"t":' + f"{now:.6f}".encode() + tag
            # Written piecewise: joining would copy a big frame once more.
            parts = []
            for body in bodies:
                parts.append(head)
                parts.extend(body)
            try:
                self._out.writelines(parts)
                # A flush per read would cost a system call per frame on a chatty stream; every
                # 50 ms still lets tail -f follow along and bounds what a crash of the proxy
                # could lose.
                if now - self._flushed >= _FLUSH_INTERVAL:
                    self._out.flush()
                    self._flushed = now
            except OSError as exc:
                self._broken = True
                self._report(exc)
                return
            self.frames += len(bodies)

    @staticmethod
    def _report(exc: OSError) -> None:
        print(f"{_PROG}: writing the trace failed, recording stopped: {exc}", file=sys.stderr)


def _body(event: Any) -> tuple[bytes, ...]:
    """The parts of a trace line after ``"dir"``, for a raw frame or a FrameError."""
    if isinstance(event, FrameError):
        excerpt, reason = dumps(event.excerpt)[:-1], dumps(event.reason)[:-1]
        return (b',"raw":', excerpt, b',"error":', reason, b"}\n")
    # A byte order mark, which `loads` skips in bytes, is an error in a frame and no JSON
    # inside a record: such a frame is recorded raw, as the framing would refuse it.
    if not event.startswith(_UTF8_BOM):
        try:
            loads(event)
        except ValueError:
            pass
        else:
            # Valid JSON embeds as is, so the trace keeps the frame's exact bytes.
            return (b',"msg":', event, b"}\n")
    try:
        text = event.decode()
    except UnicodeDecodeError:
        # The text shown has U+FFFD for the bad bytes, so it no longer says why the frame was
        # refused: the record says so, as a plain trace holding the frame would.
        shown = dumps(event.decode("utf-8", "replace"))[:-1]
        return (b',"raw":', shown, b',"error":"invalid UTF-8"}\n')
    return (b',"raw":', dumps(text)[:-1], b"}\n")


_UTF8_BOM = b"\xef\xbb\xbf"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            # A non-blocking descriptor that is full for now: wait until it takes more.
            select.select([], [fd], [])


class _Reading:
    """When a pump started waiting in ``read``, or None while it is forwarding."""

    def __init__(self) -> None:
        self.since: float | None = None


def _pump(
    src: int,
    dst: int,
    direction: str,
    recorder: Recorder,
    on_eof: Any,
    reading: _Reading | None = None,
    on_write_failed: Any = None,
) -> None:
    """Copy ``src`` to ``dst`` until EOF, recording frames; then call ``on_eof``.

    When writing to ``dst`` fails and ``on_write_failed`` is given, the copy stops there (what
    was read is recorded) and ``on_write_failed`` is called before ``on_eof``; without it, the
    pump keeps draining and recording ``src``.
    """
    forwarding = True
    reading = reading or _Reading()
    try:
        while True:
            reading.since = time.monotonic()
            try:
                data = os.read(src, _CHUNK)
            except BlockingIOError:
                # A non-blocking descriptor with nothing yet is not the end of the stream.
                select.select([src], [], [])
                continue
            except OSError:  # a closed or invalid fd ends the stream like EOF
                data = b""
            reading.since = None
            if not data:
                break
            # Recorded before it is forwarded: the reply it may cause is read by the other
            # direction's thread, and must not reach the trace first.
            recorder.feed(direction, data)
            if forwarding:
                try:
                    _write_all(dst, data)
                except OSError:
                    if on_write_failed is not None:
                        recorder.finish(direction)
                        on_write_failed()
                        return
                    # The reader went away; keep draining so the sender never blocks on a full
                    # pipe, and keep recording what it sent.
                    forwarding = False
        recorder.finish(direction)
    finally:
        on_eof()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``acpwire record``."""
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description=(
            "Run AGENT_CMD as an ACP agent behind a transparent stdio proxy: standard input "
            "goes to the agent and the agent's standard output comes back, byte for byte, "
            "while every frame is written to TRACE as one NDJSON line "
            '{"t": seconds since start, "dir": "client"|"agent", "msg": the frame\'s JSON} '
            '(or "raw": the text, for a frame that is not valid JSON). The agent\'s standard '
            "error is passed through. Point a client at this command instead of the agent."
        ),
        epilog=(
            "Exit status: the agent's (128+N when it dies of signal N); 2 for a usage error, "
            "a trace that cannot be opened, or standard input or output closed; 126 when "
            "AGENT_CMD cannot be run, 127 when it is not found. A trace that fails while "
            "being written stops the recording, with a message, and never the traffic. "
            "SIGTERM, SIGHUP and SIGINT are passed on to the agent. When the client goes "
            "away (its end of standard output closed), the agent's pipes are closed so it "
            "sees the end of its input and a broken pipe; an agent still running 2 s later "
            "gets SIGTERM, then SIGKILL, and the proxy is gone within 5 s, the trace holding "
            "everything read until then. "
            "Example: acpwire record --out session.ndjson -- my-agent --acp"
        ),
    )
    parser.add_argument(
        "--out", "-o", required=True, metavar="TRACE", help="trace file to write (truncated)"
    )
    parser.add_argument(
        "--max-frame-bytes",
        type=int,
        default=DEFAULT_MAX_FRAME_BYTES,
        metavar="N",
        help=(
            "record at most N bytes of one frame; longer frames are still forwarded whole "
            "but traced as an excerpt (default: 64 MiB)"
        ),
    )
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        metavar="-- AGENT_CMD [ARG ...]",
        help="the agent command line, after --",
    )
    return parser


# How long the proxy waits, once the agent has exited, for output that does not come.
_ORPHAN_WAIT = 5.0


def _exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


# Once the client has gone, how long the agent has to exit on its own after its pipes were
# closed, and then after SIGTERM, before it is killed: the proxy is gone within 5 s.
_GONE_GRACE = 2.0
_TERM_GRACE = 1.5


def _reader_gone(fd: int) -> bool:
    """Whether nobody reads the pipe or socket ``fd`` any more (POSIX; False elsewhere)."""
    if not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLERR)  # POLLERR and POLLHUP are always reported
    try:
        events = poller.poll(0)
    except OSError:
        return False
    # A write end whose reader closed reports POLLERR; a socket whose peer shut down, POLLHUP.
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def main(argv: Sequence[str]) -> int:
    """Run ``acpwire record`` with ``argv`` (the arguments after ``record``); return the status.

    Uses the process's stdin and stdout (file descriptors 0 and 1) as the client side, and
    closes standard output once the agent has closed its own, so the client sees EOF.
    """
    parser = build_parser()
    args = parser.parse_args(list(argv))
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        parser.error("missing the agent command: acpwire record --out TRACE -- AGENT_CMD ...")
    if args.max_frame_bytes <= 0:
        parser.error("--max-frame-bytes must be positive")
    if _closed(0) or _closed(1):
        # The trace would be opened on the free descriptor and take the client's place.
        print(f"{_PROG}: standard input or output is closed", file=sys.stderr)
        return 2
    try:
        out = open(args.out, "wb", buffering=1 << 20)  # noqa: SIM115 (closed by the Recorder)
    except OSError as exc:
        print(f"{_PROG}: cannot write the trace {args.out!r}: {exc.strerror}", file=sys.stderr)
        return 2

    start = time.monotonic()
    # Its own process group on POSIX: a Ctrl-C or hangup sent to the terminal's foreground
    # group reaches the proxy, which passes it on once, rather than the agent twice.
    # (`process_group` where Python has it: unlike `preexec_fn`, it is safe with threads.)
    group: dict[str, Any] = {}
    if os.name == "posix":
        group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    try:
        agent = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, **group
        )
    except OSError as exc:
        out.close()
        reason = exc.strerror or str(exc)
        print(f"{_PROG}: cannot run {command[0]!r}: {reason}", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    assert agent.stdin is not None and agent.stdout is not None
    agent_stdin = agent.stdin
    recorder = Recorder(out, max_frame_bytes=args.max_frame_bytes, start=start)

    def close_agent_stdin() -> None:
        with contextlib.suppress(OSError):
            agent_stdin.close()

    def close_our_stdout() -> None:
        # dup2 over fd 1 releases the pipe (the client sees EOF) while keeping fd 1 valid for
        # anything Python still flushes at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        except OSError:
            pass

    client_gone = threading.Event()
    agent_stdout = agent.stdout

    def client_went_away() -> None:
        # Standard output broke: the agent sees EOF on its input and a broken pipe on its
        # output, as it would talking to that client directly.
        client_gone.set()
        close_agent_stdin()
        with contextlib.suppress(OSError):
            agent_stdout.close()

    upstream = threading.Thread(
        target=_pump,
        args=(0, agent_stdin.fileno(), "client", recorder, close_agent_stdin),
        name="acpwire-record-client",
        daemon=True,  # it may sit in read(0) forever if the client never closes
    )
    agent_reading = _Reading()
    downstream = threading.Thread(
        target=_pump,
        args=(
            agent.stdout.fileno(),
            1,
            "agent",
            recorder,
            close_our_stdout,
            agent_reading,
            client_went_away,
        ),
        name="acpwire-record-agent",
        daemon=True,
    )

    def forward(signum: int, _frame: Any) -> None:
        if agent.poll() is None:
            agent.send_signal(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        # SIGHUP does not exist on Windows.
        forwarded = (signal.SIGTERM, getattr(signal, "SIGHUP", None), signal.SIGINT)
        for signum in [s for s in forwarded if s is not None]:
            previous[signum] = signal.signal(signum, forward)
    try:
        upstream.start()
        downstream.start()
        gone_at: float | None = None
        terminated = False
        while True:
            try:
                returncode = agent.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                # Frames written since the last flush reach the file even when the stream idles.
                recorder.flush()
            if gone_at is None and not client_gone.is_set() and _reader_gone(1):
                # The client stopped reading while the agent is quiet: no write tells us.
                client_gone.set()
                close_agent_stdin()
            if client_gone.is_set():
                now = time.monotonic()
                gone_at = now if gone_at is None else gone_at
                if not terminated and now - gone_at > _GONE_GRACE:
                    terminated = True
                    agent.terminate()
                elif now - gone_at > _GONE_GRACE + _TERM_GRACE:
                    agent.kill()
        # The agent is gone; whatever it wrote is in the pipe, and is forwarded however slowly
        # the client reads it. Only a wait for more that does not come (a grandchild holding
        # the agent's stdout open) is cut short, after 5 s.
        while downstream.is_alive() and not client_gone.is_set():
            downstream.join(timeout=0.1)
            since = agent_reading.since
            if since is not None and time.monotonic() - since > _ORPHAN_WAIT:
                break
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        recorder.close()
    if downstream.is_alive():
        close_our_stdout()
    return _exit_status(returncode)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
