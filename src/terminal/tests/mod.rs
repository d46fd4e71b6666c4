use super::*;

use std::mem::MaybeUninit;

use super::cell::{CLUSTER_BIT, CONT};
use super::line::SLACK_CELLS;
use super::osc::{OSC_KEPT_CAPACITY, split_field, split_fields};
use super::params::Plain;
use super::sgr::{PenEdit, sgr};
use super::style::{BOLD, ITALIC, MAX_STYLES, RGB_BIT, STRIKE};
use super::views::spans::copy_ascii_of_style;
use crate::simd::terminal_cells::copy_ascii;
use crate::simd::terminal_input::{param_bytes, repeats_of_3, scan_ascii, widen_ascii};

fn term(cols: Option<usize>, rows: usize) -> Terminal {
    Terminal::new(TerminalConfig {
        cols,
        rows,
        ..TerminalConfig::default()
    })
}

type Views = (
    String,
    Vec<Vec<Span>>,
    Option<Vec<String>>,
    Option<(usize, usize)>,
);

fn all_views(t: &Terminal) -> Views {
    (t.text(), t.spans(), t.screen(), t.cursor())
}

/// Two terminals fed `data`, one whole and one a byte at a time (their views must agree).
fn fed_whole_and_bytewise(cols: Option<usize>, rows: usize, data: &[u8]) -> (Terminal, Terminal) {
    let mut whole = term(cols, rows);
    whole.feed(data);
    let mut bytewise = term(cols, rows);
    for b in data {
        bytewise.feed(&[*b]);
    }
    (whole, bytewise)
}

const SAMPLE: &[u8] = b"\x1b[1;32m   Compiling\x1b[0m x\r\n50%|##  |\r100%|####|\x1b[K\r\n\
    \x1b]8;;http://e/\x1b\\link\x1b]8;;\x1b\\ \xe3\x83\x87 e\xcc\x81 \xe2\x82\xff\x1b]0;title\x07\x1b[38:2::1:2:3mrgb\n";

#[test]
fn split_invariance() {
    for cols in [None, Some(7)] {
        let (whole, bytewise) = fed_whole_and_bytewise(cols, 4, SAMPLE);
        assert_eq!(all_views(&whole), all_views(&bytewise));
        for split in 1..SAMPLE.len() {
            let mut t = term(cols, 4);
            t.feed(&SAMPLE[..split]);
            t.feed(&SAMPLE[split..]);
            assert_eq!(all_views(&whole), all_views(&t), "split at {split}");
        }
    }
}

#[test]
fn runs_match_character_by_character() {
    // Runs mixing ASCII, repeated box drawing, wide and combining characters, written whole or
    // one byte at a time, across wrap points with and without autowrap.
    let run = "ab━━━━デ━x\u{301}ネ▌▌█ok😀━";
    for autowrap in ["", "\x1b[?7l"] {
        for cols in 1..=9 {
            let data = format!("{autowrap}\x1b[31m{run}\r\n\x1b[2C{run}{run}\x1b[1;3H{run}");
            let (whole, bytewise) = fed_whole_and_bytewise(Some(cols), 3, data.as_bytes());
            assert_eq!(
                all_views(&whole),
                all_views(&bytewise),
                "{cols} {autowrap:?}"
            );
        }
    }
}

#[test]
fn progress_bar_reads_as_last_state() {
    let mut data = Vec::new();
    for i in 0..=100 {
        data.extend_from_slice(format!("\r{i:3}%|{:<10}|", "#".repeat(i / 10)).as_bytes());
    }
    data.extend_from_slice(b"\x1b[K\n");
    assert_eq!(render_text(&data), "100%|##########|");
}

#[test]
fn utf8_replacement_is_cpython_compatible() {
    // Maximal subparts: E0 80 is two errors, ED A0 80 three, a truncated E2 82 one.
    assert_eq!(
        render_text(b"a\xe0\x80b\xed\xa0\x80c\xe2\x82\nd"),
        "a\u{FFFD}\u{FFFD}b\u{FFFD}\u{FFFD}\u{FFFD}c\u{FFFD}\nd"
    );
    // Raw C1 bytes are invalid UTF-8; encoded C1 code points are dropped.
    assert_eq!(render_text(b"x\xc2\x9b31m\xc2\x85y\x9b"), "x31my\u{FFFD}");
    let mut t = term(None, 2);
    t.feed(b"\xe2");
    t.feed(b"\x82");
    t.feed(b"\xac!");
    assert_eq!(t.text(), "\u{20AC}!");
    // ED then a byte that is no continuation is an error at once, not a pending surrogate
    // (C4 stays pending as the start of a sequence).
    let mut t = term(None, 2);
    t.feed(b"a\xed");
    t.feed(b"\xc4");
    assert_eq!(t.text(), "a\u{FFFD}");
}

