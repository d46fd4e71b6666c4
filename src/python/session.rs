//! `Sessions`, `Session` and `reduce_ndjson`: the session reducer of [`crate::session`] for Python.
//!
//! Bytes are framed, parsed and reduced in Rust with the GIL released; Python objects are made
//! only on request (`snapshot()`, `errors`, `changes()`), by converting the reducer's state
//! at the edge (a snapshot borrows it, copying nothing first). The pure twin is
//! `acpwire._pure.session`; both give identical results.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use crate::session::Value;
use pyo3::exceptions::{
    PyKeyError, PyRuntimeError, PyTypeError, PyUnicodeEncodeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::Size;
use super::terminal::{Terminal, at_most};
use super::with_bytes;
use crate::session::{self as core, ErrorRecord, Json, View};

/// Deepest nesting `apply` accepts, the framing's (so `apply` takes what `feed` takes, and a
/// snapshot stays within what `dumps` writes); the pure backend has the same limit.
const MAX_APPLY_DEPTH: usize = super::json::MAX_DEPTH;
/// Bytes read per step by `reduce_ndjson`.
const READ_BYTES: usize = 1 << 20;

/// Python strings for the dict keys of one conversion, made once each: a snapshot repeats a
/// few keys (`type`, `text`, `id`, ...) thousands of times, and a reused key also keeps the
/// hash computed on its first insertion.
#[derive(Default)]
struct Keys<'a, 'py> {
    made: foldhash::HashMap<&'a str, Bound<'py, PyString>>,
    /// The last long string value made, by address: values borrowed from one place (the
    /// session id of each of a session's error records) become one Python string.
    last_value: Option<(&'a str, Bound<'py, PyString>)>,
}

impl<'a, 'py> Keys<'a, 'py> {
    /// Keys longer than this, or past this many, are made each time: names repeat, and long
    /// or numerous keys (ids in an unknown payload) seldom do; the cache stays small.
    const MAX_LEN: usize = 40;
    const MAX_KEYS: usize = 1024;

    fn value(&mut self, py: Python<'py>, s: &'a str) -> Bound<'py, PyString> {
        // Short strings cost little to make again, and would take the place of a long one.
        const SHARED_LEN: usize = 256;
        if s.len() < SHARED_LEN {
            return PyString::new(py, s);
        }
        if let Some((last, made)) = &self.last_value
            && std::ptr::eq(*last, s)
        {
            return made.clone();
        }
        let made = PyString::new(py, s);
        self.last_value = Some((s, made.clone()));
        made
    }

    fn get(&mut self, py: Python<'py>, key: &'a str) -> Bound<'py, PyString> {
        if key.len() > Self::MAX_LEN {
            return PyString::new(py, key);
        }
        if let Some(made) = self.made.get(key) {
            return made.clone();
        }
        let made = PyString::new(py, key);
        if self.made.len() < Self::MAX_KEYS {
            self.made.insert(key, made.clone());
        }
        made
    }
}

/// The reducer's JSON as Python objects (dicts keep the reducer's key order).
fn json_to_py<'a, 'py>(
    py: Python<'py>,
    value: &'a Json,
    keys: &mut Keys<'a, 'py>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Json::Null => py.None().into_bound(py),
        Json::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Json::Int(i) => i.into_pyobject(py)?.into_any(),
        Json::BigInt(digits) => py.get_type::<PyInt>().call1((digits.as_str(),))?,
        Json::Float(f) => PyFloat::new(py, *f).into_any(),
        Json::Str(s) => PyString::new(py, s).into_any(),
        Json::Array(items) => super::try_list(
            py,
            items.len(),
            items.iter().map(|item| json_to_py(py, item, keys)),
        )?
        .into_any(),
        Json::Object(members) => {
            let dict = PyDict::new(py);
            for (k, v) in members {
                dict.set_item(keys.get(py, k), json_to_py(py, v, keys)?)?;
            }
            dict.into_any()
        }
        Json::Raw(raw) => super::json::loads::decode_valid(py, raw.text.as_bytes())?,
    })
}

