//! `loads` and `dumps`: one JSON document to Python objects and back.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyType};

use super::decoder::{PARSER, with_bytes};

/// Containers may nest this deep (the outermost is at depth 0); orjson has the same limit, so
/// both backends refuse the same documents, and a self-referencing container fails instead of
/// recursing forever.
const MAX_DUMPS_DEPTH: usize = 254;

fn decode_error(py: Python<'_>, data: &[u8], err: &jiter::JsonError, char_offsets: bool) -> PyErr {
    let position = err.get_position(data);
    let offset = if char_offsets {
        // For `str` input, report the offset in characters, as `json` does.
        String::from_utf8_lossy(&data[..err.index.min(data.len())])
            .chars()
            .count()
    } else {
        err.index
    };
    let args = (
        err.error_type.to_string(),
        position.line,
        position.column,
        offset,
    );
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
    with_bytes(data, |bytes| decode(py, bytes, false))?
}

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

/// Write the escape sequence for `byte` at `dst`; return the end.
///
/// # Safety
/// `dst` must have room for 6 bytes.
unsafe fn write_escape(dst: *mut u8, byte: u8) -> *mut u8 {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        b'\n' => Some(b'n'),
        b'\r' => Some(b'r'),
        b'\t' => Some(b't'),
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        _ => None,
    };
    unsafe {
        if let Some(letter) = short {
            dst.write(b'\\');
            dst.add(1).write(letter);
            return dst.add(2);
        }
        let long = [
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ];
        std::ptr::copy_nonoverlapping(long.as_ptr(), dst, 6);
        dst.add(6)
    }
}

/// Copy `block` to `dst`, escaping what JSON requires; return the end of what was written.
///
/// # Safety
/// `dst` must have room for `block.len() * 6 + 16` bytes.
unsafe fn escape_block(block: &[u8], mut dst: *mut u8) -> *mut u8 {
    let mut i = 0;
    let n = block.len();
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128,
        };
        // SAFETY: SSE2 is baseline on x86_64; loads stay inside `block`, and each 16-byte
        // store fits the reservation (clean bytes are kept, the rest is overwritten). Loads
        // and stores are unaligned (`loadu`/`storeu`), so the pointer casts need no alignment.
        #[allow(clippy::cast_ptr_alignment)]
        unsafe {
            let quote = _mm_set1_epi8(b'"'.cast_signed());
            let backslash = _mm_set1_epi8(b'\\'.cast_signed());
            let below_space = _mm_set1_epi8(0x1f);
            while i + 16 <= n {
                let chunk = _mm_loadu_si128(block.as_ptr().add(i).cast::<__m128i>());
                _mm_storeu_si128(dst.cast::<__m128i>(), chunk);
                let control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, below_space), below_space);
                let special = _mm_or_si128(
                    _mm_cmpeq_epi8(chunk, quote),
                    _mm_cmpeq_epi8(chunk, backslash),
                );
                let mask = _mm_movemask_epi8(_mm_or_si128(control, special));
                if mask == 0 {
                    i += 16;
                    dst = dst.add(16);
                    continue;
                }
                let clean = mask.trailing_zeros() as usize;
                dst = write_escape(dst.add(clean), block[i + clean]);
                i += clean + 1;
            }
        }
    }
    // The last 1..16 bytes (all of most keys and short values), when none needs an escape.
    // SAFETY: at most 16 bytes, within the reservation.
    if i < n && n - i <= 16 && unsafe { copy_clean_tail(&block[i..], dst) } {
        return unsafe { dst.add(n - i) };
    }
    // Eight bytes at a time for what is left.
    while let Some(chunk) = block.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let hits = escape_hits(word);
        // SAFETY: eight bytes fit the reservation (six per input byte, plus 16).
        unsafe { dst.cast::<[u8; 8]>().write_unaligned(word.to_le_bytes()) };
        if hits == 0 {
            i += 8;
            dst = unsafe { dst.add(8) };
            continue;
        }
        let clean = (hits.trailing_zeros() / 8) as usize;
        dst = unsafe { write_escape(dst.add(clean), block[i + clean]) };
        i += clean + 1;
    }
    while i < n {
        let byte = block[i];
        // SAFETY: at most six bytes per input byte, within the reservation.
        unsafe {
            if needs_escape(byte) {
                dst = write_escape(dst, byte);
            } else {
                dst.write(byte);
                dst = dst.add(1);
            }
        }
        i += 1;
    }
    dst
}

