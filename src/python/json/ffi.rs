//! Small safe wrappers over the `CPython` C-API calls that `loads` and `dumps` make, so that
//! the decoder and the encoder are mostly safe code. Each wrapper's soundness rests on the
//! invariant of the type it takes, stated where that type is defined; the few that need more
//! of their caller are `unsafe fn`s saying what.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;

/// An owned (strong) reference, made while the GIL is held (the `Python` token says so for
/// `'py`); released on drop unless taken.
pub(super) struct Owned<'py>(*mut ffi::PyObject, Python<'py>);

impl<'py> Owned<'py> {
    /// The reference a C-API call returned; `None` for null, an allocation failure, whose
    /// error is cleared so that the slow path raises it properly.
    ///
    /// # Safety
    /// `ptr` must be null or an owned reference.
    #[inline]
    unsafe fn from_result(py: Python<'py>, ptr: *mut ffi::PyObject) -> Option<Self> {
        if ptr.is_null() {
            // SAFETY: clearing the error indicator is always allowed with the GIL held.
            unsafe { ffi::PyErr_Clear() };
            None
        } else {
            Some(Owned(ptr, py))
        }
    }

    /// A new reference to the object `object` holds.
    #[inline]
    pub(super) fn of(py: Python<'py>, object: &Py<PyAny>) -> Self {
        let ptr = object.as_ptr();
        // SAFETY: `object` holds a reference, so the object is alive.
        unsafe { ffi::Py_INCREF(ptr) };
        Owned(ptr, py)
    }

    /// A new reference of its own to the same object, to keep beyond this one.
    pub(super) fn unbind(&self) -> Py<PyAny> {
        // SAFETY: `self.0` is a live object; the new reference is counted by `Py`.
        unsafe { Bound::from_borrowed_ptr(self.1, self.0) }.unbind()
    }

    pub(super) fn into_bound(self) -> Bound<'py, PyAny> {
        let py = self.1;
        let ptr = self.take();
        // SAFETY: an owned reference, handed over.
        unsafe { Bound::from_owned_ptr(py, ptr) }
    }

    /// The reference, handed over: not released here.
    fn take(self) -> *mut ffi::PyObject {
        let ptr = self.0;
        std::mem::forget(self);
        ptr
    }
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        // SAFETY: the GIL is held for `'py`, and the reference is owned.
        unsafe { ffi::Py_DECREF(self.0) };
    }
}