#[test]
fn base64_strict_and_atomic() {
    let mut t = term(Some(10), 2);
    t.feed(b"ok");
    for bad in [
        &b"QQ="[..],
        b"QR==",
        b"Q===",
        b"QU*D",
        b"QQ==QQ==",
        b" QQ==",
    ] {
        let err = t.feed_base64(bad).unwrap_err();
        assert!(!err.to_string().is_empty());
    }
    assert_eq!(
        t.feed_base64(b"QU*D").unwrap_err(),
        TerminalDataError::Alphabet {
            offset: 2,
            byte: b'*'
        }
    );
    assert_eq!(
        t.feed_base64(b"QR==").unwrap_err(),
        TerminalDataError::TrailingBits { offset: 1 }
    );
    assert_eq!((t.text(), t.bytes_fed()), ("ok".to_owned(), 2));
    t.feed_base64(b"IQ==").unwrap();
    assert_eq!(t.text(), "ok!");
    t.reset_base64(b"aGk=").unwrap();
    assert_eq!((t.text(), t.bytes_fed()), ("hi".to_owned(), 2));
}

#[test]
fn base64_into_one_buffer_replaces_its_contents() {
    let mut out = Vec::new();
    decode_base64_into(b"aGVsbG8gd29ybGQ=", &mut out).unwrap();
    assert_eq!(out, b"hello world");
    let capacity = out.capacity();
    decode_base64_into(b"aGk=", &mut out).unwrap();
    assert_eq!(out, b"hi");
    assert_eq!(
        out.capacity(),
        capacity,
        "the buffer is reused, not reallocated"
    );
    assert!(decode_base64_into(b"QR==", &mut out).is_err());
    assert!(out.is_empty());
    decode_base64_into(b"", &mut out).unwrap();
    assert!(out.is_empty());
    for data in [&b"QQ=="[..], b"QUI=", b"QUJD", b"QUJDRA=="] {
        decode_base64_into(data, &mut out).unwrap();
        assert_eq!(out, decode_base64(data).unwrap());
    }
}

#[test]
fn sgr_colours_and_links() {
    let mut t = term(None, 2);
    t.feed(
        b"\x1b[1;31;48;5;208mA\x1b[0;38:2::1:2:3mB\x1b[0m\x1b]8;id=1;http://x/;y\x07C\x1b]8;;\x07D",
    );
    let spans = &t.spans()[0];
    assert_eq!(spans[0].style.fg, Some(Color::Indexed(1)));
    assert_eq!(spans[0].style.bg, Some(Color::Indexed(208)));
    assert!(spans[0].style.bold);
    assert_eq!(spans[1].style.fg, Some(Color::Rgb(1, 2, 3)));
    assert_eq!(spans[2].style.link.as_deref(), Some("http://x/;y"));
    assert_eq!(
        (spans[3].text.as_str(), spans[3].style.clone()),
        ("D", Style::default())
    );
}

#[test]
fn styled_lines_share_style_ids() {
    let mut t = term(None, 3);
    // Two lines in red with plain text between, trailing blanks in red on the second.
    t.feed(b"\x1b[31mred\x1b[0m plain\r\n\x1b[31mred again   \x1b[0m\r\n");
    let lines = t.styled_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].text, "red plain");
    let red = lines[0].runs[0].1;
    assert_eq!(lines[0].runs, vec![(0, red), (3, 0)]);
    // The same style keeps its id; the blanks after the text are trimmed with their run.
    assert_eq!(
        (lines[1].text.as_str(), lines[1].runs.clone()),
        ("red again", vec![(0, red)])
    );
    assert_eq!(t.style(red).fg, Some(Color::Indexed(1)));
    assert_eq!(t.style(0), Style::default());
    // `spans` is the same content, one style per run.
    let spans = t.spans();
    assert_eq!(spans[0][1].text, " plain");
    assert_eq!(spans[1].len(), 1);
}

