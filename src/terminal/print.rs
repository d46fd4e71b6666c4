//! Printing: decoded characters written at the cursor, wrapping at the margin.

use std::mem::MaybeUninit;

use super::Terminal;
use super::cell::{BLANK, CONT, Cell, CellChars, extend, fill, split};
use super::utf8::decode_utf8;
use crate::simd::terminal_input::{repeats_of_3, widen_ascii};

/// `cells` as the values they hold.
///
/// # Safety
/// Every element of `cells` must be initialized.
#[inline]
pub(super) unsafe fn assume_init(cells: &[MaybeUninit<u32>]) -> &[u32] {
    // SAFETY: `MaybeUninit<u32>` has the layout of `u32`, and the values are initialized.
    unsafe { &*(std::ptr::from_ref(cells) as *const [u32]) }
}

impl Terminal {
    #[inline]
    pub(super) fn put_ascii(&mut self, bytes: &[u8]) {
        let Some(&b) = bytes.last() else { return };
        self.last = Some(char::from(b));
        let col = self.col;
        let end = col + bytes.len();
        if end < self.w {
            // Short of the margin, so no wrap: most runs of output.
            self.write(col, bytes);
            self.col = end;
            return;
        }
        self.put_narrow(bytes);
    }

    /// The decoder's slow paths (invalid sequences, a character split between chunks) print
    /// through here: one copy of [`Self::print_utf8`] for them, out of the ground loop.
    #[inline(never)]
    pub(super) fn print_str(&mut self, s: &str) {
        self.print_utf8(s.as_bytes());
    }

