//! `loads` and `dumps`: one JSON document to Python objects and back.

use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyType};

use super::decoder::{PARSER, with_bytes_or_str};
use crate::json_text::special_bytes;

/// Containers may nest this deep (the outermost is at depth 0); orjson has the same limit, so
/// both backends refuse the same documents, and a self-referencing container fails instead of
/// recursing forever.
const MAX_DUMPS_DEPTH: usize = 254;

fn decode_error(py: Python<'_>, data: &[u8], err: &jiter::JsonError, char_offsets: bool) -> PyErr {
    let before = &data[..err.index.min(data.len())];
    let chars = |bytes: &[u8]| String::from_utf8_lossy(bytes).chars().count();
    // Line and column as `json` gives them, both from 1 and the column in characters, for
    // `str` and bytes alike (jiter's column counts bytes, and from 0 at the end of input).
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |p| p + 1);
    let line = 1 + memchr::memchr_iter(b'\n', before).count();
    let column = 1 + chars(&before[line_start..]);
    // For `str` input, report the offset in characters, as `json` does.
    let offset = if char_offsets {
        chars(before)
    } else {
        before.len()
    };
    let args = (err.error_type.to_string(), line, column, offset);
    super::new_error(super::decode_error_type(py), args)
}

/// Decode one JSON document (bytes or str) into Python objects.
#[pyfunction]
pub fn loads<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(text) = data.cast::<PyString>() {
        let Ok(text) = text.to_str() else {
            let message = "str is not valid UTF-8: surrogates not allowed";
            return Err(super::new_error(
                super::decode_error_type(py),
                (message, 1, 1, 0),
            ));
        };
        return decode(py, text.as_bytes(), true);
    }
    with_bytes_or_str(data, |bytes| {
        // A UTF-8 byte order mark is skipped, as `json.loads` skips it in bytes.
        decode(py, bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes), false)
    })?
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The fast path, or jiter for what it declines (exact values and exact errors).
fn decode<'py>(py: Python<'py>, bytes: &[u8], char_offsets: bool) -> PyResult<Bound<'py, PyAny>> {
    if let Some(value) = super::fastjson::decode(py, bytes) {
        return Ok(value);
    }
    PARSER
        .python_parse(py, bytes)
        .map_err(|e| decode_error(py, bytes, &e, char_offsets))
}

/// Encode `obj` as one compact NDJSON frame: UTF-8, ending in a single `\n`.
#[pyfunction]
pub fn dumps<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    // Reuse one buffer per thread: growing a fresh one for every message costs reallocations.
    let out = SCRATCH.with_borrow_mut(std::mem::take);
    let mut encoder = Encoder { py, out };
    encoder.out.clear();
    // SAFETY: `obj` is a live reference for the whole call.
    let result = unsafe { encoder.value(obj.as_ptr(), 0) };
    encoder.out.push(b'\n');
    let bytes = result.map(|()| PyBytes::new(py, &encoder.out));
    // Keep the buffer unless one huge document grew it: memory stays bounded between calls.
    if encoder.out.capacity() <= MAX_KEPT_SCRATCH {
        SCRATCH.with_borrow_mut(|slot| *slot = encoder.out);
    }
    bytes
}

const MAX_KEPT_SCRATCH: usize = 1 << 20;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn encode_error(py: Python<'_>, message: String) -> PyErr {
    super::new_error(super::encode_error_type(py), (message,))
}

static ENUM: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UUID: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Writes JSON straight from `CPython` objects.
///
/// The hot paths (exact `str`, `dict`, `list`, `int`, `float`, `bool`, `None`, `tuple`) read
/// objects through the C API with borrowed pointers, as orjson does: no Python code runs on
/// those paths, so the borrowed objects stay alive. Anything else is handed to `other` with an
/// owned reference, because encoding it may run Python code.
struct Encoder<'py> {
    py: Python<'py>,
    out: Vec<u8>,
}

const ESCAPE_BLOCK: usize = 4096;

