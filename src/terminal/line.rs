//! A row of cells and how much of its buffer it keeps.

use super::cell::Cell;

/// Cells a line's buffer gets when it first grows.
pub(super) const LINE_CAPACITY: usize = 128;

/// What a line kept in scrollback costs of `max_bytes` besides its cells: its buffer's first
/// allocation, which a short line keeps whole. With at most twice a line's cells in its buffer
/// (see `scroll_up`), the scrollback's memory stays within 16 bytes per unit of `max_bytes`.
pub(super) const LINE_COST: usize = LINE_CAPACITY;

/// The room a row's buffer may keep beyond four times its cells (see `release_slack`).
pub(super) const SLACK_CELLS: usize = 2 * LINE_CAPACITY;

#[derive(Clone, Debug, Default)]
pub(super) struct Line {
    /// Cells past the end are default blanks.
    pub(super) cells: Vec<Cell>,
    /// Soft-wrapped into the next row.
    pub(super) wrapped: bool,
    /// Wrapped early, before a wide character that did not fit in the last column: that
    /// column is padding, not part of the text the views join.
    pub(super) wide_wrap: bool,
}

impl Line {
    /// Blanks the line, keeping its buffer for what is written next.
    pub(super) fn clear(&mut self) {
        self.cells.clear();
        self.wrapped = false;
    }
}

/// Gives back most of a buffer that holds far fewer cells than it has room for, keeping at
/// most `SLACK_CELLS` cells, or four times its cells, of room.
pub(super) fn release_slack(cells: &mut Vec<Cell>) {
    if cells.capacity() > SLACK_CELLS && cells.capacity() > 4 * cells.len() {
        cells.shrink_to((2 * cells.len()).max(LINE_CAPACITY));
    }
}
