//! A small owned JSON value for reducer state and snapshots.
//!
//! Objects are vectors of pairs so they keep insertion order (the order a Python dict would
//! have); keys are unique, with a replaced key keeping its first position, as in a dict.

use foldhash::HashMap;
use std::borrow::Cow;
use std::fmt::Write as _;

use crate::session::value::Value;

/// An owned JSON value. Objects keep insertion order and unique keys.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside `i64`, as decimal digits (with a leading `-` when negative).
    BigInt(String),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
    /// An opaque value (`rawInput`, `rawOutput`, `_meta`) as the JSON text it was sent as,
    /// converted only when read (boxed: most values are small).
    Raw(Box<RawJson>),
}

/// An opaque value's JSON text, and the cost of the value it holds (see `budget`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawJson {
    pub text: Box<str>,
    pub cost: usize,
}

/// An ordered JSON object: unique keys in insertion order.
pub(crate) type Obj = Vec<(String, Json)>;

/// A snapshot that borrows what it can from the state it shows: taking one copies no stored
/// value, and a converter (to an owned [`Json`], to Python objects) walks it once. Objects
/// keep their order and unique keys, as [`Json`] objects do.
#[derive(Debug)]
pub(crate) enum View<'a> {
    /// A stored value, as it is.
    Json(&'a Json),
    /// A value made for the snapshot (a terminal's text, a count).
    Owned(Json),
    Str(&'a str),
    Array(Vec<View<'a>>),
    Object(Vec<(&'a str, View<'a>)>),
}

impl<'a> View<'a> {
    /// An owned copy.
    pub fn into_json(self) -> Json {
        match self {
            View::Json(json) => json.expanded(),
            View::Owned(json) => json.expanded(),
            View::Str(s) => Json::Str(s.to_owned()),
            View::Array(items) => Json::Array(items.into_iter().map(View::into_json).collect()),
            View::Object(members) => Json::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.into_json()))
                    .collect(),
            ),
        }
    }

    /// The members of a stored object, borrowed.
    pub fn of_obj(obj: &'a Obj) -> View<'a> {
        View::Object(
            obj.iter()
                .map(|(k, v)| (k.as_str(), View::Json(v)))
                .collect(),
        )
    }

    /// `Str`, or `Null` when absent.
    pub fn of_str(s: Option<&'a str>) -> View<'a> {
        s.map_or(View::Owned(Json::Null), View::Str)
    }
}

/// Set `key` of a view's members: in place when present (a dict's rule), else at the end.
pub(crate) fn view_set<'a>(members: &mut Vec<(&'a str, View<'a>)>, key: &'a str, value: View<'a>) {
    if let Some(slot) = members.iter_mut().find(|(k, _)| *k == key) {
        slot.1 = value;
    } else {
        members.push((key, value));
    }
}

/// Replace the value of `key` in place, or append it.
pub(crate) fn obj_set(obj: &mut Obj, key: &str, value: Json) {
    if let Some(slot) = obj.iter_mut().find(|(k, _)| k == key) {
        slot.1 = value;
    } else {
        obj.push((key.to_owned(), value));
    }
}

/// Remove `key` (keeping the order of the rest).
pub(crate) fn obj_remove(obj: &mut Obj, key: &str) {
    if let Some(i) = obj.iter().position(|(k, _)| k == key) {
        obj.remove(i);
    }
}

pub(crate) fn obj_get<'a>(obj: &'a Obj, key: &str) -> Option<&'a Json> {
    obj.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Parsed object members as jiter hands them out (keys may repeat).
pub(crate) type Members<'s> = [(Cow<'s, str>, Value<'s>)];

