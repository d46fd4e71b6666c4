//! Incremental UTF-8 decoding of printable runs: CPython-compatible U+FFFD replacement across
//! chunk boundaries.

use super::Terminal;
use crate::simd::terminal_input::scan_printable;

/// The multi-byte UTF-8 sequence at the start of `b` as (code point, length), or `None` when
/// it is invalid or incomplete (the same rules as `std::str::from_utf8`: no overlongs, no
/// surrogates, nothing above U+10FFFF).
#[inline]
pub(super) fn decode_utf8(b: &[u8]) -> Option<(u32, usize)> {
    let cont = |c: u8| (c & 0xC0 == 0x80).then_some(u32::from(c & 0x3F));
    match *b {
        [b0 @ 0xC2..=0xDF, b1, ..] => Some((u32::from(b0 & 0x1F) << 6 | cont(b1)?, 2)),
        [b0 @ 0xE0..=0xEF, b1, b2, ..] => {
            let o = u32::from(b0 & 0x0F) << 12 | cont(b1)? << 6 | cont(b2)?;
            (o >= 0x800 && !(0xD800..0xE000).contains(&o)).then_some((o, 3))
        }
        [b0 @ 0xF0..=0xF4, b1, b2, b3, ..] => {
            let o = u32::from(b0 & 0x07) << 18 | cont(b1)? << 12 | cont(b2)? << 6 | cont(b3)?;
            (0x1_0000..=0x10_FFFF).contains(&o).then_some((o, 4))
        }
        _ => None,
    }
}

impl Terminal {
    /// Printable bytes (no C0, no DEL) in the ground state, through the UTF-8 decoder. What
    /// stays pending at the end of a run is what `CPython`'s incremental decoder buffers: a valid
    /// but incomplete sequence, or ED followed by A0-BF (a truncated surrogate, a `CPython` quirk;
    /// the final text is the same, only the moment the U+FFFDs appear differs).
    pub(super) fn ground_run(&mut self, run: &[u8]) {
        let combined: Vec<u8>;
        let mut run = run;
        if self.utf8_len > 0 {
            // Rare (a chunk boundary split a character), so a copy is fine.
            combined = [&self.utf8[..self.utf8_len], run].concat();
            self.utf8_len = 0;
            run = &combined;
        }
        loop {
            run = &run[self.print_utf8(run)..];
            if run.is_empty() {
                return;
            }
            // An invalid or incomplete sequence starts here: the standard decoder says which.
            match std::str::from_utf8(run) {
                Ok(s) => {
                    self.print_str(s);
                    return;
                }
                Err(e) => {
                    let v = e.valid_up_to();
                    if v > 0 {
                        let s = std::str::from_utf8(&run[..v]).unwrap_or_default();
                        self.print_str(s);
                    }
                    let rest = &run[v..];
                    let surrogate_tail =
                        rest.len() == 2 && rest[0] == 0xED && (0xA0..=0xBF).contains(&rest[1]);
                    match e.error_len() {
                        Some(l) if !surrogate_tail => {
                            self.print_str("\u{FFFD}");
                            run = &run[v + l..];
                        }
                        _ => {
                            self.utf8[..rest.len()].copy_from_slice(rest);
                            self.utf8_len = rest.len();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The printable run at `data[i..]`, which holds a byte above 0x7F, with no UTF-8 sequence
    /// pending; returns where it ends. The decoder goes as far as the text is valid, and stops
    /// at a control as at the end; an invalid or incomplete sequence there takes the rest of
    /// the run through [`Self::ground_run`].
    #[inline]
    pub(super) fn print_text(&mut self, data: &[u8], i: usize) -> usize {
        let p = i + self.print_utf8(&data[i..]);
        match data.get(p) {
            Some(&b) if b >= 0x20 && b != 0x7F => {
                let (len, _) = scan_printable(&data[p..]);
                self.ground_run(&data[p..p + len]);
                p + len
            }
            _ => p,
        }
    }

    /// Ends an incomplete UTF-8 sequence (one U+FFFD, or two for a truncated surrogate), as
    /// `CPython`'s final decode does: a control byte cuts it, and so does the end of a one-shot
    /// buffer.
    #[cold]
    pub(super) fn end_utf8(&mut self) {
        let pending = self.utf8;
        let k = self.utf8_len;
        self.utf8_len = 0;
        let text = String::from_utf8_lossy(&pending[..k]).into_owned();
        self.print_str(&text);
    }
}
