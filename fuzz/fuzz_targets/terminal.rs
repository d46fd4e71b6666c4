//! Every view of the terminal is the same however its input is cut, whatever the input and
//! the size, and nothing panics.
#![no_main]

use acpwire::terminal::{Terminal, TerminalConfig};
use libfuzzer_sys::fuzz_target;

mod split;

fn views(t: &Terminal) -> impl PartialEq + std::fmt::Debug {
    (
        t.text(),
        t.lines(),
        t.spans(),
        t.screen(),
        t.cursor(),
        t.title().to_owned(),
        t.progress(),
        (t.bell_count(), t.bytes_fed(), t.truncated()),
    )
}

fuzz_target!(|input: &[u8]| {
    let ([cols, rows, scrollback, cap, cut_count], rest) = split::header::<5>(input);
    let config = TerminalConfig {
        // Widths from 1 to 64 and the unwrapped transcript; small screens and retention
        // limits, so that wrapping, scrolling and dropping old lines all happen.
        cols: (cols % 65 != 0).then_some(usize::from(cols % 65)),
        rows: 1 + usize::from(rows % 12),
        scrollback: usize::from(scrollback % 40),
        max_bytes: 16 * usize::from(cap),
    };
    let cuts = usize::from(cut_count % 8).min(rest.len());
    let (sizes, data) = rest.split_at(cuts);
    let mut whole = Terminal::new(config);
    whole.feed(data);
    let mut cut = Terminal::new(config);
    for piece in split::pieces(data, sizes) {
        cut.feed(piece);
    }
    assert_eq!(views(&whole), views(&cut));
    // A reset to the same bytes is the same terminal.
    cut.reset(data);
    assert_eq!(views(&whole), views(&cut));
});
