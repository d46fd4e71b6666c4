//! Scrollback: rows scrolled off the primary screen, kept within `scrollback` lines and
//! `max_bytes`.

use super::Terminal;
use super::line::{LINE_CAPACITY, LINE_COST, Line};
use crate::simd::prefetch::prefetch;

impl Terminal {
    /// What a scrollback line counts against `max_bytes`: the cells the views show (a
    /// soft-wrapped row is padded to the width, whatever cells it holds) and a fixed part.
    pub(super) fn line_cost(&self, line: &Line) -> usize {
        let padding = if line.wrapped { self.wrap_pad(line) } else { 0 };
        line.cells.len() + padding + LINE_COST
    }

    /// Keeps `line`, scrolled off the top of the primary screen, in scrollback, within its
    /// bounds.
    #[inline]
    pub(super) fn push_scrollback(&mut self, mut line: Line) {
        // Capacity left over from a longer past must not escape the `max_bytes` bound: a kept
        // line holds at most twice its cells plus a first allocation's worth.
        if line.cells.capacity() > 2 * line.cells.len() + LINE_CAPACITY {
            line.cells.shrink_to_fit();
        }
        self.sb_cost += self.line_cost(&line);
        self.sb.push_back(line);
        self.trim_scrollback();
    }

    pub(super) fn trim_scrollback(&mut self) {
        while !self.sb.is_empty() && (self.sb.len() > self.sb_max || self.sb_cost > self.max_bytes)
        {
            if let Some(old) = self.sb.pop_front() {
                self.sb_cost -= self.line_cost(&old);
                self.truncated = true;
                // Reused for the next blank line: a steady stream then allocates nothing.
                let mut cells = old.cells;
                cells.clear();
                self.spare = cells;
                // The next line to go is the next spare, and its memory is long cold: ask for
                // its cells now, and for the one after's header (read to find its cells).
                Self::prefetch_line(self.sb.front());
                if let Some(after) = self.sb.get(1) {
                    prefetch(std::ptr::from_ref(after));
                }
            }
        }
    }
}