#[test]
fn metadata() {
    let mut t = term(None, 2);
    t.feed(b"\x1b]2;build\x1b\\\x07\x1b]9;4;1;42\x07\x1b[6n\x1b[>c\x1bP+q544e\x1b\\");
    assert_eq!(t.title(), "build");
    assert_eq!(t.bell_count(), 1);
    assert_eq!(
        t.progress(),
        Some(Progress {
            state: 1,
            percent: Some(42)
        })
    );
    assert_eq!(t.text(), "");
}

#[test]
fn bounded_by_caps() {
    let mut t = Terminal::new(TerminalConfig {
        cols: None,
        rows: 2,
        scrollback: 5,
        max_bytes: 1 << 20,
    });
    for i in 0..100 {
        t.feed(format!("line {i}\n").as_bytes());
    }
    assert!(t.truncated());
    assert_eq!(t.lines()[0], "line 94");
    let mut t = term(Some(80), 24);
    t.feed(b"x\x1b[999999999@\x1b[99999999b\x1b[99999999C\x1b[99999999;99999999H");
    assert_eq!(t.cursor(), Some((23, 79)));
    let mut long_osc = b"\x1b]0;".to_vec();
    long_osc.resize(70 * 1024, b't');
    long_osc.extend_from_slice(b"\x07after");
    let mut t = term(None, 2);
    t.feed(&long_osc);
    assert_eq!((t.title(), t.text().as_str()), ("", "after"));
    let mut t = term(None, 2);
    t.feed(b"a\x1b[65535b");
    assert!(t.text().len() <= 70_000);
    let mut p = b"\x1b[".to_vec();
    for _ in 0..100 {
        p.extend_from_slice(b"1;");
    }
    p.extend_from_slice(b"31mz");
    let mut t = term(None, 2);
    t.feed(&p);
    assert_eq!(t.spans()[0][0].style, Style::default());
}

#[test]
fn alternate_screen_keeps_primary_text() {
    let mut t = term(Some(10), 3);
    t.feed(b"main\r\n\x1b[?1049hTUI\x1b[?1049l");
    assert_eq!(t.text(), "main");
    assert_eq!(t.cursor(), Some((1, 0)));
}

#[test]
fn text_of_mixed_lines_through_scrollback() {
    // ASCII runs around narrow and wide non-ASCII characters and a combining cluster, on more
    // lines than the screen holds, so that most are read back from scrollback.
    let line = "ab━━cdデf\u{301}g ok";
    let mut t = term(None, 2);
    for i in 0..9 {
        t.feed(format!("{i}:{line}\r\n").as_bytes());
    }
    let want: Vec<String> = (0..9).map(|i| format!("{i}:{line}")).collect();
    assert_eq!(t.text(), want.join("\n"));
    let span_text: Vec<String> = t
        .spans()
        .iter()
        .map(|runs| runs.iter().map(|s| s.text.as_str()).collect())
        .collect();
    assert_eq!(span_text, want);
}

#[test]
fn text_code_points_are_the_text() {
    // Wide characters (and their continuation cells), a cluster, characters at and past the
    // surrogates, soft-wrapped rows with their padding, trailing blanks and empty lines.
    let data = "ab━デ\u{D7FF}\u{E000}e\u{301}👍x   \r\n\r\nwrapped over the width  \r\n\
        日本語テキスト\r\n\x1b[31mred\x1b[0m \r\n\r\n";
    for cols in [None, Some(7), Some(8)] {
        let mut t = term(cols, 3);
        t.feed(data.as_bytes());
        let chars: String = t
            .text_code_points()
            .into_iter()
            .map(|c| char::from_u32(c).expect("a code point"))
            .collect();
        assert_eq!(chars, t.text(), "cols {cols:?}");
        assert!(!chars.is_empty());
    }
    assert!(term(None, 3).text_code_points().is_empty());
}

