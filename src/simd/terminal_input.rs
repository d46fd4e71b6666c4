//! SSE2 scans of the bytes fed to the terminal: printable runs, ASCII runs widened to code
//! points, repeated characters, and CSI parameter bytes.

use std::mem::MaybeUninit;

/// The lanes of `v` that hold a C0 control or DEL, as all-ones bytes.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn controls_and_dels(v: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_min_epu8, _mm_or_si128, _mm_set1_epi8};
    // SAFETY: SSE2 is baseline on x86_64; these only compute on registers.
    unsafe {
        let ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
        let del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F));
        _mm_or_si128(ctl, del)
    }
}

/// How many of `bytes` lead as digits and `;`s (16 if all do).
#[inline]
pub(crate) fn param_bytes(bytes: &[u8; 16]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
            _mm_sub_epi8,
        };
        // SAFETY: SSE2 is baseline on x86_64; the load reads the 16 bytes.
        let others = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().cast());
            let d = _mm_sub_epi8(v, _mm_set1_epi8(0x30));
            // Digits (0x30..=0x39) and ';' (0x3B) are those at most 0x0B above 0x30, but ':'.
            let low = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(0x0B)), d);
            let colon = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x3A));
            !_mm_movemask_epi8(low).cast_unsigned() | _mm_movemask_epi8(colon).cast_unsigned()
        };
        (others | 1 << 16).trailing_zeros() as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    bytes
        .iter()
        .position(|&b| !(b.is_ascii_digit() || b == b';'))
        .unwrap_or(16)
}

/// Length of the printable prefix of `bytes` (up to the first C0 control or DEL), and whether
/// that prefix is all ASCII. Eight bytes at a time: runs of text are the bulk of any output.
#[inline]
pub(crate) fn scan_printable(bytes: &[u8]) -> (usize, bool) {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut high = 0u64;
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8};
        let mut top = 0;
        while i + 16 <= bytes.len() {
            // SAFETY: SSE2 is baseline on x86_64 and the load reads `bytes[i..i + 16]`.
            let (stop, hi) = unsafe {
                let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast());
                (
                    _mm_movemask_epi8(controls_and_dels(v)).cast_unsigned(),
                    _mm_movemask_epi8(v).cast_unsigned(),
                )
            };
            if stop != 0 {
                let p = stop.trailing_zeros();
                return (i + p as usize, (top | (hi & ((1 << p) - 1))) == 0);
            }
            top |= hi;
            i += 16;
        }
        if top != 0 {
            high = HI;
        }
    }
    let mut chunks = bytes[i..].chunks_exact(8);
    for chunk in &mut chunks {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // Bytes below 0x20 (ignoring bytes >= 0x80) or equal to 0x7F set their high bit here.
        let lt = x.wrapping_sub(LO * 0x20) & !x;
        let y = x ^ (LO * 0x7F);
        let eq = y.wrapping_sub(LO) & !y;
        if (lt | eq) & HI != 0 {
            break;
        }
        high |= x;
        i += 8;
    }
    let mut ascii = high & HI == 0;
    for &b in &bytes[i..] {
        if b < 0x20 || b == 0x7F {
            break;
        }
        ascii &= b < 0x80;
        i += 1;
    }
    (i, ascii)
}

/// Copies the printable ASCII prefix of `src` (up to a byte above 0x7F, a C0 control or DEL)
/// into `dst` as code points, as far as `dst` has room, and returns its length; it initializes
/// `dst` up to that length at least, and past it is scratch. Sixteen bytes at a time; the rest
/// (a stretch of ASCII between other characters is short) as whole blocks too, the last one
/// ending where the room does: it overlaps bytes already copied, which are printable ASCII, so
/// it copies them again the same and finds no stop before the first it had not seen.
#[allow(clippy::cast_ptr_alignment, reason = "the stores are unaligned")]
#[inline]
pub(crate) fn widen_ascii(src: &[u8], dst: &mut [MaybeUninit<u32>]) -> usize {
    let n = src.len().min(dst.len());
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cvtsi32_si128, _mm_loadl_epi64, _mm_loadu_si128, _mm_movemask_epi8,
            _mm_or_si128, _mm_setzero_si128, _mm_storeu_si128, _mm_unpackhi_epi8,
            _mm_unpackhi_epi16, _mm_unpacklo_epi8, _mm_unpacklo_epi16,
        };
        let (from, to) = (src.as_ptr(), dst.as_mut_ptr());
        // Each block of `k` (16, 8 or 4) bytes at `at` reads `src[at..at + k]`, writes
        // `dst[at..at + k]` and returns the mask of its bytes that stop the copy.
        // SAFETY (every call below): SSE2 is baseline on x86_64, and `at + k <= n`.
        let block = |at: usize, k: usize| unsafe {
            let bytes = match k {
                16 => _mm_loadu_si128(from.add(at).cast()),
                8 => _mm_loadl_epi64(from.add(at).cast()),
                _ => _mm_cvtsi32_si128(from.add(at).cast::<i32>().read_unaligned()),
            };
            let zero = _mm_setzero_si128();
            let (lo, hi) = (
                _mm_unpacklo_epi8(bytes, zero),
                _mm_unpackhi_epi8(bytes, zero),
            );
            let out = to.add(at).cast::<__m128i>();
            _mm_storeu_si128(out, _mm_unpacklo_epi16(lo, zero));
            if k >= 8 {
                _mm_storeu_si128(out.add(1), _mm_unpackhi_epi16(lo, zero));
            }
            if k == 16 {
                _mm_storeu_si128(out.add(2), _mm_unpacklo_epi16(hi, zero));
                _mm_storeu_si128(out.add(3), _mm_unpackhi_epi16(hi, zero));
            }
            // High bits, and all bits of controls and DELs; lanes past `k` (zeros) masked off.
            let stops = _mm_or_si128(bytes, controls_and_dels(bytes));
            _mm_movemask_epi8(stops).cast_unsigned() & (u32::MAX >> (32 - k))
        };
        let mut i = 0;
        while i + 16 <= n {
            let high = block(i, 16);
            if high != 0 {
                return i + high.trailing_zeros() as usize;
            }
            i += 16;
        }
        if i == n {
            return n;
        }
        // The rest: a block of 16 ending at `n`, or, with fewer than 16 in all, two
        // overlapping blocks of 8 or of 4, from 0 and ending at `n`.
        let k = match n {
            16.. => 16,
            8.. => 8,
            4.. => 4,
            _ => return scalar_ascii(src, dst, i, n),
        };
        for at in [i.min(n - k), n - k] {
            let high = block(at, k);
            if high != 0 {
                return at + high.trailing_zeros() as usize;
            }
            if at == n - k {
                break;
            }
        }
        n
    }
    #[cfg(not(target_arch = "x86_64"))]
    scalar_ascii(src, dst, 0, n)
}