/// A snapshot view as Python objects, as [`json_to_py`] would make its owned copy.
///
/// Its list and dict arms repeat [`json_to_py`]'s on purpose: helpers generic over both cost
/// 5–10% on snapshots (measured against this version, 21 alternating rounds).
fn view_to_py<'a, 'py>(
    py: Python<'py>,
    view: &'a View<'a>,
    keys: &mut Keys<'a, 'py>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match view {
        View::Json(json) => json_to_py(py, json, keys)?,
        View::Owned(json) => json_to_py(py, json, keys)?,
        View::Str(s) => keys.value(py, s).into_any(),
        View::Array(items) => super::try_list(
            py,
            items.len(),
            items.iter().map(|item| view_to_py(py, item, keys)),
        )?
        .into_any(),
        View::Object(members) => {
            let dict = PyDict::new(py);
            for (k, v) in members {
                dict.set_item(keys.get(py, k), view_to_py(py, v, keys)?)?;
            }
            dict.into_any()
        }
    })
}

/// Error records as `{line, offset, sessionId, reason}` dicts, as [`ErrorRecord::to_json`]
/// writes them; records that share a session id share its Python string.
fn errors_to_py<'a, 'py>(
    py: Python<'py>,
    records: impl Iterator<Item = &'a ErrorRecord>,
) -> PyResult<Bound<'py, PyList>> {
    let mut last: Option<(Arc<str>, Bound<'py, PyString>)> = None;
    let mut items = Vec::new();
    for e in records {
        let record = PyDict::new(py);
        record.set_item(pyo3::intern!(py, "line"), e.line)?;
        record.set_item(pyo3::intern!(py, "offset"), e.offset)?;
        let sid = e.session_id.as_ref().map(|id| match &last {
            Some((shared, text)) if Arc::ptr_eq(shared, id) => text.clone(),
            _ => {
                let text = PyString::new(py, id);
                last = Some((Arc::clone(id), text.clone()));
                text
            }
        });
        record.set_item(pyo3::intern!(py, "sessionId"), sid)?;
        record.set_item(pyo3::intern!(py, "reason"), &e.reason)?;
        items.push(record);
    }
    PyList::new(py, items)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A Python message as a parse tree, with the pure backend's type rules: None, bool, str,
/// int, float, dict with str keys, list and tuple (subclasses included); anything else is a
/// `TypeError`.
fn from_py(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value<'static>> {
    if depth > MAX_APPLY_DEPTH {
        return Err(PyValueError::new_err("message nests too deeply"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(Cow::Owned(s.to_str()?.to_owned())));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Int(i));
        }
        // Beyond 64 bits: kept as its decimal digits, as a decoded frame keeps it, within the
        // limit the frame decoder keeps (its error is the one a frame would name).
        let digits = obj.str()?.to_str()?.to_owned();
        if let Err(e) = jiter::JsonValue::parse(digits.as_bytes(), false) {
            return Err(PyValueError::new_err(e.to_string()));
        }
        return Ok(Value::BigInt(digits));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut members = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "message keys must be str, not {}",
                    type_name(&k)
                )));
            };
            members.push((
                Cow::Owned(key.to_str()?.to_owned()),
                from_py(&v, depth + 1)?,
            ));
        }
        return Ok(Value::Object(members));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        let items = list
            .iter()
            .map(|item| from_py(&item, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        let items = tuple
            .iter()
            .map(|item| from_py(&item, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{} is not a JSON value",
        type_name(obj)
    )))
}

/// A `str` argument that looks something up: `None` inside when it is not valid UTF-8 (a lone
/// surrogate), which names nothing, since every name comes from JSON. Anything but a `str`
/// is refused as `&str` refuses it.
#[derive(Clone, Copy)]
pub(crate) struct Name<'a>(Option<&'a str>);

impl<'a> FromPyObject<'a, '_> for Name<'a> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, '_, PyAny>) -> PyResult<Self> {
        match <&'a str>::extract(obj) {
            Ok(text) => Ok(Name(Some(text))),
            Err(_) if obj.is_instance_of::<PyString>() => Ok(Name(None)),
            Err(e) => Err(e),
        }
    }
}

/// All sessions of one connection or trace, keyed by `params.sessionId`.

#[pyclass(module = "acpwire._native")]
pub struct Sessions {
    inner: core::Sessions,
    freed: super::FreedBuffers,
}

// While a thread feeds a store, it holds it borrowed mutably with the GIL released. Any other
// call on that store from another thread finds it borrowed: it waits for the feed to return
// (the GIL released meanwhile), except a second feed, which is refused: two threads feeding
// one store would interleave two streams into one.