/// For each byte, how JSON writes it inside a string when it must be escaped: the escape's
/// bytes in the low bytes of the word and its length in the top byte; 0 for bytes written as
/// they are. One unaligned 8-byte store and one add write any escape without a branch.
static ESCAPES: [u64; 256] = escape_table();

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
#[inline]
unsafe fn put_byte(dst: *mut u8, byte: u8) -> *mut u8 {
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

/// Write `text` escaped as JSON requires (no quotes) at `dst`; return the bytes written.
///
/// # Safety
/// `dst` must have room for `text.len() * 6 + 16` bytes.
#[inline]
unsafe fn write_escaped(text: &[u8], dst: *mut u8) -> usize {
    let n = text.len();
    let mut i = 0;
    // SAFETY (all writes): at most six bytes per input byte, with 16 bytes of slack for the
    // vector stores and the 8-byte escape stores, fit the caller's room.
    unsafe {
        let mut out = dst;
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{
                __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
                _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128,
            };
            // Long strings (base64 terminal chunks, file contents) go 32 bytes at a time where
            // the CPU has AVX2; the check is one cached load.
            if n >= LONG_STRING && std::arch::is_x86_feature_detected!("avx2") {
                let (read, written) = escape_avx2(text, out);
                i = read;
                out = out.add(written);
            }
            // SSE2 is baseline on x86_64; loads stay inside `text`, and each 16-byte store
            // keeps the clean bytes and is overwritten past them. Loads and stores are
            // unaligned (`loadu`/`storeu`), so the pointer casts need no alignment.
            #[allow(clippy::cast_ptr_alignment)]
            if n >= 16 {
                let quote = _mm_set1_epi8(b'"'.cast_signed());
                let backslash = _mm_set1_epi8(b'\\'.cast_signed());
                let below_space = _mm_set1_epi8(0x1f);
                while i + 16 <= n {
                    let chunk = _mm_loadu_si128(text.as_ptr().add(i).cast::<__m128i>());
                    _mm_storeu_si128(out.cast::<__m128i>(), chunk);
                    let control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, below_space), below_space);
                    let special = _mm_or_si128(
                        _mm_cmpeq_epi8(chunk, quote),
                        _mm_cmpeq_epi8(chunk, backslash),
                    );
                    let mask = _mm_movemask_epi8(_mm_or_si128(control, special));
                    if mask == 0 {
                        i += 16;
                        out = out.add(16);
                        continue;
                    }
                    let clean = mask.trailing_zeros() as usize;
                    out = put_byte(out.add(clean), text[i + clean]);
                    i += clean + 1;
                }
            }
        }
        // The rest, and the tail of long strings, a byte at a time.
        while i < n {
            out = put_byte(out, text[i]);
            i += 1;
        }
        usize::try_from(out.offset_from(dst)).unwrap_or(0)
    }
}

/// Strings at least this long take the AVX2 loop.
#[cfg(target_arch = "x86_64")]
const LONG_STRING: usize = 64;

/// The 32-byte blocks of `text` escaped at `dst`, as `write_escaped` writes them; returns the
/// bytes read (a multiple of 32 less than 32 from the end, or past an escape) and written.
///
/// # Safety
/// The CPU must support AVX2, and `dst` must have the room `write_escaped` requires.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn escape_avx2(text: &[u8], dst: *mut u8) -> (usize, usize) {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_storeu_si256,
    };
    let n = text.len();
    let mut i = 0;
    let mut out = dst;
    // SAFETY: as in `write_escaped`: loads stay inside `text`; each store lands within the
    // room (six bytes per input byte left, plus slack), and the bytes past a clean prefix are
    // overwritten. Loads and stores are unaligned, so the casts need no alignment.
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

