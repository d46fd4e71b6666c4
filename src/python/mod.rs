//! The `PyO3` layer: thin wrappers that convert at the edge. Each error of framing and JSON is
//! mapped to its Python exception here, once (the terminal's in [`terminal`]); the exception
//! classes live in `acpwire._errors` so both backends raise the same classes. Also here: the
//! argument conversions every binding shares (sizes, byte buffers).

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyMemoryView, PyType};

use crate::framing::FrameError;

mod framing;
mod json;
mod session;
pub(crate) mod terminal;

// Small, short-lived allocations dominate parsing and reduction; mimalloc serves them much
// faster than the system allocator (as in pydantic-core).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Freed frame buffers past which a framer's owner has the allocator return free memory.
const RETURN_AFTER_BYTES: usize = 4 << 20;

/// When a framer's owner has mimalloc return freed memory to the system now rather than after
/// its delay: after frames of megabytes, whose buffers would otherwise stay resident beside
/// what the owner keeps of them.
#[derive(Default)]
struct FreedBuffers {
    /// The framer's `released_bytes()` when memory was last returned.
    returned_at: u64,
}

impl FreedBuffers {
    /// After a feed: `released`, the framer's `released_bytes()`; `held`, what the owner keeps.
    /// Once the buffers freed since the last return come to an eighth of `held` (at least
    /// 4 MiB), free memory is returned: each return, a walk of the heap, is paid for by bytes
    /// reduced in proportion to the heap.
    fn after_feed(&mut self, released: u64, held: usize) {
        if released - self.returned_at >= (held / 8).max(RETURN_AFTER_BYTES) as u64 {
            // SAFETY: no arguments to uphold; mimalloc is this extension's allocator.
            unsafe { libmimalloc_sys::mi_collect(true) }
            self.returned_at = released;
        }
    }
}

static FRAME_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ENCODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

const ERRORS_MODULE: &str = "acpwire._errors";

pub(crate) fn frame_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    FRAME_ERROR.import(py, ERRORS_MODULE, "FrameError")
}

pub(crate) fn decode_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DECODE_ERROR.import(py, ERRORS_MODULE, "DecodeError")
}

pub(crate) fn encode_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ENCODE_ERROR.import(py, ERRORS_MODULE, "EncodeError")
}

/// A rejected frame as an `acpwire.FrameError`.
pub(crate) fn frame_error_to_py<'py>(
    py: Python<'py>,
    e: &FrameError,
) -> PyResult<Bound<'py, PyAny>> {
    frame_error_type(py)?.call1((e.kind.reason(), e.line, e.offset, &e.excerpt, &e.detail))
}

/// A jiter error as an `acpwire.DecodeError`, placed as `json` places it.
pub(crate) fn decode_error(
    py: Python<'_>,
    data: &[u8],
    err: &jiter::JsonError,
    char_offsets: bool,
) -> PyErr {
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
    new_error(decode_error_type(py), args)
}

/// An `acpwire.EncodeError` saying `message`.
pub(crate) fn encode_error(py: Python<'_>, message: String) -> PyErr {
    new_error(encode_error_type(py), (message,))
}

/// An instance of one of the shared exception classes, as a `PyErr` to return. If the class
/// cannot be had or built, that failure is what is raised.
pub(crate) fn new_error<'py, A>(exception: PyResult<&Bound<'py, PyType>>, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    match exception.and_then(|t| t.call1(args)) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// A size argument: an int (or anything with `__index__`) of any magnitude. Holds `None` when
/// it is negative; past the machine word it saturates, which is as good as unlimited for a
/// size, so both backends take every int Python can hold.
#[derive(Clone, Copy)]
pub(crate) struct Size(pub(crate) Option<usize>);

impl Size {
    pub(crate) const fn of(n: usize) -> Self {
        Size(Some(n))
    }
}

impl FromPyObject<'_, '_> for Size {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        match obj.extract::<i64>() {
            Ok(v) => Ok(Size(usize::try_from(v).ok())),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
                // Past i64: up to 2**64 - 1 as it is, beyond that saturated there.
                if let Ok(v) = obj.extract::<u64>() {
                    return Ok(Size(Some(usize::try_from(v).unwrap_or(usize::MAX))));
                }
                let negative = obj.call_method0("__index__")?.lt(0)?;
                Ok(Size((!negative).then_some(usize::MAX)))
            }
            Err(e) => Err(e),
        }
    }
}

/// Borrow the bytes of `bytes`, or copy any other buffer (bytearray, memoryview): a mutable
/// buffer must not be read while Python code could change it.
pub(crate) fn with_bytes<R>(data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    with_buffer(data, "bytes, bytearray or memoryview", f)
}

/// [`with_bytes`] for an argument that may also be a `str` (handled by the caller): the type
/// error names it.
pub(crate) fn with_bytes_or_str<R>(
    data: &Bound<'_, PyAny>,
    f: impl FnOnce(&[u8]) -> R,
) -> PyResult<R> {
    with_buffer(data, "bytes, bytearray, memoryview or str", f)
}

