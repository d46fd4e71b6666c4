//! CSI dispatch: the short and plain CSIs of the ground fast path, and every CSI the state
//! machine completes (cursor movement, erase, scroll, margins, modes, REP, DECSTR).

use super::Terminal;
use super::params::{Plain, plain_params};
use super::screen::{Saved, TabStops, shift_down, shift_up};
use super::sgr::sgr;
use super::style::StyleKey;

impl Terminal {
    /// DECSTR (`CSI ! p`), as xterm's soft reset: the margins, origin mode, autowrap and the
    /// rendition (not an OSC 8 link, as SGR 0) to their defaults, and this screen's saved
    /// cursor to home with them; the cursor, the screens, tab stops and scrollback stay.
    pub(super) fn decstr(&mut self) {
        self.top = 0;
        self.bot = self.rows - 1;
        self.origin = false;
        self.autowrap = true;
        self.pen = StyleKey {
            link: self.pen.link,
            ..StyleKey::default()
        };
        self.pen_id = if self.pen == StyleKey::default() {
            Some(0)
        } else {
            None
        };
        let slot = usize::from(self.alt_shown);
        self.saved[slot] = Some(Saved {
            row: 0,
            col: 0,
            pen: self.pen,
            origin: false,
        });
    }

    /// A whole CSI at `data[i..]` (after `ESC [`) of at most two digits and a final byte,
    /// executed as [`Self::plain_csi`] would without its loop: `ESC[0m`, `ESC[32m`, `ESC[K`,
    /// `ESC[2K` and `ESC[1G` are most of the escapes in a build's or an installer's output.
    /// `None`, having changed nothing, for anything else (and near the end of the data).
    #[inline]
    pub(super) fn short_csi(&mut self, data: &[u8], i: usize) -> Option<usize> {
        let digit = |b: u8| u16::from(b - b'0');
        let (len, v, fin) = match *data.get(i..i + 3)? {
            [fin @ 0x40..=0x7E, _, _] => (1, 0, fin),
            [d @ b'0'..=b'9', fin @ 0x40..=0x7E, _] => (2, digit(d), fin),
            [d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', fin @ 0x40..=0x7E] => {
                (3, 10 * digit(d1) + digit(d2), fin)
            }
            _ => return None,
        };
        match fin {
            // `ESC[m`; the ground loop takes SGRs of one code of one or two digits itself.
            b'm' if v == 0 => self.set_pen(self.reset_pen()),
            b'K' => {
                self.erase_line(v);
                // `ESC[2K ESC[1G`, how npm and other spinners clear their line, in one step
                // (only as `2K`: with `02K` the byte at `i + 2` is the `K`, not an ESC).
                if v == 2 && data.get(i + 2..i + 6) == Some(b"\x1b[1G") {
                    // As the second escape would: it forgets what REP repeats.
                    self.repeatable = None;
                    self.set_col(1);
                    return Some(i + 6);
                }
            }
            b'G' | b'`' => self.set_col(v),
            _ => self.csi_plain(fin, &[v], len > 1),
        }
        Some(i + len)
    }

    /// A whole CSI at `data[i..]` (after `ESC [`) made of at most 16 `;`-separated decimal
    /// parameters and a final byte, executed without the state machine; the common case.
    /// Returns `None`, having changed nothing, for anything else (private markers, colons,
    /// intermediates, controls, the end of the data): the state machine then takes it.
    #[inline]
    pub(super) fn plain_csi(&mut self, data: &[u8], i: usize) -> Option<usize> {
        let rest = data.get(i..)?;
        let (vals, count, fin, len) = plain_params(rest)?;
        self.csi_plain(fin, &vals[..count], rest[0].is_ascii_digit());
        Some(i + len)
    }

    pub(super) fn csi_plain(&mut self, fin: u8, vals: &[u16], first_digits: bool) {
        if fin == b'm' {
            let new = if vals == [0] {
                // `ESC[0m`, the most common SGR by far.
                self.reset_pen()
            } else {
                sgr(self.pen, &Plain(vals))
            };
            self.set_pen(new);
            return;
        }
        match (fin, vals) {
            (b'K', &[mode]) => self.erase_line(mode),
            (b'G' | b'`', &[col]) => self.set_col(col),
            _ => {
                self.reset_params();
                self.first_digits = first_digits;
                for &v in vals {
                    self.params.push(v);
                }
                self.csi(fin);
            }
        }
    }