/// Let the thread that holds the store run a little.
fn wait_for_store(py: Python<'_>) -> PyResult<()> {
    py.check_signals()?;
    py.detach(|| std::thread::sleep(Duration::from_micros(50)));
    Ok(())
}

/// The store, for reading.
fn read_store<'py>(store: &Bound<'py, Sessions>) -> PyResult<PyRef<'py, Sessions>> {
    loop {
        if let Ok(guard) = store.try_borrow() {
            return Ok(guard);
        }
        wait_for_store(store.py())?;
    }
}

/// The store, for a change other than feeding.
fn write_store<'py>(store: &Bound<'py, Sessions>) -> PyResult<PyRefMut<'py, Sessions>> {
    loop {
        if let Ok(guard) = store.try_borrow_mut() {
            return Ok(guard);
        }
        wait_for_store(store.py())?;
    }
}

/// The store, for feeding.
fn feed_store<'py>(store: &Bound<'py, Sessions>) -> PyResult<PyRefMut<'py, Sessions>> {
    store.try_borrow_mut().map_err(|_| {
        PyRuntimeError::new_err(
            "the store is being fed by another thread: feed one stream from one thread",
        )
    })
}

#[pymethods]
impl Sessions {
    #[new]
    #[pyo3(
        signature = (
            max_frame_bytes = Size::of(33_554_432),
            terminal_cols = None,
            scrollback = Size::of(10_000),
            max_terminal_bytes = Size::of(core::DEFAULT_MAX_TERMINAL_BYTES),
            max_bytes = Some(Size::of(core::DEFAULT_MAX_BYTES)),
            max_payload_bytes = Some(Size::of(core::DEFAULT_MAX_PAYLOAD_BYTES)),
            max_message_bytes = Some(Size::of(core::DEFAULT_MAX_MESSAGE_BYTES)),
        ),
        text_signature = "(max_frame_bytes=33554432, terminal_cols=None, scrollback=10000, max_terminal_bytes=67108864, max_bytes=536870912, max_payload_bytes=67108864, max_message_bytes=67108864)"
    )]
    fn new(
        max_frame_bytes: Size,
        terminal_cols: Option<Size>,
        scrollback: Size,
        max_terminal_bytes: Size,
        max_bytes: Option<Size>,
        max_payload_bytes: Option<Size>,
        max_message_bytes: Option<Size>,
    ) -> PyResult<Self> {
        let max_frame_bytes = max_frame_bytes
            .0
            .filter(|&n| n > 0)
            .ok_or_else(|| PyValueError::new_err("max_frame_bytes must be positive"))?;
        let terminal_cols = terminal_cols
            .map(|c| {
                // As `Terminal(cols=0)`: a grid needs a column.
                let cols = c.0.filter(|&c| c >= 1).ok_or_else(|| {
                    PyValueError::new_err("terminal_cols must be at least 1 (or None)")
                })?;
                at_most("terminal_cols", cols, crate::terminal::MAX_COLS)
            })
            .transpose()?;
        let scrollback = scrollback
            .0
            .ok_or_else(|| PyValueError::new_err("scrollback must not be negative"))?;
        let max_terminal_bytes = max_terminal_bytes
            .0
            .ok_or_else(|| PyValueError::new_err("max_terminal_bytes must not be negative"))?;
        let bound = |name: &str, value: Option<Size>| {
            value
                .map(|v| {
                    v.0.ok_or_else(|| PyValueError::new_err(format!("{name} must not be negative")))
                })
                .transpose()
        };
        Ok(Self {
            inner: core::Sessions::new(core::SessionsConfig {
                max_frame_bytes,
                terminal_cols,
                scrollback,
                max_terminal_bytes,
                max_bytes: bound("max_bytes", max_bytes)?,
                max_payload_bytes: bound("max_payload_bytes", max_payload_bytes)?,
                max_message_bytes: bound("max_message_bytes", max_message_bytes)?,
            }),
            freed: super::FreedBuffers::default(),
        })
    }

    /// Feed NDJSON bytes (any split); return the frames completed, good or bad.
    fn feed(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let py = slf.py();
        // The bytes are taken (copied, for a mutable buffer) before the store is.
        with_bytes(data, |bytes| {
            let mut store = feed_store(slf)?;
            let store = &mut *store;
            let (inner, freed) = (&mut store.inner, &mut store.freed);
            Ok(py.detach(|| {
                let frames = inner.feed(bytes);
                freed.after_feed(inner.released_frame_bytes(), inner.approximate_bytes());
                frames
            }))
        })?
    }

    /// End of stream: reduce a last line that had no newline; return frames completed.
    fn finish(slf: &Bound<'_, Self>) -> PyResult<usize> {
        let mut store = feed_store(slf)?;
        let inner = &mut store.inner;
        Ok(slf.py().detach(|| inner.finish()))
    }

    /// Reduce one decoded JSON-RPC message of either direction (a list applies each entry).
    ///
    /// `sender` (`"client"` or `"agent"`), when known, says who sent it: a response then
    /// answers the other side's pending request with its id. A message holding a str that is
    /// not valid UTF-8 (a lone surrogate) is not applied: it becomes one error record.
    #[pyo3(signature = (message, sender = None))]
    fn apply(
        slf: &Bound<'_, Self>,
        message: &Bound<'_, PyAny>,
        sender: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        Self::apply_at(slf, message, sender, None)
    }

    /// `apply`, with error records placed at (line, offset): a message read from a trace.
    #[pyo3(signature = (message, sender, line, offset))]
    fn _apply_at(
        slf: &Bound<'_, Self>,
        message: &Bound<'_, PyAny>,
        sender: Option<&Bound<'_, PyAny>>,
        line: u64,
        offset: u64,
    ) -> PyResult<()> {
        Self::apply_at(slf, message, sender, Some((line, offset)))
    }

    /// Record an error at (line, offset) for a frame of a trace that could not be applied.
    fn _record_error(slf: &Bound<'_, Self>, reason: &str, line: u64, offset: u64) -> PyResult<()> {
        write_store(slf)?
            .inner
            .reject(None, reason, Some((line, offset)));
        Ok(())
    }

    /// Session ids in first-seen order.
    fn ids(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        Ok(read_store(slf)?.inner.ids())
    }

    fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(read_store(slf)?.inner.len())
    }

    fn __contains__(slf: &Bound<'_, Self>, session_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(id) = session_id
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok())
        else {
            return Ok(false);
        };
        Ok(read_store(slf)?.inner.contains(id))
    }

    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Session> {
        // Any other key is absent, as from a dict keyed by str; the error holds the key itself
        // (in a tuple: a tuple or None given alone would be taken as the arguments).
        let missing = || PyKeyError::new_err((key.clone().unbind(),));
        let Ok(session_id) = key.extract::<&str>() else {
            return Err(missing());
        };
        let Some(serial) = read_store(slf)?
            .inner
            .get(session_id)
            .map(core::Session::serial)
        else {
            return Err(missing());
        };
        Ok(Session {
            store: slf.clone().unbind(),
            id: session_id.to_owned(),
            serial,
        })
    }

    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let ids = read_store(slf)?.inner.ids();
        Ok(PyList::new(slf.py(), ids)?.try_iter()?.into_any())
    }

    /// The negotiated protocol version, None before `initialize`.
    #[getter]
    fn protocol_version(slf: &Bound<'_, Self>) -> PyResult<Option<i64>> {
        Ok(read_store(slf)?.inner.protocol_version())
    }

    /// Error records not yet taken, oldest first: `{line, offset, sessionId, reason}`.
    #[getter]
    fn errors<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let store = read_store(slf)?;
        errors_to_py(slf.py(), store.inner.errors())
    }

    /// Return the error records and forget them.
    fn take_errors<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let taken = write_store(slf)?.inner.take_errors();
        errors_to_py(slf.py(), taken.iter())
    }

    /// What the store retains, in cost bytes: its sessions and pending changes, counted as
    /// `docs/behaviour/sessions.md` ("Cost") says. Reading it evicts nothing.
    #[getter]
    fn retained_bytes(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(write_store(slf)?.inner.retained_bytes())
    }

    /// Sessions evicted so far to keep the store within `max_bytes`.
    #[getter]
    fn evicted_sessions(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(read_store(slf)?.inner.evicted_sessions())
    }

    /// Errors dropped because more than 10,000 were waiting to be taken.
    #[getter]
    fn errors_dropped(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(read_store(slf)?.inner.errors_dropped())
    }

    /// (sessionId, entity type, id) of everything changed since the last call, deduplicated,
    /// in first-change order.
    fn changes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let taken = write_store(slf)?.inner.take_changes();
        let items = taken
            .into_iter()
            .map(|(s, k, i)| PyTuple::new(py, [&*s, k, &*i]))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<()> {
        Err(super::unpicklable(slf.as_any()))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        Ok(format!(
            "Sessions({} sessions)",
            read_store(slf)?.inner.len()
        ))
    }
}

