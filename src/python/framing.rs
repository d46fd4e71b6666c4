//! `FrameDecoder`: the framing core of [`crate::framing`] plus JSON decoding into Python
//! objects. The rules are in [`docs/behaviour/framing.md`](../../docs/behaviour/framing.md).

use std::collections::VecDeque;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::json::{self, PARSER};
use super::{Size, frame_error_to_py, with_bytes};
use crate::framing::{self, Event, FrameError, FrameErrorKind, Framer};

/// Errors kept for `errors`/`take_errors()`; beyond this the oldest are dropped and counted,
/// so a stream of garbage nobody drains cannot grow memory without bound.
pub(crate) const MAX_KEPT_ERRORS: usize = 10_000;

/// Incremental NDJSON decoder: bytes in, JSON-RPC messages out. (Weakly referable: readers
/// remember what they decoded and did not hand out, by the decoder.)
#[pyclass(module = "acpwire._native", weakref)]
pub struct FrameDecoder {
    framer: Framer,
    raw: bool,
    errors: VecDeque<FrameError>,
    errors_dropped: u64,
    freed: super::FreedBuffers,
}

impl FrameDecoder {
    fn record(&mut self, error: FrameError) {
        if self.errors.len() == MAX_KEPT_ERRORS {
            self.errors.pop_front();
            self.errors_dropped += 1;
        }
        self.errors.push_back(error);
    }

    /// `feed` with `raw=True`: the frames are gathered first, so the list is made at its size
    /// rather than grown one append at a time (a 64 KiB piece holds dozens of frames).
    fn feed_raw<'py>(&mut self, py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let mut frames: Vec<Bound<'py, PyBytes>> = Vec::with_capacity(64);
        let mut bad: Vec<FrameError> = Vec::new();
        self.framer.feed(bytes, |event| match event {
            Event::Frame(frame) => frames.push(PyBytes::new(py, frame.bytes)),
            Event::Error(e) => bad.push(e),
        });
        for e in bad {
            self.record(e);
        }
        self.fed();
        PyList::new(py, frames)
    }

    /// After the framer was fed: the frames are the caller's now, and what the decoder keeps
    /// is its errors.
    fn fed(&mut self) {
        self.freed.after_feed(self.framer.released_bytes(), 0);
    }

    /// Run `step` on the framer; decode each frame into `out` (or, with `inline_errors`, put
    /// each error in `out` at its place in the stream as well).
    fn drive<'py>(
        &mut self,
        py: Python<'py>,
        inline_errors: bool,
        step: impl FnOnce(&mut Framer, &mut dyn FnMut(Event<'_>)),
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let raw = self.raw;
        let mut failure: Option<PyErr> = None;
        let mut bad: Vec<FrameError> = Vec::new();
        {
            let mut sink = |event: Event<'_>| {
                if failure.is_some() {
                    return;
                }
                let result = match event {
                    Event::Frame(frame) if raw => out.append(PyBytes::new(py, frame.bytes)),
                    Event::Frame(frame) => {
                        if let Ok(value) = decode_frame(py, frame.bytes) {
                            match push_value(&out, value) {
                                Ok(true) => Ok(()),
                                Ok(false) => {
                                    let e = FrameError::new(
                                        FrameErrorKind::EmptyBatch,
                                        frame.bytes,
                                        frame.line,
                                        frame.offset,
                                        String::new(),
                                    );
                                    push_error(py, &out, inline_errors, &mut bad, e)
                                }
                                Err(e) => Err(e),
                            }
                        } else {
                            let e = framing::diagnose(frame.bytes, frame.line, frame.offset);
                            push_error(py, &out, inline_errors, &mut bad, e)
                        }
                    }
                    Event::Error(e) => push_error(py, &out, inline_errors, &mut bad, e),
                };
                if let Err(e) = result {
                    failure = Some(e);
                }
            };
            step(&mut self.framer, &mut sink);
        }
        self.fed();
        // Errors shown in place are the caller's; only `feed`/`finish` keep them for `errors`.
        if !inline_errors {
            for e in bad {
                self.record(e);
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

/// Decode one frame; `Err(())` means "diagnose it" (the classification is the core's).
fn decode_frame<'py>(py: Python<'py>, bytes: &[u8]) -> Result<Bound<'py, PyAny>, ()> {
    match json::decode(py, bytes) {
        Some(value) => Ok(value),
        None => PARSER.python_parse(py, bytes).map_err(|_| ()),
    }
}

/// Append a decoded frame: a batch (JSON array) yields its entries. `Ok(false)`: an empty
/// batch, which is an error.
fn push_value<'py>(out: &Bound<'py, PyList>, value: Bound<'py, PyAny>) -> PyResult<bool> {
    if let Ok(batch) = value.cast::<PyList>() {
        if batch.is_empty() {
            return Ok(false);
        }
        for item in batch.iter() {
            out.append(item)?;
        }
        return Ok(true);
    }
    out.append(value)?;
    Ok(true)
}

