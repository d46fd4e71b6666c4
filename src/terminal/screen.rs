//! The grid: cursor, margins, tab stops, the alternate screen, scrolling within the margins,
//! and erasing, inserting and deleting cells.

use std::collections::VecDeque;

use super::Terminal;
use super::cell::{BLANK, split};
use super::line::Line;
use super::style::StyleKey;

#[derive(Clone, Copy)]
pub(super) struct Saved {
    pub(super) row: usize,
    pub(super) col: usize,
    pub(super) pen: StyleKey,
    pub(super) origin: bool,
}

/// Moves the rows of `region` down by `n` (at most its length): the last `n` are dropped and
/// blank rows come in at the top.
pub(super) fn shift_down(region: &mut [Line], n: usize) {
    region.rotate_right(n);
    region[..n].fill_with(Line::default);
}

/// Moves the rows of `region` up by `n` (at most its length): the first `n` are dropped and
/// blank rows come in at the bottom.
pub(super) fn shift_up(region: &mut [Line], n: usize) {
    region.rotate_left(n);
    let kept = region.len() - n;
    region[kept..].fill_with(Line::default);
}

impl Terminal {
    #[inline]
    pub(super) fn grid(&mut self) -> &mut VecDeque<Line> {
        &mut self.screen
    }

    #[inline]
    pub(super) fn grid_ref(&self) -> &VecDeque<Line> {
        &self.screen
    }

    /// The primary screen, whichever is shown.
    pub(super) fn prim(&self) -> &VecDeque<Line> {
        if self.alt_shown {
            &self.other
        } else {
            &self.screen
        }
    }

    pub(super) fn save_cursor(&mut self) {
        let slot = usize::from(self.alt_shown);
        self.saved[slot] = Some(Saved {
            row: self.row,
            col: self.col,
            pen: self.pen,
            origin: self.origin,
        });
    }

    pub(super) fn restore_cursor(&mut self) {
        let slot = usize::from(self.alt_shown);
        let s = self.saved[slot].unwrap_or(Saved {
            row: 0,
            col: 0,
            pen: StyleKey::default(),
            origin: false,
        });
        self.row = s.row;
        self.col = s.col;
        self.pen = s.pen;
        self.origin = s.origin;
        self.pen_id = None;
        if self.origin {
            // As xterm (`CursorSet`): in origin mode the cursor stays above the bottom margin
            // set since; a row above the top margin stays where it was.
            self.row = self.row.min(self.bot);
        }
    }

    /// Ends a pending wrap, leaving the cursor on the last column: xterm's `ResetWrap`, which
    /// every vertical move, erase and character insertion or deletion does.
    #[inline]
    pub(super) fn reset_wrap(&mut self) {
        self.col = self.edit_col();
    }

    pub(super) fn index(&mut self) {
        self.reset_wrap();
        if self.row == self.bot {
            self.scroll_up(1);
        } else if self.row < self.rows - 1 {
            self.row += 1;
        }
    }

    pub(super) fn reverse_index(&mut self) {
        self.reset_wrap();
        if self.row == self.top {
            self.scroll_down(1);
        } else if self.row > 0 {
            self.row -= 1;
        }
    }

    pub(super) fn scroll_up(&mut self, n: usize) {
        let (top, bot) = (self.top, self.bot);
        let n = n.min(bot - top + 1);
        let at = bot + 1 - n;
        // The primary screen is the one shown.
        let to_scrollback = top == 0 && !self.alt_shown;
        if to_scrollback && bot + 1 == self.screen.len() {
            // The whole primary screen, the usual case: its top rows go to scrollback and
            // blank ones come in at the bottom, the ring turning without moving the others.
            for _ in 0..n {
                let line = self.screen.pop_front().unwrap_or_default();
                self.push_scrollback(line);
                self.screen.push_back(Line {
                    cells: std::mem::take(&mut self.spare),
                    ..Line::default()
                });
            }
            return;
        }
        let g = self.grid();
        if top == 0 && bot + 1 == g.len() {
            // The whole alternate screen: a ring turns without moving its other rows.
            g.rotate_left(n);
        } else {
            g.make_contiguous()[top..=bot].rotate_left(n);
        }
        if to_scrollback {
            for k in at..=bot {
                let line = std::mem::take(&mut self.screen[k]);
                self.push_scrollback(line);
                self.screen[k].cells = std::mem::take(&mut self.spare);
            }
        } else {
            for line in g.range_mut(at..=bot) {
                *line = Line::default();
            }
        }
    }

    pub(super) fn scroll_down(&mut self, n: usize) {
        let (top, bot) = (self.top, self.bot);
        let n = n.min(bot - top + 1);
        shift_down(&mut self.grid().make_contiguous()[top..=bot], n);
    }

    /// Shows the alternate screen as it was last left (blank the first time).
    pub(super) fn show_alternate(&mut self) {
        if !self.alt_shown {
            self.alt_shown = true;
            std::mem::swap(&mut self.screen, &mut self.other);
            if self.screen.is_empty() {
                self.screen = std::iter::repeat_with(Line::default)
                    .take(self.rows)
                    .collect();
            }
        }
    }

