//! `Terminal`, `render_text` and `char_width`: the terminal core behind a Python face.
//!
//! The core terminal sits behind `Arc<Mutex<…>>` so that a session store can hand Python a
//! live handle to a terminal it keeps feeding. Feeding runs without the GIL.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use hashbrown::HashTable;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyList, PyString, PyType};

use crate::terminal::{self, Color, TerminalConfig, TerminalDataError};

use super::Size;
use super::{with_bytes, with_bytes_or_str};

static SPAN: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TERMINAL_DATA_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

pub(crate) fn terminal_data_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TERMINAL_DATA_ERROR.import(py, "acpwire._errors", "TerminalDataError")
}

fn span_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    SPAN.import(py, "acpwire._span", "Span")
}

fn data_error(py: Python<'_>, e: &TerminalDataError) -> PyErr {
    super::new_error(terminal_data_error_type(py), (e.to_string(),))
}

/// The bytes of base64 text given as `str` or a bytes-like object. A `str` that is not valid
/// UTF-8 (lone surrogates) is encoded with `surrogatepass`, as the pure backend does, so both
/// report the same offending byte.
fn base64_input(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = data.cast::<PyString>() {
        if let Ok(s) = text.to_str() {
            return Ok(s.as_bytes().to_vec());
        }
        let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
        return Ok(encoded.cast::<PyBytes>()?.as_bytes().to_vec());
    }
    with_bytes_or_str(data, <[u8]>::to_vec)
}

/// The style fields of a `Span`, in order: fg, bg, bold, dim, italic, underline, inverse,
/// strike, link.
fn style_fields(py: Python<'_>, st: &terminal::Style) -> PyResult<[Py<PyAny>; 9]> {
    let flag = |on: bool| PyBool::new(py, on).to_owned().into_any().unbind();
    Ok([
        color_to_py(py, st.fg)?,
        color_to_py(py, st.bg)?,
        flag(st.bold),
        flag(st.dim),
        flag(st.italic),
        flag(st.underline),
        flag(st.inverse),
        flag(st.strike),
        match &st.link {
            Some(uri) => PyString::new(py, uri).into_any().unbind(),
            None => py.None(),
        },
    ])
}

/// Makes `Span`s as `tuple.__new__(Span, ...)` makes them but without a Python-level call: a
/// view can hold hundreds of thousands of runs.
struct SpanMaker<'a, 'py> {
    span: &'a Bound<'py, PyType>,
    /// `Span`'s `tp_alloc`, looked up once rather than per span.
    alloc: ffi::allocfunc,
}

impl<'a, 'py> SpanMaker<'a, 'py> {
    fn new(span: &'a Bound<'py, PyType>) -> PyResult<Self> {
        // SAFETY: `Span` is a heap type, whose slots `PyType_GetSlot` reads; the `tp_alloc`
        // slot holds an `allocfunc` or NULL, which is `None` here.
        let alloc: Option<ffi::allocfunc> = unsafe {
            std::mem::transmute(ffi::PyType_GetSlot(span.as_type_ptr(), ffi::Py_tp_alloc))
        };
        let alloc = alloc
            .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("Span has no tp_alloc slot"))?;
        Ok(Self { span, alloc })
    }

    /// A `Span` of `text` and a style's fields.
    fn make(
        &self,
        text: Bound<'py, PyString>,
        fields: &[Py<PyAny>; 9],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.span.py();
        // SAFETY: `Span` is a tuple subclass with no instance dict, so its `tp_alloc` makes a
        // tuple of ten empty items, each set below with a new reference before the object is
        // used.
        unsafe {
            let obj = (self.alloc)(self.span.as_type_ptr(), 10);
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            ffi::PyTuple_SET_ITEM(obj, 0, text.into_ptr());
            for (k, field) in (1..).zip(fields) {
                ffi::PyTuple_SET_ITEM(obj, k, field.clone_ref(py).into_ptr());
            }
            // Immutable, without a dict, and holding only strings, ints, bools and None: it
            // can never be part of a cycle, so the collector need not traverse it (as CPython
            // untracks such plain tuples itself). Views with many runs would otherwise
            // trigger collections that cost more than making the runs.
            ffi::PyObject_GC_UnTrack(obj.cast());
            Ok(Bound::from_owned_ptr(py, obj))
        }
    }
}