/// Copy `text` (4 to 15 bytes) to `dst` with two overlapping word loads and stores if no byte
/// of it needs an escape; otherwise write nothing and return false.
///
/// # Safety
/// `dst` must have room for 16 bytes.
#[inline]
unsafe fn copy_clean_short(text: &[u8], dst: *mut u8) -> bool {
    let n = text.len();
    let src = text.as_ptr();
    // SAFETY: every load lies within `text` and every store within `dst`'s 16 bytes; the
    // second word overlaps the first, so together they cover all `n` bytes.
    unsafe {
        if n >= 8 {
            let low = src.cast::<u64>().read_unaligned();
            let high = src.add(n - 8).cast::<u64>().read_unaligned();
            if special_bytes(low) | special_bytes(high) != 0 {
                return false;
            }
            dst.cast::<u64>().write_unaligned(low);
            dst.add(n - 8).cast::<u64>().write_unaligned(high);
        } else {
            let low = src.cast::<u32>().read_unaligned();
            let high = src.add(n - 4).cast::<u32>().read_unaligned();
            if special_bytes(u64::from(low) | u64::from(high) << 32) != 0 {
                return false;
            }
            dst.cast::<u32>().write_unaligned(low);
            dst.add(n - 4).cast::<u32>().write_unaligned(high);
        }
    }
    true
}

/// A code unit of one of `CPython`'s fixed-width `str` kinds (Latin-1, UCS-2, UCS-4).
trait CodeUnit: Copy + Into<u32> {
    /// Units handled per vector step (0: none, a unit at a time).
    const LANES: usize;

    /// `LANES` units at `src` as bytes in the low lanes: a unit that is plain ASCII as its
    /// byte, any other as a byte with its top bit set or as 0 (a control), so that it stops the
    /// copy either way.
    ///
    /// # Safety
    /// `LANES` units must be readable at `src`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn narrow(src: *const Self) -> std::arch::x86_64::__m128i;

    /// Store the low `LANES` bytes of `bytes` at `dst`.
    ///
    /// # Safety
    /// 16 bytes must be writable at `dst`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn store(dst: *mut u8, bytes: std::arch::x86_64::__m128i);
}

/// The lanes of `chunk` holding a byte JSON escapes in a string (a control, `"`, `\`) or one
/// with its top bit set, as a bit mask.
///
/// # Safety
/// SSE2 only, which `x86_64` always has.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn escape_or_high_mask(chunk: std::arch::x86_64::__m128i) -> i32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
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

/// Write `units` escaped as JSON requires, in UTF-8 (no quotes), at `dst`; return the bytes
/// written, or `None` at a surrogate (which UTF-8 cannot hold; `CPython` keeps astral characters
/// as one 4-byte unit, so any surrogate is a lone one).
///
/// # Safety
/// `dst` must have room for `units.len() * 6 + 16` bytes.
unsafe fn write_units<T: CodeUnit>(units: &[T], dst: *mut u8) -> Option<usize> {
    let n = units.len();
    let mut i = 0;
    // SAFETY (all writes): at most six bytes per unit (an escape; a character takes at most
    // four), and 16 of slack for the vector stores, fit the caller's room. Each store keeps the
    // clean lanes and is overwritten past them.
    unsafe {
        let mut out = dst;
        #[cfg(target_arch = "x86_64")]
        if T::LANES > 0 && n >= T::LANES {
            let lanes = (1i32 << T::LANES) - 1;
            while i + T::LANES <= n {
                let chunk = T::narrow(units.as_ptr().add(i));
                T::store(out, chunk);
                let mask = escape_or_high_mask(chunk) & lanes;
                if mask == 0 {
                    i += T::LANES;
                    out = out.add(T::LANES);
                    continue;
                }
                let clean = mask.trailing_zeros() as usize;
                out = put_char(out.add(clean), units[i + clean].into())?;
                i += clean + 1;
            }
        }
        while i < n {
            out = put_char(out, units[i].into())?;
            i += 1;
        }
        usize::try_from(out.offset_from(dst)).ok()
    }
}