/// The value of `key`; with repeated keys the last one wins, as in a Python dict.
pub(crate) fn member<'a, 's>(obj: &'a Members<'s>, key: &str) -> Option<&'a Value<'s>> {
    obj.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The members of a parsed object (ours or jiter's) as a Python dict would hold them: each key
/// once, at its first position, with its last value.
pub(crate) fn dedup<'a, K: AsRef<str>, V>(obj: &'a [(K, V)]) -> Vec<(&'a str, &'a V)> {
    let mut out: Vec<(&'a str, &'a V)> = Vec::with_capacity(obj.len());
    if obj.len() <= 16 {
        for (k, v) in obj {
            if let Some(slot) = out.iter_mut().find(|(kk, _)| *kk == k.as_ref()) {
                slot.1 = v;
            } else {
                out.push((k.as_ref(), v));
            }
        }
    } else {
        let mut index: HashMap<&'a str, usize> =
            HashMap::with_capacity_and_hasher(obj.len(), foldhash::fast::RandomState::default());
        for (k, v) in obj {
            if let Some(&i) = index.get(k.as_ref()) {
                out[i].1 = v;
            } else {
                index.insert(k.as_ref(), out.len());
                out.push((k.as_ref(), v));
            }
        }
    }
    out
}

impl Json {
    /// Convert a parsed value (repeated keys collapse as in a Python dict).
    pub fn from_value(value: &Value<'_>) -> Json {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::Int(*i),
            Value::BigInt(b) => Json::BigInt(b.clone()),
            Value::Float(f) => Json::Float(*f),
            Value::Str(s) => Json::Str(s.as_ref().to_owned()),
            Value::Array(items) => Json::Array(items.iter().map(Json::from_value).collect()),
            Value::Object(members) => Json::Object(
                dedup(members)
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), Json::from_value(v)))
                    .collect(),
            ),
            Value::Raw(raw) => Json::Raw(Box::new(RawJson {
                text: raw.text.as_ref().into(),
                cost: raw.cost,
            })),
        }
    }

    /// Convert a value jiter decoded, opaque members included (as a tree, not as text).
    pub(crate) fn from_jiter(value: &jiter::JsonValue<'_>) -> Json {
        use jiter::JsonValue;
        match value {
            JsonValue::Null => Json::Null,
            JsonValue::Bool(b) => Json::Bool(*b),
            JsonValue::Int(i) => Json::Int(*i),
            JsonValue::BigInt(b) => Json::BigInt(b.to_string()),
            JsonValue::Float(f) => Json::Float(*f),
            JsonValue::Str(s) => Json::Str(s.as_ref().to_owned()),
            JsonValue::Array(items) => Json::Array(items.iter().map(Json::from_jiter).collect()),
            JsonValue::Object(members) => Json::Object(
                dedup(members)
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), Json::from_jiter(v)))
                    .collect(),
            ),
        }
    }

    /// The same value with every opaque value kept as text decoded into a tree.
    #[must_use]
    pub fn expanded(&self) -> Json {
        match self {
            Json::Raw(raw) => jiter::JsonValue::parse(raw.text.as_bytes(), false)
                .map_or(Json::Null, |v| Json::from_jiter(&v)),
            Json::Array(items) => Json::Array(items.iter().map(Json::expanded).collect()),
            Json::Object(members) => Json::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.expanded()))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Compact JSON text (non-finite floats, which JSON cannot express, are written as null).
    pub fn to_json_string(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// Append compact JSON text to `out`.
    pub fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(true) => out.push_str("true"),
            Json::Bool(false) => out.push_str("false"),
            Json::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
            Json::BigInt(s) => out.push_str(s),
            Json::Float(f) => {
                if f.is_finite() {
                    out.push_str(zmij::Buffer::new().format_finite(*f));
                } else {
                    out.push_str("null");
                }
            }
            Json::Str(s) => write_str(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
            // Its text as sent may hold whitespace: written compact, as any other value.
            Json::Raw(_) => self.expanded().write(out),
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Str(s.to_owned())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::Str(s)
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl From<u64> for Json {
    fn from(n: u64) -> Json {
        i64::try_from(n).map_or_else(|_| Json::BigInt(n.to_string()), Json::Int)
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(v: Option<T>) -> Json {
        v.map_or(Json::Null, Into::into)
    }
}

pub(super) fn is_object(v: Option<&Value<'_>>) -> bool {
    match v {
        Some(Value::Object(_)) => true,
        Some(Value::Raw(raw)) => raw.is_object(),
        _ => false,
    }
}

pub(super) fn as_str<'a>(v: Option<&'a Value<'_>>) -> Option<&'a str> {
    match v {
        Some(Value::Str(s)) => Some(s.as_ref()),
        _ => None,
    }
}

pub(super) fn is_non_negative_int(v: Option<&Value<'_>>) -> bool {
    match v {
        Some(Value::Int(i)) => *i >= 0,
        Some(Value::BigInt(b)) => !b.starts_with('-'),
        _ => false,
    }
}
