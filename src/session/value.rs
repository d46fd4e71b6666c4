//! The decoder of every frame a store reduces but those the chunk scanner takes (`scan`), and
//! the value it decodes to.
//!
//! A frame is read once, by jiter's tokenizer (string values by `json_text::decode_string`,
//! which leaves to jiter only the strings it refuses): what the reducer reads (ids,
//! `sessionUpdate`, statuses, text, ...) becomes a [`Value`] that borrows its strings from the
//! frame where they have no escapes, and every opaque member (`rawInput`, `rawOutput`,
//! `_meta`, at any depth) is validated and kept as its JSON text ([`Value::Raw`]): no tree is
//! built for it, it is stored as that text and converted only when read. A frame is accepted exactly when
//! `jiter::JsonValue::parse` accepts it, and decodes to the same values.

use std::borrow::Cow;
use std::hash::BuildHasher;

use jiter::{Jiter, JsonValue, NumberAny, NumberInt, Peek};

use super::budget::{ARRAY, ITEM, MEMBER, NUMBER, OBJECT, SCALAR, STRING};
use super::json::dedup;
use super::opaque::skim;
use crate::json_text::decode_string;

/// A decoded JSON value. Objects keep their members as sent (keys may repeat; the reducer's
/// readers take the last, as a Python dict does).
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'s> {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside `i64`, as decimal digits (with a leading `-` when negative).
    BigInt(String),
    Float(f64),
    Str(Cow<'s, str>),
    Array(Vec<Value<'s>>),
    Object(Vec<(Cow<'s, str>, Value<'s>)>),
    /// An opaque array or object, as its validated JSON text.
    Raw(Raw<'s>),
}

/// An opaque array or object's JSON text and its cost (`budget`, counted as its decoded
/// value's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raw<'s> {
    pub text: Cow<'s, str>,
    pub cost: usize,
}

impl Raw<'_> {
    /// Whether the value is an object (the schema's `_meta` must be one).
    pub fn is_object(&self) -> bool {
        self.text.starts_with('{')
    }
}

/// The members whose values are opaque to the protocol wherever they appear.
fn is_opaque(key: &str) -> bool {
    matches!(key, "rawInput" | "rawOutput" | "_meta")
}

/// jiter's limit on nesting: containers that hold something, 200 deep at most.
pub(super) const DEPTH_LIMIT: usize = 200;

/// Decode one frame; `None` when it is not JSON (the caller names why, with jiter's reason).
pub fn parse(frame: &[u8]) -> Option<Value<'_>> {
    let mut decoder = Decoder::new(frame, 0, true);
    let peek = decoder.jiter.peek().ok()?;
    let value = decoder.value(peek).ok()?;
    decoder.jiter.finish().ok()?;
    Some(value)
}

/// The length of the object or `null` at the start of `rest` (a value `depth` filled
/// containers deep in its frame), checked as the decoder checks a frame: `None` for any other
/// value, or one that is not JSON or nests too deep.
pub(super) fn skip_object_or_null(rest: &[u8], depth: usize) -> Option<usize> {
    let lead = leading_whitespace(rest);
    if rest[lead..].starts_with(b"null") {
        return Some(lead + 4);
    }
    if rest.get(lead) == Some(&b'{')
        && let Some(value) = skim(&rest[lead..], depth)
    {
        let used = lead + value.len;
        skimmed_text(&rest[..used], value.ascii)?;
        return Some(used);
    }
    // Its cost is not wanted: its keys are not tracked for repeats.
    let mut decoder = Decoder::new(rest, depth, false);
    let peek = decoder.jiter.peek().ok()?;
    if !matches!(peek, Peek::Object | Peek::Null) {
        return None;
    }
    let mut repeated = false;
    decoder.cost(peek, &mut repeated).ok()?;
    let used = decoder.index();
    utf8(&rest[..used])?;
    Some(used)
}