/// Write the character `c` at `dst` in UTF-8, escaped if JSON requires it; return the end, or
/// `None` for a surrogate.
///
/// # Safety
/// `dst` must have room for 8 bytes.
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    reason = "each byte is masked or shifted below 256 first"
)]
unsafe fn put_char(dst: *mut u8, c: u32) -> Option<*mut u8> {
    // SAFETY: the caller guarantees room for 8 bytes; a character takes at most 4.
    unsafe {
        if c < 0x80 {
            return Some(put_byte(dst, c as u8));
        }
        if c < 0x800 {
            dst.write(0xC0 | (c >> 6) as u8);
            dst.add(1).write(0x80 | (c & 0x3F) as u8);
            return Some(dst.add(2));
        }
        if c < 0x1_0000 {
            if (0xD800..0xE000).contains(&c) {
                return None;
            }
            dst.write(0xE0 | (c >> 12) as u8);
            dst.add(1).write(0x80 | ((c >> 6) & 0x3F) as u8);
            dst.add(2).write(0x80 | (c & 0x3F) as u8);
            return Some(dst.add(3));
        }
        dst.write(0xF0 | (c >> 18) as u8);
        dst.add(1).write(0x80 | ((c >> 12) & 0x3F) as u8);
        dst.add(2).write(0x80 | ((c >> 6) & 0x3F) as u8);
        dst.add(3).write(0x80 | (c & 0x3F) as u8);
        Some(dst.add(4))
    }
}

#[allow(clippy::cast_ptr_alignment, reason = "unaligned loads and stores")]
impl CodeUnit for u8 {
    // Latin-1: a byte above 0x7F has its top bit set already.
    const LANES: usize = 16;

    #[cfg(target_arch = "x86_64")]
    unsafe fn narrow(src: *const u8) -> std::arch::x86_64::__m128i {
        // SAFETY: the caller's.
        unsafe { std::arch::x86_64::_mm_loadu_si128(src.cast()) }
    }

    #[cfg(target_arch = "x86_64")]
    unsafe fn store(dst: *mut u8, bytes: std::arch::x86_64::__m128i) {
        // SAFETY: the caller's.
        unsafe { std::arch::x86_64::_mm_storeu_si128(dst.cast(), bytes) }
    }
}

#[allow(clippy::cast_ptr_alignment, reason = "unaligned loads and stores")]
impl CodeUnit for u16 {
    const LANES: usize = 8;

    /// Narrowed by `packus`, which reads the units as signed and saturates to unsigned bytes:
    /// 0x80-0xFF stay (top bit set), 0x100-0x7FFF become 0xFF and 0x8000-0xFFFF (negative)
    /// become 0, a control. (`packs`, signed saturation, would turn 0x80-0xFF into 0x7F and
    /// copy them as DEL.)
    #[cfg(target_arch = "x86_64")]
    unsafe fn narrow(src: *const u16) -> std::arch::x86_64::__m128i {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_packus_epi16};
        // SAFETY: the caller's.
        unsafe {
            let wide = _mm_loadu_si128(src.cast());
            _mm_packus_epi16(wide, wide)
        }
    }

    #[cfg(target_arch = "x86_64")]
    unsafe fn store(dst: *mut u8, bytes: std::arch::x86_64::__m128i) {
        // SAFETY: the caller's.
        unsafe { std::arch::x86_64::_mm_storel_epi64(dst.cast(), bytes) }
    }
}

impl CodeUnit for u32 {
    // Strings with a character beyond U+FFFF (emoji) are rare: a unit at a time.
    const LANES: usize = 0;

    #[cfg(target_arch = "x86_64")]
    unsafe fn narrow(_: *const u32) -> std::arch::x86_64::__m128i {
        unreachable!("UCS-4 strings are written a unit at a time")
    }

    #[cfg(target_arch = "x86_64")]
    unsafe fn store(_: *mut u8, _: std::arch::x86_64::__m128i) {
        unreachable!("UCS-4 strings are written a unit at a time")
    }
}

/// The characters of a compact ASCII `str` (its UTF-8 too), or `None` for any other `str`.
///
/// # Safety
/// `obj` must be a live `str` (or subclass), and the slice must not outlive it.
#[allow(clippy::inline_always, reason = "on every string's path")]
#[inline(always)]
unsafe fn compact_ascii<'a>(obj: *mut ffi::PyObject) -> Option<&'a [u8]> {
    // SAFETY: the caller's; the length and data of a str describe its characters.
    unsafe {
        #[cfg(not(Py_3_14))]
        let data = (ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0).then(|| ffi::PyUnicode_DATA(obj));
        // The FFI leaves out the state bit-field's accessors from 3.14 on. A compact ASCII str
        // is the one whose characters start right after its `PyASCIIObject` header; any other
        // keeps them after a longer header or in a buffer of their own.
        #[cfg(Py_3_14)]
        let data = Some(ffi::PyUnicode_DATA(obj)).filter(|&data| {
            data.cast::<ffi::PyASCIIObject>() == obj.cast::<ffi::PyASCIIObject>().add(1)
        });
        let size = usize::try_from(ffi::PyUnicode_GET_LENGTH(obj)).unwrap_or(0);
        data.map(|data| std::slice::from_raw_parts(data.cast::<u8>(), size))
    }
}

