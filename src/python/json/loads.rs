//! `loads`: one JSON document to Python objects, by a fast path or, for what it declines,
//! jiter. The rules are in [`docs/behaviour/json.md`](../../../docs/behaviour/json.md).
//!
//! The fast path handles the documents ACP traffic is made of (objects, arrays, strings, 64-bit integers,
//! floats, literals) and declines everything else by returning `None`: integers beyond 64 bits,
//! lone surrogate escapes, nesting deeper than jiter allows, and any syntax error. The caller
//! then decodes with jiter, which gives the exact value or the exact error. So this path only
//! has to be right on what it accepts; what it accepts is a strict subset of JSON, decoded to
//! the same values as `json.loads`.
//!
//! Written by hand (rather than only using jiter) for speed: object keys come from a small
//! per-thread cache of `str` objects whose hashes are already computed, ASCII strings are
//! copied into a fresh `str` in one step, and containers are filled through the C API.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::PARSER;
use super::ffi::{self, Literal, Owned};
use crate::json_text;
use crate::python::with_bytes_or_str;

/// Decode one JSON document (bytes or str) into Python objects.
#[pyfunction]
pub fn loads<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(text) = data.cast::<PyString>() {
        let Ok(text) = text.to_str() else {
            let message = "str is not valid UTF-8: surrogates not allowed";
            return Err(crate::python::new_error(
                crate::python::decode_error_type(py),
                (message, 1, 1, 0),
            ));
        };
        return decode_document(py, text.as_bytes(), true);
    }
    with_bytes_or_str(data, |bytes| {
        // A UTF-8 byte order mark is skipped, as `json.loads` skips it in bytes.
        decode_document(py, bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes), false)
    })?
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The Python value of JSON text known to be valid (an opaque value a store kept as text).
pub(crate) fn decode_valid<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    decode_document(py, bytes, false)
}

/// The fast path, or jiter for what it declines (exact values and exact errors).
fn decode_document<'py>(
    py: Python<'py>,
    bytes: &[u8],
    char_offsets: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(value) = decode(py, bytes) {
        return Ok(value);
    }
    PARSER
        .python_parse(py, bytes)
        .map_err(|e| crate::python::decode_error(py, bytes, &e, char_offsets))
}

/// jiter's nesting rule: no value more than this many containers below the top-level value.
pub(crate) const MAX_DEPTH: usize = 200;
/// jiter's limit on the digits of a number's integer part.
const MAX_INT_DIGITS: usize = 4300;
/// Keys up to this length are cached.
const MAX_CACHED_KEY: usize = 64;
const KEY_CACHE_SLOTS: usize = 1024;

struct CachedKey {
    bytes: Box<[u8]>,
    object: Py<PyAny>,
}

thread_local! {
    static KEY_CACHE: RefCell<Vec<Option<CachedKey>>> = const { RefCell::new(Vec::new()) };
}

/// Decode `data`, or `None` when the fast path declines (see the module docs).
pub fn decode<'py>(py: Python<'py>, data: &[u8]) -> Option<Bound<'py, PyAny>> {
    KEY_CACHE.with(|cell| {
        // Making an object may collect garbage, and a finalizer may decode too: the nested
        // call finds the cache taken and declines, and the general parser decodes.
        let Ok(mut cache) = cell.try_borrow_mut() else {
            return None;
        };
        let cache = &mut *cache;
        if cache.is_empty() {
            cache.resize_with(KEY_CACHE_SLOTS, || None);
        }
        let mut parser = Parser {
            py,
            data,
            pos: 0,
            cache,
        };
        parser.skip_ws();
        let value = parser.value(0)?;
        parser.skip_ws();
        if parser.pos != data.len() {
            return None;
        }
        Some(value.into_bound())
    })
}

struct Parser<'a, 'py> {
    py: Python<'py>,
    data: &'a [u8],
    pos: usize,
    cache: &'a mut Vec<Option<CachedKey>>,
}

