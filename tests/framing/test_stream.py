"""iter_messages and aio.read_messages: streams, error handling, no 64 KiB line trap."""

from __future__ import annotations

import asyncio
import io
import os

import pytest

import acpwire
from acpwire.aio import read_messages

BIG = b'{"text":"' + b"x" * 300_000 + b'"}\n'
STREAM = b'{"a":1}\n{bad}\n' + BIG + b'[{"b":2},{"c":3}]\n{"tail":true}'


def test_iter_messages_reads_everything(backend):
    errors = []
    got = list(
        acpwire.iter_messages(
            io.BytesIO(STREAM),
            chunk_size=4096,
            on_error=errors.append,
            decoder=backend.FrameDecoder(),
        )
    )
    assert got == [{"a": 1}, {"text": "x" * 300_000}, {"b": 2}, {"c": 3}, {"tail": True}]
    assert [(e.reason, e.line, e.offset) for e in errors] == [("invalid JSON", 2, 8)]


def test_iter_messages_raises_at_the_bad_frame(backend):
    iterator = acpwire.iter_messages(io.BytesIO(STREAM), decoder=backend.FrameDecoder())
    assert next(iterator) == {"a": 1}
    with pytest.raises(backend.FrameError) as info:
        next(iterator)
    assert info.value.line == 2


def test_iter_messages_default_decoder_and_validation():
    assert list(acpwire.iter_messages(io.BytesIO(b'{"x":1}\n'))) == [{"x": 1}]
    # Refused at the call, before anything is read, and alike for the async reader.
    for bad, error in ((0, ValueError), (-1, ValueError), (2**31, ValueError), (1.5, TypeError)):
        with pytest.raises(error):
            acpwire.iter_messages(io.BytesIO(b""), chunk_size=bad)
        with pytest.raises(error):
            read_messages(None, chunk_size=bad)  # type: ignore[arg-type]
    assert list(acpwire.iter_messages(io.BytesIO(b"[1]\n"), chunk_size=True)) == [1]


def test_iter_messages_respects_the_decoder_cap(backend):
    errors = []
    decoder = backend.FrameDecoder(max_frame_bytes=1000)
    got = list(acpwire.iter_messages(io.BytesIO(STREAM), on_error=errors.append, decoder=decoder))
    assert {"text": "x" * 300_000} not in got
    assert [e.reason for e in errors] == ["invalid JSON", "frame exceeds max_frame_bytes"]


async def test_read_messages_has_no_line_limit(backend):
    reader = asyncio.StreamReader(limit=1024)  # readline() would fail on BIG
    reader.feed_data(STREAM)
    reader.feed_eof()
    errors = []
    got = [
        m
        async for m in read_messages(
            reader, chunk_size=1000, on_error=errors.append, decoder=backend.FrameDecoder()
        )
    ]
    assert got == [{"a": 1}, {"text": "x" * 300_000}, {"b": 2}, {"c": 3}, {"tail": True}]
    assert [e.line for e in errors] == [2]