/// A new empty `dict`.
#[inline]
pub(super) fn new_dict(py: Python<'_>) -> Option<Owned<'_>> {
    // SAFETY: `PyDict_New` returns a new reference or null.
    unsafe { Owned::from_result(py, ffi::PyDict_New()) }
}

/// `dict[key] = value`; `None` (the error cleared) if it fails.
#[inline]
pub(super) fn dict_set(dict: &Owned<'_>, key: &Owned<'_>, value: &Owned<'_>) -> Option<()> {
    // SAFETY: all three are live; `PyDict_SetItem` takes its own references, and checks that
    // `dict` is a dict.
    if unsafe { ffi::PyDict_SetItem(dict.0, key.0, value.0) } != 0 {
        // SAFETY: the GIL is held.
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    Some(())
}

/// A new `list` of `items`, in order.
#[inline]
pub(super) fn new_list<'py>(py: Python<'py>, items: Vec<Owned<'py>>) -> Option<Owned<'py>> {
    let len = ffi::Py_ssize_t::try_from(items.len()).ok()?;
    // SAFETY: `PyList_New` returns a new reference or null.
    let list = unsafe { Owned::from_result(py, ffi::PyList_New(len)) }?;
    for (i, item) in items.into_iter().enumerate() {
        // SAFETY: a fresh list of `len` slots; SET_ITEM steals the reference.
        unsafe { ffi::PyList_SET_ITEM(list.0, i.cast_signed(), item.take()) };
    }
    Some(list)
}

/// The singletons JSON's literals decode to.
#[derive(Clone, Copy)]
pub(super) enum Literal {
    True,
    False,
    None,
}

/// A new reference to the singleton of `literal`.
#[inline]
pub(super) fn literal(py: Python<'_>, literal: Literal) -> Owned<'_> {
    // SAFETY: the singletons live as long as the interpreter.
    let object = unsafe {
        match literal {
            Literal::True => ffi::Py_True(),
            Literal::False => ffi::Py_False(),
            Literal::None => ffi::Py_None(),
        }
    };
    // SAFETY: as above; the new reference is owned by the result.
    unsafe { ffi::Py_INCREF(object) };
    Owned(object, py)
}

/// Compute the hash of `object` now (a `str` keeps it); `None` (the error cleared) if it fails.
#[inline]
pub(super) fn hash(object: &Owned<'_>) -> Option<()> {
    // SAFETY: `object` is live.
    if unsafe { ffi::PyObject_Hash(object.0) } == -1 {
        // SAFETY: the GIL is held.
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    Some(())
}

/// A new `str` of the ASCII `bytes`, copied in one step.
///
/// # Safety
/// Every byte of `bytes` must be ASCII: a compact ASCII `str` holding any other byte is corrupt.
#[inline]
pub(super) unsafe fn new_ascii_str<'py>(py: Python<'py>, bytes: &[u8]) -> Option<Owned<'py>> {
    let len = ffi::Py_ssize_t::try_from(bytes.len()).ok()?;
    // SAFETY: an ASCII str of `len` characters has exactly `len` bytes of storage, which the
    // caller's ASCII bytes fill.
    unsafe {
        let object = Owned::from_result(py, ffi::PyUnicode_New(len, 127))?;
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            ffi::PyUnicode_DATA(object.0).cast::<u8>(),
            bytes.len(),
        );
        Some(object)
    }
}

/// A new `str` from UTF-8 `bytes`, which `CPython` validates; `None` if they are not UTF-8.
#[inline]
pub(super) fn new_str<'py>(py: Python<'py>, bytes: &[u8]) -> Option<Owned<'py>> {
    let len = ffi::Py_ssize_t::try_from(bytes.len()).ok()?;
    // SAFETY: `bytes` is `len` readable bytes; the result is a new reference or null.
    unsafe {
        Owned::from_result(
            py,
            ffi::PyUnicode_DecodeUTF8(bytes.as_ptr().cast(), len, c"strict".as_ptr()),
        )
    }
}