impl<'a, 'py> Parser<'a, 'py> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// After a container's member: `Some(false)` on `,` (more follow), `Some(true)` on
    /// `close`, `None` on anything else.
    fn separator(&mut self, close: u8) -> Option<bool> {
        self.skip_ws();
        let byte = self.peek()?;
        self.pos += 1;
        self.skip_ws();
        match byte {
            b',' => Some(false),
            _ if byte == close => Some(true),
            _ => None,
        }
    }

    /// Parse one value at nesting level `level`.
    fn value(&mut self, level: usize) -> Option<Owned<'py>> {
        match self.peek()? {
            b'{' => self.object(level),
            b'[' => self.array(level),
            b'"' => {
                self.pos += 1;
                self.string()
            }
            b't' => self.literal(b"true", Literal::True),
            b'f' => self.literal(b"false", Literal::False),
            b'n' => self.literal(b"null", Literal::None),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8], literal: Literal) -> Option<Owned<'py>> {
        if self.data.get(self.pos..self.pos + word.len())? != word {
            return None;
        }
        self.pos += word.len();
        Some(ffi::literal(self.py, literal))
    }

    fn object(&mut self, level: usize) -> Option<Owned<'py>> {
        self.pos += 1;
        let dict = ffi::new_dict(self.py)?;
        self.skip_ws();
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(dict);
        }
        if level >= MAX_DEPTH {
            return None;
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            self.pos += 1;
            let key = self.key()?;
            self.skip_ws();
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(level + 1)?;
            ffi::dict_set(&dict, &key, &value)?;
            if self.separator(b'}')? {
                return Some(dict);
            }
        }
    }

    fn array(&mut self, level: usize) -> Option<Owned<'py>> {
        self.pos += 1;
        self.skip_ws();
        let mut items: Vec<Owned<'py>> = Vec::new();
        if self.peek()? == b']' {
            self.pos += 1;
        } else {
            if level >= MAX_DEPTH {
                return None;
            }
            loop {
                items.push(self.value(level + 1)?);
                if self.separator(b']')? {
                    break;
                }
            }
        }
        ffi::new_list(self.py, items)
    }

    /// The end of the string body starting at `self.pos` (the closing quote's index), and
    /// whether it has escapes and non-ASCII bytes. `None` on a raw control character or an
    /// unterminated string.
    fn scan_string(&self) -> Option<(usize, bool, bool)> {
        let data = self.data;
        let mut i = self.pos;
        let mut escapes = false;
        let mut non_ascii = false;
        #[cfg(target_arch = "x86_64")]
        while i + 16 <= data.len() {
            // SAFETY: `i + 16 <= data.len()`: the 16 bytes read are inside `data`.
            let (mask, high) = unsafe { crate::simd::json::string_stops(data.as_ptr().add(i)) };
            if mask == 0 {
                non_ascii |= high != 0;
                i += 16;
                continue;
            }
            let at = mask.trailing_zeros();
            non_ascii |= high & ((1 << at) - 1) != 0;
            i += at as usize;
            match data[i] {
                b'"' => return Some((i, escapes, non_ascii)),
                b'\\' => {
                    escapes = true;
                    // Skip the escaped character (validated later).
                    i += 2;
                }
                _ => return None,
            }
        }
        while let Some(&b) = data.get(i) {
            match b {
                b'"' => return Some((i, escapes, non_ascii)),
                b'\\' => {
                    escapes = true;
                    i += 2;
                }
                0..=0x1f => return None,
                0x80.. => {
                    non_ascii = true;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        None
    }

    /// The raw body of a string (the opening quote consumed), with whether it has escapes
    /// and non-ASCII bytes; moves past the closing quote.
    fn string_body(&mut self) -> Option<(&'a [u8], bool, bool)> {
        let (end, escapes, non_ascii) = self.scan_string()?;
        let data: &'a [u8] = self.data;
        let body = &data[self.pos..end];
        self.pos = end + 1;
        Some((body, escapes, non_ascii))
    }

    /// A string value (the opening quote consumed).
    fn string(&mut self) -> Option<Owned<'py>> {
        let (body, escapes, non_ascii) = self.string_body()?;
        str_value(self.py, body, escapes, non_ascii)
    }

    /// An object key: short plain keys come from the cache.
    fn key(&mut self) -> Option<Owned<'py>> {
        let (body, escapes, non_ascii) = self.string_body()?;
        if escapes || body.len() > MAX_CACHED_KEY {
            return str_value(self.py, body, escapes, non_ascii);
        }
        let slot = key_slot(body);
        if let Some(Some(cached)) = self.cache.get(slot)
            && same_bytes(&cached.bytes, body)
        {
            return Some(Owned::of(self.py, &cached.object));
        }
        let key = new_str(self.py, body, non_ascii)?;
        // Hash now, once: the cached object carries it to every dict it goes into.
        ffi::hash(&key)?;
        let object = key.unbind();
        self.cache[slot] = Some(CachedKey {
            bytes: body.into(),
            object,
        });
        Some(key)
    }

    fn number(&mut self) -> Option<Owned<'py>> {
        let data = self.data;
        let start = self.pos;
        let mut i = start;
        let negative = data.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        match data.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => i = skip_digits(data, i),
            _ => return None,
        }
        let int_end = i;
        // jiter refuses an integer part of more than 4300 digits, in a float too (CPython's
        // limit on int conversion): decline, so that jiter gives its error whatever else the
        // document holds.
        if int_end - int_start > MAX_INT_DIGITS {
            return None;
        }
        let mut is_float = false;
        if data.get(i) == Some(&b'.') {
            let fraction_end = skip_digits(data, i + 1);
            if fraction_end == i + 1 {
                return None;
            }
            i = fraction_end;
            is_float = true;
        }
        if let Some(b'e' | b'E') = data.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = data.get(i) {
                i += 1;
            }
            let exponent_end = skip_digits(data, i);
            if exponent_end == i {
                return None;
            }
            i = exponent_end;
            is_float = true;
        }
        // A digit right after a leading zero (`01`) is malformed; so is anything number-like
        // glued on; leave those to the slow path's error.
        if data
            .get(i)
            .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
        {
            return None;
        }
        self.pos = i;
        if is_float {
            // SAFETY: the slice is ASCII digits and signs.
            let text = unsafe { std::str::from_utf8_unchecked(&data[start..i]) };
            // Rust's parser rounds correctly, as CPython's float() does.
            let value: f64 = text.parse().ok()?;
            return ffi::new_float(self.py, value);
        }
        // 18 digits always fit an i64; longer integers go to the slow path (bigints).
        if int_end - int_start > 18 {
            return None;
        }
        let mut value: i64 = 0;
        for &digit in &data[int_start..int_end] {
            value = value * 10 + i64::from(digit - b'0');
        }
        if negative {
            value = -value;
        }
        ffi::new_int(self.py, value)
    }
}