/// A `str` of `text`, written straight into a new `str` of the right kind: `PyString::new`
/// would validate the UTF-8 that a `&str` already is, and for text that is not ASCII decode
/// it into a buffer that widens as wider characters turn up.
fn new_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    if text.len() <= 1 {
        // CPython hands out its cached strings for these.
        return Ok(PyString::new(py, text));
    }
    // A UTF-8 sequence's first byte bounds its character: the greatest byte says which of
    // the four kinds of `str` holds the text, and holds it canonically (some character
    // needs that kind).
    let (widest, count) = if text.is_ascii() {
        (127, text.len())
    } else {
        let widest = match text.bytes().fold(0, u8::max) {
            0..=0xC3 => 0xFF,
            0xC4..=0xEF => 0xFFFF,
            _ => 0x10_FFFF,
        };
        (widest, text.chars().count())
    };
    let size = ffi::Py_ssize_t::try_from(count)
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("text too long for a str"))?;
    // SAFETY: `PyUnicode_New(size, widest)` makes a compact str of `count` characters of the
    // kind `widest` picks: one byte each up to 0xFF, two up to 0xFFFF, four beyond. Each
    // branch writes exactly `count` characters of that width (the ASCII branch copies the
    // `count` bytes), each fitting it by the choice of `widest`, before anything else sees
    // the str.
    unsafe {
        let obj = Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(size, widest))?;
        let data = ffi::PyUnicode_DATA(obj.as_ptr());
        match widest {
            127 => std::ptr::copy_nonoverlapping(text.as_ptr(), data.cast::<u8>(), count),
            0xFF => put_chars(data.cast::<u8>(), text),
            0xFFFF => put_chars(data.cast::<u16>(), text),
            _ => put_chars(data.cast::<u32>(), text),
        }
        Ok(obj.cast_into_unchecked())
    }
}

/// A `str` of the characters `chars` (valid code points), written straight into a new `str`
/// of the kind its widest character needs: what a terminal's cells hold, with no UTF-8 to
/// encode and have `CPython` decode again.
fn str_of_code_points<'py>(py: Python<'py>, chars: &[u32]) -> PyResult<Bound<'py, PyString>> {
    let widest = match chars.iter().copied().max().unwrap_or(0) {
        0..=0x7F => 0x7F,
        0x80..=0xFF => 0xFF,
        0x100..=0xFFFF => 0xFFFF,
        _ => 0x10_FFFF,
    };
    let size = ffi::Py_ssize_t::try_from(chars.len())
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("text too long for a str"))?;
    // SAFETY: `PyUnicode_New(size, widest)` makes a compact str of `chars.len()` characters of
    // the kind `widest` picks (one byte each up to 0xFF, two up to 0xFFFF, four beyond), and
    // holds them canonically, as the widest character needs that kind. Each branch writes
    // exactly `chars.len()` characters of that width, each fitting it by the choice of
    // `widest`, before anything else sees the str.
    unsafe {
        let obj = Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(size, widest))?;
        let data = ffi::PyUnicode_DATA(obj.as_ptr());
        match widest {
            0x7F | 0xFF => narrow_into(data.cast::<u8>(), chars),
            0xFFFF => narrow_into(data.cast::<u16>(), chars),
            _ => std::ptr::copy_nonoverlapping(chars.as_ptr(), data.cast::<u32>(), chars.len()),
        }
        Ok(obj.cast_into_unchecked())
    }
}

/// Writes each of `chars` at `out`, narrowed to a `T`.
///
/// # Safety
/// `out` must have room for `chars.len()` `T`s, and each of `chars` must fit a `T`.
unsafe fn narrow_into<T: TryFrom<u32> + Default>(out: *mut T, chars: &[u32]) {
    for (k, &c) in chars.iter().enumerate() {
        // SAFETY: `k < chars.len()`, for which the caller made room.
        unsafe { out.add(k).write(T::try_from(c).unwrap_or_default()) };
    }
}

/// Writes the characters of `text` one after another at `out`, each as a `T`.
///
/// # Safety
/// `out` must have room for as many `T`s as `text` has characters, and each character must
/// fit a `T`.
unsafe fn put_chars<T: TryFrom<u32>>(out: *mut T, text: &str) {
    for (k, c) in text.chars().enumerate() {
        if let Ok(c) = T::try_from(u32::from(c)) {
            // SAFETY: `k` counts the characters, for which the caller made room.
            unsafe { out.add(k).write(c) };
        }
    }
}

/// The spans one view has made, found by style and text: spans are immutable, and output
/// repeats itself (bars, prompts, test dots, the same word in the same colour), so a run of a
/// text and style already made is that span again, which saves making and later freeing most
/// of them. The lines' buffers are reused, so the texts are kept here.
struct SpanMemo<'py> {
    /// Indices in `made`, found by the hash of a run's style and text. A table of indices
    /// rather than a map of keys: the keys' texts live together in `texts`.
    table: HashTable<u32>,
    made: Vec<MadeSpan<'py>>,
    /// The texts of `made`, one after another.
    texts: String,
    /// foldhash rather than a general-purpose hasher: most runs are a word or a few, where
    /// the hash would otherwise cost more than the rest of the lookup. Seeded per view.
    hashing: foldhash::fast::RandomState,
}

