//! The SSE2 and AVX2 loops of JSON text: scanning string bodies (the session scanner and
//! `loads`) and escaping them (`dumps`). Each step does what its portable caller describes;
//! `x86_64` only, where SSE2 is part of the baseline.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8,
};

use crate::json_text::{Run, plain_run_words};

/// [`crate::json_text::plain_run`] sixteen bytes at a time; the tail word by word.
pub(crate) fn plain_run(bytes: &[u8]) -> Run<'_> {
    let mut i = 0;
    let mut high = 0;
    while i + 16 <= bytes.len() {
        // SAFETY: `i + 16 <= bytes.len()`, so the 16 bytes read are inside `bytes`.
        let (special, block_high) = unsafe { string_stops(bytes.as_ptr().add(i)) };
        if special != 0 {
            let len = special.trailing_zeros() as usize;
            high |= block_high & ((1 << len) - 1);
            return Run {
                bytes: &bytes[..i + len],
                ascii: high == 0,
            };
        }
        high |= block_high;
        i += 16;
    }
    let tail = plain_run_words(&bytes[i..]);
    Run {
        bytes: &bytes[..i + tail.bytes.len()],
        ascii: high == 0 && tail.ascii,
    }
}

/// [`crate::json_text::stops64_words`] sixteen bytes at a time: exact, no false flags.
pub(crate) fn stops64(bytes: &[u8]) -> (u64, u64) {
    let mut padded = [b' '; 64];
    let block = if let Some(block) = bytes.get(..64) {
        block
    } else {
        padded[..bytes.len()].copy_from_slice(bytes);
        &padded[..]
    };
    let (mut stops, mut high) = (0, 0);
    for lane in 0..4 {
        // SAFETY: `block` holds 64 bytes, so the 16 read are inside it.
        let (lane_stops, lane_high) = unsafe { string_stops(block.as_ptr().add(16 * lane)) };
        // Sixteen bits each: the masks are of sixteen lanes.
        stops |= u64::from(lane_stops.cast_unsigned()) << (16 * lane);
        high |= u64::from(lane_high.cast_unsigned()) << (16 * lane);
    }
    (stops, high)
}

/// The 16 bytes at `src` as two bit masks: the bytes that stop a string body's plain run (`"`,
/// `\`, a control character) and the bytes with their top bit set.
///
/// # Safety
/// 16 bytes must be readable at `src` (no alignment needed).
#[inline]
#[allow(clippy::cast_ptr_alignment)] // `_mm_loadu_si128` reads through unaligned pointers
pub(crate) unsafe fn string_stops(src: *const u8) -> (i32, i32) {
    // SAFETY: the caller's; SSE2 is baseline on x86_64.
    unsafe {
        let quote = _mm_set1_epi8(b'"'.cast_signed());
        let backslash = _mm_set1_epi8(b'\\'.cast_signed());
        let below_space = _mm_set1_epi8(0x1f);
        let chunk = _mm_loadu_si128(src.cast::<__m128i>());
        let stop = _mm_or_si128(
            _mm_or_si128(
                _mm_cmpeq_epi8(chunk, quote),
                _mm_cmpeq_epi8(chunk, backslash),
            ),
            _mm_cmpeq_epi8(_mm_max_epu8(chunk, below_space), below_space),
        );
        (_mm_movemask_epi8(stop), _mm_movemask_epi8(chunk))
    }
}

/// Copy the 16 bytes at `src` to `dst` as they are; return the bit mask of those JSON must
/// escape in a string (`"`, `\`, a control character). The caller overwrites the bytes stored
/// from the first escaped one on.
///
/// # Safety
/// 16 bytes must be readable at `src` and writable at `dst` (no alignment needed).
#[cfg(feature = "python")]
#[inline]
#[allow(clippy::cast_ptr_alignment)] // unaligned loads and stores
pub(crate) unsafe fn copy_escapes16(src: *const u8, dst: *mut u8) -> i32 {
    // SAFETY: the caller's; SSE2 is baseline on x86_64.
    unsafe {
        let quote = _mm_set1_epi8(b'"'.cast_signed());
        let backslash = _mm_set1_epi8(b'\\'.cast_signed());
        let below_space = _mm_set1_epi8(0x1f);
        let chunk = _mm_loadu_si128(src.cast::<__m128i>());
        std::arch::x86_64::_mm_storeu_si128(dst.cast::<__m128i>(), chunk);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, below_space), below_space);
        let special = _mm_or_si128(
            _mm_cmpeq_epi8(chunk, quote),
            _mm_cmpeq_epi8(chunk, backslash),
        );
        _mm_movemask_epi8(_mm_or_si128(control, special))
    }
}