/// Copy `tail` (1..=16 bytes) with two overlapping word loads and stores if no byte of it needs
/// an escape; otherwise write nothing and return false. Loading the words straight from the
/// source (instead of copying the tail into a padded buffer and loading that) avoids a
/// store-forwarding stall on every short string.
///
/// # Safety
/// `dst` must have room for 16 bytes.
unsafe fn copy_clean_tail(tail: &[u8], dst: *mut u8) -> bool {
    // Spaces in the upper half of a widened 4-byte word: they never need an escape.
    const SPACES_HIGH: u64 = 0x2020_2020_0000_0000;
    let n = tail.len();
    let src = tail.as_ptr();
    // SAFETY: every load lies within `tail` and every store within `dst`'s 16 bytes; the
    // second word overlaps the first, so together they cover all `n` bytes.
    unsafe {
        if n >= 8 {
            let low = src.cast::<u64>().read_unaligned();
            let high = src.add(n - 8).cast::<u64>().read_unaligned();
            if escape_hits(low) | escape_hits(high) != 0 {
                return false;
            }
            dst.cast::<u64>().write_unaligned(low);
            dst.add(n - 8).cast::<u64>().write_unaligned(high);
            return true;
        }
        if n >= 4 {
            let low = src.cast::<u32>().read_unaligned();
            let high = src.add(n - 4).cast::<u32>().read_unaligned();
            if escape_hits(u64::from(low) | SPACES_HIGH)
                | escape_hits(u64::from(high) | SPACES_HIGH)
                != 0
            {
                return false;
            }
            dst.cast::<u32>().write_unaligned(low);
            dst.add(n - 4).cast::<u32>().write_unaligned(high);
            return true;
        }
        for (k, &byte) in tail.iter().enumerate() {
            if needs_escape(byte) {
                return false;
            }
            dst.add(k).write(byte);
        }
    }
    true
}

/// The high bit of each byte of `word` that must be escaped (`"`, `\\`, below 0x20). Word-at-a-
/// time "has byte less than n" / "has zero byte" tests: the lowest flagged byte is always a
/// true match (false positives appear only above a true one).
fn escape_hits(word: u64) -> u64 {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = word ^ (LOW * u64::from(b'"'));
    let backslash = word ^ (LOW * u64::from(b'\\'));
    let control = word.wrapping_sub(LOW * 0x20) & !word;
    let quotes = quote.wrapping_sub(LOW) & !quote;
    let backslashes = backslash.wrapping_sub(LOW) & !backslash;
    (control | quotes | backslashes) & HIGH
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

/// Bytes that must be escaped inside a JSON string.
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
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
                    if is_leaf(item) {
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
        let module: String = kind.module().map(|m| m.to_string()).unwrap_or_default();
        if module == "uuid" && kind.name().is_ok_and(|n| n == "UUID") {
            let text = obj.str()?;
            return unsafe { self.string(text.as_ptr()) };
        }
        if obj.is_instance(ENUM.import(self.py, "enum", "Enum")?)? {
            let value = obj.getattr("value")?;
            return unsafe { self.value(value.as_ptr(), depth) };
        }
        let name = kind
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        Err(encode_error(
            self.py,
            format!("Type is not JSON serializable: {name}"),
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
    unsafe fn string(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: a compact ASCII str holds its characters inline, which are also its UTF-8.
        if unsafe { ffi::PyUnicode_IS_COMPACT_ASCII(obj) } != 0 {
            let bytes = unsafe {
                let size = usize::try_from(ffi::PyUnicode_GET_LENGTH(obj)).unwrap_or(0);
                std::slice::from_raw_parts(ffi::PyUnicode_DATA(obj).cast::<u8>(), size)
            };
            self.escaped(bytes);
            return Ok(());
        }
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
    fn escaped(&mut self, bytes: &[u8]) {
        self.out.push(b'"');
        // Blocks bound the worst-case reservation (six output bytes per input byte).
        for block in bytes.chunks(ESCAPE_BLOCK) {
            self.out.reserve(block.len() * 6 + 16);
            // SAFETY: the reservation covers the worst case of the block plus the 16-byte
            // over-store of the vector path; `set_len` covers only bytes written.
            unsafe {
                let start = self.out.as_mut_ptr().add(self.out.len());
                let end = escape_block(block, start);
                let written = usize::try_from(end.offset_from(start)).unwrap_or(0);
                self.out.set_len(self.out.len() + written);
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
        // Beyond 64 bits: Python's own decimal form (bounded by its digit limit).
        let owned = unsafe { Bound::from_borrowed_ptr(self.py, obj) };
        let text = owned
            .call_method0("__index__")?
            .str()
            .map_err(|e| encode_error(self.py, e.to_string()))?;
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
        let mut first = true;
        // SAFETY: PyDict_Next hands out borrowed entries of a live dict and checks its bounds.
        while unsafe { ffi::PyDict_Next(obj, &raw mut position, &raw mut key, &raw mut value) } != 0
        {
            if !first {
                self.out.push(b',');
            }
            first = false;
            if unsafe { ffi::PyUnicode_Check(key) } == 0 {
                return Err(encode_error(self.py, "Dict key must be str".to_owned()));
            }
            // Reading a str runs no Python code, so the key needs no reference of its own.
            unsafe { self.string(key)? };
            self.out.push(b':');
            if unsafe { is_leaf(value) } {
                unsafe { self.value(value, depth + 1)? };
            } else {
                // Hold the value: encoding it may run Python code that drops it from the dict.
                let held = unsafe { Bound::from_borrowed_ptr(self.py, value) };
                unsafe { self.value(held.as_ptr(), depth + 1)? };
            }
        }
        self.out.push(b'}');
        Ok(())
    }
}