struct MadeSpan<'py> {
    hash: u64,
    /// Where the text is in `texts`.
    start: usize,
    len: usize,
    sid: u32,
    span: Bound<'py, PyAny>,
}

impl<'py> SpanMemo<'py> {
    /// Room for as many spans as `rows` (output mostly has fewer distinct ones than lines)
    /// before the table grows.
    fn new(rows: usize) -> Self {
        Self {
            table: HashTable::with_capacity(rows),
            made: Vec::with_capacity(rows),
            texts: String::new(),
            hashing: foldhash::fast::RandomState::default(),
        }
    }

    /// The span of style `sid` and `text`, made by `make` unless made before.
    #[inline]
    fn get_or_make(
        &mut self,
        sid: u32,
        text: &str,
        make: impl FnOnce(&str) -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hash = self.hashing.hash_one((sid, text));
        let (spans, texts) = (&self.made, &self.texts);
        let found = self.table.find(hash, |&index| {
            let found = &spans[index as usize];
            found.sid == sid
                && found.len == text.len()
                && texts.as_bytes()[found.start..found.start + found.len] == *text.as_bytes()
        });
        if let Some(&index) = found {
            return Ok(self.made[index as usize].span.clone());
        }
        let span = make(text)?;
        // Past four billion spans, spans are made without being kept.
        let Ok(index) = u32::try_from(self.made.len()) else {
            return Ok(span);
        };
        let spans = &self.made;
        self.table
            .insert_unique(hash, index, |&index| spans[index as usize].hash);
        self.made.push(MadeSpan {
            hash,
            start: self.texts.len(),
            len: text.len(),
            sid,
            span: span.clone(),
        });
        self.texts.push_str(text);
        Ok(span)
    }
}

fn color_to_py(py: Python<'_>, color: Option<Color>) -> PyResult<Py<PyAny>> {
    Ok(match color {
        None => py.None(),
        Some(Color::Indexed(i)) => i.into_pyobject(py)?.into_any().unbind(),
        Some(Color::Rgb(r, g, b)) => PyString::new(py, &format!("#{r:02x}{g:02x}{b:02x}"))
            .into_any()
            .unbind(),
    })
}

/// A display-only terminal: PTY bytes in, what a terminal shows out.
#[pyclass(module = "acpwire._native")]
pub struct Terminal {
    inner: Arc<Mutex<terminal::Terminal>>,
}

impl Terminal {
    /// A Python handle on a terminal shared with its owner (e.g. a session store).
    pub fn from_shared(inner: Arc<Mutex<terminal::Terminal>>) -> Self {
        Self { inner }
    }

    fn lock(&self) -> MutexGuard<'_, terminal::Terminal> {
        // A panic while the lock was held cannot leave the terminal half-updated in a way
        // that matters for display; keep serving it.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The terminal, locked while the GIL is held (to build Python objects from it). If
    /// another thread holds the lock (feeding, without the GIL), this waits for it with the
    /// GIL released, so that Python threads run meanwhile.
    fn lock_attached(&self, py: Python<'_>) -> MutexGuard<'_, terminal::Terminal> {
        loop {
            match self.inner.try_lock() {
                Ok(guard) => return guard,
                // As in `lock`.
                Err(TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => py.detach(|| drop(self.lock())),
            }
        }
    }

    /// Run `f` on the terminal without holding the GIL.
    fn with_terminal<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut terminal::Terminal) -> R + Send,
    ) -> R {
        py.detach(|| f(&mut self.lock()))
    }
}

/// `value`, or the `ValueError` naming the argument `name` when it is over `max`.
pub(crate) fn at_most(name: &str, value: usize, max: usize) -> PyResult<usize> {
    if value > max {
        return Err(PyValueError::new_err(format!(
            "{name} must be at most {max}"
        )));
    }
    Ok(value)
}

