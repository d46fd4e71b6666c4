//! SSE2 stores and loads of terminal cells: rows written from runs of characters, and the
//! ASCII cells of a row copied out as bytes for the views.

use crate::terminal::cell::{Cell, CellChars};

/// Writes four cells at `out`: the four 32-bit characters of `chars`, each paired with the
/// style in every lane of `style_lanes` (a cell is its character, then its style).
///
/// # Safety
/// `out` must be valid for writing four cells.
#[cfg(target_arch = "x86_64")]
#[inline]
#[allow(clippy::cast_ptr_alignment, reason = "the stores are unaligned")]
pub(crate) unsafe fn put_cells4(
    out: *mut Cell,
    chars: std::arch::x86_64::__m128i,
    style_lanes: std::arch::x86_64::__m128i,
) {
    use std::arch::x86_64::{__m128i, _mm_storeu_si128, _mm_unpackhi_epi32, _mm_unpacklo_epi32};
    let p = out.cast::<__m128i>();
    // SAFETY: SSE2 is baseline on x86_64; the caller guarantees room for four cells at `out`.
    unsafe {
        _mm_storeu_si128(p, _mm_unpacklo_epi32(chars, style_lanes));
        _mm_storeu_si128(p.add(1), _mm_unpackhi_epi32(chars, style_lanes));
    }
}

// Code points come from a buffer just written, partly a code point at a time; reading it
// four at a time measured no slower for the stores it may have to wait for.
impl CellChars for u32 {
    /// [`CellChars::store`] in SSE2 blocks.
    ///
    /// # Safety
    /// `dst` must be valid for writing `src.len()` cells.
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        reason = "the loads and stores are unaligned"
    )]
    unsafe fn store(dst: *mut Cell, src: &[u32], style: u32) {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_set1_epi32};
        let n = src.len();
        if n < 4 {
            for (k, &ch) in src.iter().enumerate() {
                // SAFETY: k < n, which the caller guarantees `dst` has room for.
                unsafe { dst.add(k).write(Cell::new(ch, style)) };
            }
            return;
        }
        // Eight cells at a time (a loop of blocks of four was half loop overhead), then the
        // rest, the last four overlapping those before them.
        // SAFETY: SSE2 is baseline on x86_64; each block reads `src[at..at + 4]` and writes
        // the cells of the same positions, within the `n` cells `dst` has room for.
        unsafe {
            let style_lanes = _mm_set1_epi32(style.cast_signed());
            let block = |at: usize| {
                let chars = _mm_loadu_si128(src.as_ptr().add(at).cast());
                put_cells4(dst.add(at), chars, style_lanes);
            };
            let mut at = 0;
            while at + 8 <= n {
                block(at);
                block(at + 4);
                at += 8;
            }
            if at + 4 < n {
                block(at);
            }
            if at < n {
                block(n - 4);
            }
        }
    }
}

impl CellChars for u8 {
    /// [`CellChars::store`] in SSE2 blocks.
    ///
    /// # Safety
    /// `dst` must be valid for writing `src.len()` cells.
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        reason = "the loads and stores are unaligned"
    )]
    unsafe fn store(dst: *mut Cell, src: &[u8], style: u32) {
        use std::arch::x86_64::{
            __m128i, _mm_cvtsi32_si128, _mm_loadl_epi64, _mm_loadu_si128, _mm_set1_epi32,
            _mm_setzero_si128, _mm_unpackhi_epi16, _mm_unpackhi_epi64, _mm_unpacklo_epi8,
            _mm_unpacklo_epi16,
        };
        /// Writes the cells of the eight characters in the low half of `v` at `out`.
        ///
        /// # Safety
        /// `out` must be valid for writing eight cells.
        #[inline]
        unsafe fn put8(out: *mut Cell, v: __m128i, style_lanes: __m128i) {
            // SAFETY: SSE2 is baseline on x86_64; the caller guarantees room for eight cells
            // at `out`.
            unsafe {
                let zero = _mm_setzero_si128();
                let lo16 = _mm_unpacklo_epi8(v, zero);
                put_cells4(out, _mm_unpacklo_epi16(lo16, zero), style_lanes);
                put_cells4(out.add(4), _mm_unpackhi_epi16(lo16, zero), style_lanes);
            }
        }
        /// Writes the cells of the sixteen characters at `src` at `out`.
        ///
        /// # Safety
        /// `src` must be valid for reading sixteen bytes, and `out` for writing sixteen cells.
        #[inline]
        unsafe fn put16(out: *mut Cell, src: *const u8, style_lanes: __m128i) {
            // SAFETY: the caller guarantees sixteen bytes at `src` and room for sixteen
            // cells at `out`.
            unsafe {
                let v = _mm_loadu_si128(src.cast());
                put8(out, v, style_lanes);
                put8(out.add(8), _mm_unpackhi_epi64(v, v), style_lanes);
            }
        }
        let n = src.len();
        let s = src.as_ptr();
        // Runs are short (a word, a path, a number), so a run's tail is written as whole
        // blocks too: the last block overlaps the one before it and writes some cells twice,
        // with the same values. SAFETY (every block below): SSE2 is baseline on x86_64; each
        // block reads bytes within `src` and writes the cells of the same positions, within
        // the `n` cells `dst` has room for.
        unsafe {
            let style_lanes = _mm_set1_epi32(style.cast_signed());
            if n >= 16 {
                let mut i = 0;
                while i + 16 <= n {
                    put16(dst.add(i), s.add(i), style_lanes);
                    i += 16;
                }
                if i < n {
                    put16(dst.add(n - 16), s.add(n - 16), style_lanes);
                }
            } else if n >= 8 {
                put8(dst, _mm_loadl_epi64(s.cast()), style_lanes);
                put8(
                    dst.add(n - 8),
                    _mm_loadl_epi64(s.add(n - 8).cast()),
                    style_lanes,
                );
            } else if n >= 4 {
                let zero = _mm_setzero_si128();
                for at in [0, n - 4] {
                    let v = _mm_cvtsi32_si128(s.add(at).cast::<i32>().read_unaligned());
                    let chars = _mm_unpacklo_epi16(_mm_unpacklo_epi8(v, zero), zero);
                    put_cells4(dst.add(at), chars, style_lanes);
                }
            } else {
                for (k, &ch) in src.iter().enumerate() {
                    dst.add(k).write(Cell::new(u32::from(ch), style));
                }
            }
        }
    }
}