/// A new `float`.
#[inline]
pub(super) fn new_float(py: Python<'_>, value: f64) -> Option<Owned<'_>> {
    // SAFETY: a new reference or null.
    unsafe { Owned::from_result(py, ffi::PyFloat_FromDouble(value)) }
}

/// A new `int`.
#[inline]
pub(super) fn new_int(py: Python<'_>, value: i64) -> Option<Owned<'_>> {
    // SAFETY: a new reference or null.
    unsafe { Owned::from_result(py, ffi::PyLong_FromLongLong(value)) }
}

/// A borrowed reference: the object stays alive, and the GIL held, for `'a`.
#[derive(Clone, Copy)]
pub(super) struct Object<'a>(*mut ffi::PyObject, PhantomData<&'a ffi::PyObject>);

impl<'a> Object<'a> {
    /// The object `object` holds, for as long as it is held.
    #[inline]
    pub(super) fn of(object: &'a Bound<'_, PyAny>) -> Self {
        Object(object.as_ptr(), PhantomData)
    }

    /// A reference of its own, for when encoding may run Python code that drops the object
    /// from where it was borrowed.
    #[inline]
    pub(super) fn hold(self, py: Python<'_>) -> Bound<'_, PyAny> {
        // SAFETY: the object is alive; the new reference is counted by the `Bound`.
        unsafe { Bound::from_borrowed_ptr(py, self.0) }
    }

    #[inline]
    fn type_is(self, kind: *const ffi::PyTypeObject) -> bool {
        // SAFETY: the object is alive, so its type is.
        std::ptr::eq(unsafe { ffi::Py_TYPE(self.0) }, kind)
    }

    #[inline]
    pub(super) fn is_exact_str(self) -> bool {
        self.type_is(&raw const ffi::PyUnicode_Type)
    }

    #[inline]
    pub(super) fn is_exact_int(self) -> bool {
        self.type_is(&raw const ffi::PyLong_Type)
    }

    #[inline]
    pub(super) fn is_exact_float(self) -> bool {
        self.type_is(&raw const ffi::PyFloat_Type)
    }

    #[inline]
    pub(super) fn is_exact_bool(self) -> bool {
        self.type_is(&raw const ffi::PyBool_Type)
    }

    #[inline]
    pub(super) fn is_none(self) -> bool {
        // SAFETY: the singleton lives as long as the interpreter.
        self.0 == unsafe { ffi::Py_None() }
    }

    #[inline]
    pub(super) fn is_true(self) -> bool {
        // SAFETY: as in `is_none`.
        self.0 == unsafe { ffi::Py_True() }
    }

    #[inline]
    pub(super) fn is_false(self) -> bool {
        // SAFETY: as in `is_none`.
        self.0 == unsafe { ffi::Py_False() }
    }

    /// The object as a `str`, if its type is exactly `str`.
    #[inline]
    pub(super) fn exact_str(self) -> Option<Str<'a>> {
        self.is_exact_str().then_some(Str(self))
    }

    /// The object as a `str`, if it is one (or an instance of a subclass).
    #[inline]
    pub(super) fn str(self) -> Option<Str<'a>> {
        // SAFETY: the object is alive.
        (unsafe { ffi::PyUnicode_Check(self.0) } != 0).then_some(Str(self))
    }

    /// The object as a `dict`, if its type is exactly `dict`.
    #[inline]
    pub(super) fn exact_dict(self) -> Option<Dict<'a>> {
        self.type_is(&raw const ffi::PyDict_Type)
            .then_some(Dict(self))
    }

    /// The object as a `dict`, if it is one (or an instance of a subclass).
    #[inline]
    pub(super) fn dict(self) -> Option<Dict<'a>> {
        // SAFETY: the object is alive.
        (unsafe { ffi::PyDict_Check(self.0) } != 0).then_some(Dict(self))
    }

    /// The object as a `list`, if its type is exactly `list`.
    #[inline]
    pub(super) fn exact_list(self) -> Option<List<'a>> {
        self.type_is(&raw const ffi::PyList_Type)
            .then_some(List(self))
    }

    /// The object as a `tuple`, if its type is exactly `tuple`.
    #[inline]
    pub(super) fn exact_tuple(self) -> Option<Tuple<'a>> {
        self.type_is(&raw const ffi::PyTuple_Type)
            .then_some(Tuple(self))
    }

    /// The object as an `int`, if its type is exactly `int`.
    #[inline]
    pub(super) fn exact_int(self) -> Option<Int<'a>> {
        self.is_exact_int().then_some(Int(self))
    }

    /// The object as an `int`, if it is one (or an instance of a subclass).
    #[inline]
    pub(super) fn int(self) -> Option<Int<'a>> {
        // SAFETY: the object is alive.
        (unsafe { ffi::PyLong_Check(self.0) } != 0).then_some(Int(self))
    }

    /// The value of an exact `float`.
    #[inline]
    pub(super) fn exact_float(self) -> Option<f64> {
        // SAFETY: the object is a live float.
        self.is_exact_float()
            .then(|| unsafe { ffi::PyFloat_AS_DOUBLE(self.0) })
    }
}

/// A live `str` (or an instance of a subclass).
#[derive(Clone, Copy)]
pub(super) struct Str<'a>(Object<'a>);

/// A compact `str` that is not ASCII: its characters follow its header, in the width of its kind.
#[derive(Clone, Copy)]
pub(super) struct Wide<'a>(Object<'a>);

/// The code units of a [`Wide`] `str`.
pub(super) enum Units<'a> {
    Latin1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

impl<'a> Str<'a> {
    /// The `str` `text` holds, for as long as it is held.
    #[inline]
    pub(super) fn of(text: &'a Bound<'_, pyo3::types::PyString>) -> Self {
        Str(Object::of(text.as_any()))
    }