impl Sessions {
    fn apply_at(
        slf: &Bound<'_, Self>,
        message: &Bound<'_, PyAny>,
        sender: Option<&Bound<'_, PyAny>>,
        pos: Option<(u64, u64)>,
    ) -> PyResult<()> {
        let sender = match sender {
            None => None,
            Some(s) if s.is_none() => None,
            Some(s) => Some(
                s.cast::<PyString>()
                    .ok()
                    .and_then(|name| core::Side::parse(name.to_str().ok()?))
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "sender must be 'client' or 'agent', not {}",
                            s.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string())
                        ))
                    })?,
            ),
        };
        let py = slf.py();
        match from_py(message, 0) {
            Ok(value) => write_store(slf)?.inner.apply_at(&value, sender, pos),
            // A str that is not valid UTF-8 (a lone surrogate) cannot be JSON: the message is
            // refused whole, as `feed` refuses such a frame, with an error record.
            Err(e) if e.is_instance_of::<PyUnicodeEncodeError>(py) => {
                let reason = format!("str is not valid UTF-8: {}", unicode_reason(py, &e));
                let sid = message_session_id(message);
                write_store(slf)?.inner.reject(sid.as_deref(), &reason, pos);
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

/// The `reason` of a `UnicodeEncodeError` ("surrogates not allowed").
fn unicode_reason(py: Python<'_>, e: &PyErr) -> String {
    e.value(py)
        .getattr("reason")
        .and_then(|r| r.extract::<String>())
        .unwrap_or_else(|_| "surrogates not allowed".to_owned())
}

/// `message["params"]["sessionId"]` when it is a str that is valid UTF-8.
fn message_session_id(message: &Bound<'_, PyAny>) -> Option<String> {
    let params = message.cast::<PyDict>().ok()?.get_item("params").ok()??;
    let sid = params.cast::<PyDict>().ok()?.get_item("sessionId").ok()??;
    Some(sid.cast::<PyString>().ok()?.to_str().ok()?.to_owned())
}

/// The reduced state of one session: a live view on its store.
#[pyclass(module = "acpwire._native", frozen)]
pub struct Session {
    store: Py<Sessions>,
    id: String,
    /// Which session of that id: one made again after an eviction is another.
    serial: u64,
}

impl Session {
    /// Run `f` on the session, once any feed running on another thread has returned.
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&core::Session) -> R) -> PyResult<R> {
        let store = read_store(self.store.bind(py))?;
        let session = store
            .inner
            .get(&self.id)
            .filter(|s| s.serial() == self.serial)
            .ok_or_else(|| {
                PyRuntimeError::new_err(format!("session {:?} was evicted from its store", self.id))
            })?;
        Ok(f(session))
    }
}