/// The 32-byte blocks of `text` escaped at `dst`, as `dumps` writes a string body; returns the
/// bytes read (a multiple of 32 less than 32 from the end, or past an escape) and written.
///
/// # Safety
/// The CPU must support AVX2, and `dst` must have room for `text.len() * 6 + 16` bytes.
#[cfg(feature = "python")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn escape_avx2(text: &[u8], dst: *mut u8) -> (usize, usize) {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_storeu_si256,
    };

    use crate::json_text::put_byte;
    let n = text.len();
    let mut i = 0;
    let mut out = dst;
    // SAFETY: loads stay inside `text`; each store lands within the room (six bytes per input
    // byte left, plus slack), and the bytes past a clean prefix are overwritten. Loads and
    // stores are unaligned, so the casts need no alignment.
    #[allow(clippy::cast_ptr_alignment)]
    unsafe {
        let quote = _mm256_set1_epi8(b'"'.cast_signed());
        let backslash = _mm256_set1_epi8(b'\\'.cast_signed());
        let below_space = _mm256_set1_epi8(0x1f);
        while i + 32 <= n {
            let chunk = _mm256_loadu_si256(text.as_ptr().add(i).cast::<__m256i>());
            _mm256_storeu_si256(out.cast::<__m256i>(), chunk);
            let control = _mm256_cmpeq_epi8(_mm256_max_epu8(chunk, below_space), below_space);
            let special = _mm256_or_si256(
                _mm256_cmpeq_epi8(chunk, quote),
                _mm256_cmpeq_epi8(chunk, backslash),
            );
            let mask = _mm256_movemask_epi8(_mm256_or_si256(control, special));
            if mask == 0 {
                i += 32;
                out = out.add(32);
                continue;
            }
            let clean = mask.trailing_zeros() as usize;
            out = put_byte(out.add(clean), text[i + clean]);
            i += clean + 1;
        }
        (i, usize::try_from(out.offset_from(dst)).unwrap_or(0))
    }
}

/// The lanes of `chunk` holding a byte JSON escapes in a string (a control, `"`, `\`) or one
/// with its top bit set, as a bit mask.
///
/// # Safety
/// SSE2 only, which `x86_64` always has.
#[cfg(feature = "python")]
#[inline]
pub(crate) unsafe fn escape_or_high_mask(chunk: __m128i) -> i32 {
    // SAFETY: SSE2 is baseline on x86_64.
    unsafe {
        let below_space = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, below_space), below_space);
        let special = _mm_or_si128(
            _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'"'.cast_signed())),
            _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'\\'.cast_signed())),
        );
        _mm_movemask_epi8(_mm_or_si128(control, special)) | _mm_movemask_epi8(chunk)
    }
}

/// The 16 bytes at `src`.
///
/// # Safety
/// 16 bytes must be readable at `src` (no alignment needed).
#[cfg(feature = "python")]
#[inline]
#[allow(clippy::cast_ptr_alignment)] // an unaligned load
pub(crate) unsafe fn load16(src: *const u8) -> __m128i {
    // SAFETY: the caller's.
    unsafe { _mm_loadu_si128(src.cast()) }
}

/// The 8 UCS-2 units at `src` narrowed to bytes in the low lanes by `packus`, which reads the
/// units as signed and saturates to unsigned bytes: 0x80-0xFF stay (top bit set), 0x100-0x7FFF
/// become 0xFF and 0x8000-0xFFFF (negative) become 0, a control. (`packs`, signed saturation,
/// would turn 0x80-0xFF into 0x7F and copy them as DEL.)
///
/// # Safety
/// 8 units must be readable at `src` (no alignment needed).
#[cfg(feature = "python")]
#[inline]
#[allow(clippy::cast_ptr_alignment)] // an unaligned load
pub(crate) unsafe fn narrow_ucs2(src: *const u16) -> __m128i {
    use std::arch::x86_64::_mm_packus_epi16;
    // SAFETY: the caller's.
    unsafe {
        let wide = _mm_loadu_si128(src.cast());
        _mm_packus_epi16(wide, wide)
    }
}

/// Store the 16 bytes of `bytes` at `dst`.
///
/// # Safety
/// 16 bytes must be writable at `dst` (no alignment needed).
#[cfg(feature = "python")]
#[inline]
#[allow(clippy::cast_ptr_alignment)] // an unaligned store
pub(crate) unsafe fn store16(dst: *mut u8, bytes: __m128i) {
    // SAFETY: the caller's.
    unsafe { std::arch::x86_64::_mm_storeu_si128(dst.cast(), bytes) }
}

/// Store the low 8 bytes of `bytes` at `dst`.
///
/// # Safety
/// 8 bytes must be writable at `dst` (no alignment needed).
#[cfg(feature = "python")]
#[inline]
#[allow(clippy::cast_ptr_alignment)] // an unaligned store
pub(crate) unsafe fn store8(dst: *mut u8, bytes: __m128i) {
    // SAFETY: the caller's.
    unsafe { std::arch::x86_64::_mm_storel_epi64(dst.cast(), bytes) }
}