/// The eight cells at `cells[at..]`, as four loads, and their characters (the cells' low
/// halves) packed to eight words with signed saturation.
///
/// # Safety
/// `at + 8 <= cells.len()`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[allow(clippy::cast_ptr_alignment, reason = "unaligned loads")]
pub(crate) unsafe fn load_cells8(
    cells: &[Cell],
    at: usize,
) -> ([std::arch::x86_64::__m128i; 4], std::arch::x86_64::__m128i) {
    use std::arch::x86_64::{
        __m128i, _mm_castps_si128, _mm_castsi128_ps, _mm_loadu_si128, _mm_packs_epi32,
        _mm_shuffle_ps,
    };
    // SAFETY: SSE2 is baseline on x86_64; the loads read `cells[at..at + 8]`, in bounds by
    // the caller's word (a `Cell` is 8 bytes: two per load).
    unsafe {
        // The low halves of the two cells of `a` then of `b`.
        let low_halves = |a: __m128i, b: __m128i| {
            let (a, b) = (_mm_castsi128_ps(a), _mm_castsi128_ps(b));
            _mm_castps_si128(_mm_shuffle_ps::<0b10_00_10_00>(a, b))
        };
        let p = cells.as_ptr().add(at).cast::<__m128i>();
        let q = [0, 1, 2, 3].map(|k| _mm_loadu_si128(p.add(k)));
        (
            q,
            _mm_packs_epi32(low_halves(q[0], q[1]), low_halves(q[2], q[3])),
        )
    }
}

/// The block loop of the SIMD copies of ASCII cells: `block(at)` gives, for the eight cells at
/// `at`, a mask with `BITS` bits set per cell to take (cell k's at bit `k * BITS`) and their
/// eight bytes. Appends the bytes of the leading cells taken to `out`; returns how many.
///
/// Each block stores its eight bytes unchecked and keeps those of its leading cells taken, so a
/// run's end costs no cell-by-cell tail. The last cells, fewer than eight, are the tail of a
/// block that ends with the slice: its first cells, already taken, store the same bytes again.
///
/// # Safety
/// `len >= 8`, and `block(at)` must be sound to call for every `at` with `at + 8 <= len`.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) unsafe fn take_blocks<const BITS: u32>(
    len: usize,
    out: &mut Vec<u8>,
    block: impl Fn(usize) -> (u32, i64),
) -> usize {
    let all = (1_u32 << (8 * BITS)) - 1;
    // Room for every cell up front. With `start` the length `out` had, `end - start` is `n`
    // (every cell taken so far is a byte): a block at `n` stores `out[end..end + 8]`, the
    // tail block (`back = 8 - (len - n)`, at most `n`) `out[end - back..end - back + 8]`,
    // both ending by `start + len`, within the reserve; the length then covers only bytes
    // written.
    out.reserve(len);
    let mut end = out.len();
    let mut n = 0;
    let dst = out.as_mut_ptr();
    while n + 8 <= len {
        let (ok, bytes) = block(n);
        // SAFETY: within the reserve, as above.
        unsafe { dst.add(end).cast::<i64>().write_unaligned(bytes) };
        if ok != all {
            let lead = ((!ok).trailing_zeros() / BITS) as usize;
            // SAFETY: `lead` of the bytes just stored are kept.
            unsafe { out.set_len(end + lead) };
            return n + lead;
        }
        end += 8;
        n += 8;
    }
    let back = 8 - (len - n);
    if back < 8 {
        let (ok, bytes) = block(len - 8);
        // SAFETY: within the reserve, as above.
        unsafe { dst.add(end - back).cast::<i64>().write_unaligned(bytes) };
        // The cells past `n`; the bits above theirs are clear, so at most all lead.
        #[allow(clippy::cast_possible_truncation, reason = "back < 8")]
        let lead = ((!(ok >> (BITS * back as u32))).trailing_zeros() / BITS) as usize;
        end += lead;
        n += lead;
    }
    // SAFETY: every byte up to `end` was stored.
    unsafe { out.set_len(end) };
    n
}

