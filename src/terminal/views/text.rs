//! The text view: scrollback and the primary screen as plain text.

use crate::terminal::Terminal;
use crate::terminal::cell::{CLUSTER_BIT, CONT};
use crate::terminal::line::Line;

/// Where the text view is written: UTF-8 (`String`), or one code point per `u32`.
pub(in crate::terminal) trait TextOut {
    fn reserve(&mut self, units: usize);
    /// Appends the characters of `line`'s cells.
    fn push_row(&mut self, terminal: &Terminal, line: &Line);
    fn push_spaces(&mut self, n: usize);
    /// Appends `unit`, an ASCII character.
    fn push_unit(&mut self, unit: u8);
    fn len(&self) -> usize;
    /// Drops the trailing copies of `unit`, an ASCII character, found after `start`.
    fn trim_end_from(&mut self, start: usize, unit: u8);
}

impl TextOut for String {
    fn reserve(&mut self, units: usize) {
        String::reserve(self, units);
    }
    fn push_row(&mut self, terminal: &Terminal, line: &Line) {
        terminal.row_text(self, line);
    }
    fn push_spaces(&mut self, n: usize) {
        self.extend(std::iter::repeat_n(' ', n));
    }
    fn push_unit(&mut self, unit: u8) {
        self.push(char::from(unit));
    }
    fn len(&self) -> usize {
        String::len(self)
    }
    fn trim_end_from(&mut self, start: usize, unit: u8) {
        let keep = start + self[start..].trim_end_matches(char::from(unit)).len();
        self.truncate(keep);
    }
}

impl TextOut for Vec<u32> {
    fn reserve(&mut self, units: usize) {
        Vec::reserve(self, units);
    }
    fn push_row(&mut self, terminal: &Terminal, line: &Line) {
        let start = self.len();
        // Rows of characters below the surrogates (nearly all: no cluster, no continuation
        // cell), copied and checked in passes the compiler vectorizes; any other row cell by
        // cell.
        self.extend(line.cells.iter().map(|c| c.ch()));
        if !line
            .cells
            .iter()
            .fold(false, |above, c| above | (c.ch() >= 0xD800))
        {
            return;
        }
        self.truncate(start);
        for c in &line.cells {
            let ch = c.ch();
            if char::from_u32(ch).is_some() {
                self.push(ch);
            } else if ch != CONT {
                // A cluster: its base character and marks.
                let cluster = &terminal.clusters[(ch & !CLUSTER_BIT) as usize];
                self.extend(cluster.chars().map(u32::from));
            }
        }
    }
    fn push_spaces(&mut self, n: usize) {
        self.extend(std::iter::repeat_n(u32::from(b' '), n));
    }
    fn push_unit(&mut self, unit: u8) {
        self.push(u32::from(unit));
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn trim_end_from(&mut self, start: usize, unit: u8) {
        let kept = self[start..]
            .iter()
            .rposition(|&c| c != u32::from(unit))
            .map_or(0, |p| p + 1);
        self.truncate(start + kept);
    }
}

impl Terminal {
    /// Scrollback plus the primary screen as plain text: trailing blanks trimmed, soft-wrapped
    /// rows joined, trailing empty lines dropped.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out);
        out
    }

    /// [`Terminal::text`] as its characters' code points, one per `u32`: what a caller that
    /// stores text at a fixed width per character (a Python `str`) copies or narrows, with no
    /// UTF-8 to encode and decode again.
    pub fn text_code_points(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.write_text(&mut out);
        out
    }

    pub(in crate::terminal) fn write_text<O: TextOut>(&self, out: &mut O) {
        // At least a unit per cell and line: one allocation, not a doubling chain of copies.
        let size = self.sb.iter().chain(self.prim().iter());
        out.reserve(size.map(|l| l.cells.len() + 1).sum());
        // Where the logical line being built starts in `out`.
        let mut start = 0;
        for line in self.rows_ahead() {
            out.push_row(self, line);
            if line.wrapped {
                out.push_spaces(self.wrap_pad(line));
                continue;
            }
            out.trim_end_from(start, b' ');
            out.push_unit(b'\n');
            start = out.len();
        }
        out.trim_end_from(start, b' ');
        // Lines hold no newline of their own, so this drops exactly the trailing empty lines.
        out.trim_end_from(0, b'\n');
    }

    /// The logical lines of [`Terminal::text`].
    pub fn lines(&self) -> Vec<String> {
        let text = self.text();
        if text.is_empty() {
            return Vec::new();
        }
        text.split('\n').map(str::to_owned).collect()
    }
}