/// A message chunk's content block that is not text, at the start of `rest` (a value `depth`
/// filled containers deep in its frame): its JSON text and cost, when it is an object whose
/// `type` (the last, if repeated, as a dict keeps it) is a string other than `"text"`, checked
/// as the decoder checks a frame. `None` for any other value or block, or one that is not
/// JSON or nests too deep.
pub(super) fn other_block(rest: &[u8], depth: usize) -> Option<(&str, usize)> {
    let lead = leading_whitespace(rest);
    if rest.get(lead) == Some(&b'{')
        && let Some(block) = skim(&rest[lead..], depth)
    {
        if !block.other_type {
            return None;
        }
        let bytes = &rest[..lead + block.len];
        let text = skimmed_text(bytes, block.ascii)?;
        return Some((text, exact_cost(bytes, block.cost, block.repeated)));
    }
    let mut decoder = Decoder::new(rest, depth, true);
    if decoder.jiter.peek().ok()? != Peek::Object {
        return None;
    }
    let (cost, repeated, other_type) = decoder.block().ok()?;
    let used = decoder.index();
    if !other_type {
        return None;
    }
    let bytes = &rest[..used];
    // The walk read string bytes unchecked (only escapes): checked here, all at once.
    let text = utf8(bytes)?;
    Some((text, exact_cost(bytes, cost, repeated)))
}

/// The cost of the value `bytes`, `cost` when none of its objects repeats a key; else that of
/// the value a dict would hold (rare, so decoded).
fn exact_cost(bytes: &[u8], cost: usize, repeated: bool) -> usize {
    if repeated {
        JsonValue::parse(bytes, false).map_or(cost, |v| jiter_cost(&v))
    } else {
        cost
    }
}

/// `bytes` as text, when they are UTF-8 (simdutf8: several times std's speed on text with a
/// non-ASCII character every line).
fn utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// A value's text, checked as UTF-8 unless the pass that read it saw only ASCII.
fn skimmed_text(bytes: &[u8], ascii: bool) -> Option<&str> {
    if ascii {
        debug_assert!(bytes.is_ascii());
        // SAFETY: every byte is ASCII, so the bytes are UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        utf8(bytes)
    }
}

/// The whitespace at the start of `bytes`, as JSON counts it.
fn leading_whitespace(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
        .unwrap_or(bytes.len())
}

/// The walk's reading of the value at the start of `bytes`, `depth` filled containers deep:
/// its length, cost and whether an object in it repeats a key (what `skim` must agree with).
#[cfg(test)]
pub(super) fn walk(bytes: &[u8], depth: usize) -> Option<(usize, usize, bool)> {
    let mut decoder = Decoder::new(bytes, depth, true);
    let peek = decoder.jiter.peek().ok()?;
    let mut repeated = false;
    let cost = decoder.cost(peek, &mut repeated).ok()?;
    let len = decoder.index();
    std::str::from_utf8(&bytes[..len]).ok()?;
    Some((len, cost, repeated))
}

/// Why decoding stopped: the frame is not JSON (or nests too deep).
struct Refused;

impl<E> From<E> for Refused
where
    E: Into<jiter::JiterError>,
{
    fn from(_: E) -> Self {
        Refused
    }
}

struct Decoder<'s> {
    /// The tokenizer, over `data[base..]`: it starts again past each value `skim` read.
    jiter: Jiter<'s>,
    data: &'s [u8],
    base: usize,
    depth: usize,
    /// Hashes the keys of opaque objects, to find repeats that make a cost not the sum of its
    /// members'; `None` when the costs are not wanted.
    hasher: Option<foldhash::fast::FixedState>,
}

impl<'s> Decoder<'s> {
    /// A decoder of `data`, a value `depth` filled containers deep in its frame.
    fn new(data: &'s [u8], depth: usize, costs: bool) -> Self {
        Decoder {
            jiter: Jiter::new(data),
            data,
            base: 0,
            depth,
            hasher: costs.then(|| foldhash::fast::FixedState::with_seed(0)),
        }
    }