    /// Prints the longest valid UTF-8 prefix of `bytes` up to a C0 control or DEL, and returns
    /// its length.
    /// Narrow and wide characters are gathered into a run of cell codes (a wide character is
    /// its code point then [`CONT`]); the buffer only bounds a run's length.
    #[allow(
        clippy::inline_always,
        reason = "the ground loop's call of it cost a frame and its constants every run"
    )]
    #[inline(always)]
    pub(super) fn print_utf8(&mut self, bytes: &[u8]) -> usize {
        const RUN: usize = 64;
        let end = bytes.len();
        // Not zeroed (a run's fixed cost): `buf[..k]` is always initialized, as every cell
        // code is written before `k` covers it (`widen_ascii` initializes at least the length
        // it returns).
        let mut buf = [MaybeUninit::<u32>::uninit(); RUN];
        let mut k = 0;
        let mut has_wide = false;
        // The last three-byte sequence decoded, as (bytes, code point, width): bars and rules
        // repeat one character.
        let mut memo = (0u32, 0u32, 0usize);
        let mut i = 0;
        while i < end {
            if k + 2 > RUN {
                // SAFETY: `buf[..k]` is initialized.
                self.put_cells(unsafe { assume_init(&buf[..k]) }, has_wide);
                k = 0;
                has_wide = false;
            }
            let b0 = bytes[i];
            if b0 < 0x20 {
                break; // a control, as after a bar drawn before an escape
            }
            if b0 < 0x80 {
                // A stretch of ASCII, as far as the buffer has room.
                let m = widen_ascii(&bytes[i..], &mut buf[k..]);
                k += m;
                i += m;
                // Short of the buffer's end, a byte below 0x80 stopped it: a control.
                if k < RUN && bytes.get(i).is_some_and(|&b| b < 0x80) {
                    break;
                }
                continue;
            }
            let (cp, width) = if b0 & 0xF0 == 0xE0 && i + 2 < end {
                let key =
                    u32::from(b0) | u32::from(bytes[i + 1]) << 8 | u32::from(bytes[i + 2]) << 16;
                if key != memo.0 {
                    // Box drawing, CJK and most symbols: only overlongs and surrogates are
                    // invalid once the continuation bytes are.
                    if bytes[i + 1] & 0xC0 != 0x80 || bytes[i + 2] & 0xC0 != 0x80 {
                        break;
                    }
                    let o = u32::from(b0 & 0x0F) << 12
                        | u32::from(bytes[i + 1] & 0x3F) << 6
                        | u32::from(bytes[i + 2] & 0x3F);
                    if o < 0x800 || (0xD800..0xE000).contains(&o) {
                        break;
                    }
                    memo = (key, o, self.width_of(o));
                }
                i += 3;
                (memo.1, memo.2)
            } else {
                let Some((o, len)) = decode_utf8(&bytes[i..]) else {
                    break;
                };
                i += len;
                (o, self.width_of(o))
            };
            match width {
                1 => {
                    buf[k] = MaybeUninit::new(cp);
                    k += 1;
                    // The same character again: a bar or a rule (a look at its first byte
                    // first, for the spinners and symbols that come one at a time).
                    if b0 & 0xF0 == 0xE0 && bytes.get(i) == Some(&b0) {
                        let reps = repeats_of_3(bytes, i, RUN - k);
                        buf[k..k + reps].fill(MaybeUninit::new(cp));
                        k += reps;
                        i += 3 * reps;
                    }
                }
                2 => {
                    buf[k] = MaybeUninit::new(cp);
                    buf[k + 1] = MaybeUninit::new(CONT);
                    k += 2;
                    has_wide = true;
                }
                0 => {
                    if k > 0 {
                        // SAFETY: `buf[..k]` is initialized.
                        self.put_cells(unsafe { assume_init(&buf[..k]) }, has_wide);
                        k = 0;
                        has_wide = false;
                    }
                    // xterm's REP repeats nothing after a zero-width character.
                    self.last = None;
                    self.combine(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                }
                _ => {} // C1 code points are never printed
            }
        }
        if k > 0 {
            // SAFETY: `buf[..k]` is initialized.
            self.put_cells(unsafe { assume_init(&buf[..k]) }, has_wide);
        }
        i
    }

    /// Writes a run of cell codes from [`Self::print_utf8`] (not empty), which prints its
    /// last character: that, not each character as it is decoded, is what REP repeats.
    #[inline]
    pub(super) fn put_cells(&mut self, run: &[u32], has_wide: bool) {
        if let [.., before, last] = *run {
            self.last = char::from_u32(if last == CONT { before } else { last });
        } else if let [only] = *run {
            self.last = char::from_u32(only);
        }
        let col = self.col;
        let end = col + run.len();
        if end < self.w {
            // Short of the margin: no wrap, and wide characters fit as they are.
            self.write(col, run);
            self.col = end;
            return;
        }
        self.put_run(run, has_wide);
    }

    /// Writes a run of cell codes from [`Self::print_utf8`]: at once when it fits on the row,
    /// else character by character (narrow stretches, then each wide character).
    #[inline]
    pub(super) fn put_run(&mut self, run: &[u32], has_wide: bool) {
        if !has_wide || self.col + run.len() <= self.w {
            self.put_narrow(run);
        } else {
            self.put_wrapping_wide(run);
        }
    }

    /// [`Self::put_run`] of a run with wide characters that does not fit on the row.
    #[inline(never)]
    pub(super) fn put_wrapping_wide(&mut self, run: &[u32]) {
        let mut start = 0;
        let mut j = 0;
        while j < run.len() {
            if run.get(j + 1) == Some(&CONT) {
                if start < j {
                    self.put_narrow(&run[start..j]);
                }
                self.put_wide(run[j]);
                j += 2;
                start = j;
            } else {
                j += 1;
            }
        }
        if start < run.len() {
            self.put_narrow(&run[start..]);
        }
    }

    /// Soft-wraps to the start of the next row; `wide`: early, for a wide character that the
    /// last column could not hold.
    pub(super) fn wrap(&mut self, wide: bool) {
        let row = self.row;
        let line = &mut self.grid()[row];
        line.wrapped = true;
        line.wide_wrap = wide;
        self.index();
        self.col = 0;
    }

    /// Writes narrow characters at the cursor, wrapping as needed; the same as writing them one
    /// at a time.
    #[inline]
    pub(super) fn put_narrow<T: CellChars>(&mut self, chars: &[T]) {
        let w = self.w;
        let col = self.col;
        if col + chars.len() <= w && !chars.is_empty() {
            // Fits without wrapping: the common case.
            self.write(col, chars);
            let col = col + chars.len();
            self.col = if col < w || self.autowrap { col } else { w - 1 };
            return;
        }
        let mut rest = chars;
        while !rest.is_empty() {
            let mut col = self.col;
            if col >= w {
                if self.autowrap {
                    self.wrap(false);
                    col = 0;
                } else {
                    col = w - 1;
                }
            }
            let room = w - col;
            if rest.len() > room && !self.autowrap {
                // Without autowrap the rest overwrites the last column: the final one stays.
                if room > 1 {
                    self.write(col, &rest[..room - 1]);
                }
                self.write(w - 1, &rest[rest.len() - 1..]);
                self.col = w - 1;
                return;
            }
            let k = rest.len().min(room);
            self.write(col, &rest[..k]);
            rest = &rest[k..];
            col += k;
            self.col = if col < w || self.autowrap { col } else { w - 1 };
        }
    }

    /// Overwrites cells from `col` with `text` (not empty) in the pen's style.
    #[allow(
        clippy::inline_always,
        reason = "in the ASCII-run path it is most of the work"
    )]
    #[inline(always)]
    pub(super) fn write<T: CellChars>(&mut self, col: usize, text: &[T]) {
        let sid = self.style_id();
        let row = self.row;
        let cells = &mut self.grid()[row].cells;
        let end = col + text.len();
        let have = cells.len();
        if end <= have {
            // Redrawing over existing cells: progress bars and spinners.
            split(cells, col);
            split(cells, end);
            fill(&mut cells[col..end], text, sid);
        } else if col >= have {
            cells.resize(col, BLANK);
            extend(cells, text, sid);
        } else {
            split(cells, col);
            fill(&mut cells[col..have], text, sid);
            extend(cells, &text[have - col..], sid);
        }
    }

    pub(super) fn put_wide(&mut self, ch: u32) {
        let w = self.w;
        if w < 2 {
            return;
        }
        let mut col = self.col;
        if col >= w {
            if self.autowrap {
                self.wrap(false);
                col = 0;
            } else {
                col = w - 1;
            }
        }
        if col == w - 1 {
            if self.autowrap {
                // It does not fit: the last column is left as it is and the character wraps.
                self.wrap(true);
                col = 0;
            } else {
                col = w - 2;
            }
        }
        let sid = self.style_id();
        let row = self.row;
        let cells = &mut self.grid()[row].cells;
        if col > cells.len() {
            cells.resize(col, BLANK);
        } else {
            split(cells, col);
        }
        split(cells, col + 2);
        if cells.len() < col + 2 {
            cells.resize(col + 2, BLANK);
        }
        cells[col] = Cell::new(ch, sid);
        cells[col + 1] = Cell::new(CONT, sid);
        col += 2;
        self.col = if col < w || self.autowrap { col } else { w - 1 };
    }
}