    pub(super) fn csi(&mut self, f: u8) {
        let inter = &self.inter[..self.inter_len];
        if inter == b"?" {
            match f {
                b'h' | b'l' => self.private_modes(f == b'h'),
                b'J' => self.erase_display(self.params.arg(0, 0)),
                b'K' => self.erase_line(self.params.arg(0, 0)),
                _ => {}
            }
            return;
        }
        if inter == b"!" && f == b'p' {
            self.decstr();
            return;
        }
        if !inter.is_empty() {
            return;
        }
        let w = self.w;
        let rows = self.rows;
        let a0 = usize::from(self.params.arg(0, 1));
        match f {
            b'm' => self.sgr(),
            b'K' => self.erase_line(self.params.arg(0, 0)),
            b'J' => self.erase_display(self.params.arg(0, 0)),
            b'A' | b'F' | b'B' | b'e' | b'E' => self.move_rows(f, a0),
            b'C' | b'a' => self.col = (self.col + a0).min(w - 1),
            // From a pending wrap, back from the last column (xterm's CursorBack).
            b'D' => self.col = self.edit_col().saturating_sub(a0),
            b'G' | b'`' => self.set_col(self.params.arg(0, 1)),
            b'H' | b'f' => {
                self.row = self.addressed_row(a0);
                self.col = (usize::from(self.params.arg(1, 1)) - 1).min(w - 1);
            }
            b'd' => {
                self.row = self.addressed_row(a0);
                self.reset_wrap();
            }
            b'I' => {
                // Each step moves right, so a count past the stops left costs nothing more.
                for _ in 0..a0 {
                    if self.col >= w - 1 {
                        break;
                    }
                    self.col = self.next_tab(self.col);
                }
            }
            b'Z' => {
                // From a pending wrap, back from the last column (only stops left of it).
                self.reset_wrap();
                for _ in 0..a0 {
                    if self.col == 0 {
                        break;
                    }
                    self.col = self.previous_tab(self.col);
                }
            }
            b'g' => match self.params.arg(0, 0) {
                0 => {
                    let col = self.edit_col();
                    self.tab_stops().set(col, false);
                }
                3 => self.tabs = Some(TabStops::empty(w)),
                _ => {}
            },
            b'@' => self.insert_chars(a0),
            b'P' => self.delete_chars(a0),
            b'X' => self.erase_chars(a0),
            b'L' | b'M' => self.insert_delete_lines(a0, f == b'L'),
            b'S' => self.scroll_up(a0),
            // As xterm: more than one parameter, or an explicit 0, is mouse tracking.
            b'T' if self.params.len() <= 1
                && !(self.first_digits && self.params.arg(0, 0) == 0) =>
            {
                self.scroll_down(a0);
            }
            b'b' => {
                if let Some(c) = self.repeatable.take() {
                    let mut b = [0u8; 4];
                    let s = c.encode_utf8(&mut b);
                    let rep = s.repeat(a0);
                    self.print_str(&rep);
                    // A REP does not make its character repeatable again.
                    self.last = None;
                }
            }
            b'r' => {
                let top = usize::from(self.params.arg(0, 1));
                let bot = usize::from(self.params.arg(1, u16::try_from(rows).unwrap_or(u16::MAX)))
                    .min(rows);
                if top < bot {
                    self.top = top - 1;
                    self.bot = bot - 1;
                    self.home();
                }
            }
            b's' if self.params.is_bare() => self.save_cursor(),
            b'u' if self.params.is_bare() => self.restore_cursor(),
            _ => {}
        }
    }

    /// CUU and CPL (`A`, `F`) up, CUD, VPR and CNL (`B`, `e`, `E`) down, `n` rows but not past
    /// the margin the cursor is within; CPL and CNL go to column 0, the others end a pending
    /// wrap.
    pub(super) fn move_rows(&mut self, f: u8, n: usize) {
        if matches!(f, b'A' | b'F') {
            let floor = if self.row >= self.top { self.top } else { 0 };
            self.row = self.row.saturating_sub(n).max(floor);
        } else {
            let ceil = if self.row <= self.bot {
                self.bot
            } else {
                self.rows - 1
            };
            self.row = (self.row + n).min(ceil);
        }
        if matches!(f, b'E' | b'F') {
            self.col = 0;
        } else {
            self.reset_wrap();
        }
    }

    /// IL (`insert`) or DL at the cursor row, within the scroll region.
    pub(super) fn insert_delete_lines(&mut self, n: usize, insert: bool) {
        let (top, bot, row) = (self.top, self.bot, self.row);
        if top <= row && row <= bot {
            let n = n.min(bot - row + 1);
            let region = &mut self.grid().make_contiguous()[row..=bot];
            if insert {
                shift_down(region, n);
            } else {
                shift_up(region, n);
            }
            self.col = 0;
        }
    }

    pub(super) fn private_modes(&mut self, on: bool) {
        for i in 0..self.params.len() {
            let mode = self.params.group(i)[0];
            match mode {
                6 => {
                    self.origin = on;
                    self.home();
                }
                7 => self.autowrap = on,
                1048 => {
                    if on {
                        self.save_cursor();
                    } else {
                        self.restore_cursor();
                    }
                }
                // As xterm's charproc.c: only the switch itself depends on the screen shown;
                // ?1049 saves, clears and restores whichever it is on.
                47 | 1047 if on => self.show_alternate(),
                47 => self.show_primary(),
                1047 => {
                    if self.alt_shown {
                        self.erase_display(2);
                    }
                    self.show_primary();
                }
                1049 if on => {
                    self.save_cursor();
                    self.show_alternate();
                    self.erase_display(2);
                }
                1049 => {
                    self.show_primary();
                    self.restore_cursor();
                }
                _ => {}
            }
        }
    }
}