/// Whether a `str` keeps its characters inline (every `str` but instances of subclasses).
///
/// # Safety
/// `obj` must be a live `str` (or subclass).
unsafe fn is_compact(obj: *mut ffi::PyObject) -> bool {
    // SAFETY: the caller's.
    unsafe {
        #[cfg(not(Py_3_14))]
        return ffi::PyUnicode_IS_COMPACT(obj) != 0;
        // As in `compact_ascii`: inline characters follow the header, which is the longer
        // `PyCompactUnicodeObject` when they are not ASCII.
        #[cfg(Py_3_14)]
        {
            let data = ffi::PyUnicode_DATA(obj);
            data.cast::<ffi::PyASCIIObject>() == obj.cast::<ffi::PyASCIIObject>().add(1)
                || data.cast::<ffi::PyCompactUnicodeObject>()
                    == obj.cast::<ffi::PyCompactUnicodeObject>().add(1)
        }
    }
}

/// Exact scalar types: encoding them runs no Python code.
///
/// # Safety
/// `obj` must point to a live Python object.
unsafe fn is_leaf(obj: *mut ffi::PyObject) -> bool {
    unsafe {
        let kind = ffi::Py_TYPE(obj);
        kind == &raw mut ffi::PyUnicode_Type
            || kind == &raw mut ffi::PyLong_Type
            || kind == &raw mut ffi::PyFloat_Type
            || kind == &raw mut ffi::PyBool_Type
            || obj == ffi::Py_None()
    }
}