fn push_error(
    py: Python<'_>,
    out: &Bound<'_, PyList>,
    inline: bool,
    bad: &mut Vec<FrameError>,
    e: FrameError,
) -> PyResult<()> {
    if inline {
        out.append(frame_error_to_py(py, &e)?)?;
    }
    bad.push(e);
    Ok(())
}

#[pymethods]
impl FrameDecoder {
    #[new]
    // The text signature spelled out, so that it (and stubtest) shows the numbers.
    #[pyo3(
        signature = (max_frame_bytes = Size::of(33_554_432), raw = false),
        text_signature = "(max_frame_bytes=33554432, raw=False)"
    )]
    fn new(max_frame_bytes: Size, raw: bool) -> PyResult<Self> {
        let max_frame_bytes = max_frame_bytes.0.filter(|&n| n > 0).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("max_frame_bytes must be positive")
        })?;
        Ok(Self {
            framer: Framer::new(max_frame_bytes),
            raw,
            errors: VecDeque::new(),
            errors_dropped: 0,
            freed: super::FreedBuffers::default(),
        })
    }

    /// Feed bytes; return the messages of every frame they complete, in order.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        with_bytes(data, |bytes| {
            if self.raw {
                return self.feed_raw(py, bytes);
            }
            self.drive(py, false, |framer, sink| framer.feed(bytes, sink))
        })?
    }

    /// End of stream: return the messages of a last frame that had no newline.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.drive(py, false, |framer, sink| framer.finish(sink))
    }

    /// Like `feed`, but each rejected frame also appears as a `FrameError` at its place.
    fn _feed_events<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        with_bytes(data, |bytes| {
            self.drive(py, true, |framer, sink| framer.feed(bytes, sink))
        })?
    }

    /// Like `finish`, with errors in place as in `_feed_events`.
    fn _finish_events<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.drive(py, true, |framer, sink| framer.finish(sink))
    }

    /// Rejected frames not yet taken, oldest first.
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .errors
            .iter()
            .map(|e| frame_error_to_py(py, e))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Return the rejected frames and forget them.
    fn take_errors<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = self.errors(py)?;
        self.errors.clear();
        Ok(list)
    }

    /// Errors dropped because more than 10,000 were waiting to be taken.
    #[getter]
    fn errors_dropped(&self) -> u64 {
        self.errors_dropped
    }

    /// Bytes held while waiting for a newline.
    #[getter]
    fn buffered(&self) -> usize {
        self.framer.buffered()
    }

    /// Non-blank frames seen so far, good or bad.
    #[getter]
    fn frames(&self) -> u64 {
        self.framer.frames()
    }

    /// Bytes fed so far.
    #[getter]
    fn position(&self) -> u64 {
        self.framer.position()
    }

    /// The longest frame accepted, in bytes; longer ones become `FrameError`s.
    #[getter]
    fn max_frame_bytes(&self) -> usize {
        self.framer.max_frame_bytes()
    }

    /// True when frames are returned as bytes, undecoded.
    #[getter]
    fn raw(&self) -> bool {
        self.raw
    }

    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<()> {
        Err(super::unpicklable(slf.as_any()))
    }

    fn __repr__(&self) -> String {
        format!(
            "FrameDecoder(max_frame_bytes={}, raw={}, frames={}, buffered={})",
            self.framer.max_frame_bytes(),
            if self.raw { "True" } else { "False" },
            self.framer.frames(),
            self.framer.buffered()
        )
    }
}
