//! Scanning JSON string bodies: the run of bytes a string holds as they are, up to the first
//! quote, backslash or control character (the session scanner), and the word-at-a-time test
//! for those bytes (also what `dumps` escapes), and how `dumps` writes a byte that must be
//! escaped. `loads` keeps its own loop, which also steps over escapes: built on [`plain_run`] it
//! costs 5% more instructions per message. The vector loops are in [`crate::simd::json`].

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

/// The run at the start of `bytes` that a string holds as it is (SSE2 on `x86_64`).
#[cfg(target_arch = "x86_64")]
pub(crate) use crate::simd::json::plain_run;

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

/// Two bit masks of the first 64 bytes of `bytes` (fewer at its end; the bytes past it count
/// as plain): bit `i` of the first is set when byte `i` is `"`, `\` or a control character
/// (and, by the portable scan, for some bytes above such a byte: callers look at the byte);
/// bit `i` of the second is byte `i`'s top bit. (SSE2 on `x86_64`.)
#[cfg(target_arch = "x86_64")]
pub(crate) use crate::simd::json::stops64;

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn stops64(bytes: &[u8]) -> (u64, u64) {
    stops64_words(bytes)
}

/// [`stops64`] eight bytes at a time in a `u64` (portable; on `x86_64`, tested against the
/// vector scan).
#[cfg(any(not(target_arch = "x86_64"), test))]
pub(crate) fn stops64_words(bytes: &[u8]) -> (u64, u64) {
    // Gathers the top bit of each byte into the low byte: bit 8i + 7 lands on bit 56 + i, and
    // no two products meet, so nothing carries.
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let (mut stops, mut high) = (0, 0);
    for (word_index, word) in bytes[..bytes.len().min(64)].chunks(8).enumerate() {
        let mut padded = [b' '; 8];
        padded[..word.len()].copy_from_slice(word);
        let v = u64::from_le_bytes(padded);
        let shift = 8 * word_index;
        stops |= (((special_bytes(v) >> 7).wrapping_mul(GATHER)) >> 56) << shift;
        high |= ((((v & HIGH) >> 7).wrapping_mul(GATHER)) >> 56) << shift;
    }
    (stops, high)
}

/// For each byte, how JSON writes it inside a string when it must be escaped: the escape's
/// bytes in the low bytes of the word and its length in the top byte; 0 for bytes written as
/// they are. One unaligned 8-byte store and one add write any escape without a branch.
#[cfg(feature = "python")]
static ESCAPES: [u64; 256] = escape_table();

#[cfg(feature = "python")]
const fn escape_table() -> [u64; 256] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        #[allow(clippy::cast_possible_truncation, reason = "b < 256")]
        let short = match b as u8 {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x08 => b'b',
            0x0c => b'f',
            _ => 0,
        };
        if short != 0 {
            table[b] = b'\\' as u64 | (short as u64) << 8 | 2 << 56;
        } else if b < 0x20 {
            let seq = [b'\\', b'u', b'0', b'0', HEX[b >> 4], HEX[b & 0xf]];
            let mut word = 6u64 << 56;
            let mut k = 0;
            while k < 6 {
                word |= (seq[k] as u64) << (8 * k);
                k += 1;
            }
            table[b] = word;
        }
        b += 1;
    }
    table
}

/// Write `byte` at `dst`, escaped if JSON requires it; return the end.
///
/// # Safety
/// `dst` must have room for 8 bytes.
#[cfg(feature = "python")]
#[inline]
pub(crate) unsafe fn put_byte(dst: *mut u8, byte: u8) -> *mut u8 {
    let escape = ESCAPES[usize::from(byte)];
    // SAFETY: the caller guarantees room for 8 bytes.
    unsafe {
        if escape == 0 {
            dst.write(byte);
            return dst.add(1);
        }
        dst.cast::<u64>().write_unaligned(escape);
        #[allow(clippy::cast_possible_truncation, reason = "the length is at most 6")]
        dst.add((escape >> 56) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_masks_flag_every_stop_and_every_high_byte() {
        let pieces: &[&[u8]] = &[
            b"a",
            b"\"",
            b"\\",
            b"\x01",
            b"\x1f",
            b" ",
            b"\x7f",
            b"\xc3\xa9",
            b"~",
        ];
        let mut seed = 7u32;
        for len in 0..140 {
            let mut bytes = Vec::new();
            while bytes.len() < len {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                bytes.extend_from_slice(pieces[(seed >> 16) as usize % pieces.len()]);
            }
            for (stops, high) in [stops64(&bytes), stops64_words(&bytes)] {
                for (i, &b) in bytes.iter().take(64).enumerate() {
                    let stop = b == b'"' || b == b'\\' || b < 0x20;
                    assert!(!stop || stops & (1 << i) != 0, "{bytes:?} {i}");
                    assert_eq!(high & (1 << i) != 0, b >= 0x80, "{bytes:?} {i}");
                }
                // No flag below the first stop, none past the end.
                let first = bytes
                    .iter()
                    .take(64)
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20);
                assert_eq!(
                    stops.trailing_zeros() as usize,
                    first.unwrap_or(64),
                    "{bytes:?}"
                );
                if bytes.len() < 64 {
                    assert_eq!(high >> bytes.len(), 0);
                }
            }
            // The vector scan is exact.
            let exact = bytes.iter().take(64).enumerate().fold(0u64, |m, (i, &b)| {
                m | u64::from(b == b'"' || b == b'\\' || b < 0x20) << i
            });
            assert_eq!(stops64(&bytes).0, exact);
        }
    }

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