    /// The characters of a compact ASCII `str` (its UTF-8 too), or `None` for any other `str`.
    #[allow(clippy::inline_always, reason = "on every string's path")]
    #[inline(always)]
    pub(super) fn compact_ascii(self) -> Option<&'a [u8]> {
        let obj = self.0.0;
        // SAFETY: a live str; its length and data describe its characters, which live as long
        // as it does (a str is immutable).
        unsafe {
            #[cfg(not(Py_3_14))]
            let data =
                (ffi::PyUnicode_IS_COMPACT_ASCII(obj) != 0).then(|| ffi::PyUnicode_DATA(obj));
            // The FFI leaves out the state bit-field's accessors from 3.14 on. A compact ASCII
            // str is the one whose characters start right after its `PyASCIIObject` header; any
            // other keeps them after a longer header or in a buffer of their own.
            #[cfg(Py_3_14)]
            let data = Some(ffi::PyUnicode_DATA(obj)).filter(|&data| {
                data.cast::<ffi::PyASCIIObject>() == obj.cast::<ffi::PyASCIIObject>().add(1)
            });
            let size = usize::try_from(ffi::PyUnicode_GET_LENGTH(obj)).unwrap_or(0);
            data.map(|data| std::slice::from_raw_parts(data.cast::<u8>(), size))
        }
    }

    /// The `str` as a compact one that is not ASCII, or `None` (ASCII, or an instance of a
    /// subclass, which keeps its text elsewhere).
    #[inline]
    pub(super) fn compact_wide(self) -> Option<Wide<'a>> {
        let obj = self.0.0;
        // SAFETY: a live str.
        let compact = unsafe {
            #[cfg(not(Py_3_14))]
            {
                ffi::PyUnicode_IS_COMPACT(obj) != 0 && ffi::PyUnicode_IS_ASCII(obj) == 0
            }
            // As in `compact_ascii`: inline characters follow the header, which is the longer
            // `PyCompactUnicodeObject` when they are not ASCII.
            #[cfg(Py_3_14)]
            {
                ffi::PyUnicode_DATA(obj).cast::<ffi::PyCompactUnicodeObject>()
                    == obj.cast::<ffi::PyCompactUnicodeObject>().add(1)
            }
        };
        compact.then_some(Wide(self.0))
    }

    /// The `str`'s UTF-8 form, made and cached on it if it was not; `None` (the error
    /// cleared) for a lone surrogate, which UTF-8 cannot hold.
    pub(super) fn utf8(self) -> Option<&'a [u8]> {
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: a live str; its UTF-8 buffer is cached on it and lives as long as it does.
        unsafe {
            let data = ffi::PyUnicode_AsUTF8AndSize(self.0.0, &raw mut size);
            if data.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            Some(std::slice::from_raw_parts(
                data.cast::<u8>(),
                usize::try_from(size).unwrap_or(0),
            ))
        }
    }
}

impl<'a> Wide<'a> {
    /// Its UTF-8 form, if it was asked for before (`CPython` then keeps it on the object).
    #[inline]
    pub(super) fn cached_utf8(self) -> Option<&'a [u8]> {
        // SAFETY: a compact non-ASCII str is a `PyCompactUnicodeObject`. Free-threaded builds
        // publish the cached UTF-8 with a release store after its length; it lives as long
        // as the str.
        unsafe {
            let compact = self.0.0.cast::<ffi::PyCompactUnicodeObject>();
            let cached = (*(&raw const (*compact).utf8).cast::<AtomicPtr<std::ffi::c_char>>())
                .load(Ordering::Acquire);
            if cached.is_null() {
                return None;
            }
            let size = usize::try_from((*compact).utf8_length).unwrap_or(0);
            Some(std::slice::from_raw_parts(cached.cast::<u8>(), size))
        }
    }

    /// Its code units, in the width its kind says.
    #[inline]
    pub(super) fn units(self) -> Units<'a> {
        let obj = self.0.0;
        // SAFETY: a compact str holds its `len` code units inline, in the width its kind says.
        unsafe {
            let len = usize::try_from(ffi::PyUnicode_GET_LENGTH(obj)).unwrap_or(0);
            let data = ffi::PyUnicode_DATA(obj);
            match ffi::PyUnicode_KIND(obj) {
                ffi::PyUnicode_1BYTE_KIND => {
                    Units::Latin1(std::slice::from_raw_parts(data.cast::<u8>(), len))
                }
                ffi::PyUnicode_2BYTE_KIND => {
                    Units::Ucs2(std::slice::from_raw_parts(data.cast::<u16>(), len))
                }
                _ => Units::Ucs4(std::slice::from_raw_parts(data.cast::<u32>(), len)),
            }
        }
    }
}

