"""Helpers of the terminal tests: feeding a terminal in chunks, its views, sample streams."""

from __future__ import annotations


def views(t):
    return (t.text, t.lines(), t.spans(), t.screen(), t.cursor, t.title, t.progress, t.bell_count)


def make(backend, **kw):
    return backend.Terminal(**kw)


def fed(backend, data, chunks=None, **kw):
    t = make(backend, **kw)
    if chunks is None:
        t.feed(data)
    else:
        for c in chunks:
            t.feed(c)
    return t


def random_chunks(rng, data, most=9):
    out, i = [], 0
    while i < len(data):
        k = rng.randint(1, most)
        out.append(data[i : i + k])
        i += k
    return out


SAMPLES = [
    b"plain text\r\nsecond line\n",
    b"\x1b[1;32m   Compiling\x1b[0m acpwire v0.1.0\r\n\x1b[1;33mwarning\x1b[0m: unused\r\n",
    "naïve café デ ネa e\u0301 👍 ａ\r\n".encode(),
    b"\x1b]8;;https://example.com/a;b\x1b\\link\x1b]8;;\x1b\\ after\r\n",
    b"\x1b]0;my title\x07\x1b]9;4;1;40\x07 50%|#####     |\r 100%|##########|\x1b[K\r\n",
    b"ab\xe2\x82\xacc\xff\xc3\x28\xed\xa0\x80\xf0\x9f\x98",
    b"\x1b[38:2::255:128:0mrgb\x1b[48;5;21mbg\x1b[4:3mcurly\x1b[0m\x1b[?25l\x1b[6n\x1b[>c",
    b"\x1bP1$r0m\x1b\\\x1b_hidden\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\visible",
]
