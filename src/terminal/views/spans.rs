//! The spans view: each logical line as runs of one style.

use std::convert::Infallible;

use crate::simd::terminal_cells::copy_ascii_where;
use crate::terminal::Terminal;
use crate::terminal::cell::{CONT, Cell};
use crate::terminal::style::{INVERSE, STRIKE, Style, StyleKey, UNDERLINE};

/// A run of text in one style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

/// A logical line of [`Terminal::styled_lines`]: its text, trailing blanks trimmed, and its
/// runs as (start in `text`, style id for [`Terminal::style`]); a run ends where the next
/// starts, the last at the end of `text`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StyledLine {
    pub text: String,
    pub runs: Vec<(usize, u32)>,
}

impl StyledLine {
    /// Trims the line's trailing blanks, with the runs that start in them, back to the last
    /// cell that is not a blank or whose style shows even on a blank (`styles`: see
    /// [`shows_blank`]).
    #[inline]
    pub(in crate::terminal) fn trim_blanks(&mut self, styles: &[StyleKey]) {
        // Most lines end in a non-blank (runs are never empty): nothing to trim.
        if self.text.as_bytes().last().is_some_and(|&b| b != b' ') {
            return;
        }
        let mut keep = self.text.len();
        while let Some(&(begin, sid)) = self.runs.last() {
            if styles.get(sid as usize).is_some_and(shows_blank) {
                break;
            }
            // Bytes, not chars: a space byte is never part of a longer character.
            keep = begin
                + self.text.as_bytes()[begin..keep]
                    .iter()
                    .rposition(|&b| b != b' ')
                    .map_or(0, |p| p + 1);
            if keep > begin {
                break;
            }
            self.runs.pop();
        }
        self.text.truncate(keep);
    }
}

/// Whether a blank cell of style `k` can be seen: it has a background colour, or is inverse,
/// underlined or struck through. Trailing blanks of such styles stay in
/// [`Terminal::spans`]; every other view trims all trailing blanks.
pub(in crate::terminal) fn shows_blank(k: &StyleKey) -> bool {
    k.bg != 0 || k.flags & (INVERSE | UNDERLINE | STRIKE) != 0
}

/// The leading ASCII cells of style `style`.
pub(in crate::terminal) fn copy_ascii_of_style(
    cells: &[Cell],
    style: u32,
    out: &mut Vec<u8>,
) -> usize {
    copy_ascii_where(cells, !0x7F, u64::from(style) << 32, out)
}

impl Terminal {
    /// Each logical line as runs of one style (adjacent equal styles merged). A line's
    /// trailing blanks are trimmed back to the last cell that can be seen: a non-blank, or a
    /// blank with a background colour, inverse, underline or strike-through (which `text`
    /// and `lines()` trim too). So a line's spans read as its `lines()` entry plus, at most,
    /// such blanks, and trailing lines holding only such blanks are rows here, not there.
    pub fn spans(&self) -> Vec<Vec<Span>> {
        // Each style in use made once, by id (ids are small and dense), and cloned per run.
        let mut styles: Vec<Option<Style>> = Vec::new();
        let mut out = Vec::with_capacity(self.view_rows());
        let all = self.each_styled_line(|text, runs| {
            let ends = runs.iter().skip(1).map(|r| r.0).chain([text.len()]);
            let mut row = Vec::with_capacity(runs.len());
            for (&(begin, sid), end) in runs.iter().zip(ends) {
                let i = sid as usize;
                if styles.len() <= i {
                    styles.resize_with(i + 1, || None);
                }
                let style = styles[i].get_or_insert_with(|| self.style(sid)).clone();
                row.push(Span {
                    text: text[begin..end].to_owned(),
                    style,
                });
            }
            out.push(row);
            Ok::<(), Infallible>(())
        });
        match all {
            Ok(()) => out,
        }
    }

    /// [`Terminal::spans`] in compact form: one text per line and style ids, so that a caller
    /// converts each style once rather than once per run.
    pub fn styled_lines(&self) -> Vec<StyledLine> {
        let mut out = Vec::with_capacity(self.view_rows());
        let all = self.each_styled_line(|text, runs| {
            out.push(StyledLine {
                text: text.to_owned(),
                runs: runs.to_vec(),
            });
            Ok::<(), Infallible>(())
        });
        match all {
            Ok(()) => out,
        }
    }

    /// The lines of [`Terminal::styled_lines`] one at a time, each given to `line` as its text
    /// and runs in buffers that the next line reuses: a caller that converts each line as it
    /// comes needs no buffer for the whole view. Stops at the first error `line` returns.
    pub fn each_styled_line<E>(
        &self,
        mut line: impl FnMut(&str, &[(usize, u32)]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut out = StyledLine::default();
        // Lines without runs not given yet: only those that a line with runs follows are.
        let mut empty = 0;
        for row in self.rows_ahead() {
            // The style of the open run (a soft-wrapped row continues its line's); no style
            // has id `u32::MAX`.
            let mut open = out.runs.last().map_or(u32::MAX, |r| r.1);
            let cells = &row.cells[..];
            let mut k = 0;
            while k < cells.len() {
                let c = cells[k];
                if c.ch() != CONT && c.style() != open {
                    open = c.style();
                    out.runs.push((out.text.len(), open));
                }
                // SAFETY: only bytes below 0x80 are added, each a whole UTF-8 character.
                k += copy_ascii_of_style(&cells[k..], open, unsafe { out.text.as_mut_vec() });
                for c in &cells[k..] {
                    if c.ch() != CONT && (c.ch() < 0x80 || c.style() != open) {
                        break;
                    }
                    self.push_cell_text(&mut out.text, c.ch());
                    k += 1;
                }
            }
            if row.wrapped {
                let pad = self.wrap_pad(row);
                if pad > 0 {
                    if open != 0 {
                        out.runs.push((out.text.len(), 0));
                    }
                    out.text.extend(std::iter::repeat_n(' ', pad));
                }
                continue;
            }
            self.end_styled_line(&mut out, &mut empty, &mut line)?;
        }
        if !out.text.is_empty() {
            self.end_styled_line(&mut out, &mut empty, &mut line)?;
        }
        // Trailing lines without runs are not given.
        Ok(())
    }

    /// Trims the line built in `out` and gives it to `line` (after the lines without runs
    /// that `empty` counts, if it has runs), then empties `out` for the next.
    #[inline]
    pub(in crate::terminal) fn end_styled_line<E>(
        &self,
        out: &mut StyledLine,
        empty: &mut usize,
        line: &mut impl FnMut(&str, &[(usize, u32)]) -> Result<(), E>,
    ) -> Result<(), E> {
        out.trim_blanks(&self.styles);
        if out.runs.is_empty() {
            *empty += 1;
        } else {
            for _ in 0..std::mem::take(empty) {
                line("", &[])?;
            }
            line(&out.text, &out.runs)?;
        }
        out.text.clear();
        out.runs.clear();
        Ok(())
    }
}