/// A live `dict` (or an instance of a subclass).
#[derive(Clone, Copy)]
pub(super) struct Dict<'a>(Object<'a>);

impl<'a> Dict<'a> {
    #[inline]
    pub(super) fn len(self) -> ffi::Py_ssize_t {
        // SAFETY: a live dict.
        unsafe { ffi::PyDict_Size(self.0.0) }
    }

    /// The entry after `position` (0 to start), borrowed, and the position moved past it;
    /// `None` at the end.
    ///
    /// # Safety
    /// The entry is the dict's: it must not be used once Python code may have run (which may
    /// change the dict) unless held first ([`Object::hold`]).
    #[inline]
    pub(super) unsafe fn next(
        self,
        position: &mut ffi::Py_ssize_t,
    ) -> Option<(Object<'a>, Object<'a>)> {
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: PyDict_Next hands out borrowed entries of a live dict and checks its bounds.
        let more =
            unsafe { ffi::PyDict_Next(self.0.0, position, &raw mut key, &raw mut value) } != 0;
        more.then_some((Object(key, PhantomData), Object(value, PhantomData)))
    }
}

/// A live `list` (or an instance of a subclass).
#[derive(Clone, Copy)]
pub(super) struct List<'a>(Object<'a>);

impl<'a> List<'a> {
    /// Its current length: read again after Python code runs, which may change it.
    #[inline]
    pub(super) fn len(self) -> ffi::Py_ssize_t {
        // SAFETY: a live list.
        unsafe { ffi::PyList_GET_SIZE(self.0.0) }
    }

    /// The item at `index`, borrowed.
    ///
    /// # Safety
    /// `index` must be below [`List::len`] as read since Python code last ran, and the item
    /// must not be used once Python code may have run (which may remove it from the list)
    /// unless held first ([`Object::hold`]).
    #[inline]
    pub(super) unsafe fn item(self, index: ffi::Py_ssize_t) -> Object<'a> {
        // SAFETY: the caller's.
        Object(
            unsafe { ffi::PyList_GET_ITEM(self.0.0, index) },
            PhantomData,
        )
    }
}

/// A live `tuple`: immutable, so its items live as long as it does.
#[derive(Clone, Copy)]
pub(super) struct Tuple<'a>(Object<'a>);

impl<'a> Tuple<'a> {
    #[inline]
    pub(super) fn items(self) -> impl Iterator<Item = Object<'a>> {
        // SAFETY: a live tuple.
        let len = unsafe { ffi::PyTuple_GET_SIZE(self.0.0) };
        // SAFETY: each index is below the length of a tuple, whose items it holds for `'a`.
        (0..len).map(move |i| Object(unsafe { ffi::PyTuple_GET_ITEM(self.0.0, i) }, PhantomData))
    }
}

/// A live `int` (or an instance of a subclass).
#[derive(Clone, Copy)]
pub(super) struct Int<'a>(Object<'a>);

/// An `int`'s value, where it fits a machine word.
pub(super) enum IntValue {
    Signed(i64),
    Unsigned(u64),
    /// Beyond 64 bits.
    Wider,
}

impl Int<'_> {
    #[inline]
    pub(super) fn value(self, py: Python<'_>) -> PyResult<IntValue> {
        let obj = self.0.0;
        let mut overflow: std::ffi::c_int = 0;
        // SAFETY (all blocks): a live int; the GIL is held.
        let small = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj, &raw mut overflow) };
        if overflow == 0 {
            if small == -1 && unsafe { !ffi::PyErr_Occurred().is_null() } {
                return Err(PyErr::fetch(py));
            }
            return Ok(IntValue::Signed(small));
        }
        if overflow > 0 {
            // SAFETY: as above.
            let large = unsafe { ffi::PyLong_AsUnsignedLongLong(obj) };
            // SAFETY: as above.
            if large != u64::MAX || unsafe { ffi::PyErr_Occurred().is_null() } {
                return Ok(IntValue::Unsigned(large));
            }
            drop(PyErr::take(py));
        }
        Ok(IntValue::Wider)
    }

    /// A reference of its own (see [`Object::hold`]).
    pub(super) fn hold(self, py: Python<'_>) -> Bound<'_, PyAny> {
        self.0.hold(py)
    }
}