fn with_buffer<R>(
    data: &Bound<'_, PyAny>,
    accepted: &str,
    f: impl FnOnce(&[u8]) -> R,
) -> PyResult<R> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(f(bytes.as_bytes()));
    }
    if let Ok(buffer) = PyBuffer::<u8>::get(data) {
        let copied = buffer.to_vec(data.py())?;
        return Ok(f(&copied));
    }
    // Not a plain buffer of unsigned bytes: let a memoryview judge, as the pure backend does.
    // A released buffer raises its own ValueError; signed bytes ('b') and zero-dimensional
    // views are bytes all the same; items wider than a byte are refused with their format.
    let type_name = |data: &Bound<'_, PyAny>| {
        data.get_type()
            .name()
            .map_or_else(|_| "?".to_owned(), |n| n.to_string())
    };
    let view = match PyMemoryView::from(data) {
        Ok(view) => view,
        Err(e) if e.is_instance_of::<PyTypeError>(data.py()) => {
            return Err(PyTypeError::new_err(format!(
                "expected {accepted}, not {}",
                type_name(data)
            )));
        }
        Err(e) => return Err(e),
    };
    let format: String = view.getattr("format")?.extract()?;
    if !BYTE_FORMATS.contains(&format.as_str()) {
        return Err(PyTypeError::new_err(format!(
            "expected {accepted}, not {} of item format '{format}'",
            type_name(data)
        )));
    }
    let copied = view.call_method0("tobytes")?;
    Ok(f(copied.cast::<PyBytes>()?.as_bytes()))
}

/// Item formats read as bytes: unsigned, signed and `char`.
const BYTE_FORMATS: [&str; 3] = ["B", "b", "c"];

/// The cyclic garbage collector switched off for as long as this lives, then back on if it
/// was on. Building a large result makes thousands of container objects; each few hundred
/// would otherwise trigger a collection that walks only what is being built. Nothing runs
/// Python code meanwhile, and the collection owed runs at the next allocation after.
pub(crate) struct GcPause {
    was_enabled: bool,
}

impl GcPause {
    pub(crate) fn new() -> Self {
        // SAFETY: callers hold the GIL (they build Python objects).
        let was_enabled = unsafe { pyo3::ffi::PyGC_Disable() } != 0;
        Self { was_enabled }
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: as in `new`; the guard lives within the call that holds the GIL.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// The error of copying or pickling a live object (a lock, a stream read half-way): named by
/// its public name, as the pure backend names it.
pub(crate) fn unpicklable(obj: &Bound<'_, PyAny>) -> PyErr {
    let class = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string());
    pyo3::exceptions::PyTypeError::new_err(format!("cannot pickle 'acpwire.{class}' object"))
}

/// The compiled backend of acpwire.
///
/// Declared as using the GIL (`PyO3` otherwise declares free-threading support): `dumps` walks
/// dicts and lists through borrowed pointers, which is sound only while no other thread can
/// run Python code, and that has not been checked under a free-threaded interpreter.
#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // How this extension was built (build.rs): benchmark reports name it.
    m.add("_build", env!("ACPWIRE_BUILD"))?;
    m.add_class::<framing::FrameDecoder>()?;
    m.add_function(wrap_pyfunction!(json::loads::loads, m)?)?;
    m.add_function(wrap_pyfunction!(json::dumps::dumps, m)?)?;
    m.add_class::<terminal::Terminal>()?;
    m.add_class::<session::Sessions>()?;
    m.add_class::<session::Session>()?;
    m.add_function(wrap_pyfunction!(session::reduce_ndjson, m)?)?;
    m.add_function(wrap_pyfunction!(terminal::render_text, m)?)?;
    m.add_function(wrap_pyfunction!(terminal::char_width, m)?)?;
    m.add_function(wrap_pyfunction!(terminal::_b64decode, m)?)?;
    m.add("Span", py.import("acpwire._span")?.getattr("Span")?)?;
    m.add("TerminalDataError", terminal::terminal_data_error_type(py)?)?;
    m.add("FrameError", frame_error_type(py)?)?;
    m.add("DecodeError", decode_error_type(py)?)?;
    m.add("EncodeError", encode_error_type(py)?)?;
    Ok(())
}

/// A list of exactly `len` items made fallibly, each stored as it is made: no intermediate
/// `Vec` per list. A large view makes one list per row.
pub(crate) fn try_list<'py>(
    py: Python<'py>,
    len: usize,
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    let size = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("too many items for a list"))?;
    // SAFETY: PyList_New gives a new list whose `len` slots are NULL; each slot is set once
    // below with an owned reference. If fewer items come, or one fails, the list is dropped
    // unseen, and a list's deallocation skips NULL slots.
    unsafe {
        let list = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(size))?;
        let mut count: pyo3::ffi::Py_ssize_t = 0;
        for item in items {
            if count == size {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "more items than made room for",
                ));
            }
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), count, item?.into_ptr());
            count += 1;
        }
        if count != size {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "fewer items than made room for",
            ));
        }
        Ok(list.cast_into_unchecked())
    }
}
