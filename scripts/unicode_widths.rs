//! Prints the cells the terminal gives every Unicode scalar value, as runs of one width: a
//! `start end width` line (hex, hex, decimal) per run, in code point order. The width is
//! `acpwire::terminal::width`, the function the terminal measures printed characters with (the
//! `unicode-width` crate's `UnicodeWidthChar::width`, a control character as 0, wider than 2 as
//! 2), so the table `scripts/gen_widths.py` makes from this output is the terminal's own.
//!
//! Run as `cargo run --quiet --example unicode_widths`.

use std::io::{self, BufWriter, Write};

fn main() -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    let mut run: Option<(u32, u32, usize)> = None;
    // Surrogates are not scalar values: a run ends before them.
    for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
        let cp = u32::from(c);
        let width = acpwire::terminal::width(c);
        run = match run {
            Some((start, end, w)) if w == width && end + 1 == cp => Some((start, cp, w)),
            Some((start, end, w)) => {
                writeln!(out, "{start:x} {end:x} {w}")?;
                Some((cp, cp, width))
            }
            None => Some((cp, cp, width)),
        };
    }
    if let Some((start, end, w)) = run {
        writeln!(out, "{start:x} {end:x} {w}")?;
    }
    out.flush()
}