#[test]
fn one_code_sgr_steps_after_resets_drops_and_the_style_cap() {
    // The steps one-code SGRs take between known styles are remembered by style id; the
    // style table starts over at a reset and a drop of retained output, and is capped.
    let line = b"\x1b[32mg\x1b[0m \x1b[31mr\x1b[1mR\x1b[0m.\x1b[32mg\x1b[1mG\x1b[0m\r\n";
    let fresh = {
        let mut t = term(None, 3);
        t.feed(line);
        t.spans()
    };
    assert_eq!(fresh[0].len(), 7);
    let mut t = term(None, 3);
    t.feed(b"\x1b[34mb\x1b[33my\x1b[32mg\x1b[0m\r\n");
    t.feed(line);
    t.feed(line);
    t.reset(line);
    assert_eq!(t.spans(), fresh);
    // After the drop, another style takes the ids the line's styles had.
    t.drop_retained();
    t.feed(b"\x1b[35mm\x1b[0m\r\n");
    t.feed(line);
    assert_eq!(t.spans().last(), fresh.first());

    // At the cap, a pen never interned writes as the default style; steps among the styles
    // interned before still name them.
    // A pen written as the default style has id 0 without being the default pen: a step
    // from it (here bold, a step remembered from the default pen) is not the default's.
    let mut t = term(None, 3);
    t.feed(b"\x1b[32mg\x1b[0m\x1b[1mb\x1b[0m\x1b[1mb\x1b[0m");
    for j in 0..MAX_STYLES {
        t.feed(format!("\x1b[38;2;{};{};9mx", j % 256, j / 256 % 256).as_bytes());
    }
    t.feed(b"\x1b[0m\r\n\x1b[32mg\x1b[0m\x1b[35mm\x1b[1mM\x1b[0m\x1b[32mg\x1b[0m");
    let last = t.spans().pop().expect("a line");
    let styles: Vec<(&str, Option<Color>, bool)> = last
        .iter()
        .map(|s| (s.text.as_str(), s.style.fg, s.style.bold))
        .collect();
    let green = Some(Color::Indexed(2));
    assert_eq!(
        styles,
        [
            ("g", green, false),
            ("mM", None, false),
            ("g", green, false)
        ]
    );
}

#[test]
fn copy_ascii_stops_at_the_first_other_cell() {
    // A non-ASCII character, a wide character's second half and a cluster id, at every
    // position of runs of every length up to three blocks of eight, with styles set; the
    // characters about the packing's saturation points, and character 0.
    for stop in [
        0xE9,
        CONT,
        CLUSTER_BIT | 3,
        0x80,
        0x7F + 1,
        0,
        0xFF,
        0x100,
        0x7FFF,
        0x8000,
        0xFFFF,
        0x10_FFFF,
    ] {
        for len in 0..24 {
            for at in 0..=len {
                let cells: Vec<Cell> = (0..len)
                    .map(|i| {
                        let ch = if i == at {
                            stop
                        } else {
                            u32::from(b'a') + (i % 26)
                        };
                        Cell::new(ch, 7)
                    })
                    .collect();
                let mut out = b"x".to_vec();
                let n = copy_ascii(&cells, &mut out);
                let want: Vec<u8> = (0..at.min(len)).map(|i| b'a' + (i % 26) as u8).collect();
                assert_eq!(n, want.len(), "stop {stop:#x} len {len} at {at}");
                assert_eq!(out[1..], want[..]);
            }
        }
    }
    // Of one style: another style stops it too, whatever its bits.
    for other in [0, 8, 1 << 16, 1 << 31] {
        for len in 0..24 {
            for at in 0..=len {
                let cells: Vec<Cell> = (0..len)
                    .map(|i| Cell::new(u32::from(b'a') + (i % 26), if i == at { other } else { 7 }))
                    .collect();
                let mut out = Vec::new();
                let n = copy_ascii_of_style(&cells, 7, &mut out);
                assert_eq!(
                    n,
                    at.min(len) as usize,
                    "style {other:#x} len {len} at {at}"
                );
                assert_eq!(out.len(), n);
            }
        }
    }
}

#[test]
fn sizes_are_clamped_to_what_escapes_can_address() {
    // A height of a billion rows would be allocated up front; it is the largest grid instead.
    let mut t = term(Some(usize::MAX), 1_000_000_000);
    assert_eq!((t.cols(), t.rows()), (Some(MAX_COLS), MAX_ROWS));
    t.feed(b"\x1b[999999;999999Hx");
    assert_eq!(t.cursor(), Some((MAX_ROWS - 1, MAX_COLS)));
    let t = term(Some(0), 0);
    assert_eq!((t.cols(), t.rows()), (Some(1), 1));
}