#[pymethods]
impl Terminal {
    #[new]
    #[pyo3(
        signature = (
            cols = None,
            rows = Size::of(24),
            scrollback = Size::of(10_000),
            max_bytes = Size::of(16_777_216),
        ),
        text_signature = "(cols=None, rows=24, scrollback=10000, max_bytes=16777216)"
    )]
    fn new(cols: Option<Size>, rows: Size, scrollback: Size, max_bytes: Size) -> PyResult<Self> {
        if cols.is_some_and(|c| c.0.is_none_or(|c| c < 1)) {
            return Err(PyValueError::new_err("cols must be at least 1 (or None)"));
        }
        let Some(rows) = rows.0.filter(|&r| r >= 1) else {
            return Err(PyValueError::new_err("rows must be at least 1"));
        };
        let cols = cols
            .and_then(|c| c.0)
            .map(|c| at_most("cols", c, terminal::MAX_COLS))
            .transpose()?;
        let rows = at_most("rows", rows, terminal::MAX_ROWS)?;
        let (Some(scrollback), Some(max_bytes)) = (scrollback.0, max_bytes.0) else {
            return Err(PyValueError::new_err(
                "scrollback and max_bytes must not be negative",
            ));
        };
        let config = TerminalConfig {
            cols,
            rows,
            scrollback,
            max_bytes,
        };
        Ok(Self::from_shared(Arc::new(Mutex::new(
            terminal::Terminal::new(config),
        ))))
    }

    /// Feed raw PTY bytes.
    fn feed(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        with_bytes(data, |bytes| self.with_terminal(py, |t| t.feed(bytes)))
    }

    /// Decode one strict RFC 4648 base64 chunk and feed it; on invalid base64 raise
    /// `TerminalDataError` and apply nothing.
    fn feed_base64(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let encoded = base64_input(data)?;
        self.with_terminal(py, |t| t.feed_base64(&encoded))
            .map_err(|e| data_error(py, &e))
    }

    /// Drop all state and start from `snapshot` (the `terminal_update.output` rule).
    #[pyo3(signature = (snapshot = None), text_signature = "($self, snapshot=b'')")]
    fn reset(&self, py: Python<'_>, snapshot: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        if let Some(data) = snapshot {
            with_bytes(data, |bytes| self.with_terminal(py, |t| t.reset(bytes)))
        } else {
            self.with_terminal(py, |t| t.reset(b""));
            Ok(())
        }
    }

    /// Like `reset`, from a base64 snapshot; invalid base64 changes nothing.
    fn reset_base64(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let encoded = base64_input(data)?;
        self.with_terminal(py, |t| t.reset_base64(&encoded))
            .map_err(|e| data_error(py, &e))
    }

    /// What the terminal shows, as plain text: retained scrollback plus the screen.
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let chars = self.with_terminal(py, |t| t.text_code_points());
        str_of_code_points(py, &chars)
    }

    /// The `text` view as a list of lines.
    fn lines<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let chars = self.with_terminal(py, |t| t.text_code_points());
        if chars.is_empty() {
            return Ok(PyList::empty(py));
        }
        let lines = chars.split(|&c| c == u32::from(b'\n'));
        super::try_list(
            py,
            lines.clone().count(),
            lines.map(|line| Ok(str_of_code_points(py, line)?.into_any())),
        )
    }

    /// Styled runs per line (adjacent runs of one style merged). Trailing blanks are trimmed
    /// back to the last cell that shows: a non-blank, or a blank with a background colour,
    /// inverse, underline or strike-through (which `text` and `lines()` trim too). Runs of one
    /// text and style are one `Span` object, shared by every row that shows it.
    fn spans<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let span = SpanMaker::new(span_type(py)?)?;
        // Each line's spans are made as the terminal gives the line, from buffers it reuses:
        // no text and runs of the whole view are built first (a megabyte for a long
        // scrollback, written once and read back).
        let t = self.lock_attached(py);
        let rows = t.view_rows();
        // A style's nine fields as Python objects, made once per style rather than per run,
        // by id (ids are small and dense).
        let mut fields: Vec<Option<[Py<PyAny>; 9]>> = Vec::new();
        let mut made = SpanMemo::new(rows);
        let mut lines = Vec::with_capacity(rows);
        // Only the row lists are tracked objects, and none can be garbage while this runs: a
        // collection triggered every few hundred of them would only walk what is being built.
        let _paused = super::GcPause::new();
        t.each_styled_line(|text, runs| {
            let ends = runs.iter().skip(1).map(|r| r.0).chain([text.len()]);
            let row = runs.iter().zip(ends).map(|(&(begin, sid), end)| {
                made.get_or_make(sid, &text[begin..end], |text| {
                    let i = sid as usize;
                    if fields.len() <= i {
                        fields.resize_with(i + 1, || None);
                    }
                    let style = match &mut fields[i] {
                        Some(style) => style,
                        empty @ None => empty.insert(style_fields(py, &t.style(sid))?),
                    };
                    span.make(new_str(py, text)?, style)
                })
            });
            lines.push(super::try_list(py, runs.len(), row)?.into_any());
            Ok::<(), PyErr>(())
        })?;
        drop(t);
        super::try_list(py, lines.len(), lines.into_iter().map(Ok))
    }

    /// The visible rows (None when `cols` is None).
    fn screen(&self, py: Python<'_>) -> Option<Vec<String>> {
        self.with_terminal(py, |t| t.screen())
    }

    /// (row, col) on the active screen, None when `cols` is None; col == cols means a wrap
    /// is pending.
    #[getter]
    fn cursor(&self) -> Option<(usize, usize)> {
        self.lock().cursor()
    }

    /// The window title last set with OSC 0 or OSC 2 ("" if never).
    #[getter]
    fn title(&self) -> String {
        self.lock().title().to_owned()
    }

    /// OSC 9;4 progress as (state, percent), or None.
    #[getter]
    fn progress(&self) -> Option<(u8, Option<u8>)> {
        self.lock().progress().map(|p| (p.state, p.percent))
    }

    /// BEL characters executed (not counting those that end an OSC).
    #[getter]
    fn bell_count(&self) -> u64 {
        self.lock().bell_count()
    }

    /// Bytes applied since construction or the last reset.
    #[getter]
    fn bytes_fed(&self) -> u64 {
        self.lock().bytes_fed()
    }

    /// True once scrollback lines were dropped to respect `scrollback`/`max_bytes`.
    #[getter]
    fn truncated(&self) -> bool {
        self.lock().truncated()
    }

    /// The grid's width, or None for a transcript whose lines do not wrap.
    #[getter]
    fn cols(&self) -> Option<usize> {
        self.lock().cols()
    }

    /// The screen's height.
    #[getter]
    fn rows(&self) -> usize {
        self.lock().rows()
    }

    /// Handles are equal when they show one terminal: a session hands out a new handle on
    /// each call, and all of them feed and view the same terminal. (Another type is
    /// `NotImplemented`, as `PyO3` answers when `other` does not extract.)
    fn __eq__(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    fn __hash__(&self) -> isize {
        // The shared terminal's address: equal handles hash alike.
        Arc::as_ptr(&self.inner).addr().cast_signed()
    }

    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<()> {
        Err(super::unpicklable(slf.as_any()))
    }

    fn __repr__(&self) -> String {
        let t = self.lock();
        let cols = t
            .cols()
            .map_or_else(|| "None".to_owned(), |c| c.to_string());
        format!(
            "Terminal(cols={cols}, rows={}, bytes_fed={})",
            t.rows(),
            t.bytes_fed()
        )
    }
}

