//! Display widths of characters (from `unicode-width`), cached for the non-ASCII ones.

use unicode_width::UnicodeWidthChar;

use super::Terminal;
use super::style::id32;

pub(super) const WIDTH_CACHE: usize = 256;

pub(super) fn char_width(c: char) -> usize {
    c.width().unwrap_or(0).min(2)
}

/// Cells taken by a printable character: 0 (joins the previous cell), 1 or 2.
pub fn width(c: char) -> usize {
    char_width(c)
}

impl Terminal {
    /// Width of a non-ASCII printable code point: 0 to join the previous cell, 1, 2, or 3 for
    /// a C1 code point, which is dropped.
    #[inline]
    pub(super) fn width_of(&mut self, o: u32) -> usize {
        if o < 0xAD {
            return if o < 0xA0 { 3 } else { 1 };
        }
        let slot = o as usize % WIDTH_CACHE;
        if let Some(cache) = &self.width_cache {
            let e = cache[slot];
            if e >> 2 == o {
                return (e & 3) as usize;
            }
        }
        let w = char::from_u32(o).map_or(1, char_width);
        let cache = self
            .width_cache
            .get_or_insert_with(|| Box::new([0; WIDTH_CACHE]));
        cache[slot] = o << 2 | id32(w);
        w
    }
}
