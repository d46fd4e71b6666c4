//! The views read from the grid: plain text ([`text`]), styled runs ([`spans`]) and the
//! active screen ([`screen`]), with the row walk they share.

pub(super) mod screen;
pub(super) mod spans;
pub(super) mod text;

use crate::simd::prefetch::prefetch;
use crate::simd::terminal_cells::copy_ascii;
use crate::terminal::Terminal;
use crate::terminal::cell::{CLUSTER_BIT, CONT};
use crate::terminal::line::Line;

/// How many lines ahead a view asks for the cells it reads next.
pub(super) const PREFETCH_LINES: usize = 4;

impl Terminal {
    #[inline]
    pub(super) fn push_cell_text(&self, out: &mut String, ch: u32) {
        if ch < 0x80 {
            // Most cells: a byte, without a char's encoding.
            out.push(char::from(u8::try_from(ch).unwrap_or(b' ')));
        } else if let Some(c) = char::from_u32(ch) {
            // CONT and cluster ids are never valid chars.
            out.push(c);
        } else if ch != CONT {
            out.push_str(&self.clusters[(ch & !CLUSTER_BIT) as usize]);
        }
    }

    pub(super) fn row_text(&self, out: &mut String, line: &Line) {
        out.reserve(line.cells.len());
        let mut rest = &line.cells[..];
        while !rest.is_empty() {
            // Runs of ASCII cells, most of any output, go in as bytes.
            // SAFETY: only bytes below 0x80 are added, each a whole UTF-8 character.
            let mut n = copy_ascii(rest, unsafe { out.as_mut_vec() });
            for c in &rest[n..] {
                // Character 0 (never printed) is not taken by `copy_ascii`: taken here.
                if c.ch() < 0x80 && c.ch() != 0 {
                    break;
                }
                self.push_cell_text(out, c.ch());
                n += 1;
            }
            rest = &rest[n..];
        }
    }

    /// Scrollback then the primary screen, each line's cells asked for a few lines before it
    /// comes: lines of scrollback live apart in memory, so a view that walks them would
    /// otherwise wait on each in turn.
    pub(super) fn rows_ahead(&self) -> impl Iterator<Item = &Line> {
        let mut ahead = self
            .sb
            .iter()
            .chain(self.prim().iter())
            .skip(PREFETCH_LINES);
        self.sb
            .iter()
            .chain(self.prim().iter())
            .inspect(move |_| Self::prefetch_line(ahead.next()))
    }

    /// Asks for the first cells of `line` ahead of reading them.
    #[inline]
    pub(super) fn prefetch_line(line: Option<&Line>) {
        if let Some(line) = line {
            let p = line.cells.as_ptr();
            for k in 0..line.cells.len().div_ceil(8).min(8) {
                prefetch(p.wrapping_add(8 * k));
            }
        }
    }

    /// The blanks that complete a soft-wrapped row to the full width (short of the last column
    /// when that column only pads a wide character that wrapped).
    pub(super) fn wrap_pad(&self, line: &Line) -> usize {
        (self.w - usize::from(line.wide_wrap)).saturating_sub(line.cells.len())
    }

    /// How many rows the views walk, retained scrollback plus the primary screen: at least
    /// as many as they have lines (soft-wrapped rows join into one).
    pub fn view_rows(&self) -> usize {
        self.sb.len() + self.prim().len()
    }
}