    /// Shows the primary screen, keeping the alternate one as it is.
    pub(super) fn show_primary(&mut self) {
        if self.alt_shown {
            self.alt_shown = false;
            std::mem::swap(&mut self.screen, &mut self.other);
        }
    }

    /// The cursor to the first column of the first row it may address (the top margin in
    /// origin mode).
    pub(super) fn home(&mut self) {
        self.row = if self.origin { self.top } else { 0 };
        self.col = 0;
    }

    /// The screen row of row `n` (1-based) as CUP and VPA address it: from the top margin and
    /// no further than the bottom one in origin mode, else from the top of the screen.
    pub(super) fn addressed_row(&self, n: usize) -> usize {
        if self.origin {
            (self.top + n - 1).min(self.bot)
        } else {
            (n - 1).min(self.rows - 1)
        }
    }

    /// The tab stops, made explicit (every 8 columns) the first time they are changed.
    pub(super) fn tab_stops(&mut self) -> &mut TabStops {
        let w = self.w;
        self.tabs.get_or_insert_with(|| TabStops::every_8(w))
    }

    /// The first tab stop right of `col`, or the last column.
    pub(super) fn next_tab(&self, col: usize) -> usize {
        let last = self.w - 1;
        let col = col.min(last);
        match &self.tabs {
            None => ((col / 8 + 1) * 8).min(last),
            Some(stops) => stops
                .first_from(col + 1)
                .map_or(last, |stop| stop.min(last)),
        }
    }

    /// The last tab stop left of `col` (above 0), or column 0.
    pub(super) fn previous_tab(&self, col: usize) -> usize {
        match &self.tabs {
            None => (col.min(self.w) - 1) / 8 * 8,
            Some(stops) => stops.last_before(col.min(self.w)).unwrap_or(0),
        }
    }

    /// CHA/HPA: to column `n` (1-based; 0 means 1), within the row.
    pub(super) fn set_col(&mut self, n: u16) {
        self.col = (usize::from(n.max(1)) - 1).min(self.w - 1);
    }

    pub(super) fn edit_col(&self) -> usize {
        self.col.min(self.w - 1)
    }

    /// EL: from the cursor (0), to it (1) or the whole row (2). A row erased to its end is no
    /// longer soft-wrapped (xterm's `ClearRight`), nor is one erased whole.
    pub(super) fn erase_line(&mut self, mode: u16) {
        if mode > 2 {
            return;
        }
        let x = self.edit_col();
        self.col = x;
        let (row, w) = (self.row, self.w);
        let line = &mut self.grid()[row];
        match mode {
            0 => {
                split(&mut line.cells, x);
                line.cells.truncate(x);
                line.wrapped = false;
            }
            1 if x + 1 < w => {
                split(&mut line.cells, x + 1);
                let end = (x + 1).min(line.cells.len());
                line.cells[..end].fill(BLANK);
            }
            _ => line.clear(),
        }
    }

    pub(super) fn erase_display(&mut self, mode: u16) {
        let (row, rows) = (self.row, self.rows);
        match mode {
            0 => {
                self.erase_line(0);
                for line in self.grid().range_mut(row + 1..rows) {
                    line.clear();
                }
            }
            1 => {
                for line in self.grid().range_mut(..row) {
                    line.clear();
                }
                self.erase_line(1);
            }
            2 => {
                self.reset_wrap();
                for line in self.grid().iter_mut() {
                    line.clear();
                }
            }
            3 => {
                self.sb.clear();
                self.sb_cost = 0;
            }
            _ => {}
        }
    }

    pub(super) fn insert_chars(&mut self, n: usize) {
        let w = self.w;
        let x = self.edit_col();
        self.col = x;
        let n = n.min(w - x);
        let row = self.row;
        let cells = &mut self.grid()[row].cells;
        if x >= cells.len() {
            return;
        }
        split(cells, x);
        split(cells, w - n);
        cells.splice(x..x, std::iter::repeat_n(BLANK, n));
        cells.truncate(w);
        // Blanks at the end of a row show as nothing (every view trims them), but stored they
        // count against `max_bytes`: pushing a short transcript row's text out past the
        // 8,192-column limit would otherwise keep 8,192 blank cells.
        let kept = cells.iter().rposition(|&c| c != BLANK).map_or(0, |p| p + 1);
        cells.truncate(kept);
    }

    /// DCH; as in xterm, the row is no longer soft-wrapped.
    pub(super) fn delete_chars(&mut self, n: usize) {
        let x = self.edit_col();
        self.col = x;
        let n = n.min(self.w - x);
        let row = self.row;
        let line = &mut self.grid()[row];
        line.wrapped = false;
        let cells = &mut line.cells;
        if x >= cells.len() {
            return;
        }
        split(cells, x);
        split(cells, x + n);
        let end = (x + n).min(cells.len());
        cells.drain(x..end);
    }

