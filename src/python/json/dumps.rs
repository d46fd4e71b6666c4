//! `dumps`: Python objects to one compact JSON document, as orjson writes it. The rules are in
//! [`docs/behaviour/json.md`](../../../docs/behaviour/json.md).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyInt, PyList, PyString, PyType};

use super::ffi::{Dict, Int, IntValue, Object, Str, Units};
use crate::json_text::{put_byte, special_bytes};
use crate::python::encode_error;
#[cfg(target_arch = "x86_64")]
use crate::simd::json as simd;

/// Containers may nest this deep (the outermost is at depth 0); orjson has the same limit, so
/// both backends refuse the same documents, and a self-referencing container fails instead of
/// recursing forever.
const MAX_DUMPS_DEPTH: usize = 254;

/// Encode `obj` as one compact NDJSON frame: UTF-8, ending in a single `\n`.
#[pyfunction]
pub fn dumps<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    // Reuse one buffer per thread: growing a fresh one for every message costs reallocations.
    let out = SCRATCH.with_borrow_mut(std::mem::take);
    let mut encoder = Encoder { py, out };
    encoder.out.clear();
    let result = encoder.value(Object::of(obj), 0);
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
            // Long strings (base64 terminal chunks, file contents) go 32 bytes at a time where
            // the CPU has AVX2; the check is one cached load.
            if n >= LONG_STRING && std::arch::is_x86_feature_detected!("avx2") {
                let (read, written) = simd::escape_avx2(text, out);
                i = read;
                out = out.add(written);
            }
            // Loads stay inside `text`, and each 16-byte store keeps the clean bytes and is
            // overwritten past them.
            while i + 16 <= n {
                let mask = simd::copy_escapes16(text.as_ptr().add(i), out);
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
                let mask = simd::escape_or_high_mask(chunk) & lanes;
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

impl CodeUnit for u8 {
    // Latin-1: a byte above 0x7F has its top bit set already.
    const LANES: usize = 16;

    /// # Safety
    /// As [`CodeUnit::narrow`] says.
    #[cfg(target_arch = "x86_64")]
    unsafe fn narrow(src: *const u8) -> std::arch::x86_64::__m128i {
        // SAFETY: the caller's.
        unsafe { simd::load16(src) }
    }

    /// # Safety
    /// As [`CodeUnit::store`] says.
    #[cfg(target_arch = "x86_64")]
    unsafe fn store(dst: *mut u8, bytes: std::arch::x86_64::__m128i) {
        // SAFETY: the caller's.
        unsafe { simd::store16(dst, bytes) }
    }
}

impl CodeUnit for u16 {
    const LANES: usize = 8;

    /// Narrowed as [`simd::narrow_ucs2`] says.
    ///
    /// # Safety
    /// As [`CodeUnit::narrow`] says.
    #[cfg(target_arch = "x86_64")]
    unsafe fn narrow(src: *const u16) -> std::arch::x86_64::__m128i {
        // SAFETY: the caller's.
        unsafe { simd::narrow_ucs2(src) }
    }

    /// # Safety
    /// As [`CodeUnit::store`] says.
    #[cfg(target_arch = "x86_64")]
    unsafe fn store(dst: *mut u8, bytes: std::arch::x86_64::__m128i) {
        // SAFETY: the caller's.
        unsafe { simd::store8(dst, bytes) }
    }
}

impl CodeUnit for u32 {
    // Strings with a character beyond U+FFFF (emoji) are rare: a unit at a time.
    const LANES: usize = 0;

    /// # Safety
    /// As [`CodeUnit::narrow`] says.
    #[cfg(target_arch = "x86_64")]
    unsafe fn narrow(_: *const u32) -> std::arch::x86_64::__m128i {
        unreachable!("UCS-4 strings are written a unit at a time")
    }

    /// # Safety
    /// As [`CodeUnit::store`] says.
    #[cfg(target_arch = "x86_64")]
    unsafe fn store(_: *mut u8, _: std::arch::x86_64::__m128i) {
        unreachable!("UCS-4 strings are written a unit at a time")
    }
}

/// Exact scalar types: encoding them runs no Python code.
#[inline]
fn is_leaf(obj: Object<'_>) -> bool {
    obj.is_exact_str()
        || obj.is_exact_int()
        || obj.is_exact_float()
        || obj.is_exact_bool()
        || obj.is_none()
}

impl Encoder<'_> {
    /// Encode `obj`.
    fn value(&mut self, obj: Object<'_>, depth: usize) -> PyResult<()> {
        if let Some(text) = obj.exact_str() {
            return self.string(text);
        }
        if let Some(dict) = obj.exact_dict() {
            return self.dict(dict, depth);
        }
        if let Some(list) = obj.exact_list() {
            Self::enter(self.py, depth)?;
            self.out.push(b'[');
            // The size is read again each step: it is the bound a mutation could change.
            let mut i = 0;
            while i < list.len() {
                if i > 0 {
                    self.out.push(b',');
                }
                // SAFETY: `i` is below the length just read; the item is encoded in place only
                // when that runs no Python code, and held first otherwise.
                let item = unsafe { list.item(i) };
                if let Some(text) = item.exact_str() {
                    // The commonest item, without a second dispatch.
                    self.string(text)?;
                } else if is_leaf(item) {
                    self.value(item, depth + 1)?;
                } else {
                    // Owned while encoded: Python code run for a nested object could remove
                    // it from the list.
                    let held = item.hold(self.py);
                    self.value(Object::of(&held), depth + 1)?;
                }
                i += 1;
            }
            self.out.push(b']');
            return Ok(());
        }
        if obj.is_none() {
            self.out.extend_from_slice(b"null");
            return Ok(());
        }
        if obj.is_true() {
            self.out.extend_from_slice(b"true");
            return Ok(());
        }
        if obj.is_false() {
            self.out.extend_from_slice(b"false");
            return Ok(());
        }
        if let Some(int) = obj.exact_int() {
            return self.int(int);
        }
        if let Some(v) = obj.exact_float() {
            self.float(v);
            return Ok(());
        }
        if let Some(tuple) = obj.exact_tuple() {
            Self::enter(self.py, depth)?;
            self.out.push(b'[');
            for (i, item) in tuple.items().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.value(item, depth + 1)?;
            }
            self.out.push(b']');
            return Ok(());
        }
        let owned = obj.hold(self.py);
        self.other(&owned, depth)
    }

    /// Subclasses and the few library types orjson also writes natively (enum members, UUIDs).
    /// Float and tuple subclasses (numpy scalars, named tuples) are refused, as orjson refuses
    /// them, so that both backends accept exactly the same objects.
    fn other(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        // `obj` is owned here, so what is borrowed from it stays valid.
        let object = Object::of(obj);
        if let Some(text) = object.str() {
            return self.string(text);
        }
        if let Some(dict) = object.dict() {
            return self.dict(dict, depth);
        }
        if let Ok(l) = obj.cast::<PyList>() {
            Self::enter(self.py, depth)?;
            self.out.push(b'[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.value(Object::of(&item), depth + 1)?;
            }
            self.out.push(b']');
            return Ok(());
        }
        if let Some(int) = object.int() {
            return self.int(int);
        }
        let kind = obj.get_type();
        // Only `uuid.UUID` itself, as orjson writes it (not a subclass, nor a look-alike).
        if kind.is(UUID.import(self.py, "uuid", "UUID")?) {
            let text = obj.str()?;
            return self.string(Str::of(&text));
        }
        if obj.is_instance(ENUM.import(self.py, "enum", "Enum")?)? {
            // A member's value may be a member, even itself: each step counts as a level, so
            // the limit ends the chain.
            Self::enter(self.py, depth)?;
            let value = obj.getattr("value")?;
            return self.value(Object::of(&value), depth + 1);
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

    #[allow(
        clippy::inline_always,
        reason = "one call per string, not two: most are short"
    )]
    #[inline(always)]
    fn string(&mut self, text: Str<'_>) -> PyResult<()> {
        if let Some(bytes) = text.compact_ascii() {
            self.escaped(bytes);
            return Ok(());
        }
        self.string_wide(text)
    }

    /// A `str` that is not compact ASCII. A compact one without cached UTF-8 is transcoded
    /// from its own code units: asking `CPython` for its UTF-8 (as orjson does) allocates a
    /// second copy of the text, kept on the object for as long as it lives.
    #[inline(never)]
    fn string_wide(&mut self, text: Str<'_>) -> PyResult<()> {
        let Some(wide) = text.compact_wide() else {
            // Instances of subclasses keep their text elsewhere; they are rare.
            return self.string_utf8(text);
        };
        // Where the UTF-8 is already cached (it was asked for before), copying it is faster.
        if let Some(cached) = wide.cached_utf8() {
            self.escaped(cached);
            return Ok(());
        }
        let written = match wide.units() {
            Units::Latin1(units) => self.escaped_units(units),
            Units::Ucs2(units) => self.escaped_units(units),
            Units::Ucs4(units) => self.escaped_units(units),
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
    fn string_utf8(&mut self, text: Str<'_>) -> PyResult<()> {
        let Some(bytes) = text.utf8() else {
            return Err(encode_error(
                self.py,
                "str is not valid UTF-8: surrogates not allowed".to_owned(),
            ));
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

    fn int(&mut self, int: Int<'_>) -> PyResult<()> {
        match int.value(self.py)? {
            IntValue::Signed(small) => {
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(small).as_bytes());
                return Ok(());
            }
            IntValue::Unsigned(large) => {
                self.out
                    .extend_from_slice(itoa::Buffer::new().format(large).as_bytes());
                return Ok(());
            }
            IntValue::Wider => {}
        }
        // Beyond 64 bits: the int's own decimal form (bounded by Python's digit limit), as
        // `int.__repr__` writes it: no method a subclass overrides runs, so nothing but
        // digits can come out.
        let owned = int.hold(self.py);
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

    fn dict(&mut self, dict: Dict<'_>, depth: usize) -> PyResult<()> {
        Self::enter(self.py, depth)?;
        self.out.push(b'{');
        let mut position = 0;
        // Python code run for a value (an enum's `value`, say) may change the dict: that fails
        // as a dict iterator fails, and as the pure backend's `items()` loop does.
        let size = dict.len();
        let mut seen = 0;
        // SAFETY: the key is read at once (reading a str runs no Python code), and the value
        // is encoded in place only when that runs no Python code, and held first otherwise.
        while let Some((key, value)) = unsafe { dict.next(&mut position) } {
            if seen == size {
                return Err(PyRuntimeError::new_err(
                    "dictionary keys changed during iteration",
                ));
            }
            if seen > 0 {
                self.out.push(b',');
            }
            seen += 1;
            let Some(key) = key.str() else {
                return Err(encode_error(self.py, "Dict key must be str".to_owned()));
            };
            self.string(key)?;
            self.out.push(b':');
            if let Some(text) = value.exact_str() {
                // The commonest value, without a second dispatch.
                self.string(text)?;
            } else if is_leaf(value) {
                self.value(value, depth + 1)?;
            } else {
                // Hold the value: encoding it may run Python code that drops it from the dict.
                let held = value.hold(self.py);
                self.value(Object::of(&held), depth + 1)?;
                if dict.len() != size {
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