#[test]
fn spans_keep_trailing_blanks_that_show() {
    let mut t = term(None, 3);
    t.feed(b"ok \x1b[41m  \x1b[0m \x1b[4m \x1b[0m  \r\n\x1b[1m  \x1b[0m\r\n\x1b[7m \x1b[0m");
    assert_eq!(t.lines(), ["ok"]);
    let spans = t.spans();
    let texts: Vec<Vec<&str>> = spans
        .iter()
        .map(|row| row.iter().map(|s| s.text.as_str()).collect())
        .collect();
    assert_eq!(texts, [vec!["ok ", "  ", " ", " "], vec![], vec![" "]]);
    assert_eq!(spans[0][1].style.bg, Some(Color::Indexed(1)));
    assert!(spans[0][3].style.underline && spans[2][0].style.inverse);
}

#[test]
fn decaln_fills_a_transcript_with_eighty_columns() {
    let mut t = term(None, 3);
    t.feed(b"\x1b[1m\x1b#8");
    assert_eq!(t.lines(), vec!["E".repeat(80); 3]);
    t.feed(b"X");
    assert_eq!(t.spans()[0][0].style, Style::default());
}

/// The screen after feeding `data` whole and byte by byte (which must agree).
fn screen_of(cols: usize, rows: usize, data: &[u8]) -> Vec<String> {
    let (whole, bytewise) = fed_whole_and_bytewise(Some(cols), rows, data);
    assert_eq!(all_views(&whole), all_views(&bytewise));
    whole.screen().unwrap_or_default()
}

#[test]
fn retained_bytes_counts_scrollback_both_screens_and_tables_and_drop_retained_empties_them() {
    let mut t = Terminal::new(TerminalConfig {
        cols: Some(10),
        rows: 2,
        ..TerminalConfig::default()
    });
    assert_eq!(t.retained_bytes(), 0);
    // Three rows of 4 cells: one went up to scrollback, two are on screen; each counts its
    // cells plus 128.
    t.feed(b"abcd\r\nefgh\r\nijkl");
    assert_eq!(t.retained_bytes(), 3 * (4 + LINE_COST));
    // The alternate screen starts where the cursor was: 4 blanks before `xyz`.
    t.feed(b"\x1b[?1049hxyz");
    assert_eq!(t.retained_bytes(), 3 * (4 + LINE_COST) + 7 + LINE_COST);
    // It scrolls `xyz` away (not into scrollback), and a soft-wrapped row counts its width.
    t.feed(b"\r\n0123456789A");
    let screens = 3 * (4 + LINE_COST) + (10 + LINE_COST) + (1 + LINE_COST);
    assert_eq!(t.retained_bytes(), screens);
    // A style in use counts 8, a grapheme cluster 8 and its bytes (`e` and U+0301: 3).
    t.feed(b"\x1b[31mR\x1b[me\xcc\x81");
    assert_eq!(
        t.retained_bytes(),
        screens + 2 + INTERNED_COST + INTERNED_COST + 3
    );
    t.drop_retained();
    assert_eq!(t.retained_bytes(), 0);
    assert!(t.truncated());
    assert_eq!(t.screen(), Some(vec![String::new(), String::new()]));
    // The cursor and the alternate screen stay; leaving it shows the blank primary one.
    assert_eq!(t.cursor(), Some((1, 3)));
    t.feed(b"\x1b[?1049l");
    assert_eq!(t.text(), "");
    // The links the pen and the saved cursor carry stay, renumbered; the others go.
    let mut t = term(None, 2);
    t.feed(b"\x1b]8;;http://a/\x1b\\\x1b7\x1b]8;;http://c/\x1b\\x\x1b]8;;http://b/\x1b\\L");
    t.drop_retained();
    t.feed(b"B\x1b8C");
    let links: Vec<_> = t.spans()[0].iter().map(|s| s.style.link.clone()).collect();
    assert_eq!(
        links,
        [Some("http://a/".into()), None, Some("http://b/".into())]
    );
    assert_eq!(t.links.len(), 3);
}