impl Session {
    /// The entity `f` finds by `id`, as Python objects; None when `id` names nothing (a str
    /// that is not valid UTF-8 names nothing either: every id comes from JSON).
    fn entity<'py>(
        &self,
        py: Python<'py>,
        id: Name<'_>,
        f: impl for<'s> FnOnce(&'s core::Session, &str) -> Option<View<'s>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Name(Some(id)) = id else {
            return Ok(None);
        };
        self.view_of(py, |session| f(session, id))
    }

    /// What `f` views of the session, as Python objects.
    fn view_of<'py>(
        &self,
        py: Python<'py>,
        f: impl for<'s> FnOnce(&'s core::Session) -> Option<View<'s>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        // As for a snapshot: no Python code (a finalizer) runs while the store is read.
        let _paused = super::GcPause::new();
        self.with(py, |session| {
            f(session)
                .map(|view| view_to_py(py, &view, &mut Keys::default()))
                .transpose()
        })?
    }
}

#[pymethods]
impl Session {
    /// The session id.
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// The foreground state, None before the first report (v1: set by prompts).
    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with(py, |s| s.state().map(str::to_owned))
    }

    /// Why the last turn stopped (only while idle).
    #[getter]
    fn stop_reason(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with(py, |s| s.stop_reason().map(str::to_owned))
    }

    /// The session as a JSON-serializable dict (a copy); its shape is documented in
    /// `docs/behaviour/sessions.md` ("Snapshots").
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // Thousands of fresh dicts and lists, none of which can be garbage yet. Paused, the
        // collector also runs no finalizer, so no Python code runs while the store is read.
        let _paused = super::GcPause::new();
        self.with(py, |session| {
            let view = session.snapshot_view();
            view_to_py(py, &view, &mut Keys::default())
        })?
    }

    /// The live Terminal `terminal_id`, None if the session has no such terminal.
    fn terminal(&self, py: Python<'_>, terminal_id: Name<'_>) -> PyResult<Option<Py<Terminal>>> {
        let Name(Some(terminal_id)) = terminal_id else {
            return Ok(None);
        };
        self.with(py, |s| s.terminal(terminal_id))?
            .map(|shared| Py::new(py, Terminal::from_shared(shared)))
            .transpose()
    }

    /// The concatenated text blocks of message (role, `message_id`), None if absent.
    #[pyo3(
        signature = (message_id, role = Name(Some("agent"))),
        text_signature = "($self, message_id, role='agent')"
    )]
    fn message_text(
        &self,
        py: Python<'_>,
        message_id: Name<'_>,
        role: Name<'_>,
    ) -> PyResult<Option<String>> {
        let (Name(Some(message_id)), Name(Some(role))) = (message_id, role) else {
            return Ok(None);
        };
        self.with(py, |s| s.message_text(message_id, role))
    }

    /// Tool call `tool_call_id` as `snapshot()["toolCalls"][tool_call_id]` (a copy), or None.
    fn tool_call<'py>(
        &self,
        py: Python<'py>,
        tool_call_id: Name<'_>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.entity(py, tool_call_id, core::Session::tool_call_view)
    }

    /// Message (`role`, `message_id`) as its entry of `snapshot()["messages"]`, or None.
    fn message<'py>(
        &self,
        py: Python<'py>,
        role: Name<'_>,
        message_id: Name<'_>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Name(Some(role)) = role else {
            return Ok(None);
        };
        self.entity(py, message_id, |s, id| s.message_view(role, id))
    }

    /// The content blocks of the `index`th entry of `snapshot()["messages"]` each as sent, for
    /// `acpwire.sdk` (whose accumulator shows one chunk per block); None without it.
    fn _message_blocks<'py>(
        &self,
        py: Python<'py>,
        index: i64,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Ok(index) = usize::try_from(index) else {
            return Ok(None);
        };
        self.view_of(py, |session| session.message_blocks_view(index))
    }

    /// Terminal `terminal_id` as `snapshot()["terminals"][terminal_id]`, or None.
    fn terminal_entry<'py>(
        &self,
        py: Python<'py>,
        terminal_id: Name<'_>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.entity(py, terminal_id, core::Session::terminal_snapshot_view)
    }

    /// Plan `plan_id` (v1's one plan is `"main"`) as `snapshot()["plans"][plan_id]`, or None.
    #[pyo3(
        signature = (plan_id = Name(Some("main"))),
        text_signature = "($self, plan_id='main')"
    )]
    fn plan<'py>(&self, py: Python<'py>, plan_id: Name<'_>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.entity(py, plan_id, core::Session::plan_view)
    }

    /// Compaction `compaction_id` as `snapshot()["compactions"][compaction_id]`, or None.
    fn compaction<'py>(
        &self,
        py: Python<'py>,
        compaction_id: Name<'_>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.entity(py, compaction_id, core::Session::compaction_view)
    }

    /// Subagent `subagent_id` as `snapshot()["subagents"][subagent_id]`, or None.
    fn subagent<'py>(
        &self,
        py: Python<'py>,
        subagent_id: Name<'_>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.entity(py, subagent_id, core::Session::subagent_view)
    }

    /// Handles are equal when they view one session of one store: each `store[id]` is a
    /// new handle. (Another type is `NotImplemented`, as `PyO3` answers when `other` does not
    /// extract.)
    fn __eq__(&self, other: &Bound<'_, Self>) -> bool {
        let other = other.get();
        self.store.is(&other.store) && self.id == other.id && self.serial == other.serial
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.store.as_ptr().addr().hash(&mut hasher);
        self.id.hash(&mut hasher);
        self.serial.hash(&mut hasher);
        hasher.finish()
    }

    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<()> {
        Err(super::unpicklable(slf.as_any()))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (state, messages) =
            self.with(py, |s| (s.state().map(str::to_owned), s.message_count()))?;
        // Python's quoting, not Rust's: the same text as the pure twin's repr.
        let quote = |v: &str| -> PyResult<String> { Ok(PyString::new(py, v).repr()?.to_string()) };
        let state = match state {
            Some(v) => quote(&v)?,
            None => "None".to_owned(),
        };
        Ok(format!(
            "Session({}, state={state}, messages={messages})",
            quote(&self.id)?
        ))
    }
}