/// Appends the leading ASCII cells of `cells` to `out` as bytes, eight at a time; returns how
/// many. A cell is taken while its bits under `mask` equal `want` (`mask` covers the character
/// bits above 0x7F, and the style's bits to keep to one style).
pub(crate) fn copy_ascii_where(cells: &[Cell], mask: u64, want: u64, out: &mut Vec<u8>) -> usize {
    let mut n = 0;
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss,
        reason = "unaligned loads; the bits are compared, not the values"
    )]
    if cells.len() >= 8 {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_cmpeq_epi32, _mm_cvtsi128_si64, _mm_movemask_epi8,
            _mm_packs_epi16, _mm_packs_epi32, _mm_packus_epi16, _mm_set1_epi64x,
        };
        // Eight cells (four loads) at a time: the cells' characters, the low bytes of their
        // low halves, are packed into eight bytes, and a mask of which cells match says how
        // many of them lead.
        // SAFETY: SSE2 is baseline on x86_64; `block(at)` loads `cells[at..at + 8]`, which
        // `take_blocks` asks for only with `at + 8 <= cells.len()`.
        unsafe {
            let (mask, want) = (_mm_set1_epi64x(mask as i64), _mm_set1_epi64x(want as i64));
            let matches = |v: __m128i| _mm_cmpeq_epi32(_mm_and_si128(v, mask), want);
            // Two bits per matching cell (cell k: bits 2k and 2k + 1), and the eight bytes.
            let block = |at: usize| {
                let (q, words) = load_cells8(cells, at);
                let ok = _mm_packs_epi16(
                    _mm_packs_epi32(matches(q[0]), matches(q[1])),
                    _mm_packs_epi32(matches(q[2]), matches(q[3])),
                );
                // Characters below 0x80 pack unchanged; the others are not kept.
                let bytes = _mm_cvtsi128_si64(_mm_packus_epi16(words, words));
                (_mm_movemask_epi8(ok) as u32, bytes)
            };
            return take_blocks::<2>(cells.len(), out, block);
        }
    }
    for chunk in cells[n..].chunks_exact(8) {
        let (mut bytes, mut other) = (0u64, 0u64);
        for (k, cell) in chunk.iter().enumerate() {
            other |= (cell.0 & mask) ^ want;
            bytes |= (cell.0 & 0x7F) << (8 * k);
        }
        if other != 0 {
            break;
        }
        out.extend_from_slice(&bytes.to_le_bytes());
        n += 8;
    }
    for cell in &cells[n..] {
        if cell.0 & mask != want {
            break;
        }
        #[allow(clippy::cast_possible_truncation, reason = "below 0x80")]
        out.push(cell.0 as u8);
        n += 1;
    }
    n
}

/// The leading ASCII cells, whatever their style, but for a cell of character 0, where it
/// stops as at any other (the caller takes that one itself).
///
/// Eight cells at a time, as [`copy_ascii_where`] but without its compare of each cell: the
/// packing of the characters to bytes says which were ASCII. Signed saturation takes a
/// character above 0x7FFF to 0x7FFF, and one with its top bit set (a wide character's second
/// cell, a cluster) to a negative word; unsigned saturation then takes words above 0xFF to
/// 0xFF and negative ones to 0. So a cell packs to a byte of 1 to 0x7F exactly when its
/// character is one: any other byte has its top bit set or is 0.
pub(crate) fn copy_ascii(cells: &[Cell], out: &mut Vec<u8>) -> usize {
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        clippy::cast_sign_loss,
        reason = "unaligned loads; the mask is read as bits"
    )]
    if cells.len() >= 8 {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16,
            _mm_setzero_si128,
        };
        // SAFETY: as in `copy_ascii_where`: SSE2 is baseline on x86_64; `block(at)` loads
        // `cells[at..at + 8]`, which `take_blocks` asks for only with `at + 8 <= cells.len()`.
        unsafe {
            // A bit per ASCII cell (cell k: bit k), and the eight bytes.
            let block = |at: usize| {
                let (_, words) = load_cells8(cells, at);
                let bytes = _mm_packus_epi16(words, words);
                let stops = _mm_or_si128(bytes, _mm_cmpeq_epi8(bytes, _mm_setzero_si128()));
                (
                    !(_mm_movemask_epi8(stops) as u32) & 0xFF,
                    _mm_cvtsi128_si64(bytes),
                )
            };
            return take_blocks::<1>(cells.len(), out, block);
        }
    }
    let start = out.len();
    let n = copy_ascii_where(cells, 0xFFFF_FF80, 0, out);
    let n = out[start..].iter().position(|&b| b == 0).unwrap_or(n);
    out.truncate(start + n);
    n
}