async def test_read_messages_from_a_subprocess_pipe():
    """A real pipe: a child writes a 200 KB frame that asyncio's readline() cannot take."""
    import sys

    code = (
        "import sys; sys.stdout.buffer.write(b'{\"n\":1}\\n' + b'[\"' + b'y'*200000 + b'\"]\\n');"
        "sys.stdout.flush()"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    got = [m async for m in read_messages(proc.stdout)]
    await proc.wait()
    assert got == [{"n": 1}, "y" * 200000]


async def test_read_messages_raises_without_handler(backend):
    reader = asyncio.StreamReader()
    reader.feed_data(b"[]\n")
    reader.feed_eof()
    with pytest.raises(backend.FrameError, match="empty batch"):
        [m async for m in read_messages(reader, decoder=backend.FrameDecoder())]


class _NothingYet(io.RawIOBase):
    """A non-blocking stream: a first line, then no data yet (``read`` returns None)."""

    def __init__(self) -> None:
        self.sent = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        if self.sent:
            return None
        self.sent = True
        data = b'{"a":1}\n{"b":'
        buffer[: len(data)] = data
        return len(data)


def test_iter_messages_refuses_a_stream_with_no_data_yet(backend):
    # A non-blocking read that has nothing yet is not the end of the stream: treating it as
    # one would report the half-read line as bad and never read the rest.
    got = []
    with pytest.raises(TypeError, match="needs a blocking binary file"):
        for message in acpwire.iter_messages(_NothingYet(), decoder=backend.FrameDecoder()):
            got.append(message)
    assert got == [{"a": 1}]


def test_replay_takes_a_path_or_a_file_never_a_descriptor(backend, tmp_path):
    trace = tmp_path / "t.ndjson"
    trace.write_bytes(
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
        b'"update":{"sessionUpdate":"x"}}}\n'
    )
    fd = os.open(trace, os.O_RDONLY)
    try:
        for replay in (acpwire.replay, backend.reduce_ndjson):
            with pytest.raises(TypeError, match="not int"):
                replay(fd)
        os.fstat(fd)  # still open
    finally:
        os.close(fd)
    with pytest.raises(TypeError, match="needs a blocking binary file"):
        backend.reduce_ndjson(_NothingYet())
    assert backend.reduce_ndjson(str(trace)).ids() == ["s"]


@pytest.mark.parametrize("text", ["", '{"a":1}\n'])
def test_iter_messages_refuses_a_text_file_even_an_empty_one(text):
    with pytest.raises(TypeError, match="needs a binary file, not a text file"):
        list(acpwire.iter_messages(io.StringIO(text)))


@pytest.mark.parametrize("chunk", ["", '{"a":1}\n', None])
async def test_read_messages_refuses_a_reader_of_anything_but_bytes(chunk):
    class Reader:
        async def read(self, size: int):
            return chunk

    with pytest.raises(TypeError, match="needs a reader of bytes: read\\(\\) returned"):
        async for _ in read_messages(Reader()):
            pass


def test_replay_refuses_a_text_file_with_a_clear_error():
    with pytest.raises(TypeError, match="a trace is read as bytes"):
        acpwire.replay(io.StringIO('{"a":1}\n'))


MESSAGES = [{"a": 1}, {"text": "x" * 300_000}, {"b": 2}, {"c": 3}, {"tail": True}]


def test_a_reader_that_stops_early_leaves_the_rest_to_the_next(backend):
    # One chunk holds the whole stream: breaking off, or an error raised, after the first
    # message must not lose what that chunk decoded beyond it.
    decoder = backend.FrameDecoder()
    fp = io.BytesIO(STREAM)
    for message in acpwire.iter_messages(fp, chunk_size=1 << 20, decoder=decoder):
        assert message == {"a": 1}
        break
    with pytest.raises(backend.FrameError) as raised:
        list(acpwire.iter_messages(fp, decoder=decoder))
    assert raised.value.line == 2
    assert list(acpwire.iter_messages(fp, decoder=decoder)) == MESSAGES[1:]
    # Nothing is left over for the decoder once a reader finished.
    assert list(acpwire.iter_messages(io.BytesIO(b""), decoder=decoder)) == []


async def test_an_async_reader_that_stops_early_leaves_the_rest_to_the_next(backend):
    decoder = backend.FrameDecoder()
    reader = asyncio.StreamReader()
    reader.feed_data(STREAM)
    reader.feed_eof()
    async for message in read_messages(reader, chunk_size=1 << 20, decoder=decoder):
        assert message == {"a": 1}
        break  # asyncio closes the generator later, if at all: nothing may wait for that
    errors = []
    got = [m async for m in read_messages(reader, on_error=errors.append, decoder=decoder)]
    assert got == MESSAGES[1:]
    assert [e.line for e in errors] == [2]


def test_readers_over_one_decoder_share_what_is_left(backend):
    # A reader still held when another starts: neither loses nor repeats a message.
    decoder = backend.FrameDecoder()
    data = b"".join(b'{"n":%d}\n' % i for i in range(6))
    held = acpwire.iter_messages(io.BytesIO(data), decoder=decoder)
    assert next(held) == {"n": 0}
    # The second reader starts with what the first left (its own file is read when that runs
    # out: here, never).
    second = acpwire.iter_messages(io.BytesIO(b'{"n":6}\n'), decoder=decoder)
    assert next(second) == {"n": 1}
    del second
    assert [m["n"] for m in held] == [2, 3, 4, 5]