#[test]
fn the_title_and_a_pending_osc_count_as_retained_and_kept_and_a_long_osc_leaves_no_buffer() {
    let mut t = term(None, 2);
    t.feed(b"\x1b]0;caf\xc3\xa9\x07");
    assert_eq!((t.retained_bytes(), t.kept_bytes()), (5, 5));
    // A sequence cut short counts what it has gathered so far.
    t.feed(b"\x1b]2;");
    t.feed(&[b'x'; 3000]);
    assert_eq!((t.retained_bytes(), t.kept_bytes()), (3007, 3007));
    t.feed(b"\x07");
    assert_eq!(t.title().len(), 3000);
    assert_eq!((t.retained_bytes(), t.kept_bytes()), (3000, 3000));
    // Neither the long sequence's buffer nor the long title's outlives them.
    assert_eq!(t.osc.capacity(), 0);
    t.feed(b"\x1b]0;short\x07");
    assert_eq!(t.title.capacity(), 5);
    assert!(t.osc.capacity() <= OSC_KEPT_CAPACITY);
    t.drop_retained();
    assert_eq!((t.retained_bytes(), t.kept_bytes()), (5, 5));
}

#[test]
fn settling_gives_back_room_rows_keep_far_beyond_their_cells() {
    let mut t = term(None, 2);
    t.feed(b"x\x1b[8000b");
    assert!(t.screen[0].cells.capacity() >= 8001);
    // Erased (to the end, from column 5) without settling, a row keeps its buffer for what
    // is written next.
    t.feed(b"\x1b[5G\x1b[K");
    assert!(t.screen[0].cells.capacity() >= 8001);
    assert_eq!(t.settle(), 4 + LINE_COST);
    assert!(t.screen[0].cells.capacity() <= SLACK_CELLS);
    // A row that fills its room keeps it.
    t.feed(b"\x1b[Hy\x1b[999b");
    let room = t.screen[0].cells.capacity();
    t.feed(b"\x1b[400G\x1b[K");
    assert_eq!(t.settle(), 399 + LINE_COST);
    assert_eq!(t.screen[0].cells.capacity(), room);
    // An empty row gives back all of its buffer.
    t.feed(b"\x1b[2K");
    t.settle();
    assert_eq!(t.screen[0].cells.capacity(), 0);
}

#[test]
fn repeats_of_3_counts_whole_copies_of_the_character_before() {
    let bar = "━".repeat(40);
    let bytes = bar.as_bytes();
    // From after the first character: the other 39, or as many as asked for.
    assert_eq!(repeats_of_3(bytes, 3, usize::MAX), 39);
    assert_eq!(repeats_of_3(bytes, 3, 5), 5);
    assert_eq!(repeats_of_3(bytes, 3, 0), 0);
    // A copy cut short, or another character, ends the run wherever it falls in a block of
    // sixteen bytes.
    for tail in [&b"\xe2\x94"[..], "━x".as_bytes(), "─".as_bytes(), b"a"] {
        for n in 1..24 {
            let mut run = "━".repeat(n).into_bytes();
            run.extend_from_slice(tail);
            run.extend_from_slice("━".repeat(8).as_bytes());
            let whole = if tail.starts_with("━".as_bytes()) {
                n
            } else {
                n - 1
            };
            assert_eq!(
                repeats_of_3(&run, 3, usize::MAX),
                whole,
                "{n} then {tail:?}"
            );
        }
    }
    // Against a byte-by-byte count, with the end of the data or of `max` anywhere (the last
    // bytes are compared as one block ending there).
    for n in 1..30 {
        for tail in [&b""[..], b"\xe2\x94", "━x".as_bytes(), "─".as_bytes(), b"a"] {
            let run = ["━".repeat(n).as_bytes(), tail].concat();
            for max in [0, 1, 4, 5, 6, 7, 11, 29, usize::MAX] {
                let limit = run.len().min(max.saturating_mul(3).saturating_add(3));
                let same = (3..limit).take_while(|&j| run[j] == run[j - 3]).count();
                assert_eq!(repeats_of_3(&run, 3, max), same / 3, "{n} {tail:?} {max}");
            }
        }
    }
    // Bytes are compared with those three before, whatever they encode: the caller starts a
    // run after a three-byte character.
    assert_eq!(repeats_of_3("é-é-é-".as_bytes(), 3, usize::MAX), 2);
}