    /// A string jiter decoded: borrowed from the frame when jiter returned the frame's own bytes
    /// (no escapes), else copied.
    fn own(data: &'s [u8], s: &str) -> Cow<'s, str> {
        let base = data.as_ptr() as usize;
        let at = s.as_ptr() as usize;
        if at >= base && at + s.len() <= base + data.len() {
            let bytes = &data[at - base..at - base + s.len()];
            // SAFETY: these are the bytes of `s` itself, a `str` (jiter checked them as UTF-8);
            // checking them again would read every string of the frame twice.
            Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) })
        } else {
            Cow::Owned(s.to_owned())
        }
    }

    fn enter(&mut self) -> Result<(), Refused> {
        self.depth += 1;
        if self.depth > DEPTH_LIMIT {
            return Err(Refused);
        }
        Ok(())
    }

    fn value(&mut self, peek: Peek) -> Result<Value<'s>, Refused> {
        Ok(match peek {
            Peek::Null => {
                self.jiter.known_null()?;
                Value::Null
            }
            Peek::True | Peek::False => Value::Bool(self.jiter.known_bool(peek)?),
            Peek::String => {
                let start = self.index();
                if let Some((text, len)) = decode_string(&self.data[start..]) {
                    self.resume_at(start + len);
                    Value::Str(text)
                } else {
                    let data = self.data;
                    Value::Str(Self::own(data, self.jiter.known_str()?))
                }
            }
            Peek::Array => {
                let mut items = Vec::new();
                if let Some(mut next) = self.jiter.known_array()? {
                    self.enter()?;
                    loop {
                        items.push(self.value(next)?);
                        match self.jiter.array_step()? {
                            Some(peek) => next = peek,
                            None => break,
                        }
                    }
                    self.depth -= 1;
                }
                Value::Array(items)
            }
            Peek::Object => {
                let mut members = Vec::new();
                let data = self.data;
                let mut key = self.jiter.known_object()?.map(|k| Self::own(data, k));
                if key.is_some() {
                    self.enter()?;
                }
                while let Some(k) = key {
                    let peek = self.jiter.peek()?;
                    // Only containers are worth keeping as text; `null` clears a field.
                    let value = if matches!(peek, Peek::Array | Peek::Object) && is_opaque(&k) {
                        self.raw(peek)?
                    } else {
                        self.value(peek)?
                    };
                    members.push((k, value));
                    key = self.jiter.next_key()?.map(|k| Self::own(data, k));
                }
                if !members.is_empty() {
                    self.depth -= 1;
                }
                Value::Object(members)
            }
            _ => match self.jiter.known_number(peek)? {
                NumberAny::Int(NumberInt::Int(i)) => Value::Int(i),
                NumberAny::Int(NumberInt::BigInt(b)) => Value::BigInt(b.to_string()),
                NumberAny::Float(f) => Value::Float(f),
            },
        })
    }

    /// An opaque value, validated and costed without being built.
    fn raw(&mut self, peek: Peek) -> Result<Value<'s>, Refused> {
        let start = self.index();
        let (bytes, cost, repeated, ascii) =
            if let Some(value) = skim(&self.data[start..], self.depth) {
                let end = start + value.len;
                self.resume_at(end);
                (
                    &self.data[start..end],
                    value.cost,
                    value.repeated,
                    value.ascii,
                )
            } else {
                let mut repeated = false;
                let cost = self.cost(peek, &mut repeated)?;
                (&self.data[start..self.index()], cost, repeated, false)
            };
        // String bytes were read unchecked (only escapes): checked here, all at once.
        let text = skimmed_text(bytes, ascii).ok_or(Refused)?;
        Ok(Value::Raw(Raw {
            text: Cow::Borrowed(text),
            cost: exact_cost(bytes, cost, repeated),
        }))
    }

    /// Go on at `end`, past a value read without the tokenizer (its state is only its place).
    fn resume_at(&mut self, end: usize) {
        let tape = std::mem::replace(&mut self.jiter, Jiter::new(&[])).into_tape();
        self.jiter = Jiter::with_tape(&self.data[end..], tape);
        self.base = end;
    }

    /// The tokenizer's place in `data`.
    fn index(&self) -> usize {
        self.base + self.jiter.current_index()
    }

    /// Consume the object next, returning its cost, whether a key repeats in it (at any
    /// depth), and whether its last `type` member is a string other than `"text"`.
    fn block(&mut self) -> Result<(usize, bool, bool), Refused> {
        let mut cost = OBJECT;
        let mut repeated = false;
        let mut other_type = false;
        let mut keys: Vec<u64> = Vec::new();
        let hasher = self.hasher.clone();
        let hash = |k: &str| hasher.as_ref().map(|h| h.hash_one(k));
        let mut key = self
            .jiter
            .known_object()?
            .map(|k| (hash(k), k.len(), k == "type"));
        let filled = key.is_some();
        if filled {
            self.enter()?;
        }
        while let Some((key_hash, len, is_type)) = key {
            cost = cost.saturating_add(MEMBER + STRING + len);
            keys.extend(key_hash);
            let peek = self.jiter.peek()?;
            if is_type {
                other_type = false;
                if peek == Peek::String {
                    let kind = self.jiter.known_str()?;
                    other_type = kind != "text";
                    cost = cost.saturating_add(STRING + kind.len());
                } else {
                    cost = cost.saturating_add(self.cost(peek, &mut repeated)?);
                }
            } else {
                cost = cost.saturating_add(self.cost(peek, &mut repeated)?);
            }
            key = self
                .jiter
                .next_key()?
                .map(|k| (hash(k), k.len(), k == "type"));
        }
        if filled {
            self.depth -= 1;
        }
        if keys.len() > 1 && !repeated {
            keys.sort_unstable();
            repeated = keys.windows(2).any(|w| w[0] == w[1]);
        }
        Ok((cost, repeated, other_type))
    }

    /// Consume one value, returning its cost; `repeated` is set when an object in it repeats
    /// a key (its cost then is not the sum of its members').
    fn cost(&mut self, peek: Peek, repeated: &mut bool) -> Result<usize, Refused> {
        Ok(match peek {
            Peek::Null => {
                self.jiter.known_null()?;
                SCALAR
            }
            Peek::True | Peek::False => {
                self.jiter.known_bool(peek)?;
                SCALAR
            }
            Peek::String => STRING + decoded_len(self.jiter.known_bytes()?),
            Peek::Array => {
                let mut cost = ARRAY;
                if let Some(mut next) = self.jiter.known_array()? {
                    self.enter()?;
                    loop {
                        cost = cost.saturating_add(ITEM + self.cost(next, repeated)?);
                        match self.jiter.array_step()? {
                            Some(peek) => next = peek,
                            None => break,
                        }
                    }
                    self.depth -= 1;
                }
                cost
            }
            Peek::Object => {
                let mut cost = OBJECT;
                // The keys' hashes: a repeat among them (or a collision) sends the value to
                // the exact count.
                let mut keys: Vec<u64> = Vec::new();
                let hasher = self.hasher.clone();
                let hash = |k: &str| hasher.as_ref().map(|h| h.hash_one(k));
                let mut key = self.jiter.known_object()?.map(|k| (hash(k), k.len()));
                if key.is_some() {
                    self.enter()?;
                }
                let filled = key.is_some();
                while let Some((key_hash, len)) = key {
                    cost = cost.saturating_add(MEMBER + STRING + len);
                    keys.extend(key_hash);
                    let peek = self.jiter.peek()?;
                    cost = cost.saturating_add(self.cost(peek, repeated)?);
                    key = self.jiter.next_key()?.map(|k| (hash(k), k.len()));
                }
                if filled {
                    self.depth -= 1;
                }
                if keys.len() > 1 && !*repeated {
                    keys.sort_unstable();
                    *repeated = keys.windows(2).any(|w| w[0] == w[1]);
                }
                cost
            }
            _ => {
                self.jiter.known_number_bytes(peek)?;
                NUMBER
            }
        })
    }
}

