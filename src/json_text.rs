//! Scanning JSON string bodies: the run of bytes a string holds as they are, up to the first
//! quote, backslash or control character (the session scanner), and the word-at-a-time test
//! for those bytes (also what `dumps` escapes). `loads` keeps its own loop, which also steps
//! over escapes: built on [`plain_run`] it costs 5% more instructions per message.

const ONES: u64 = u64::from_le_bytes([1; 8]);
const HIGH: u64 = u64::from_le_bytes([0x80; 8]);

/// The high bit of each byte of `word` (little-endian) that a JSON string cannot hold as it
/// is: `"`, `\\` or a control character below 0x20. `(x - 1) & !x` sets the high bit of each
/// zero byte of `x`, and `(v - 0x20) & !v` that of each byte below 0x20; a borrow can also
/// flag a byte above a real hit, never below one, so the lowest flag (and a zero result) is
/// exact.
#[inline]
pub(crate) fn special_bytes(v: u64) -> u64 {
    let quote = v ^ (ONES * u64::from(b'"'));
    let backslash = v ^ (ONES * u64::from(b'\\'));
    ((quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash)
        | (v.wrapping_sub(ONES * 0x20) & !v))
        & HIGH
}

/// The run at the start of a string's bytes that it holds as they are: up to the first `"`,
/// `\` or control character (below 0x20), or all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run<'a> {
    pub bytes: &'a [u8],
    /// No byte of the run is above 0x7f.
    pub ascii: bool,
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::cast_ptr_alignment)] // `_mm_loadu_si128` reads through unaligned pointers
pub(crate) fn plain_run(bytes: &[u8]) -> Run<'_> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128, _mm_subs_epu8,
    };
    let mut i = 0;
    let mut high = 0;
    while i + 16 <= bytes.len() {
        // SAFETY: SSE2 is part of the x86_64 baseline, so the intrinsics need no runtime check;
        // `i + 16 <= bytes.len()`, so the 16 bytes loaded are inside `bytes`, and
        // `_mm_loadu_si128` has no alignment requirement.
        let (special, block_high) = unsafe {
            let block = _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>());
            let quote = _mm_cmpeq_epi8(block, _mm_set1_epi8(b'"'.cast_signed()));
            let backslash = _mm_cmpeq_epi8(block, _mm_set1_epi8(b'\\'.cast_signed()));
            // Saturating `byte - 0x1f` is zero exactly for the control characters.
            let below = _mm_subs_epu8(block, _mm_set1_epi8(0x1f));
            let control = _mm_cmpeq_epi8(below, _mm_setzero_si128());
            let special = _mm_or_si128(_mm_or_si128(quote, backslash), control);
            (_mm_movemask_epi8(special), _mm_movemask_epi8(block))
        };
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

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn plain_run(bytes: &[u8]) -> Run<'_> {
    plain_run_words(bytes)
}

/// [`plain_run`] eight bytes at a time in a `u64` (portable; on `x86_64` it scans the tail).
pub(crate) fn plain_run_words(bytes: &[u8]) -> Run<'_> {
    let mut words = bytes.chunks_exact(8);
    let mut i = 0;
    let mut high = 0;
    for word in &mut words {
        let v = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let flags = special_bytes(v);
        if flags != 0 {
            // The bits below the lowest flag: all of the bytes before it.
            high |= v & HIGH & ((flags & flags.wrapping_neg()) - 1);
            return Run {
                bytes: &bytes[..i + (flags.trailing_zeros() / 8) as usize],
                ascii: high == 0,
            };
        }
        high |= v & HIGH;
        i += 8;
    }
    let tail = words.remainder();
    let len = tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(tail.len());
    Run {
        bytes: &bytes[..i + len],
        ascii: high == 0 && tail[..len].is_ascii(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_run_stops_at_quotes_backslashes_and_controls() {
        let naive = |bytes: &[u8]| {
            let len = bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(bytes.len());
            (len, bytes[..len].is_ascii())
        };
        // Printable filler, a stop byte at every position, and bytes above 0x7f before, at and
        // after the stop, across the 16-byte blocks and the 8-byte words.
        for len in 0..48_u8 {
            for stop in [
                None,
                Some(b'"'),
                Some(b'\\'),
                Some(0),
                Some(0x1f),
                Some(b'\n'),
            ] {
                for at in 0..=len {
                    for high_at in [None, Some(0), Some(at.saturating_sub(1)), Some(len)] {
                        let mut bytes: Vec<u8> = (0..len).map(|i| b'a' + i % 26).collect();
                        if let Some(h) = high_at.filter(|&h| h < len) {
                            bytes[usize::from(h)] = 0x80 | h;
                        }
                        if let Some(stop) = stop.filter(|_| at < len) {
                            bytes[usize::from(at)] = stop;
                        }
                        let want = naive(&bytes);
                        for run in [plain_run(&bytes), plain_run_words(&bytes)] {
                            assert_eq!((run.bytes.len(), run.ascii), want, "{bytes:?}");
                        }
                    }
                }
            }
        }
    }
}