#[test]
fn runs_of_code_points_of_every_length_write_their_cells() {
    // As below, for runs that go through the code-point buffer (a non-ASCII character first).
    let text: String = "é"
        .chars()
        .chain((0..70u8).map(|k| char::from(b'!' + k)))
        .collect();
    for n in 1..=text.chars().count() {
        let run: String = text.chars().take(n).collect();
        for prefix in [&b""[..], b"\x1b[33m0123456789abcdefghij\r\x1b[2C"] {
            let data = [prefix, b"\x1b[1m", run.as_bytes(), b"\x1b[0m."].concat();
            let (whole, bytewise) = fed_whole_and_bytewise(None, 2, &data);
            assert_eq!(all_views(&whole), all_views(&bytewise), "length {n}");
        }
    }
}

#[test]
fn ascii_runs_of_every_length_write_their_cells() {
    // Each length takes a different mix of whole and overlapping blocks; a byte at a time
    // writes runs of one. Over blanks, over a longer coloured line and past its end.
    let text: Vec<u8> = (0..70u8).map(|k| b'!' + k).collect();
    for n in 0..=text.len() {
        for prefix in [
            &b""[..],
            b"\x1b[32m",
            b"\x1b[33m0123456789abcdefghij\r\x1b[2C",
        ] {
            let data = [prefix, b"\x1b[1m", &text[..n], b"\x1b[0m."].concat();
            let (whole, bytewise) = fed_whole_and_bytewise(None, 2, &data);
            assert_eq!(all_views(&whole), all_views(&bytewise), "length {n}");
        }
    }
}

#[test]
fn widen_ascii_copies_the_ascii_prefix_as_far_as_there_is_room() {
    // Every length of data and of room, with the first byte that is not printable ASCII
    // anywhere or nowhere: the blocks that end the copy overlap in as many ways.
    for len in 0..40 {
        for (high, stop) in (0..=len)
            .rev()
            .flat_map(|h| [(h, 0xE2), (h, 0x1B), (h, 0x7F)])
        {
            let mut src: Vec<u8> = (0..len)
                .map(|k| b'a' + u8::try_from(k % 26).unwrap())
                .collect();
            if high < len {
                src[high] = stop;
            }
            for room in [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64] {
                let mut dst = vec![MaybeUninit::new(0u32); room];
                let n = widen_ascii(&src, &mut dst);
                assert_eq!(n, high.min(room), "{len} {high} {room}");
                let want: Vec<u32> = src[..n].iter().map(|&b| u32::from(b)).collect();
                // SAFETY: all of `dst` was initialized, with zeros.
                let got: Vec<u32> = dst[..n]
                    .iter()
                    .map(|c| unsafe { c.assume_init() })
                    .collect();
                assert_eq!(got, want);
            }
        }
    }
}

#[test]
fn osc_fields_split_as_str_split_does() {
    for s in [
        "",
        ";",
        "a",
        "a;",
        ";b",
        "4;1;50",
        "8;;http://x/;y",
        ";;",
        "é;ü;",
    ] {
        assert_eq!(
            split_field(s.as_bytes()),
            s.split_once(';').map(|(a, b)| (a.as_bytes(), b.as_bytes())),
            "{s:?}"
        );
        assert_eq!(
            split_fields(s.as_bytes()).collect::<Vec<_>>(),
            s.split(';').map(str::as_bytes).collect::<Vec<_>>(),
            "{s:?}"
        );
    }
}

#[test]
fn osc_payloads_drop_control_bytes_however_they_are_cut() {
    let data = b"\x1b]0;ti\ntle\x07\x1b]2;a\x00b\x1b\\x\x1b]9;4;1;\x0150\x07\x1b]0;caf\xc3\xa9\x07";
    for chunk in [1, 2, 3, 5, data.len()] {
        let mut t = term(None, 2);
        for c in data.chunks(chunk) {
            t.feed(c);
        }
        assert_eq!(t.title(), "café", "chunks of {chunk}");
        assert_eq!(
            t.progress(),
            Some(Progress {
                state: 1,
                percent: Some(50)
            })
        );
    }
}

