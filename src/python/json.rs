//! `loads` and `dumps`: one JSON document to Python objects and back.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

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
    match super::decode_error_type(py).and_then(|t| {
        t.call1((
            err.error_type.to_string(),
            position.line,
            position.column,
            offset,
        ))
    }) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// Decode one JSON document (bytes or str) into Python objects.
#[pyfunction]
pub fn loads<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(text) = data.cast::<PyString>() {
        let Ok(text) = text.to_str() else {
            let message = "str is not valid UTF-8: surrogates not allowed";
            return Err(
                match super::decode_error_type(py).and_then(|t| t.call1((message, 1, 1, 0))) {
                    Ok(instance) => PyErr::from_value(instance),
                    Err(e) => e,
                },
            );
        };
        return PARSER
            .python_parse(py, text.as_bytes())
            .map_err(|e| decode_error(py, text.as_bytes(), &e, true));
    }
    with_bytes(data, |bytes| {
        PARSER
            .python_parse(py, bytes)
            .map_err(|e| decode_error(py, bytes, &e, false))
    })?
}

/// Encode `obj` as one compact NDJSON frame: UTF-8, ending in a single `\n`.
#[pyfunction]
pub fn dumps<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(256);
    Encoder { out: &mut out }.value(obj, 0)?;
    out.push(b'\n');
    Ok(PyBytes::new(py, &out))
}

fn encode_error(py: Python<'_>, message: String) -> PyErr {
    match super::encode_error_type(py).and_then(|t| t.call1((message,))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

/// Bytes that must be escaped inside a JSON string.
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

impl Encoder<'_> {
    fn value(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        // Exact types first: one pointer comparison each on the common path.
        if obj.is_exact_instance_of::<PyString>() {
            return self.string(obj.cast::<PyString>()?);
        }
        if obj.is_exact_instance_of::<PyDict>() {
            return self.dict(obj.cast::<PyDict>()?, depth);
        }
        if obj.is_exact_instance_of::<PyList>() {
            return self.list(obj.py(), obj.cast::<PyList>()?.iter(), depth);
        }
        if obj.is_none() {
            self.out.extend_from_slice(b"null");
            return Ok(());
        }
        if obj.is_exact_instance_of::<PyBool>() {
            let truth = obj.is_truthy()?;
            self.out
                .extend_from_slice(if truth { b"true" } else { b"false" });
            return Ok(());
        }
        if obj.is_exact_instance_of::<PyInt>() {
            return self.int(obj);
        }
        if obj.is_exact_instance_of::<PyFloat>() {
            return self.float(obj);
        }
        if obj.is_exact_instance_of::<PyTuple>() {
            return self.list(obj.py(), obj.cast::<PyTuple>()?.iter(), depth);
        }
        self.other(obj, depth)
    }

    /// Subclasses and the few library types orjson also writes natively (enum members, UUIDs).
    /// Float and tuple subclasses (numpy scalars, named tuples) are refused, as orjson refuses
    /// them, so that both backends accept exactly the same objects.
    fn other(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<()> {
        if let Ok(s) = obj.cast::<PyString>() {
            return self.string(s);
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            return self.dict(d, depth);
        }
        if let Ok(l) = obj.cast::<PyList>() {
            return self.list(obj.py(), l.iter(), depth);
        }
        if obj.is_instance_of::<PyInt>() {
            return self.int(obj);
        }
        let py = obj.py();
        let kind = obj.get_type();
        let module: String = kind.module().map(|m| m.to_string()).unwrap_or_default();
        if module == "uuid" && kind.name().is_ok_and(|n| n == "UUID") {
            return self.string(&obj.str()?);
        }
        let enum_type = py.import("enum")?.getattr("Enum")?;
        if obj.is_instance(&enum_type)? {
            return self.value(&obj.getattr("value")?, depth);
        }
        let name = kind
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string());
        Err(encode_error(
            py,
            format!("Type is not JSON serializable: {name}"),
        ))
    }

    fn enter(py: Python<'_>, depth: usize) -> PyResult<()> {
        if depth >= MAX_DUMPS_DEPTH {
            return Err(encode_error(py, "Recursion limit reached".to_owned()));
        }
        Ok(())
    }

    fn string(&mut self, s: &Bound<'_, PyString>) -> PyResult<()> {
        let text = s.to_str().map_err(|_| {
            encode_error(
                s.py(),
                "str is not valid UTF-8: surrogates not allowed".to_owned(),
            )
        })?;
        self.escaped(text.as_bytes());
        Ok(())
    }

    fn escaped(&mut self, bytes: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if !needs_escape(b) {
                continue;
            }
            self.out.extend_from_slice(&bytes[start..i]);
            match b {
                b'"' => self.out.extend_from_slice(b"\\\""),
                b'\\' => self.out.extend_from_slice(b"\\\\"),
                b'\n' => self.out.extend_from_slice(b"\\n"),
                b'\r' => self.out.extend_from_slice(b"\\r"),
                b'\t' => self.out.extend_from_slice(b"\\t"),
                0x08 => self.out.extend_from_slice(b"\\b"),
                0x0c => self.out.extend_from_slice(b"\\f"),
                _ => self.out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ]),
            }
            start = i + 1;
        }
        self.out.extend_from_slice(&bytes[start..]);
        self.out.push(b'"');
    }

    fn int(&mut self, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(v) = obj.extract::<i64>() {
            self.out
                .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        } else if let Ok(v) = obj.extract::<u64>() {
            self.out
                .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        } else {
            // Beyond 64 bits: Python's own decimal form (bounded by its digit limit).
            let text = obj
                .call_method0("__index__")?
                .str()
                .map_err(|e| encode_error(obj.py(), e.to_string()))?;
            self.out.extend_from_slice(text.to_str()?.as_bytes());
        }
        Ok(())
    }

    fn float(&mut self, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        let v: f64 = obj.extract()?;
        if v.is_finite() {
            let mut buffer = ryu::Buffer::new();
            let text = buffer.format_finite(v).as_bytes();
            // Shortest round-trip digits as ryu gives them; orjson writes a positive exponent
            // with its sign (`1e+16`), and so do we.
            match text.iter().position(|&b| b == b'e') {
                Some(e) if text.get(e + 1) != Some(&b'-') => {
                    self.out.extend_from_slice(&text[..=e]);
                    self.out.push(b'+');
                    self.out.extend_from_slice(&text[e + 1..]);
                }
                _ => self.out.extend_from_slice(text),
            }
        } else {
            // JSON has no NaN or infinity; orjson writes null, and so do we.
            self.out.extend_from_slice(b"null");
        }
        Ok(())
    }

    fn list<'py>(
        &mut self,
        py: Python<'py>,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        depth: usize,
    ) -> PyResult<()> {
        Self::enter(py, depth)?;
        self.out.push(b'[');
        let mut first = true;
        for item in items {
            if !first {
                self.out.push(b',');
            }
            first = false;
            self.value(&item, depth + 1)?;
        }
        self.out.push(b']');
        Ok(())
    }

    fn dict(&mut self, d: &Bound<'_, PyDict>, depth: usize) -> PyResult<()> {
        Self::enter(d.py(), depth)?;
        self.out.push(b'{');
        let mut first = true;
        for (key, value) in d.iter() {
            if !first {
                self.out.push(b',');
            }
            first = false;
            let key = key
                .cast_into::<PyString>()
                .map_err(|_| encode_error(d.py(), "Dict key must be str".to_owned()))?;
            self.string(&key)?;
            self.out.push(b':');
            self.value(&value, depth + 1)?;
        }
        self.out.push(b'}');
        Ok(())
    }
}