/// The index after the run of ASCII digits starting at `i`.
fn skip_digits(data: &[u8], mut i: usize) -> usize {
    while data.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// Equality of short byte strings without a call into `memcmp`.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut chunks_a = a.chunks_exact(8);
    let mut chunks_b = b.chunks_exact(8);
    for (x, y) in chunks_a.by_ref().zip(chunks_b.by_ref()) {
        if u64::from_ne_bytes(x.try_into().unwrap_or_default())
            != u64::from_ne_bytes(y.try_into().unwrap_or_default())
        {
            return false;
        }
    }
    chunks_a
        .remainder()
        .iter()
        .zip(chunks_b.remainder())
        .all(|(x, y)| x == y)
}

fn key_slot(bytes: &[u8]) -> usize {
    // FNV-1a over at most the first 16 bytes and the length: cheap and good enough to spread
    // the few dozen keys of a protocol.
    #[allow(clippy::cast_possible_truncation)] // only spreads keys; the length is short
    let mut hash: u32 = 0x811c_9dc5 ^ (bytes.len() as u32);
    for &b in bytes.iter().take(16) {
        hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    hash as usize % KEY_CACHE_SLOTS
}

/// A string's value from its raw body.
fn str_value<'py>(
    py: Python<'py>,
    body: &[u8],
    escapes: bool,
    non_ascii: bool,
) -> Option<Owned<'py>> {
    if escapes {
        let (text, non_ascii) = unescape(body, non_ascii)?;
        return new_str(py, &text, non_ascii);
    }
    new_str(py, body, non_ascii)
}

/// A new `str` from UTF-8 bytes; `None` if they are not valid UTF-8.
fn new_str<'py>(py: Python<'py>, bytes: &[u8], non_ascii: bool) -> Option<Owned<'py>> {
    if !non_ascii {
        // SAFETY: `non_ascii` is false only when no byte is above 0x7f.
        return unsafe { ffi::new_ascii_str(py, bytes) };
    }
    // CPython validates the UTF-8 here; invalid input declines the fast path.
    ffi::new_str(py, bytes)
}

/// Resolve the escapes of a string body: the bytes, and whether any is non-ASCII. `None` on a
/// malformed escape or a lone surrogate. UTF-8 validity is checked when the `str` is made.
/// The escapes are decoded here, not by `json_text::unescape` (the frame decoder's): a call
/// an escape made `loads` 7% slower on tool output with an escape every dozen bytes.
fn unescape(body: &[u8], mut non_ascii: bool) -> Option<(Vec<u8>, bool)> {
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut i = 0;
    while let Some(run) = memchr::memchr(b'\\', &body[i..]) {
        out.extend_from_slice(&body[i..i + run]);
        i += run;
        let code = *body.get(i + 1)?;
        i += 2;
        let simple = match code {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let high = json_text::hex4(body.get(i..i + 4)?)?;
                i += 4;
                let scalar = match high {
                    0xD800..=0xDBFF => {
                        if body.get(i..i + 2)? != b"\\u" {
                            return None;
                        }
                        let low = json_text::hex4(body.get(i + 2..i + 6)?)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        i += 6;
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => high,
                };
                let c = char::from_u32(scalar)?;
                non_ascii |= !c.is_ascii();
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                continue;
            }
            _ => return None,
        };
        out.push(simple);
    }
    out.extend_from_slice(&body[i..]);
    Some((out, non_ascii))
}
