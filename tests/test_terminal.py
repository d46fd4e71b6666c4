"""Terminal renderer (issue 3): semantics, split invariance, caps, conformance and oracles.

Runs against the ``backend`` fixture (native and pure). Conformance data is read at run time
from ``../shared/conformance/terminal`` and the tests skip when it is absent.
"""

from __future__ import annotations

import base64
import json
import operator
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from acpwire._pure import terminal as pure_terminal

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "conformance" / "terminal"


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


@pytest.mark.parametrize("data", SAMPLES)
@pytest.mark.parametrize("cols", [None, 20])
def test_split_invariance(backend, data, cols):
    whole = views(fed(backend, data, cols=cols, rows=6))
    assert views(fed(backend, data, [bytes([b]) for b in data], cols=cols, rows=6)) == whole
    rng = random.Random(len(data))
    for _ in range(5):
        assert views(fed(backend, data, random_chunks(rng, data), cols=cols, rows=6)) == whole
        t = make(backend, cols=cols, rows=6)
        for c in random_chunks(rng, data):
            t.feed_base64(
                base64.b64encode(c).decode() if rng.random() < 0.5 else base64.b64encode(c)
            )
        assert views(t) == whole


@pytest.mark.parametrize(
    "seq", [b"\x1b[1;31mred\x1b[0m", b"\x1b]0;t\x1b\\x", "é€👍".encode(), b"\x1b]8;;u\x07l"]
)
def test_split_every_offset(backend, seq):
    data = b"start " + seq + b" end"
    whole = views(fed(backend, data))
    for i in range(1, len(data)):
        assert views(fed(backend, data, [data[:i], data[i:]])) == whole, i