/// The `text` view of a whole buffer fed to a fresh `Terminal()`; an incomplete UTF-8
/// sequence at its end becomes U+FFFD, as in `data.decode("utf-8", "replace")`.
#[pyfunction]
pub fn render_text(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
    with_bytes(data, |bytes| py.detach(|| terminal::render_text(bytes)))
}

/// Cells the code point `cp` takes on its own: 0 for a control character or a mark that
/// joins the previous cell, else 1 or 2. `ValueError` for a surrogate or a value beyond
/// U+10FFFF, `OverflowError` for one outside 0 to 2**32 - 1, `TypeError` for a non-integer.
#[pyfunction]
pub fn char_width(cp: u32) -> PyResult<usize> {
    char::from_u32(cp)
        .map(terminal::width)
        .ok_or_else(|| PyValueError::new_err(format!("{cp:#x} is not a Unicode scalar value")))
}

/// Strict RFC 4648 base64 decoding as `Terminal.feed_base64` does it (for benchmarks and tests).
#[pyfunction]
pub fn _b64decode<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    // The core's decoder names the offending byte; ask it only on failure.
    let failure = |encoded: &[u8]| match terminal::decode_base64(encoded) {
        Err(e) => data_error(py, &e),
        Ok(_) => PyValueError::new_err("base64 decoders disagree"),
    };
    let decode = |encoded: &[u8]| -> PyResult<Bound<'py, PyBytes>> {
        let Ok(size) = base64_simd::STANDARD.decoded_length(encoded) else {
            return Err(failure(encoded));
        };
        // Decode straight into the result: no intermediate buffer.
        PyBytes::new_with(py, size, |out| {
            base64_simd::STANDARD
                .decode(encoded, base64_simd::Out::from_slice(out))
                .map(|_| ())
                .map_err(|_| failure(encoded))
        })
    };
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return decode(bytes.as_bytes());
    }
    decode(&base64_input(data)?)
}
