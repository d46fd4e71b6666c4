//! A grid cell (a character or cluster id and a style id in one word), and writing runs of
//! characters into rows of cells.

use super::line::LINE_CAPACITY;

/// Cell text: a char, the right half of a wide character, or an interned cluster.
pub(super) const CONT: u32 = u32::MAX;

pub(super) const CLUSTER_BIT: u32 = 1 << 31;

/// A cell: its text (low half) and style id (high half) in one word, so that writing a run
/// of characters is a loop the compiler vectorizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Cell(pub(crate) u64);

impl Cell {
    #[inline]
    pub(crate) const fn new(ch: u32, style: u32) -> Cell {
        Cell((style as u64) << 32 | ch as u64)
    }
    #[inline]
    pub(super) fn ch(self) -> u32 {
        #[allow(clippy::cast_possible_truncation, reason = "the low half is the text")]
        let ch = self.0 as u32;
        ch
    }
    #[inline]
    pub(super) fn style(self) -> u32 {
        u32::try_from(self.0 >> 32).unwrap_or(0)
    }
    #[inline]
    pub(super) fn set_ch(&mut self, ch: u32) {
        self.0 = self.0 & !u64::from(u32::MAX) | u64::from(ch);
    }
}

pub(super) const BLANK: Cell = Cell::new(b' ' as u32, 0);

/// Characters a run of cells is written from: bytes (ASCII) or code points.
pub(crate) trait CellChars: Copy + Into<u32> {
    /// Writes `src.len()` cells at `dst`, each a character of `src` in style `style`.
    ///
    /// # Safety
    /// `dst` must be valid for writing `src.len()` cells.
    unsafe fn store(dst: *mut Cell, src: &[Self], style: u32) {
        for (k, &ch) in src.iter().enumerate() {
            // SAFETY: k < src.len(), which the caller guarantees `dst` has room for.
            unsafe { dst.add(k).write(Cell::new(ch.into(), style)) };
        }
    }
}

/// Sets `dst` to the characters of `src` (at least as long) in style `style`.
#[inline]
pub(super) fn fill<T: CellChars>(dst: &mut [Cell], src: &[T], style: u32) {
    let src = &src[..dst.len()];
    // SAFETY: `dst` holds exactly `src.len()` cells.
    unsafe { T::store(dst.as_mut_ptr(), src, style) };
}

/// Appends the characters of `src` in style `style`.
#[inline]
pub(super) fn extend<T: CellChars>(cells: &mut Vec<Cell>, src: &[T], style: u32) {
    let len = cells.len();
    if cells.capacity() - len < src.len() {
        // A line is written a run at a time: room for a typical line at once saves the
        // reallocations of growing it run by run.
        cells.reserve(src.len().max(LINE_CAPACITY.saturating_sub(len)));
    }
    // SAFETY: the reserve leaves room for `src.len()` cells past `len`, all of which `store`
    // initializes before the length covers them.
    unsafe {
        T::store(cells.as_mut_ptr().add(len), src, style);
        cells.set_len(len + src.len());
    }
}

/// Cutting between the halves of a wide character blanks both halves.
#[inline]
pub(super) fn split(cells: &mut [Cell], x: usize) {
    if x > 0 && x < cells.len() && cells[x].ch() == CONT {
        cells[x - 1] = BLANK;
        cells[x] = BLANK;
    }
}