impl Encoder<'_> {
    /// Encode the object at `obj`.
    ///
    /// # Safety
    /// `obj` must point to a live Python object for the duration of the call.
    unsafe fn value(&mut self, obj: *mut ffi::PyObject, depth: usize) -> PyResult<()> {
        unsafe {
            let kind = ffi::Py_TYPE(obj);
            if kind == &raw mut ffi::PyUnicode_Type {
                return self.string(obj);
            }
            if kind == &raw mut ffi::PyDict_Type {
                return self.dict(obj, depth);
            }
            if kind == &raw mut ffi::PyList_Type {
                Self::enter(self.py, depth)?;
                self.out.push(b'[');
                // The size is read again each step: it is the bound a mutation could change.
                let mut i = 0;
                while i < ffi::PyList_GET_SIZE(obj) {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    let item = ffi::PyList_GET_ITEM(obj, i);
                    if ffi::Py_TYPE(item) == &raw mut ffi::PyUnicode_Type {
                        // The commonest item, without a second dispatch.
                        self.string(item)?;
                    } else if is_leaf(item) {
                        self.value(item, depth + 1)?;
                    } else {
                        // Owned while encoded: Python code run for a nested object could
                        // remove it from the list.
                        let held = Bound::from_borrowed_ptr(self.py, item);
                        self.value(held.as_ptr(), depth + 1)?;
                    }
                    i += 1;
                }
                self.out.push(b']');
                return Ok(());
            }
            if obj == ffi::Py_None() {
                self.out.extend_from_slice(b"null");
                return Ok(());
            }
            if obj == ffi::Py_True() {
                self.out.extend_from_slice(b"true");
                return Ok(());
            }
            if obj == ffi::Py_False() {
                self.out.extend_from_slice(b"false");
                return Ok(());
            }
            if kind == &raw mut ffi::PyLong_Type {
                return self.int(obj);
            }
            if kind == &raw mut ffi::PyFloat_Type {
                self.float(ffi::PyFloat_AS_DOUBLE(obj));
                return Ok(());
            }
            if kind == &raw mut ffi::PyTuple_Type {
                Self::enter(self.py, depth)?;
                self.out.push(b'[');
                for i in 0..ffi::PyTuple_GET_SIZE(obj) {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.value(ffi::PyTuple_GET_ITEM(obj, i), depth + 1)?;
                }
                self.out.push(b']');
                return Ok(());
            }
            let owned = Bound::from_borrowed_ptr(self.py, obj);
            self.other(&owned, depth)
        }
    }

    /// Subclasses and the few library types orjson also writes natively (enum members, UUIDs).
    /// Float and tuple subclasses (numpy scalars, named tuples) are refused, as orjson refuses
    /// them, so that both backends accept exactly the same objects.
    fn other(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        // SAFETY (all blocks below): `obj` is owned here, so its pointer stays valid.
        if obj.is_instance_of::<PyString>() {
            return unsafe { self.string(obj.as_ptr()) };
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            return unsafe { self.dict(d.as_ptr(), depth) };
        }
        if let Ok(l) = obj.cast::<PyList>() {
            Self::enter(self.py, depth)?;
            self.out.push(b'[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                unsafe { self.value(item.as_ptr(), depth + 1)? };
            }
            self.out.push(b']');
            return Ok(());
        }
        if obj.is_instance_of::<PyInt>() {
            return unsafe { self.int(obj.as_ptr()) };
        }
        let kind = obj.get_type();
        // Only `uuid.UUID` itself, as orjson writes it (not a subclass, nor a look-alike).
        if kind.is(UUID.import(self.py, "uuid", "UUID")?) {
            let text = obj.str()?;
            return unsafe { self.string(text.as_ptr()) };
        }
        if obj.is_instance(ENUM.import(self.py, "enum", "Enum")?)? {
            // A member's value may be a member, even itself: each step counts as a level, so
            // the limit ends the chain.
            Self::enter(self.py, depth)?;
            let value = obj.getattr("value")?;
            return unsafe { self.value(value.as_ptr(), depth + 1) };
        }
        // The type's C-level name, as orjson reports it: `decimal.Decimal` for types written in
        // C, the bare class name for classes written in Python.
        // SAFETY: every type object has a NUL-terminated `tp_name` that lives as long as it.
        let name = unsafe { std::ffi::CStr::from_ptr((*kind.as_type_ptr()).tp_name) };
        Err(encode_error(
            self.py,
            format!("Type is not JSON serializable: {}", name.to_string_lossy()),
        ))
    }

    fn enter(py: Python<'_>, depth: usize) -> PyResult<()> {
        if depth >= MAX_DUMPS_DEPTH {
            return Err(encode_error(py, "Recursion limit reached".to_owned()));
        }
        Ok(())
    }

    /// # Safety
    /// `obj` must be a live `str` (or subclass).
    #[allow(
        clippy::inline_always,
        reason = "one call per string, not two: most are short"
    )]
    #[inline(always)]
    unsafe fn string(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: a compact ASCII str holds its characters inline, which are also its UTF-8.
        if let Some(bytes) = unsafe { compact_ascii(obj) } {
            self.escaped(bytes);
            return Ok(());
        }
        // SAFETY: as for this function.
        unsafe { self.string_wide(obj) }
    }

    /// A `str` that is not compact ASCII. A compact one without cached UTF-8 is transcoded
    /// from its own code units: asking `CPython` for its UTF-8 (as orjson does) allocates a
    /// second copy of the text, kept on the object for as long as it lives.
    ///
    /// # Safety
    /// `obj` must be a live `str` (or subclass).
    #[inline(never)]
    unsafe fn string_wide(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: a compact str holds its `len` code units inline, in the width its kind says.
        let written = unsafe {
            if !is_compact(obj) {
                // Instances of subclasses keep their text elsewhere; they are rare.
                return self.string_utf8(obj);
            }
            // Where the UTF-8 is already cached (it was asked for before), copying it is
            // faster. Free-threaded builds publish it with a release store after its length.
            let compact = obj.cast::<ffi::PyCompactUnicodeObject>();
            let cached = (*(&raw const (*compact).utf8).cast::<AtomicPtr<std::ffi::c_char>>())
                .load(Ordering::Acquire);
            if !cached.is_null() {
                let size = usize::try_from((*compact).utf8_length).unwrap_or(0);
                self.escaped(std::slice::from_raw_parts(cached.cast::<u8>(), size));
                return Ok(());
            }
            let len = usize::try_from(ffi::PyUnicode_GET_LENGTH(obj)).unwrap_or(0);
            let data = ffi::PyUnicode_DATA(obj);
            match ffi::PyUnicode_KIND(obj) {
                ffi::PyUnicode_1BYTE_KIND => {
                    self.escaped_units(std::slice::from_raw_parts(data.cast::<u8>(), len))
                }
                ffi::PyUnicode_2BYTE_KIND => {
                    self.escaped_units(std::slice::from_raw_parts(data.cast::<u16>(), len))
                }
                _ => self.escaped_units(std::slice::from_raw_parts(data.cast::<u32>(), len)),
            }
        };
        if written {
            Ok(())
        } else {
            Err(encode_error(
                self.py,
                "str is not valid UTF-8: surrogates not allowed".to_owned(),
            ))
        }
    }

    /// Write code units as a JSON string in UTF-8; false if one is a surrogate (which UTF-8
    /// cannot hold; `CPython` keeps astral characters as one 4-byte unit, so any surrogate is
    /// a lone one).
    fn escaped_units<T: CodeUnit>(&mut self, units: &[T]) -> bool {
        self.out.push(b'"');
        // Block by block, so that the worst-case reservation stays bounded.
        for block in units.chunks(ESCAPE_BLOCK) {
            self.out.reserve(block.len() * 6 + 16);
            // SAFETY: `write_units` writes at most six bytes per unit plus 16 of slack, which
            // the reservation covers; the length then covers only the bytes written.
            unsafe {
                let len = self.out.len();
                let Some(written) = write_units(block, self.out.as_mut_ptr().add(len)) else {
                    return false;
                };
                self.out.set_len(len + written);
            }
        }
        self.out.push(b'"');
        true
    }

    /// A `str` that is not compact ASCII, through its (cached) UTF-8 form.
    ///
    /// # Safety
    /// `obj` must be a live `str` (or subclass).
    unsafe fn string_utf8(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: the UTF-8 buffer is cached on the str object and lives as long as it does.
        let bytes = unsafe {
            let data = ffi::PyUnicode_AsUTF8AndSize(obj, &raw mut size);
            if data.is_null() {
                drop(PyErr::take(self.py));
                return Err(encode_error(
                    self.py,
                    "str is not valid UTF-8: surrogates not allowed".to_owned(),
                ));
            }
            std::slice::from_raw_parts(data.cast::<u8>(), usize::try_from(size).unwrap_or(0))
        };
        self.escaped(bytes);
        Ok(())
    }

    /// Write `bytes` as a JSON string, escaping as orjson does.
    #[allow(clippy::inline_always, reason = "part of `string`")]
    #[inline(always)]
    fn escaped(&mut self, bytes: &[u8]) {
        if bytes.len() > ESCAPE_BLOCK {
            self.escaped_long(bytes);
            return;
        }
        self.out.reserve(bytes.len() * 6 + 18);
        // SAFETY: the reservation covers both quotes and what `write_escaped` needs; the
        // length then covers only the bytes written.
        unsafe {
            let len = self.out.len();
            let start = self.out.as_mut_ptr().add(len);
            start.write(b'"');
            // Short strings (most keys and values) without a byte to escape are copied with
            // two overlapping word loads and stores, in line; the rest takes the escaper.
            let n = bytes.len();
            let written = if (4..16).contains(&n) && copy_clean_short(bytes, start.add(1)) {
                n
            } else {
                write_escaped(bytes, start.add(1))
            };
            start.add(1 + written).write(b'"');
            self.out.set_len(len + written + 2);
        }
    }

    /// A string longer than one block, written block by block so that the worst-case
    /// reservation (six output bytes per input byte) stays bounded.
    #[cold]
    fn escaped_long(&mut self, bytes: &[u8]) {
        self.out.push(b'"');
        for block in bytes.chunks(ESCAPE_BLOCK) {
            self.out.reserve(block.len() * 6 + 16);
            // SAFETY: as in `escaped`.
            unsafe {
                let len = self.out.len();
                let written = write_escaped(block, self.out.as_mut_ptr().add(len));
                self.out.set_len(len + written);
            }
        }
        self.out.push(b'"');
    }

    /// # Safety
    /// `obj` must be a live `int` (or subclass).
    unsafe fn int(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        let mut overflow: std::ffi::c_int = 0;
        let small = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj, &raw mut overflow) };
        if overflow == 0 {
            if small == -1 && unsafe { !ffi::PyErr_Occurred().is_null() } {
                return Err(PyErr::fetch(self.py));
            }
            self.out
                .extend_from_slice(itoa::Buffer::new().format(small).as_bytes());
            return Ok(());
        }
        if overflow > 0 {
            let large = unsafe { ffi::PyLong_AsUnsignedLongLong(obj) };
            if large != u64::MAX || unsafe { ffi::PyErr_Occurred().is_null() } {
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(large).as_bytes());
                return Ok(());
            }
            drop(PyErr::take(self.py));
        }
        // Beyond 64 bits: the int's own decimal form (bounded by Python's digit limit), as
        // `int.__repr__` writes it: no method a subclass overrides runs, so nothing but
        // digits can come out.
        let owned = unsafe { Bound::from_borrowed_ptr(self.py, obj) };
        let text = self
            .py
            .get_type::<PyInt>()
            .call_method1(pyo3::intern!(self.py, "__repr__"), (owned,))
            // The message alone, as the pure backend gives it (no `ValueError: ` before it).
            .map_err(|e| encode_error(self.py, e.value(self.py).to_string()))?;
        let text = text.cast_into::<PyString>()?;
        self.out.extend_from_slice(text.to_str()?.as_bytes());
        Ok(())
    }

    fn float(&mut self, v: f64) {
        if v.is_finite() {
            // zmij writes the shortest round-trip form in orjson's spelling (`1e+16`, `0.1`).
            self.out
                .extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
        } else {
            // JSON has no NaN or infinity; orjson writes null, and so do we.
            self.out.extend_from_slice(b"null");
        }
    }

    /// # Safety
    /// `obj` must be a live `dict` (or subclass).
    unsafe fn dict(&mut self, obj: *mut ffi::PyObject, depth: usize) -> PyResult<()> {
        Self::enter(self.py, depth)?;
        self.out.push(b'{');
        let mut position: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // Python code run for a value (an enum's `value`, say) may change the dict: that fails
        // as a dict iterator fails, and as the pure backend's `items()` loop does.
        let size = unsafe { ffi::PyDict_Size(obj) };
        let mut seen: ffi::Py_ssize_t = 0;
        // SAFETY: PyDict_Next hands out borrowed entries of a live dict and checks its bounds.
        while unsafe { ffi::PyDict_Next(obj, &raw mut position, &raw mut key, &raw mut value) } != 0
        {
            if seen == size {
                return Err(PyRuntimeError::new_err(
                    "dictionary keys changed during iteration",
                ));
            }
            if seen > 0 {
                self.out.push(b',');
            }
            seen += 1;
            if unsafe { ffi::PyUnicode_Check(key) } == 0 {
                return Err(encode_error(self.py, "Dict key must be str".to_owned()));
            }
            // Reading a str runs no Python code, so the key needs no reference of its own.
            unsafe { self.string(key)? };
            self.out.push(b':');
            if unsafe { ffi::Py_TYPE(value) } == &raw mut ffi::PyUnicode_Type {
                // The commonest value, without a second dispatch.
                unsafe { self.string(value)? };
            } else if unsafe { is_leaf(value) } {
                unsafe { self.value(value, depth + 1)? };
            } else {
                // Hold the value: encoding it may run Python code that drops it from the dict.
                let held = unsafe { Bound::from_borrowed_ptr(self.py, value) };
                unsafe { self.value(held.as_ptr(), depth + 1)? };
                if unsafe { ffi::PyDict_Size(obj) } != size {
                    return Err(PyRuntimeError::new_err(
                        "dictionary changed size during iteration",
                    ));
                }
            }
        }
        self.out.push(b'}');
        Ok(())
    }
}