/// An I/O error on `path` as Python's `open` and `read` report it: `OSError(errno, strerror,
/// filename)`, which is the errno's subclass (`FileNotFoundError`, `IsADirectoryError`, ...).
fn os_error(py: Python<'_>, error: &std::io::Error, path: &str) -> PyErr {
    let Some(code) = error.raw_os_error() else {
        return pyo3::exceptions::PyOSError::new_err(format!("{path}: {error}"));
    };
    let strerror = py
        .import("os")
        .and_then(|os| os.call_method1("strerror", (code,)))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| error.to_string());
    pyo3::exceptions::PyOSError::new_err((code, strerror, path.to_owned()))
}

/// Reduce a whole NDJSON trace (a path or a binary file) into a new Sessions.
#[pyfunction]
#[pyo3(signature = (source, **options))]
pub fn reduce_ndjson<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, Sessions>> {
    // Refused here, not by the constructor, so that the message names `reduce_ndjson`; the names
    // are those of `Sessions.__new__`'s signature.
    if let Some(options) = options {
        for key in options.keys() {
            if !matches!(
                key.extract::<&str>(),
                Ok("max_frame_bytes"
                    | "terminal_cols"
                    | "scrollback"
                    | "max_terminal_bytes"
                    | "max_bytes"
                    | "max_payload_bytes"
                    | "max_message_bytes")
            ) {
                return Err(PyTypeError::new_err(format!(
                    "reduce_ndjson() got an unexpected keyword argument {}",
                    key.repr()?
                )));
            }
        }
    }
    let store = py
        .get_type::<Sessions>()
        .call((), options)?
        .cast_into::<Sessions>()?;
    let os = py.import("os")?;
    let is_path =
        source.is_instance_of::<PyString>() || source.is_instance(&os.getattr("PathLike")?)?;
    if is_path {
        let path: String = os.call_method1("fspath", (source,))?.extract()?;
        let mut file = std::fs::File::open(&path).map_err(|e| os_error(py, &e, &path))?;
        let mut guard = store.borrow_mut();
        let inner = &mut guard.inner;
        py.detach(|| -> std::io::Result<()> {
            let mut buf = vec![0u8; READ_BYTES];
            loop {
                let n = file.read(&mut buf)?;
                if n == 0 {
                    return Ok(());
                }
                inner.feed(&buf[..n]);
            }
        })
        .map_err(|e| os_error(py, &e, &path))?;
    } else {
        let read = source.getattr("read").map_err(|_| {
            let kind = source
                .get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |n| n.to_string());
            PyTypeError::new_err(format!(
                "reduce_ndjson() needs a path or a binary file with read(), not {kind}"
            ))
        })?;
        loop {
            let data = read.call1((READ_BYTES,))?;
            if data.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err("reduce_ndjson needs a binary file"));
            }
            if data.is_none() {
                // A non-blocking stream with nothing to read yet: not the end of the trace.
                return Err(PyTypeError::new_err(
                    "reduce_ndjson needs a blocking binary file: read() returned None",
                ));
            }
            if data.len()? == 0 {
                break;
            }
            Sessions::feed(&store, &data)?;
        }
    }
    Sessions::finish(&store)?;
    Ok(store)
}
