//! Scanning JSON string bodies: the run of bytes a string holds as they are, up to the first
//! quote, backslash or control character (the session scanner), and the word-at-a-time test
//! for those bytes (also what `dumps` escapes), a string decoded from them (the session's frame
//! decoder), and how `dumps` writes a byte that must be escaped. `loads` keeps its own loop,
//! which also steps over escapes: built on [`plain_run`] it costs 5% more instructions per
//! message. The vector loops are in [`crate::simd::json`].

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

/// The JSON string at the start of `bytes` (its opening quote first), decoded: borrowed when it
/// has no escapes, and the bytes it spans with both quotes. `None` for anything the string
/// decoder of the frame must judge itself (a control character, an escape JSON does not have,
/// a lone surrogate, bytes that are not UTF-8, no closing quote), so that it names the fault.
/// Runs are found by [`plain_run`] and the body is checked as UTF-8 once, by simdutf8: several
/// times std's speed on text with a non-ASCII character every line.
pub(crate) fn decode_string(bytes: &[u8]) -> Option<(std::borrow::Cow<'_, str>, usize)> {
    use std::borrow::Cow;
    debug_assert_eq!(bytes.first(), Some(&b'"'));
    let mut at = 1;
    let mut ascii = true;
    let mut decoded: Option<Vec<u8>> = None;
    loop {
        let run = plain_run(&bytes[at..]);
        ascii &= run.ascii;
        let end = at + run.bytes.len();
        match *bytes.get(end)? {
            b'"' => {
                // Escapes are ASCII, so the body is UTF-8 exactly when its runs are, and what
                // the escapes stand for is (surrogates come in pairs, checked below).
                if !ascii {
                    simdutf8::basic::from_utf8(&bytes[1..end]).ok()?;
                }
                let text = match decoded {
                    None => {
                        // SAFETY: checked as UTF-8 above, or every byte is ASCII.
                        Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(&bytes[1..end]) })
                    }
                    Some(mut out) => {
                        out.extend_from_slice(run.bytes);
                        // SAFETY: runs of the checked body and UTF-8 of scalar values.
                        Cow::Owned(unsafe { String::from_utf8_unchecked(out) })
                    }
                };
                return Some((text, end + 1));
            }
            b'\\' => {
                let out = decoded.get_or_insert_with(|| Vec::with_capacity(bytes.len().min(256)));
                out.extend_from_slice(run.bytes);
                at = end + unescape(&bytes[end..], out)?;
            }
            _ => return None,
        }
    }
}

/// The escape at the start of `bytes` (its backslash) appended to `out` as UTF-8; the bytes it
/// spans. `None` for an escape JSON does not have or a lone surrogate.
fn unescape(bytes: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let byte = match *bytes.get(1)? {
        b @ (b'"' | b'\\' | b'/') => b,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => {
            let unit = hex4(bytes.get(2..6)?)?;
            let (scalar, used) = match unit {
                0xD800..=0xDBFF => {
                    if bytes.get(6..8)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(bytes.get(8..12)?)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    (0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), 12)
                }
                0xDC00..=0xDFFF => return None,
                _ => (unit, 6),
            };
            let c = char::from_u32(scalar)?;
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            return Some(used);
        }
        _ => return None,
    };
    out.push(byte);
    Some(2)
}

/// Four hex digits' value (`None` if one is not a hex digit); also `loads`'s and the
/// skimmer's.
#[inline]
pub(crate) fn hex4(digits: &[u8]) -> Option<u32> {
    digits
        .iter()
        .try_fold(0, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
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
    fn strings_decode_and_refuse_as_jiter_does() {
        // Pieces valid and not (lone surrogates, unknown escapes, controls, bytes that are not
        // UTF-8, a quote or backslash cut short), strung to cross the vector scan's blocks.
        let pieces: &[&[u8]] = &[
            b"a",
            b"xyz 0123456789abcdef",
            "é".as_bytes(),
            "日本語".as_bytes(),
            "😀".as_bytes(),
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\b\\f\\r\\t",
            b"\\u00e9",
            b"\\u0000",
            b"\\u20AC",
            b"\\ud83d\\ude00",
            b"\\ud83d",
            b"\\ude00",
            b"\\ud83dx",
            b"\\u12",
            b"\\x",
            b"\x01",
            b"\x7f",
            b"\xff",
            b"\xe6\x97",
            b"\\",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % n as u64).expect("below n")
        };
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..20_000 {
            let mut text = vec![b'"'];
            for _ in 0..next(40) {
                text.extend_from_slice(pieces[next(pieces.len())]);
            }
            text.push(b'"');
            let ours = decode_string(&text);
            // An escaped backslash before a piece's quote ends the string early: jiter is
            // given the string ours read.
            let string = &text[..ours.as_ref().map_or(text.len(), |(_, used)| *used)];
            let theirs = match jiter::JsonValue::parse(string, false) {
                Ok(jiter::JsonValue::Str(s)) => Some(s.to_string()),
                _ => None,
            };
            match (&ours, &theirs) {
                (Some((s, _)), Some(t)) => {
                    assert_eq!(s.as_ref(), t.as_str(), "{text:?}");
                    let escaped = string.contains(&b'\\');
                    assert_eq!(matches!(s, std::borrow::Cow::Borrowed(_)), !escaped);
                    accepted += 1;
                }
                (None, None) => refused += 1,
                _ => panic!("{text:?}: ours {ours:?}, jiter {theirs:?}"),
            }
        }
        assert!(accepted > 1000 && refused > 1000, "{accepted} {refused}");
    }

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
