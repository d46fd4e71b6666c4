//! C0 controls and ESC sequences (`ESC 7`, `ESC 8`, IND, NEL, RI, HTS, RIS, DECALN).

use super::Terminal;
use super::cell::Cell;
use super::line::Line;
use super::style::StyleKey;

/// The columns DECALN fills when `cols` is `None`: the VT100's width, not a whole row of
/// [`UNBOUNDED_COLS`] (three bytes would otherwise write 8,192 cells per row).
pub(super) const DECALN_TRANSCRIPT_COLS: usize = 80;

impl Terminal {
    /// The C0 control `b` (not ESC) before `data[i..]`; returns where to continue. CR, most of
    /// them, is taken without a call, as `execute` does, and with what usually follows it.
    #[inline]
    pub(super) fn control(&mut self, b: u8, data: &[u8], mut i: usize) -> usize {
        if b != b'\r' {
            self.execute(b);
            return i;
        }
        self.last = None;
        self.repeatable = None;
        self.col = 0;
        if data.get(i) == Some(&b'\n') {
            // CR LF: the LF's index keeps the cursor at column 0.
            self.index();
            i += 1;
        } else if data.get(i..i + 3) == Some(b"\x1b[K") {
            // `CR ESC[K`, how cargo and pip redraw a bar, in one step: at column 0 the erase
            // blanks the whole row, as `ESC[2K` does (REP was already forgotten).
            let row = self.row;
            self.grid()[row].clear();
            i += 3;
        }
        i
    }

    pub(super) fn execute(&mut self, b: u8) {
        self.last = None;
        self.repeatable = None;
        match b {
            0x0A..=0x0C => {
                self.index();
                if self.cols.is_none() {
                    self.col = 0;
                }
            }
            0x0D => self.col = 0,
            // From a pending wrap, back from the last column (xterm's CursorBack).
            0x08 => self.col = self.edit_col().saturating_sub(1),
            // xterm's TabToNextStop keeps a pending wrap, so HT moves only short of it.
            0x09 if self.col < self.w => self.col = self.next_tab(self.col),
            0x07 => self.bell += 1,
            _ => {}
        }
    }

    pub(super) fn esc_dispatch(&mut self, fin: u8) {
        if self.ignoring {
            return;
        }
        match (&self.inter[..self.inter_len], fin) {
            ([], b'7') => self.save_cursor(),
            ([], b'8') => self.restore_cursor(),
            ([], b'D') => self.index(),
            ([], b'E') => {
                self.col = 0;
                self.index();
            }
            ([], b'M') => self.reverse_index(),
            ([], b'H') => {
                let col = self.edit_col();
                self.tab_stops().set(col, true);
            }
            ([], b'c') => self.soft_reset(),
            ([b'#'], b'8') => {
                // DECALN: fill the screen with 'E' (a transcript, with no width, the 80
                // columns of the VT100 it tests), then, as xterm, leave origin mode and the
                // rendition (not a link).
                let w = if self.cols.is_some() {
                    self.w
                } else {
                    DECALN_TRANSCRIPT_COLS
                };
                let rows = self.rows;
                let g = self.grid();
                for line in g.iter_mut().take(rows) {
                    *line = Line {
                        cells: vec![Cell::new(u32::from(b'E'), 0); w],
                        ..Line::default()
                    };
                }
                self.top = 0;
                self.bot = self.rows - 1;
                self.row = 0;
                self.col = 0;
                self.origin = false;
                self.pen = StyleKey {
                    link: self.pen.link,
                    ..StyleKey::default()
                };
                self.pen_id = None;
            }
            _ => {}
        }
    }
}
