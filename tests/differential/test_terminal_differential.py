"""The two terminal backends against each other: random streams, chunkings, tab counts, widths
and base64 errors.

Every test compares the native backend with the pure one (the ``both`` fixture, or a ``backend``
against the pure twin or the native module).
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from acpwire._pure import terminal as pure_terminal
from terminal_support import SAMPLES, fed, random_chunks, views


def test_matches_pure_twin(backend):
    """Both backends agree on random streams of text, controls and sequences."""
    atoms = [s for sample in SAMPLES for s in re.split(rb"(?=\x1b)", sample)] + [
        b"\x1b[2J",
        b"\x1b[3;5H",
        b"\x1b[2@",
        b"\x1b[3P",
        b"\x1b[2X",
        b"\x1b[L",
        b"\x1b[2M",
        b"\x1b[S",
        b"\x1b[T",
        b"\x1b[2;4r",
        b"\x1bM",
        b"\x1b7",
        b"\x1b8",
        b"\x1bc",
        b"\x1b[?7l",
        b"\x1b[?7h",
        b"\x1b[?47h",
        b"\x1b[?47l",
        b"\x1b[?1047l",
        b"\x1b[?1049h",
        b"\x1b[?1049l",
        b"\x1b[1K",
        b"\x1b[2D",
        b"\x1b[A",
        b"\x1b[41m  ",
        b"\x1b[4;7m \x1b[m",
        b"\r",
        b"\n",
        b"\t",
        b"\x08",
        "デ".encode(),
        "\u0301".encode(),
        b"\xe2",
        b"\x82\xac",
        b"x" * 30,
    ]
    rng = random.Random(3)
    for _ in range(150):
        data = b"".join(rng.choice(atoms) for _ in range(rng.randint(0, 30)))
        cfg = rng.choice(
            [
                {},
                {"cols": 12, "rows": 4, "scrollback": 3},
                {"cols": None, "rows": 2, "max_bytes": 40},
            ]
        )
        chunks = random_chunks(rng, data)
        assert views(fed(backend, data, chunks, **cfg)) == views(fed(pure_terminal, data, **cfg))


@pytest.mark.parametrize("cols", [1, 2, 9, 17, 40, 65535, None])
def test_tab_counts_move_as_that_many_single_tabs_on_both_backends(both, cols):
    # CHT and CBT with counts up to the row's width, over default, cleared, sparse and dense
    # stops, from any column and from a pending wrap; the pure backend finds the n-th stop
    # without stepping stop by stop.
    rng = random.Random(cols)
    w = cols or 8192
    for _ in range(40):
        stops = rng.choice(["default", "none", "sparse", "dense"])
        setup = b"" if stops == "default" else b"\x1b[3g"
        if stops == "dense":
            setup += b"".join(b"\x1b[%dG\x1bH" % c for c in range(1, w + 1))
        elif stops == "sparse":
            setup += b"".join(b"\x1b[%dG\x1bH" % c for c in rng.sample(range(1, w + 1), min(5, w)))
        counted, single = setup, setup
        for _ in range(6):
            move = b"\x1b[%dG" % rng.randint(1, w)
            if rng.random() < 0.2:
                move += b"x" * rng.randint(1, 3)  # maybe a pending wrap at the last column
            n = rng.choice([1, 2, 3, 7, rng.randint(1, min(w, 300))])
            final = rng.choice([b"I", b"Z"])
            counted += move + b"\x1b[%d%s" % (n, final)
            single += move + (b"\x1b[" + final) * n
        results = [
            views(fed(b, data, cols=cols, rows=1)) for b in both for data in (counted, single)
        ]
        assert results[0] == results[1] == results[2] == results[3], counted[-60:]
        # Counts past every stop land on the last column (CHT) or the first (CBT).
        for b in both:
            t = fed(b, setup + b"\x1b[1G\x1b[65535I", cols=cols, rows=1)
            assert t.cursor in (None, (0, w - 1))
            t.feed(b"\x1b[65535Z")
            assert t.cursor in (None, (0, 0))


def test_ris_then_tab_stop_changes_agree_on_both_backends(both):
    # RIS forgets the stops; HTS or TBC after it rebuilds the table of every column.
    for data in (b"\x1bc\x1b[5G\x1bH\t\t", b"\x1bc\x1b[9G\x1b[g\r\t\t\t"):
        for cols in (20, None):
            native, pure = (fed(b, data * 3, cols=cols, rows=2) for b in both)
            assert views(native) == views(pure)
    assert fed(both[1], b"\x1bc\x1b[9G\x1b[g\r\t", cols=20, rows=1).cursor == (0, 16)


def test_char_width_agrees_on_every_code_point_and_refuses_the_same_values(backend):
    # The public function of each backend, on controls, marks, wide characters and the edges
    # of the scalar values; and the same exception classes for what is not one.
    native = pytest.importorskip("acpwire._native")
    points = [*range(0x20), *range(0x7F, 0xB0), 0x300, 0x1100, 0x200D, 0x30C7, 0xFF41]
    points += [0xD7FF, 0xE000, 0xFFFD, 0x1F44D, 0x10FFFF, True]
    assert [backend.char_width(cp) for cp in points] == [native.char_width(cp) for cp in points]
    assert backend.char_width(0x1B) == backend.char_width(0x9B) == 0
    for bad, error in [
        (0xD800, ValueError),
        (0xDFFF, ValueError),
        (0x110000, ValueError),
        (2**32 - 1, ValueError),
        (2**32, OverflowError),
        (-1, OverflowError),
        (2**70, OverflowError),
        (1.0, TypeError),
        ("a", TypeError),
        (None, TypeError),
    ]:
        with pytest.raises(error):
            backend.char_width(bad)


def assert_spans_read_as_lines(t):
    """Each row of spans() is its line of lines() plus, at most, trailing blanks that show; rows
    past the last line hold only such blanks."""
    rows = ["".join(s.text for s in row) for row in t.spans()]
    lines = t.lines()
    assert [row.rstrip(" ") for row in rows[: len(lines)]] == lines
    assert all(not row.strip(" ") for row in rows[len(lines) :])


hypothesis = pytest.importorskip("hypothesis")


st = hypothesis.strategies


_ATOM = st.one_of(
    st.sampled_from(
        [
            b"\r",
            b"\n",
            b"\t",
            b"\x08",
            b"\x07",
            b"\x1b[K",
            b"\x1b[2J",
            b"\x1b[A",
            b"\x1b[3;4H",
            b"\x1b[2@",
            b"\x1b[P",
            b"\x1b[1;31m",
            b"\x1b[38:5:9m",
            b"\x1b[m",
            b"\x1b]0;t\x07",
            b"\x1b]8;;u\x1b\\",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b[2;3r",
            b"\x1bM",
            b"\x1b7",
            b"\x1b8",
            b"\x1bH",
            b"\x1b[g",
            b"\x1b[3g",
            b"\x1b[2I",
            b"\x1b[Z",
            b"\x1b[?6h",
            b"\x1b[?6l",
            b"\x1b[?47h",
            b"\x1b[?1047l",
            b"\x1b[X",
            b"\x1b[1K",
            b"\x1b[44m ",
            "デ".encode(),
            "\u0301".encode(),
            b"\xe2\x82",
            b"\xac",
            b"\xed\xa0",
        ]
    ),
    st.binary(max_size=6),
    st.text(max_size=8).map(str.encode),
)


@hypothesis.settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture],  # backend is stateless
)
@hypothesis.given(parts=st.lists(_ATOM, max_size=25), cut=st.integers(min_value=0, max_value=200))
def test_hypothesis_streams(backend, parts, cut):
    data = b"".join(parts)
    cut = min(cut, len(data))
    for cfg in ({}, {"cols": 9, "rows": 3, "scrollback": 4}):
        t = fed(backend, data, **cfg)
        assert_spans_read_as_lines(t)
        whole = views(t)
        assert views(fed(backend, data, [data[:cut], data[cut:]], **cfg)) == whole
        assert whole == views(fed(pure_terminal, data, **cfg))


# Short chunks in the ground state take a one-regex path in the pure backend, untouched rows
# share one blank row, and a new or reset terminal builds nothing until written: edge cases of
# those paths, each chunk sequence compared across backends.
FAST_PATH_CASES = [
    [b"ab\xe2\x82", b"\xac ok"],  # a UTF-8 sequence split across chunks
    [b"x\xe2", b"\r\nplain"],  # a control ends a split sequence: U+FFFD first
    [b"\xe2", b"\x1b[1mA"],
    [b"\xf0\x9f", b"\x98", b"\x80 ok\r\n"],
    [b"a\x1b", b"[31mred\x1b[0m"],  # an escape sequence split across chunks
    [b"a\x1b[3", b"1mred\x1b[0m", b" plain"],
    [b"\x1b]0;ti", b"tle\x07text"],
    [b"\x1b[1ma\x1b[0mb\x1b]0;t\x07c\x1b[2md\x1bPq\x1b\\e"],  # other sequences after plain CSIs
    [b"12345\r", b"ab"],
    [b"abcd", b"e", b"f"],  # pending wrap, then a wrap
    [b"abcde", b"\x1b[2K", b"f"],  # a wrap from a row erased while a wrap was pending
    [b"\x1b[?7l", b"abcdefg", b"h"],
    [b"\x1b[3;1Hx", b"\x1b[1;1H\x1b[K\x1b[1K\x1b[2K", b"\x1b[2@\x1b[P\x1b[X"],  # blank rows
    [b"\n\n\nx", b"\x1bM\x1bM\x1bMy", b"\x1b[2Lz\x1b[M"],
    [b"\x1b[?1049h", b"alt", b"\x1b[?1049l", b"main"],
    [b"\x1b[?47halt", b"\x1b[?47l", b"\x1b[?47h", b"\x1b[?1047l"],
    [b"abcde", b"\n", b"f\x08g", b"hijkl\x1b[D", b"m\x1b[K", b"n"],  # pending wraps ended
    [b"ok \x1b[41m  ", b"\x1b[0m\r\n", b"\x1b[7m \x1b[0m"],  # blanks that show
    [b"e", b"\xcc\x81", b"\x1b[2K\xcc\x81", b"\xe3\x83\x87"],  # a mark on a blank row
    [b"\x1b#8", b"x"],
    [b"plain " * 200 + b"\x1b]0;late\x07end"],  # longer than the short-chunk limit
]


@pytest.mark.parametrize("chunks", FAST_PATH_CASES)
@pytest.mark.parametrize("cfg", [{}, {"cols": 5, "rows": 3}, {"rows": 2, "scrollback": 2}])
def test_short_chunk_paths_match_native(both, chunks, cfg):
    native, pure = both
    a, b = native.Terminal(**cfg), pure.Terminal(**cfg)
    for chunk in chunks:
        a.feed(chunk)
        b.feed(chunk)
        assert views(b) == views(a)
        assert (b.bytes_fed, b.truncated) == (a.bytes_fed, a.truncated)
    data = b"".join(chunks)
    assert views(fed(pure, data, [bytes([x]) for x in data], **cfg)) == views(a)
    # The same chunks after a reset to a snapshot, and after one to nothing.
    for snapshot in (b"\x1b[1mbuilding\x1b[0m\r\n", b"", b"\xe2\x82"):
        a.reset(snapshot)
        b.reset(snapshot)
        for chunk in chunks:
            a.feed(chunk)
            b.feed(chunk)
        assert views(b) == views(a)
        assert (b.bytes_fed, b.truncated) == (a.bytes_fed, a.truncated)


@settings(max_examples=300, deadline=None)
@given(noise=hst.binary(min_size=1, max_size=12))
def test_backends_agree_on_garbage(both, noise):
    native, pure = both
    outcomes = []
    for backend in (native, pure):
        try:
            outcomes.append(backend._b64decode(noise))
        except backend.TerminalDataError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]