/// The UTF-8 length of a JSON string's value, from its text between the quotes (escapes
/// already checked by jiter: each is well formed, and surrogates come in pairs).
fn decoded_len(raw: &[u8]) -> usize {
    let mut len = 0;
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &raw[i..]) {
        len += at;
        i += at;
        if raw.get(i + 1) == Some(&b'u') {
            let unit = hex4(&raw[i + 2..i + 6]);
            if (0xD800..0xDC00).contains(&unit) {
                // A pair: one code point past U+FFFF, in two escapes.
                len += 4;
                i += 12;
            } else {
                len += match unit {
                    0..0x80 => 1,
                    0x80..0x800 => 2,
                    _ => 3,
                };
                i += 6;
            }
        } else {
            len += 1;
            i += 2;
        }
    }
    len + raw.len() - i
}

fn hex4(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |n, &d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => d - b'A' + 10,
        };
        n * 16 + u32::from(v)
    })
}

/// The cost of a value jiter decoded, its repeated keys taken as a dict takes them (each once,
/// at its first place, with its last value).
fn jiter_cost(value: &JsonValue<'_>) -> usize {
    match value {
        JsonValue::Null | JsonValue::Bool(_) => SCALAR,
        JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_) => NUMBER,
        JsonValue::Str(s) => STRING + s.len(),
        JsonValue::Array(items) => items.iter().fold(ARRAY, |sum, item| {
            sum.saturating_add(ITEM + jiter_cost(item))
        }),
        JsonValue::Object(members) => dedup(members).into_iter().fold(OBJECT, |sum, (k, v)| {
            sum.saturating_add(MEMBER + STRING + k.len() + jiter_cost(v))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::budget::json_cost;
    use crate::session::json::Json;

    /// What `JsonValue::parse` makes of `text`, as a tree.
    fn jiter_reading(text: &[u8]) -> Option<Json> {
        JsonValue::parse(text, false)
            .ok()
            .map(|v| Json::from_jiter(&v))
    }

    /// What the decoder makes of `text`, its opaque values decoded from their text; each opaque
    /// value's cost is checked against that of its tree on the way.
    fn our_reading(text: &[u8]) -> Option<Json> {
        fn check_costs(v: &Value<'_>) {
            match v {
                Value::Raw(raw) => {
                    let tree = jiter_reading(raw.text.as_bytes()).expect("raw text is JSON");
                    assert_eq!(raw.cost, json_cost(&tree), "{}", raw.text);
                }
                Value::Array(items) => items.iter().for_each(check_costs),
                Value::Object(members) => members.iter().for_each(|(_, v)| check_costs(v)),
                _ => {}
            }
        }
        let value = parse(text)?;
        check_costs(&value);
        Some(Json::from_value(&value).expanded())
    }

    fn agree(text: &[u8]) {
        assert_eq!(
            our_reading(text),
            jiter_reading(text),
            "{}",
            String::from_utf8_lossy(text)
        );
    }

    /// A deterministic generator of JSON texts rich in what the decoder must get right.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(self.0 >> 33).unwrap_or(0) % n
        }

        fn value(&mut self, depth: usize, out: &mut String) {
            let pick = if depth > 4 {
                self.next(6)
            } else {
                self.next(9)
            };
            match pick {
                0 => out.push_str(["null", "true", "false"][self.next(3)]),
                1 => out.push_str(
                    [
                        "0",
                        "-0",
                        "12",
                        "-7",
                        "1.5",
                        "2e3",
                        "-1E-2",
                        "1e999",
                        "123456789012345678901234",
                        "0.1",
                    ][self.next(10)],
                ),
                2..=5 => self.string(out),
                6 | 7 => {
                    out.push('{');
                    for i in 0..self.next(5) {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str([" ", "", "\n"][self.next(3)]);
                        let key = [
                            "\"rawInput\"",
                            "\"_meta\"",
                            "\"rawOutput\"",
                            "\"a\"",
                            "\"b\"",
                            "\"r\\u0061wInput\"",
                            "\"\\u00e9\"",
                        ][self.next(7)];
                        out.push_str(key);
                        out.push(':');
                        self.value(depth + 1, out);
                    }
                    out.push('}');
                }
                _ => {
                    out.push('[');
                    for i in 0..self.next(5) {
                        if i > 0 {
                            out.push_str([",", " , "][self.next(2)]);
                        }
                        self.value(depth + 1, out);
                    }
                    out.push(']');
                }
            }
        }

        fn string(&mut self, out: &mut String) {
            out.push('"');
            for _ in 0..self.next(6) {
                out.push_str(
                    [
                        "a",
                        "é",
                        "\\n",
                        "\\\"",
                        "\\\\",
                        "\\/",
                        "\\u00e9",
                        "\\u20ac",
                        "\\ud83d\\ude00",
                        "😀",
                        "\\t",
                        "x y",
                    ][self.next(12)],
                );
            }
            out.push('"');
        }
    }

    #[test]
    fn frames_decode_as_jiter_decodes_them_opaque_values_kept_as_text_at_their_cost() {
        let mut texts = Gen(7);
        let bytes: &[u8] = b"\"\\{}[],:u0 \xff\x01e-.";
        let mut accepted = 0;
        for _ in 0..4000 {
            let mut text = String::new();
            texts.value(0, &mut text);
            agree(text.as_bytes());
            accepted += usize::from(parse(text.as_bytes()).is_some());
            // The same text broken: a byte changed, or cut short.
            let mut broken = text.clone().into_bytes();
            if !broken.is_empty() {
                let at = texts.next(broken.len());
                broken[at] = bytes[texts.next(bytes.len())];
                agree(&broken);
                agree(&text.as_bytes()[..at]);
            }
        }
        assert_eq!(accepted, 4000);
    }

    #[test]
    fn opaque_values_are_text_and_the_rest_a_tree() {
        let frame =
            br#"{"a":{"rawInput":{"x":[1,"\u00e9"]},"_meta":null,"rawOutput":"s"},"_meta":[{}]}"#;
        let Some(Value::Object(top)) = parse(frame) else {
            panic!("an object");
        };
        let Value::Object(a) = &top[0].1 else {
            panic!("a is an object");
        };
        assert!(matches!(&a[0].1, Value::Raw(raw) if raw.text == r#"{"x":[1,"\u00e9"]}"#));
        // Only containers are kept as text: null and strings are as any other value.
        assert_eq!(a[1].1, Value::Null);
        assert_eq!(a[2].1, Value::Str(Cow::Borrowed("s")));
        assert!(matches!(&top[1].1, Value::Raw(raw) if raw.text == "[{}]" && !raw.is_object()));
        // A key repeated inside an opaque value costs what a dict of it holds.
        agree(br#"{"_meta":{"k":"long value","k":1,"j":{"k":2,"k":[3]}}}"#);
    }

    #[test]
    fn nesting_and_utf8_are_refused_where_jiter_refuses_them() {
        for depth in [199, 200, 201] {
            for (open, close) in [("[", "]"), ("{\"_meta\":", "}"), ("{\"a\":", "}")] {
                let filled = format!("{}1{}", open.repeat(depth), close.repeat(depth));
                let hollow = format!("{}[]{}", open.repeat(depth), close.repeat(depth));
                for text in [filled, hollow] {
                    agree(text.as_bytes());
                    let inside = format!("{{\"_meta\":{text}}}");
                    agree(inside.as_bytes());
                }
            }
        }
        agree(b"{\"_meta\":{\"a\":\"\xff\"}}");
        agree(b"{\"_meta\":{\"\xff\":1}}");
        agree(b"{\"_meta\":[\"\\ud800\"]}");
        agree(b"{\"_meta\":[\"\\udc00x\"]}");
        agree(b"{\"_meta\":[1,]}");
        agree(b"{\"_meta\":[nan]}");
        agree(b"{\"_meta\":{}} x");
    }
}