def test_progress_bars(backend):
    tqdm = b"".join(b"\r%3d%%|%-10s| %d/100" % (i, b"#" * (i // 10), i) for i in range(101)) + b"\n"
    assert backend.render_text(tqdm) == "100%|##########| 100/100"
    cargo = b"".join(
        b"\r\x1b[K    \x1b[1;36mBuilding\x1b[0m [=====>   ] %d/200: crate%d" % (i, i)
        for i in range(200)
    )
    cargo += b"\r\x1b[K\x1b[1;32m    Finished\x1b[0m dev profile\n"
    assert backend.render_text(cargo) == "    Finished dev profile"
    npm = (
        b"".join(b"\x1b[2K\x1b[1G\xe2\xa0\x8b fetch %d" % i for i in range(50))
        + b"\x1b[2K\x1b[1Gadded 3 packages\n"
    )
    assert backend.render_text(npm) == "added 3 packages"
    pip = b"".join(b"\r   \xe2\x94\x81\xe2\x94\x81 %d/10 MB" % i for i in range(11)) + b"\r\n"
    assert backend.render_text(pip) == "   ━━ 10/10 MB"
    t = make(backend)
    t.feed(b"\x1b]9;4;1;42\x07")
    assert t.progress == (1, 42)
    t.feed(b"\x1b]9;4;3\x07")
    assert t.progress == (3, None)
    t.feed(b"\x1b]9;4;2;250\x1b\\")
    assert t.progress == (2, 100)
    t.feed(b"\x1b]9;4;0\x07")
    assert t.progress is None


def test_newlines_and_redraws(backend):
    assert backend.render_text(b"a\r\nb\nc") == "a\nb\nc"
    t = fed(backend, b"a\nb", cols=10, rows=3)  # a grid: LF moves down only
    assert t.screen() == ["a", " b", ""]
    redraw = b"step 1\nstep 2\n\x1b[2A\x1b[Kdone 1\n\x1b[Kdone 2\n"
    assert backend.render_text(redraw) == "done 1\ndone 2"
    assert backend.render_text(b"foo\tbar\x08\x08X") == "foo     bXr"


def test_tab_stops_set_and_cleared(backend):
    t = make(backend, cols=30, rows=2)
    tab = lambda: (t.feed(b"\t"), t.cursor[1])[1]  # noqa: E731
    assert [tab(), tab(), tab(), tab()] == [8, 16, 24, 29]  # every 8, then the last column
    t.feed(b"\x1b[3g\r")  # TBC 3: none left
    assert tab() == 29
    t.feed(b"\x1b[4G\x1bH\x1b[11G\x1bH\x1b[20G\x1bH\r")  # HTS at columns 3, 10 and 19
    assert [tab(), tab(), tab(), tab()] == [3, 10, 19, 29]
    t.feed(b"\x1b[11G\x1b[g\x1b[1g\x1b[2g\r")  # TBC 0 clears 10; TBC 1 and 2 do nothing
    assert [tab(), tab()] == [3, 19]
    t.feed(b"\x1b[2Z")  # CBT 2: 19 -> 3 -> 0
    assert t.cursor == (0, 0)
    t.feed(b"\x1b[5I")  # CHT past the last stop stops at the last column
    assert t.cursor == (0, 29)
    t.feed(b"\x1b[Z")
    assert t.cursor == (0, 19)
    t.feed(b"\x1bc\t")  # RIS: every 8 again
    assert t.cursor == (0, 8)
    # In transcripts too, where the text shows the blanks a tab leaves.
    assert backend.render_text(b"\x1b[3g\x1b[6G\x1bH\rab\tc\td") == "ab   c" + " " * 8185 + "d"


@pytest.mark.parametrize(
    ("cols", "data", "col"),
    [
        (9, b"123456789", 0),  # the last column is a stop: it does not count
        (17, b"x" * 17, 8),
        (20, b"\x1b[20G\x1bH\r" + b"x" * 20, 16),  # HTS on the last column
        (20, b"x" * 20, 16),
    ],
)
def test_cbt_from_a_pending_wrap_counts_back_from_the_last_column(backend, cols, data, col):
    # xterm's TabPrev scans left of the cursor, which a pending wrap leaves on the last column.
    t = make(backend, cols=cols, rows=2)
    t.feed(data + b"\x1b[Z")
    assert t.cursor == (0, col)
    t.feed(b"X")
    assert t.screen()[0][col] == "X" and t.screen()[1] == ""


def test_a_soft_wrapped_row_counts_against_max_bytes_as_wide_as_the_views_show_it(backend):
    # ICH pushes a row's cells off its end yet keeps it soft-wrapped: every view pads it to the
    # full width (8192 columns in a transcript), so that is what it costs in scrollback.
    step = b"\x1b[8192Gab\x1b[A\r\x1b[8192@\x1b[B"
    t = backend.Terminal(scrollback=1_000_000, max_bytes=1 << 20)
    t.feed(step * 1000)
    assert t.truncated
    assert len(t.text) <= (1 << 20) + 24 * 8192 + 24
    assert t.text.endswith("b")


def test_decstr_resets_modes_margins_rendition_and_the_saved_cursor(backend):
    t = make(backend, cols=10, rows=5)
    # Margins 2-3, origin mode, no autowrap, red; a cursor saved at row 3, column 5.
    t.feed(b"\x1b[2;3r\x1b[?6h\x1b[?7l\x1b[31m\x1b[2;5H\x1b7\x1b[1;2H")
    assert t.cursor == (1, 1)
    t.feed(b"\x1b[!p")
    assert t.cursor == (1, 1)  # the cursor stays where it was
    t.feed(b"abcdefghijkl")  # autowrap is on again, in the default style
    assert t.screen()[1:3] == [" abcdefghi", "jkl"]
    assert {span.fg for row in t.spans() for span in row} == {None}
    t.feed(b"\x1b[1;1H")  # origin mode is off
    assert t.cursor == (0, 0)
    t.feed(b"\x1b[5;1H\nz")  # the margins are the whole screen: the top row scrolls away
    assert t.screen() == [" abcdefghi", "jkl", "", "", "z"]
    t.feed(b"\x1b8")  # the saved cursor is home
    assert t.cursor == (0, 0)
    # Tab stops stay.
    t.feed(b"\x1b[3g\x1b[1;4H\x1bH\x1b[!p\r\t")
    assert t.cursor == (0, 3)


def test_origin_mode_addresses_rows_from_the_top_margin(backend):
    t = make(backend, cols=20, rows=12)
    t.feed(b"\x1b[5;10r")  # DECSTBM homes the cursor: to the screen's top outside DECOM
    assert t.cursor == (0, 0)
    t.feed(b"\x1b[?6h")  # DECOM homes the cursor to the top margin
    assert t.cursor == (4, 0)
    t.feed(b"\x1b[2;3H")
    assert t.cursor == (5, 2)
    t.feed(b"\x1b[99;1H")  # no further than the bottom margin
    assert t.cursor == (9, 0)
    t.feed(b"\x1b[3d")
    assert t.cursor == (6, 0)
    t.feed(b"\x1b7\x1b[?6l")  # DECSC keeps the mode; resetting it homes to the screen's top
    assert t.cursor == (0, 0)
    t.feed(b"\x1b[12;1H")
    assert t.cursor == (11, 0)
    t.feed(b"\x1b8\x1b[1;1Htop")  # DECRC brings DECOM back
    assert t.cursor == (4, 3) and t.screen()[4] == "top"
    t.feed(b"\x1b[2;4r")  # new margins home to the new top margin
    assert t.cursor == (1, 0)
    t.feed(b"\x1bc\x1b[3;1H")  # RIS leaves origin mode
    assert t.cursor == (2, 0)


def test_decrc_in_origin_mode_stays_above_the_bottom_margin_set_since(backend):
    t = make(backend, cols=10, rows=8)
    t.feed(b"\x1b[1;6r\x1b[?6h\x1b[6;1H\x1b7")  # saved on row 5, the bottom margin
    t.feed(b"\x1b[1;3r\x1b8X")  # the margins shrank: restored onto the new bottom one
    assert t.cursor == (2, 1) and t.screen()[2] == "X"
    t.feed(b"\n\n\nY")  # and LF scrolls the region, as it does at its bottom
    assert t.screen()[:3] == ["", "", " Y"]


def test_decrc_in_origin_mode_keeps_a_row_above_the_top_margin(backend):
    # xterm's CursorSet limits the restored row by the bottom margin only.
    t = make(backend, cols=5, rows=4)
    t.feed(b"\x1b[?6h\x1b[2;4H\x1b7\x1b[3;4r\x1b8X")
    assert t.screen() == ["", "   X", "", ""]
    assert t.cursor == (1, 4)


@pytest.mark.parametrize(
    "data, text",
    [
        (b"a\x1b[3b", "aaaa"),
        (b"\xc3\xa9\x1b[2b", "\u00e9\u00e9\u00e9"),
        (b"a\x1b[31m\x1b[3b", "a"),  # an SGR in between
        (b"ab\r\x1b[3b", "ab"),  # a control in between
        (b"a\n\x1b[3b", "a"),
        (b"a\x1b[2b\x1b[2b", "aaa"),  # a REP does not make its character repeatable again
        (b"x\x1b[5C\x1b[2b", "x"),
        (b"a\x1b]0;t\x07\x1b[2b", "a"),  # nor does any other sequence
        (b"\x1b[3b", ""),
        # After a zero-width character xterm repeats nothing (it is the last one printed).
        (b"e\xcc\x81\x1b[3b", "e\u0301"),
        (b"a\xe2\x80\x8d\x1b[2b", "a\u200d"),
        (b"e\xcc\x81b\x1b[2b", "e\u0301bbb"),  # a character after it is repeatable again
    ],
)
def test_rep_repeats_only_the_character_printed_just_before_it(backend, data, text):
    # xterm forgets the character once anything but printing happens.
    for chunks in (None, [data[i : i + 1] for i in range(len(data))]):
        assert fed(backend, data, chunks).text == text


def test_decaln_fills_the_screen_and_resets_origin_mode_and_rendition(backend):
    t = make(backend, cols=6, rows=3)
    t.feed(b"\x1b]8;;https://e.x\x1b\\\x1b[1;4;7;31m\x1b[2;3r\x1b[?6h\x1b#8")
    assert t.screen() == ["EEEEEE"] * 3 and t.cursor == (0, 0)
    t.feed(b"\x1b[3;1HX")  # origin mode is off: row 3 of the screen, not of a region
    assert t.cursor == (2, 1)
    [span] = [s for s in t.spans()[2] if s.text == "X"]
    assert (span.fg, span.bold, span.underline, span.inverse) == (None, False, False, False)
    assert span.link == "https://e.x"  # an OSC 8 link is not part of the rendition
    # A transcript has no width: DECALN fills the 80 columns of a VT100, not 8,192.
    assert fed(backend, b"\x1b#8").lines() == ["E" * 80] * 24


def test_size_arguments_are_checked(backend):
    for options, message in [
        ({"cols": 0}, "cols must be at least 1"),
        ({"rows": 0}, "rows must be at least 1"),
        ({"cols": 65_536}, "cols must be at most 65535"),
        ({"rows": 65_536}, "rows must be at most 65535"),
        # Once allocated a row at a time up front: this would take tens of GB, not an error.
        ({"rows": 10**9}, "rows must be at most 65535"),
        ({"scrollback": -1}, "must not be negative"),
        ({"max_bytes": -1}, "must not be negative"),
    ]:
        with pytest.raises(ValueError, match=message):
            backend.Terminal(**options)
    # The largest grid is a real one: addressable to its last row and column.
    t = backend.Terminal(cols=65_535, rows=65_535)
    t.feed(b"\x1b[65535;65535Hx")
    assert t.cursor == (65_534, 65_535)  # past the last column, as on any grid
    assert t.screen()[-1] == " " * 65_534 + "x"


def test_invalid_base64_changes_nothing(backend):
    t = make(backend, cols=20, rows=3)
    t.feed(b"keep\x1b[")
    before = views(t), t.bytes_fed
    for bad in ["QQ=", "QR==", "Q===", "QQ==QQ==", "QU J", "QUJD\n", "é123", b"QQ=A"]:
        with pytest.raises(backend.TerminalDataError) as info:
            t.feed_base64(bad)
        assert isinstance(info.value, ValueError)
        assert (views(t), t.bytes_fed) == before
        with pytest.raises(backend.TerminalDataError):
            t.reset_base64(bad)
        assert (views(t), t.bytes_fed) == before
    with pytest.raises(backend.TerminalDataError, match="offset 2"):
        t.feed_base64("QU*D")
    t.feed_base64("MW0=")  # completes the pending CSI: "1m"
    assert t.text == "keep" and t.spans()[0][0].bold is False
    t.reset_base64("aGk=")
    assert t.text == "hi" and t.bytes_fed == 2


def test_pure_sgr_memo_keeps_no_long_parameters():
    # Parameters are read up to any length (each saturates at 65535): remembering the bytes of
    # a long one would hold memory after the terminal is gone.
    t = pure_terminal.Terminal()
    t.feed(b"\x1b[" + b"0" * 100_000 + b"1mX")
    assert t.spans()[0][0].bold
    assert max((len(params) for params, _ in pure_terminal._sgr_memo), default=0) <= 64


def test_caps(backend):
    t = make(backend, scrollback=5, rows=2)
    t.feed(b"".join(b"line %d\n" % i for i in range(100)))
    assert t.truncated and t.lines()[0] == "line 94" and len(t.lines()) == 6
    t = make(backend, max_bytes=100, rows=2)
    t.feed(b"".join(b"%09d\n" % i for i in range(1000)))
    assert t.truncated and len(t.lines()) <= 12
    t = make(backend, cols=80)
    t.feed(b"x\x1b[999999999@\x1b[99999999b\x1b[65535C\x1b[" + b"1;" * 100 + b"31mplain")
    assert len(t.screen()[0]) <= 80 and t.spans()[-1][-1].fg is None
    t = make(backend)
    t.feed(b"\x1b]0;" + b"t" * (70 * 1024) + b"\x07after")
    assert t.title == "" and t.text == "after"
    t = make(backend)
    t.feed(b"a\x1b[65535b")
    assert 0 < len(t.text) <= 70_000


def test_max_bytes_charges_each_kept_line_for_its_buffer(backend):
    # A kept line costs its cells plus 128 (a line buffer's first allocation), so a flood of
    # short lines cannot hold far more memory than max_bytes allows.
    t = make(backend, scrollback=10**7, max_bytes=129 * 50, rows=2)
    t.feed(b"a\n" * 5000)
    assert t.truncated and len(t.lines()) == 50 + 1  # the scrollback, then the cursor's row
    t = make(backend, scrollback=10**7, max_bytes=(128 + 10) * 7, rows=2)
    t.feed(b"".join(b"%010d\n" % i for i in range(100)))
    # Seven kept lines, then the screen's (its trailing blank row trimmed).
    assert t.lines() == [f"{i:010d}" for i in range(92, 100)]


def test_ich_pushing_a_transcript_row_out_keeps_no_blank_cells(backend):
    # ICH past the 8,192-column transcript limit leaves a row of blanks, which show as nothing
    # and so are not kept: each such row costs what an empty line costs.
    t = make(backend, scrollback=10**7, max_bytes=129 * 100, rows=2)
    t.feed(b"ab\x1b[2D\x1b[9999@\r\n" * 90 + b"xy\x1b[D\x1b[9999@\r\n" * 5 + b"end")
    assert not t.truncated and t.lines() == [""] * 90 + ["x"] * 5 + ["end"]
    # Text the insertion does not push out is kept, and so are styled blanks before it.
    t = make(backend)
    t.feed(b"ab\x1b[41m \x1b[0mcd\x1b[5D\x1b[3@")
    assert t.text == "   ab cd" and t.spans()[0][-2].bg == 1


def test_a_flood_of_short_lines_stays_within_the_memory_max_bytes_allows():
    # Native memory: 2 million one-character lines with a 1 MiB budget and no line limit once
    # held 587 MB; the scrollback's cells now stay within 16 bytes per unit of max_bytes.
    pytest.importorskip("acpwire._native")
    code = (
        "import resource, acpwire._native as n\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "t = n.Terminal(scrollback=10**7, max_bytes=1 << 20, rows=2)\n"
        "for _ in range(20):\n"
        "    t.feed(b'a\\n' * 100_000)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print((after - before) * 1024, len(t.lines()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    grown, lines = map(int, done.stdout.split())
    assert lines == (1 << 20) // 129 + 1  # the scrollback, then the screen's "a"
    assert grown < 16 * (1 << 20) + 8 * (1 << 20), grown


def test_alternate_screen_and_regions(backend):
    t = make(backend, cols=10, rows=4)
    t.feed(b"main\r\n\x1b[?1049hTUI stuff\x1b[2;3H!")
    assert t.screen() == ["", "TU! stuff", "", ""] and t.text == "main"
    t.feed(b"\x1b[?1049l")
    assert t.screen()[0] == "main" and t.cursor == (1, 0)
    t = make(backend, cols=10, rows=5)
    t.feed(b"1\r\n2\r\n3\r\n4\r\n5\x1b[2;4r\x1b[4;1H\n\n")
    assert t.screen() == ["1", "4", "", "", "5"]


def test_wide_and_combining(backend):
    t = make(backend, cols=6, rows=2)
    t.feed("aデbネx".encode())
    assert t.screen() == ["aデbネ", "x"] and t.lines() == ["aデbネx"]
    t.feed(b"\x1b[1;3Hz")  # overwriting the right half blanks the left half
    assert t.screen()[0] == "a zbネ"
    assert backend.render_text("e\u0301\u0302 x".encode()) == "e\u0301\u0302 x"
    assert backend.render_text("\u0301start".encode()) == "start"


def test_sgr_and_links(backend):
    t = make(backend)
    t.feed(
        b"\x1b[1;3;4;7;9;2;31;42mA\x1b[0;38;5;208;48:2::1:2:3mB\x1b[38:2:255:0:16mC"
        b"\x1b[0m\x1b]8;id=x;https://e.x/?a=1;b=2\x1b\\D\x1b]8;;\x1b\\E\x1b[94;103mF"
    )
    s = t.spans()[0]
    Span = backend.Span
    assert s[0] == Span("A", 1, 2, True, True, True, True, True, True, None)
    assert (s[1].text, s[1].fg, s[1].bg) == ("B", 208, "#010203")
    assert (s[2].text, s[2].fg, s[2].bg) == ("C", "#ff0010", "#010203")
    assert (s[3].text, s[3].link) == ("D", "https://e.x/?a=1;b=2")
    assert (s[4].text, s[4].link, s[4].fg) == ("E", None, None)
    assert (s[5].text, s[5].fg, s[5].bg) == ("F", 12, 11)
    assert "Span(" in repr(s[0])


@pytest.mark.parametrize(
    "sgr, fg, bg",
    [
        (b"38;5:1", 1, None),  # xterm's mixed forms: the mode's own sub-parameters
        (b"48;5:9", None, 9),
        (b"38;2:1:2:3", "#010203", None),
        (b"48;2:0:255:16:32", None, "#ff1020"),  # with a colour space
        (b"38;5:300", None, None),  # out of range: no colour
        (b"38;2:1:2", None, None),  # too few
        (b"38;5:1;1", 1, None),  # the group is consumed whole; what follows still applies
    ],
)
def test_sgr_extended_colour_with_sub_parameters_after_a_semicolon(backend, sgr, fg, bg):
    t = make(backend)
    t.feed(b"\x1b[" + sgr + b"mX")
    span = t.spans()[0][0]
    assert (span.fg, span.bg) == (fg, bg)
    assert span.bold == sgr.endswith(b";1")


@pytest.mark.parametrize("whole", [True, False])
def test_sd_with_an_explicit_zero_is_mouse_tracking_not_a_scroll(backend, whole):
    # xterm: `CSI T` scrolls down one line, `CSI 0 T` (like `CSI a;b;c;d;e T`) does not.
    for seq, screen in [
        (b"\x1b[0T", ["top", "bot", ""]),
        (b"\x1b[00T", ["top", "bot", ""]),
        (b"\x1b[T", ["", "top", "bot"]),
        (b"\x1b[1T", ["", "top", "bot"]),
        (b"\x1b[1;2;3;4;5T", ["top", "bot", ""]),
    ]:
        data = b"top\r\nbot" + seq
        chunks = None if whole else [data[i : i + 1] for i in range(len(data))]
        assert fed(backend, data, chunks, cols=5, rows=3).screen() == screen, seq


def test_title_bell_queries(backend):
    t = make(backend)
    t.feed(
        b"\x1b]2;build \xe2\x9c\x93\x1b\\\x07\x1b[c\x1b[5n"
        b"\x1b[?2026$p\x1b[>0q\x1b[?u\x1b]133;A\x07$ "
    )
    assert t.title == "build ✓" and t.bell_count == 1 and t.text == "$"


def test_utf8_replacement_matches_cpython(backend):
    rng = random.Random(7)
    pieces = [
        b"\xe2\x82\xac",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xf4\x90",
        b"\xc0\xaf",
        b"\xff",
        b"a",
        b"\x80",
    ]
    for _ in range(200):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        expect = data.decode("utf-8", "replace")
        expect = "".join(c for c in expect if not 0x80 <= ord(c) < 0xA0)
        assert backend.render_text(data + b"\n") == expect.rstrip(" "), data
        chunks = random_chunks(rng, data, 3)
        assert views(fed(backend, data + b"\n", [*chunks, b"\n"])) == views(
            fed(backend, data + b"\n")
        )


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


# ----------------------------------------------------------- pending wrap (xterm rules)

# cols=10: after "0123456789" the cursor waits past the last column (a pending wrap). xterm's
# ResetWrap ends that state, leaving the cursor on the last column, in every vertical move,
# erase and character insertion or deletion (charproc.c, cursor.c, util.c).
PENDING_WRAP_CASES = [
    (b"\n", ["0123456789", "         Y"], (1, 10)),
    (b"\x0b", ["0123456789", "         Y"], (1, 10)),
    (b"\x0c", ["0123456789", "         Y"], (1, 10)),
    (b"\x1bD", ["0123456789", "         Y"], (1, 10)),  # IND
    (b"\x1bE", ["0123456789", "Y"], (1, 1)),  # NEL
    (b"\x1b[B", ["0123456789", "         Y"], (1, 10)),  # CUD
    (b"\x1b[e", ["0123456789", "         Y"], (1, 10)),  # VPR
    (b"\x1b[2d", ["0123456789", "         Y"], (1, 10)),  # VPA
    (b"\x1b[E", ["0123456789", "Y"], (1, 1)),  # CNL
    (b"\x1b[K", ["012345678Y"], (0, 10)),  # EL 0
    (b"\x1b[1K", ["         Y"], (0, 10)),  # EL 1
    (b"\x1b[2K", ["         Y"], (0, 10)),  # EL 2
    (b"\x1b[J", ["012345678Y"], (0, 10)),  # ED 0
    (b"\x1b[1J", ["         Y"], (0, 10)),  # ED 1
    (b"\x1b[2J", ["         Y"], (0, 10)),  # ED 2
    (b"\x1b[X", ["012345678Y"], (0, 10)),  # ECH
    (b"\x1b[@", ["012345678Y"], (0, 10)),  # ICH
    (b"\x1b[P", ["012345678Y"], (0, 10)),  # DCH
    (b"\x08", ["01234567Y9"], (0, 9)),  # BS counts back from the last column
    (b"\x1b[2D", ["0123456Y89"], (0, 8)),  # CUB
    (b"\x1b[20D", ["Y123456789"], (0, 1)),
    (b"\x1b[1;10H", ["012345678Y"], (0, 10)),  # CUP
    (b"\x1b[10G", ["012345678Y"], (0, 10)),  # CHA
    (b"\x1b[C", ["012345678Y"], (0, 10)),  # CUF
    # These keep the pending wrap: the next character still wraps.
    (b"\t", ["0123456789", "Y"], (1, 1)),  # HT (xterm's TabToNextStop)
    (b"\x1b[2I", ["0123456789", "Y"], (1, 1)),  # CHT
    (b"\x1b[S", ["", "Y"], (1, 1)),  # SU
    (b"\x1b[1;31m", ["0123456789", "Y"], (1, 1)),
    (b"\x1b7\x1b[H\x1b8", ["0123456789", "Y"], (1, 1)),  # DECSC/DECRC save it
]


@pytest.mark.parametrize(("seq", "screen", "cursor"), PENDING_WRAP_CASES)
def test_pending_wrap_ends_as_in_xterm(backend, seq, screen, cursor):
    t = fed(backend, b"0123456789" + seq + b"Y", cols=10, rows=4)
    assert t.screen() == screen + [""] * (4 - len(screen))
    assert t.cursor == cursor


def test_pending_wrap_moves_up_and_back(backend):
    g = {"cols": 10, "rows": 4}
    t = fed(backend, b"\r\n0123456789\x1bMY", **g)  # RI
    assert t.screen() == ["         Y", "0123456789", "", ""]
    # CUU leaves the cursor on the last column: the redraw starts there, as in xterm.
    t = fed(backend, b"\r\n0123456789\x1b[A\x1b[2Kdone", **g)
    assert t.screen() == ["         d", "one3456789", "", ""]
    t = fed(backend, b"\r\n0123456789\x1b[A\r\x1b[2Kdone", **g)
    assert t.screen() == ["done", "0123456789", "", ""] and t.text == "done\n0123456789"
    t = fed(backend, b"\r\n0123456789\x1b[F\x1b[2Kdone", **g)  # CPL
    assert t.screen() == ["done", "0123456789", "", ""]
    # A wide character and BS: back to its left half, then overwritten whole.
    t = fed(backend, "\x1b[1;9Hデ\bネ".encode(), **g)
    assert (t.screen()[0], t.cursor) == ("        ネ", (0, 10))


def test_erased_rows_are_not_soft_wrapped(backend):
    g = {"cols": 10, "rows": 4}
    wrapped = b"0123456789abc"
    assert fed(backend, wrapped, **g).text == "0123456789abc"
    for seq, text in [
        (b"\x1b[A\x1b[2K", "\nabc"),  # EL 2
        (b"\x1b[A\x1b[10G\x1b[1K", "\nabc"),  # EL 1 through the last column blanks the row
        (b"\x1b[A\x1b[9G\x1b[1K", "         9abc"),  # EL 1 short of it keeps the wrap
        (b"\x1b[A\x1b[5G\x1b[K", "0123\nabc"),  # EL 0
        (b"\x1b[A\x1b[5G\x1b[X", "0123 56789\nabc"),  # ECH (xterm's ClearRight)
        (b"\x1b[A\x1b[5G\x1b[P", "012356789\nabc"),  # DCH (xterm's ScrnDeleteChar)
        (b"\x1b[A\x1b[5G\x1b[@", "0123 45678abc"),  # ICH keeps it
        (b"\x1b[A\x1b[J", "012"),  # ED 0 (from column 3)
    ]:
        t = fed(backend, wrapped + seq, **g)
        assert t.text == text, seq
        assert [("".join(s.text for s in row)) for row in t.spans()] == t.lines(), seq


def test_render_text_flushes_an_incomplete_tail(backend):
    for data in [b"ab\xe2\x82", b"\xe2", b"x\xf0\x9f\x98", b"\xed\xa0", b"\xed", b"ok\xc3"]:
        assert backend.render_text(data) == data.decode("utf-8", "replace"), data
    # A stream waits for the rest of the character instead.
    t = fed(backend, b"ab\xe2\x82")
    assert t.text == "ab"
    t.feed(b"\xac")
    assert t.text == "ab€"


def test_alternate_screens_follow_xterm(backend):
    g = {"cols": 10, "rows": 4}
    # ?47 switches and never clears: the alternate screen comes back as it was left.
    assert fed(backend, b"\x1b[?47hA1\x1b[?47l\x1b[?47h", **g).screen() == ["A1", "", "", ""]
    t = fed(backend, b"main\x1b[?47hA1\x1b[?47l", **g)
    assert t.screen() == ["main", "", "", ""] and t.text == "main"
    # ?1047l clears the alternate screen when leaving it; ?1047h does not clear.
    assert fed(backend, b"\x1b[?1047hA1\x1b[?1047l\x1b[?47h", **g).screen() == ["", "", "", ""]
    assert fed(backend, b"\x1b[?47hA1\x1b[?47l\x1b[?1047h", **g).screen() == ["A1", "", "", ""]
    assert fed(backend, b"main\x1b[?1047l", **g).screen() == ["main", "", "", ""]
    # ?1049h saves, switches and clears, also when already on the alternate screen.
    assert fed(backend, b"\x1b[?1049hAAA\x1b[?1049h", **g).screen() == ["", "", "", ""]
    assert fed(backend, b"\x1b[?47hAAA\x1b[?47l\x1b[?1049h", **g).screen() == ["", "", "", ""]
    # ?1049l restores the cursor also when already on the primary screen.
    t = fed(backend, b"\x1b[2;3H\x1b7\x1b[4;5H\x1b[?1049lX", **g)
    assert t.screen() == ["", "  X", "", ""] and t.cursor == (1, 3)
    # A repeated ?1049h saves the alternate screen's cursor: ?1049l restores the primary's.
    t = fed(backend, b"\x1b[2;2H\x1b[?1049h\x1b[3;3H\x1b[?1049h\x1b[?1049lX", **g)
    assert t.screen() == ["", " X", "", ""]
    # The pending wrap is saved with the cursor; clearing the alternate screen ends it there.
    t = fed(backend, b"0123456789\x1b[?1049h", **g)
    assert t.cursor == (0, 9)
    t.feed(b"\x1b[?1049l")
    assert t.cursor == (0, 10)
    # RIS clears the alternate screen if shown, and keeps it if not (xterm's ReallyReset).
    assert fed(backend, b"\x1b[?47hA1\x1bc\x1b[?47h", **g).screen() == ["", "", "", ""]
    t = fed(backend, b"\x1b[?47hA1\x1b[?47l\x1bc\x1b[?47h", **g)
    assert t.screen() == ["A1", "", "", ""]
    t.reset(b"\x1b[?47h")  # reset() is a new terminal: nothing kept
    assert t.screen() == ["", "", "", ""]


def test_spans_of_one_text_and_style_are_one_object(backend):
    # Test dots, bars, prompts: the same run again and again. One object each, shared by
    # every row that shows it (spans are immutable), so a view of a long scrollback costs
    # what its distinct runs do.
    row = b"\x1b[32m.\x1b[31mF\x1b[32m..\x1b[0m done\r\n"
    spans = fed(backend, row * 500).spans()
    assert len(spans) == 500 and all(r == spans[0] for r in spans)
    assert [s.text for s in spans[0]] == [".", "F", "..", " done"]
    assert len({id(s) for r in spans for s in r}) == 4
    # Equal text in another style, or another text in the same style, is another span.
    spans = fed(backend, b"\x1b[32mok\x1b[31mok\x1b[32mno\r\n").spans()
    assert len({id(s) for s in spans[0]}) == 3


def test_spans_of_many_distinct_runs_in_few_rows(backend):
    # Hundreds of distinct runs on two rows, the second repeating the first: the native
    # backend's table of spans made starts small for a short view and has to grow, and must
    # still tell equal runs (shared) from runs that differ in text, length or style.
    words = [
        c * n for c, top in [("x", 40), ("é", 20), ("デ", 12), ("👍", 6)] for n in range(1, top)
    ]
    row = b"".join(b"\x1b[3%dm" % (k % 7 + 1) + w.encode() for k, w in enumerate(words * 3))
    t = fed(backend, row + b"\r\n" + row)
    assert views(t) == views(fed(pure_terminal, row + b"\r\n" + row))
    first, second = t.spans()
    assert len(first) == 3 * len(words) and all(map(operator.is_, first, second))
    assert len({id(s) for s in first}) == len(set(first))


def test_spans_keep_visible_trailing_blanks(backend):
    t = fed(backend, b"ok \x1b[41m     \x1b[0m\r\n")
    (row,) = t.spans()
    assert [(s.text, s.bg) for s in row] == [("ok ", None), ("     ", 1)]
    assert t.lines() == ["ok"] and t.text == "ok"
    for sgr, visible in [
        (b"7", True),
        (b"4", True),
        (b"9", True),
        (b"48;2;1;2;3", True),
        (b"1;3;2", False),
        (b"31", False),
    ]:
        t = fed(backend, b"a\x1b[" + sgr + b"m  \x1b[0m   ")
        assert "".join(s.text for s in t.spans()[0]) == ("a  " if visible else "a"), sgr
    # A link alone does not show on a blank.
    assert fed(backend, b"a\x1b]8;;u\x07  \x1b]8;;\x07").spans()[0][-1].text == "a"
    # A trailing line of visible blanks is a row of spans() only.
    t = fed(backend, b"top\r\n\x1b[44m   \x1b[0m\r\n")
    assert t.lines() == ["top"] and [[s.text for s in r] for r in t.spans()] == [["top"], ["   "]]
    t = fed(backend, b"\x1b[44m  \x1b[0m\r\nx")
    assert t.lines() == ["", "x"] and [[s.text for s in r] for r in t.spans()] == [["  "], ["x"]]
    # A soft-wrapped row's padding is default blanks; visible blanks after it stay.
    t = fed(backend, b"abcdefgh\x1b[7m  \x1b[0m", cols=5, rows=3)
    assert [s.text for s in t.spans()[0]] == ["abcdefgh", "  "]
    # Erased cells are default blanks (no background-colour erase).
    assert fed(backend, b"ab\x1b[41m\x1b[K\x1b[5X").spans() == fed(backend, b"ab").spans()


def test_wide_character_wrap_padding_is_not_text(backend):
    wide = "012345678一".encode()
    t = fed(backend, wide, cols=10, rows=4)
    assert t.text == "012345678一" == fed(backend, wide).text
    assert t.lines() == ["012345678一"] and t.screen() == ["012345678", "一", "", ""]
    assert "".join(s.text for s in t.spans()[0]) == "012345678一"
    # Padding short of the last column still counts; a last column written later is text.
    t = fed(backend, "ab\x1b[10G一".encode(), cols=10, rows=4)
    assert t.text == "ab       一"
    t.feed(b"\x1b[1;10Hz")
    assert t.text == "ab       z一"
    # A later ordinary wrap of the row takes the whole width again.
    t.feed(b"\x1b[1;1H0123456789X")
    assert t.text == "0123456789X"


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


def test_widths_table_is_sane():
    w = pure_terminal.char_width
    assert (w(ord("a")), w(0x0301), w(0x30C7), w(0x1F44D), w(0xFF41), w(0x200D)) == (
        1,
        0,
        2,
        2,
        2,
        0,
    )


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


# --------------------------------------------------------------------- conformance


def _vt100_rows(cells):
    grid = [[" "] * 80 for _ in range(24)]
    for key, cell in cells.items():
        r, c = map(int, key.split(","))
        grid[r][c] = "" if cell.get("is_wide_continuation") else (cell.get("contents") or " ")
    return ["".join(row).rstrip(" ") for row in grid]


def test_conformance_vt100_rust(backend):
    base = SHARED / "vt100-rust"
    if not base.is_dir():
        pytest.skip("../shared/conformance/terminal is absent")
    passed = failed = 0
    for d in sorted(p for p in base.iterdir() if p.is_dir()):
        t = make(backend, cols=80, rows=24, scrollback=0)
        i = 1
        while (d / f"{i}.json").exists():
            t.feed((d / f"{i}.typescript").read_bytes())
            want = json.loads((d / f"{i}.json").read_text())
            if t.screen() == _vt100_rows(want["cells"]) and t.cursor == tuple(
                want["cursor_position"]
            ):
                passed += 1
            else:
                failed += 1
            i += 1
    print(f"vt100-rust conformance: {passed} of {passed + failed} steps match")
    # Known differences, xterm's behaviour where the two differ: DECSTBM homes to (0,0); IL/DL
    # return to column 0; ICH splitting a wide character blanks both halves (decstbm/4,
    # decstbm/10, wide/9). vt100-rust keeps a pending wrap through LF, EL 1 and EL 2, where
    # xterm's ResetWrap ends it (wrap/19-21, wrap/29, el/22, el/26), and backs BS up from past
    # the last column, where xterm's CursorBack starts from the last column (wide/24).
    # combining/14 (a mark after that BS) also rests on a rule of ours: a mark joins the cell
    # left of the cursor, where xterm, right after a cursor move, joins the cell under it.
    assert passed >= 144


def _unescape(s):
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\":
            n = s[i + 1]
            if n == "e":
                out.append(27)
                i += 2
            elif n == "x" and s[i + 2] == "{":
                j = s.index("}", i)
                out += chr(int(s[i + 3 : j], 16)).encode()
                i = j + 1
            elif n == "x":
                out.append(int(s[i + 2 : i + 4], 16))
                i += 4
            else:
                out += {"n": b"\n", "r": b"\r", "t": b"\t", "b": b"\b", "0": b"\0"}.get(
                    n, n.encode()
                )
                i += 2
        else:
            out += s[i].encode()
            i += 1
    return bytes(out)


def _expand(lines):
    for line in lines:
        m = re.match(r"\s*\$REP (\d+):\s*(.*)", line)
        if m:
            yield from [m.group(2)] * int(m.group(1))
            continue
        m = re.match(r"\s*\$SEQ\s+(\d+)\s+(\d+):\s*(.*)", line)
        if m:
            for k in range(int(m.group(1)), int(m.group(2)) + 1):
                yield m.group(3).replace("\\#", str(k))
            continue
        yield line


def test_conformance_libvterm_screen_rows(backend):
    base = SHARED / "libvterm-t"
    if not base.is_dir():
        pytest.skip("../shared/conformance/terminal is absent")
    passed = failed = 0
    for path in sorted(base.glob("*.test")):
        lines = path.read_text().split("\n")
        if not any(line.startswith("WANTSCREEN") for line in lines):
            continue
        t = None
        for line in _expand(lines):
            s = line.strip()
            if s.startswith("RESET") or (t is None and s.startswith("PUSH")):
                t = make(backend, cols=80, rows=25, scrollback=0)
            if s.startswith("PUSH"):
                t.feed(_unescape(s[s.index('"') + 1 : s.rindex('"')]))
            m = re.match(r"\?screen_row\s+(\d+)\s*=\s*(.*)", s)
            if m:
                v = m.group(2)
                want = (
                    v[1:-1] if v.startswith('"') else "".join(chr(int(x, 16)) for x in v.split(","))
                )
                if t.screen()[int(m.group(1))] == want:
                    passed += 1
                else:
                    failed += 1
    print(f"libvterm ?screen_row conformance: {passed} of {passed + failed} rows match")
    assert passed >= 48


def test_pyte_oracle(backend):
    pyte = pytest.importorskip("pyte")
    # IL/DL are left out: pyte 0.8 leaves a row in place when the row below was never written.
    atoms = [
        b"word ",
        b"x" * 33,
        b"\r\n",
        b"\r",
        b"\x08",
        b"\t",
        b"\x1b[K",
        b"\x1b[1K",
        b"\x1b[2K",
        b"\x1b[J",
        b"\x1b[2J",
        b"\x1b[A",
        b"\x1b[2B",
        b"\x1b[3C",
        b"\x1b[D",
        b"\x1b[5;9H",
        b"\x1b[12G",
        b"\x1b[7d",
        b"\x1b[2@",
        b"\x1b[2P",
        b"\x1b[3X",
        b"\x1b[1;31m",
        b"\x1b[0m",
        b"\x1bM",
        b"\x1bD",
        b"\x1b[H",
        b"\x1b[78Gend",  # to a pending wrap
    ]
    # pyte keeps a pending wrap (cursor.x == 80) through LF, IND, RI, CUU/CUD, VPA, the erases
    # and ICH/DCH, and ends it with HT, where xterm does the opposite each time (ResetWrap,
    # TabToNextStop): after a pending wrap the stream goes on only with what pyte and xterm
    # treat alike (BS and CUB included: pyte counts them back from the last column too).
    after_pending = [
        b"word ",
        b"x" * 33,
        b"\r\n",
        b"\r",
        b"\x08",
        b"\x1b[D",
        b"\x1b[3C",
        b"\x1b[5;9H",
        b"\x1b[12G",
        b"\x1b[1;31m",
        b"\x1b[0m",
        b"\x1b[H",
        b"\x1b[78Gend",
    ]
    rng = random.Random(11)
    agree = pending = 0
    for _ in range(300):
        screen = pyte.Screen(80, 24)
        stream = pyte.ByteStream(screen)
        parts = []
        for _ in range(rng.randint(1, 40)):
            parts.append(rng.choice(after_pending if screen.cursor.x == 80 else atoms))
            stream.feed(parts[-1])
            pending += screen.cursor.x == 80
        data = b"".join(parts)
        want = [row.rstrip(" ") for row in screen.display]
        t = fed(backend, data, cols=80, rows=24)
        assert t.screen() == want, data
        assert t.cursor == (screen.cursor.y, screen.cursor.x), data
        agree += 1
    print(f"pyte oracle: {agree} streams agree ({pending} pending wraps)")
    assert pending > 100


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


def test_reset_to_none_is_an_empty_snapshot(backend):
    term = backend.Terminal()
    term.feed(b"old output\n")
    term.reset(None)
    assert term.text == "" and term.bytes_fed == 0
    term.feed(b"new")
    assert term.text == "new"


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


def test_short_chunks_after_split_sequences(backend):
    t = fed(backend, b"", [b"ab\xe2\x82", b"\xac ok"])
    assert t.text == "ab€ ok"
    t = fed(backend, b"", [b"x\xe2", b"\r\nplain"])
    assert t.lines() == ["x\ufffd", "plain"]
    t = fed(backend, b"", [b"a\x1b[3", b"1mred\x1b[0m", b" plain"])
    assert [(s.text, s.fg) for s in t.spans()[0]] == [("a", None), ("red", 1), (" plain", None)]
    t = fed(backend, b"", [b"12345\r", b"ab"])
    assert t.text == "ab345"
    t = fed(backend, b"", [b"abcd", b"e"], cols=5, rows=3)
    assert t.cursor == (0, 5)
    t.feed(b"f")
    assert (t.screen(), t.cursor) == (["abcde", "f", ""], (1, 1))
    t = make(backend)
    t.feed(b"old\r\n")
    t.reset(b"\x1b[1mbuilding\x1b[0m\r\n")
    t.feed(b"50%\r")
    assert (t.text, t.bytes_fed) == ("building\n50%", 22)
