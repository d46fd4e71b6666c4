//! JSON for Python: [`loads`] (a hand-written fast path, jiter for what it declines) and
//! [`dumps`] (orjson's output, written straight from `CPython` objects), over the small safe
//! C-API wrappers of [`ffi`]. The rules both backends keep are in
//! [`docs/behaviour/json.md`](../../../docs/behaviour/json.md).

pub(crate) mod dumps;
mod ffi;
pub(crate) mod loads;

use jiter::{PartialMode, PythonParse, StringCacheMode};

pub(crate) use loads::{MAX_DEPTH, decode};

/// jiter as `loads` and the frame decoder use it, for what the fast path declines.
pub(crate) const PARSER: PythonParse = PythonParse {
    allow_inf_nan: false,
    cache_mode: StringCacheMode::All,
    partial_mode: PartialMode::Off,
    catch_duplicate_keys: false,
    float_mode: jiter::FloatMode::Float,
};