/// [`widen_ascii`] from `i` to `n`, a code point at a time.
#[inline]
pub(crate) fn scalar_ascii(
    src: &[u8],
    dst: &mut [MaybeUninit<u32>],
    mut i: usize,
    n: usize,
) -> usize {
    while i < n && (0x20..0x7F).contains(&src[i]) {
        dst[i] = MaybeUninit::new(u32::from(src[i]));
        i += 1;
    }
    i
}

/// Length of the printable ASCII prefix of `bytes` (up to a byte above 0x7F, a C0 control or
/// DEL), and whether a byte above 0x7F ends it: text that is not ASCII goes to the UTF-8
/// decoder from there, which finds the end of the run itself, rather than after a scan for
/// its end. Sixteen bytes at a time; the rest as a block ending at the end.
#[inline]
pub(crate) fn scan_ascii(bytes: &[u8]) -> (usize, bool) {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 16 {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
        // The bytes of `bytes[at..at + 16]` that are not printable ASCII, one bit each.
        // SAFETY (every call below): SSE2 is baseline on x86_64, and `at + 16 <= bytes.len()`.
        let stops = |at: usize| unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
            _mm_movemask_epi8(_mm_or_si128(v, controls_and_dels(v))).cast_unsigned()
        };
        let n = bytes.len();
        let mut i = 0;
        while i + 16 <= n {
            let stop = stops(i);
            if stop != 0 {
                i += stop.trailing_zeros() as usize;
                return (i, bytes[i] >= 0x80);
            }
            i += 16;
        }
        if i == n {
            return (n, false);
        }
        // The rest as the block ending at `n`: its bytes before `i` were seen and are
        // printable, so have no bits.
        let at = n - 16;
        let stop = stops(at);
        if stop == 0 {
            return (n, false);
        }
        i = at + stop.trailing_zeros() as usize;
        return (i, bytes[i] >= 0x80);
    }
    match bytes.iter().position(|b| !(0x20..0x7F).contains(b)) {
        Some(p) => (p, bytes[p] >= 0x80),
        None => (bytes.len(), false),
    }
}

/// How many whole copies of the three bytes before `start` follow it, at most `max`: the rest
/// of a bar or rule drawn with one character. Compares the bytes with those three before them,
/// sixteen at a time (a run of one three-byte character is exactly a run where they match).
#[inline]
pub(crate) fn repeats_of_3(bytes: &[u8], start: usize, max: usize) -> usize {
    debug_assert!(start >= 3);
    let limit = bytes.len().min(start.saturating_add(max.saturating_mul(3)));
    let mut j = start;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
        // Which of `bytes[at..at + 16]` equal the byte three before, one bit each.
        // SAFETY (every call below): SSE2 is baseline on x86_64; the loads read
        // `bytes[at..at + 16]` and `bytes[at - 3..at + 13]`, within `bytes` for
        // 3 <= at <= limit - 16.
        let same = |at: usize| unsafe {
            let here = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
            let before = _mm_loadu_si128(bytes.as_ptr().add(at - 3).cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(here, before)).cast_unsigned()
        };
        while j + 16 <= limit {
            let same = same(j);
            if same != 0xFFFF {
                j += (!same).trailing_zeros() as usize;
                return (j - start) / 3;
            }
            j += 16;
        }
        // The rest as a block ending at `limit`; the bytes before `j` in it are known to match.
        if j < limit && limit >= 19 {
            let at = limit - 16;
            let same = same(at) | ((1 << (j - at)) - 1);
            j = if same == 0xFFFF {
                limit
            } else {
                at + (!same).trailing_zeros() as usize
            };
            return (j - start) / 3;
        }
    }
    while j < limit && bytes[j] == bytes[j - 3] {
        j += 1;
    }
    (j - start) / 3
}