    /// ECH; as in xterm (`ClearRight`), the row is no longer soft-wrapped.
    pub(super) fn erase_chars(&mut self, n: usize) {
        let x = self.edit_col();
        self.col = x;
        let end = (x + n).min(self.w);
        let row = self.row;
        let line = &mut self.grid()[row];
        line.wrapped = false;
        let cells = &mut line.cells;
        if x >= cells.len() {
            return;
        }
        split(cells, x);
        split(cells, end);
        let end = end.min(cells.len());
        cells[x..end].fill(BLANK);
    }
}

/// Tab stops as a two-level bitset: a bit per column, and a bit per 64 columns saying whether
/// any of them is a stop. Setting a stop is O(1), and finding the next or previous one reads a
/// few words whatever the width and however few stops are left (none, after TBC), where a
/// scan of a flag per column would cost the whole row on every tab.
#[derive(Clone, Debug)]
pub(super) struct TabStops {
    words: Vec<u64>,
    summary: Vec<u64>,
}

impl TabStops {
    /// No stop in a row of `w` columns (TBC 3).
    pub(super) fn empty(w: usize) -> Self {
        let words = w.div_ceil(64);
        Self {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
        }
    }

    /// A stop every 8 columns, as a terminal starts.
    pub(super) fn every_8(w: usize) -> Self {
        let mut stops = Self::empty(w);
        for col in (8..w).step_by(8) {
            stops.set(col, true);
        }
        stops
    }

    /// Sets (HTS) or clears (TBC 0) the stop at `col`, which is within the row.
    pub(super) fn set(&mut self, col: usize, on: bool) {
        let (i, bit) = (col / 64, 1u64 << (col % 64));
        if on {
            self.words[i] |= bit;
        } else {
            self.words[i] &= !bit;
        }
        let (j, any) = (i / 64, 1u64 << (i % 64));
        if self.words[i] == 0 {
            self.summary[j] &= !any;
        } else {
            self.summary[j] |= any;
        }
    }

    /// The first stop at `col` or right of it.
    pub(super) fn first_from(&self, col: usize) -> Option<usize> {
        let i = col / 64;
        let bits = self.words.get(i)? & (u64::MAX << (col % 64));
        if bits != 0 {
            return Some(i * 64 + bits.trailing_zeros() as usize);
        }
        // The next word holding a stop, found through the summary.
        let next = i + 1;
        let mut j = next / 64;
        let mut any = self.summary.get(j)? & (u64::MAX << (next % 64));
        loop {
            if any != 0 {
                let word = j * 64 + any.trailing_zeros() as usize;
                return Some(word * 64 + self.words[word].trailing_zeros() as usize);
            }
            j += 1;
            any = *self.summary.get(j)?;
        }
    }

    /// The last stop left of `col` (which is at most the width).
    pub(super) fn last_before(&self, col: usize) -> Option<usize> {
        let last = col.checked_sub(1)?;
        let i = last / 64;
        let bits = self.words.get(i)? & (u64::MAX >> (63 - last % 64));
        if bits != 0 {
            return Some(i * 64 + 63 - bits.leading_zeros() as usize);
        }
        let previous = i.checked_sub(1)?;
        let mut j = previous / 64;
        let mut any = self.summary[j] & (u64::MAX >> (63 - previous % 64));
        loop {
            if any != 0 {
                let word = j * 64 + 63 - any.leading_zeros() as usize;
                return Some(word * 64 + 63 - self.words[word].leading_zeros() as usize);
            }
            j = j.checked_sub(1)?;
            any = self.summary[j];
        }
    }
}

#[cfg(test)]
mod tab_stop_tests {
    use super::TabStops;

    /// What a flag per column says: the reference the bitset must agree with.
    fn naive(flags: &[bool], col: usize, forward: bool) -> Option<usize> {
        if forward {
            (col..flags.len()).find(|&c| flags[c])
        } else {
            (0..col.min(flags.len())).rev().find(|&c| flags[c])
        }
    }

    #[test]
    fn the_bitset_finds_the_stops_a_flag_per_column_finds() {
        for w in [1, 7, 63, 64, 65, 200, 4095, 4096, 4097, 8192, 65_535] {
            let mut flags = vec![false; w];
            let mut stops = TabStops::empty(w);
            let mut seed = w as u64 | 1;
            for step in 0..400 {
                // A few stops set and cleared at spread-out columns, then every query checked
                // at columns near word and summary boundaries.
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let col = usize::try_from(seed >> 33).unwrap() % w;
                let on = step % 3 != 0;
                flags[col] = on;
                stops.set(col, on);
                for probe in [0, 1, 63, 64, 65, 4095, 4096, 4097, col, col + 1, w - 1, w] {
                    let probe = probe.min(w);
                    assert_eq!(stops.first_from(probe), naive(&flags, probe, true), "w={w}");
                    assert_eq!(
                        stops.last_before(probe),
                        naive(&flags, probe, false),
                        "w={w}"
                    );
                }
            }
            let every = TabStops::every_8(w);
            assert_eq!(every.first_from(1), if w > 8 { Some(8) } else { None });
            assert_eq!(every.last_before(w), (8..w).step_by(8).next_back());
        }
    }
}