#[test]
fn scan_ascii_finds_the_first_byte_that_is_not_printable_ascii() {
    // Every length, with the stop anywhere or nowhere: the last block overlaps in every way.
    for len in 0..40 {
        for stop in (0..=len).rev() {
            for b in [0x00, 0x0A, 0x1B, 0x1F, 0x7F, 0x80, 0xE2, 0xFF] {
                let mut bytes: Vec<u8> = (0..len)
                    .map(|k| b' ' + u8::try_from(k % 95).unwrap())
                    .collect();
                if stop < len {
                    bytes[stop] = b;
                }
                let want = if stop < len {
                    (stop, b >= 0x80)
                } else {
                    (len, false)
                };
                assert_eq!(scan_ascii(&bytes), want, "{len} {stop} {b:#x}");
            }
        }
    }
}

#[test]
fn an_sgr_edits_any_pen_as_it_edits_pens_of_all_zeros_and_all_ones() {
    let pens = [
        StyleKey::default(),
        StyleKey {
            fg: 3,
            bg: 0,
            flags: BOLD,
            link: 0,
        },
        StyleKey {
            fg: RGB_BIT | 0x12_3456,
            bg: 200,
            flags: ITALIC | STRIKE,
            link: 2,
        },
        StyleKey {
            fg: 9,
            bg: RGB_BIT | 0xFF,
            flags: 63,
            link: 1,
        },
    ];
    let sgrs: &[&[u16]] = &[
        &[0],
        &[1],
        &[22],
        &[38, 5, 237],
        &[38, 2, 249, 38, 114],
        &[1, 32],
        &[0, 1, 4],
        &[38, 5, 300],
        &[38, 2, 300, 0, 0],
        &[48, 5, 1, 39],
        &[38],
        &[38, 5],
        &[38, 2, 1, 2],
        &[58, 5, 3],
        &[4, 24, 27, 29],
        &[90, 107],
        &[39, 49],
        &[1, 2, 22, 3, 23],
        &[7, 9, 2],
        &[65535, 38, 5, 0],
        &[48, 2, 0, 0, 0, 1],
    ];
    for vals in sgrs {
        let edit = PenEdit::of(vals);
        for pen in pens {
            assert!(edit.apply(pen) == sgr(pen, &Plain(vals)), "{vals:?}");
        }
    }
}

#[test]
fn param_bytes_counts_the_leading_digits_and_semicolons() {
    for (s, n) in [
        (&b"38;5;237mxxxxxxx"[..], 8),
        (b"0123456789;;;;;;", 16),
        (b"1:2mxxxxxxxxxxxx", 1),
        (b"m123456789012345", 0),
        (b"12345678901234;?", 15),
        (b"1/2<3=4>5@\x1b\x00\xff9;;", 1),
    ] {
        assert_eq!(param_bytes(s.try_into().unwrap()), n, "{s:?}");
    }
}

#[test]
fn repeated_sgrs_of_several_parameters_style_as_the_first_time() {
    // The second and later times an SGR's edit comes from the memo, whatever the pen then.
    let data = b"\x1b[1;31ma\x1b[38;5;200mb\x1b[0m\x1b[1;31mc\x1b[4m\x1b[38;5;200md\x1b[22;39me\
                 \x1b[1;31m\x1b[48;2;1;2;3mf\x1b[0;1;31mg\x1b[1;31mh\x1b[m";
    let mut t = Terminal::new(TerminalConfig::default());
    t.feed(data);
    let mut bytewise = Terminal::new(TerminalConfig::default());
    for b in data {
        bytewise.feed(&[*b]);
    }
    assert_eq!(t.spans(), bytewise.spans());
    let style = |t: &Terminal, k: usize| t.style(t.screen[0].cells[k].style());
    assert_eq!(style(&t, 0), style(&t, 2));
    assert_eq!(style(&t, 0), style(&t, 7));
    assert!(style(&t, 3).underline && style(&t, 3).bold);
}

#[test]
fn rep_repeats_the_last_character_a_decoded_run_printed() {
    // A wide character, one before a dropped C1 code point, and the last of a run longer
    // than the decoder's buffer.
    assert_eq!(screen_of(8, 1, "字\x1b[2b".as_bytes()), ["字字字"]);
    assert_eq!(screen_of(8, 1, "é\u{85}\x1b[2b".as_bytes()), ["ééé"]);
    let long = format!("é{}y\x1b[1b", "x".repeat(70));
    assert_eq!(
        screen_of(80, 1, long.as_bytes()),
        [format!("é{}yy", "x".repeat(70))]
    );
}

mod cases;
