//! One pass over an opaque value's bytes (`rawInput`, `rawOutput`, `_meta`, a content block
//! kept as text): checked as JSON, measured and costed without decoding a string or building a
//! tree.
//!
//! The decoder (`value`) walks a frame with jiter's tokenizer, which decodes each string it
//! meets and steps over one escape at a time; in tool output (escaped quotes, newlines, tabs
//! and ANSI every few bytes) that walk cost as much as `orjson.loads` building the whole value.
//! Here a string's quotes, backslashes and controls are found 64 bytes at a time and its
//! escapes only measured.
//!
//! Every text accepted here is one the decoder's walk accepts, with the same length and cost.
//! Some of those it accepts this pass refuses, to keep itself short: a key with an escape, a
//! `type` with an escape, anything not JSON. A refusal sends the value to the walk, which
//! decides; so the walk stays the only judge of what is not JSON.

use crate::json_text::{plain_run, stops64};

use super::budget::{ARRAY, ITEM, MEMBER, NUMBER, OBJECT, SCALAR, STRING};
use super::value::DEPTH_LIMIT;

/// What one pass learnt of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Skimmed {
    /// Its length in bytes, from its first byte to its last.
    pub len: usize,
    /// Its cost (`budget`), counted as the walk counts it.
    pub cost: usize,
    /// An object in it repeats a key, so its cost is not the sum of its members'.
    pub repeated: bool,
    /// No byte of it is above 0x7f: its text needs no UTF-8 check.
    pub ascii: bool,
    /// It is an object whose last `type` member is a string other than `"text"`.
    pub other_type: bool,
}

/// The value at the start of `bytes`, `depth` filled containers deep in its frame; `None` when
/// this pass refuses it (the walk then decides).
pub(super) fn skim(bytes: &[u8], depth: usize) -> Option<Skimmed> {
    skim_with(bytes, depth, stops64)
}

/// [`skim`] with the given scan for the bytes that stop a string's plain run (tests run the
/// portable one too); generic, so that the scan is inlined.
fn skim_with<S: Fn(&[u8]) -> (u64, u64)>(bytes: &[u8], depth: usize, stops: S) -> Option<Skimmed> {
    let mut skimmer = Skimmer {
        bytes,
        stops,
        at: 0,
        depth,
        keys: Vec::new(),
        repeated: false,
        ascii: true,
        other_type: false,
    };
    let cost = skimmer.value(true)?;
    Some(Skimmed {
        len: skimmer.at,
        cost,
        repeated: skimmer.repeated,
        ascii: skimmer.ascii,
        other_type: skimmer.other_type,
    })
}

/// Objects of at most this many keys are checked for a repeat pair by pair; larger ones sorted.
const PAIRWISE_KEYS: usize = 12;

struct Skimmer<'a, S> {
    bytes: &'a [u8],
    stops: S,
    at: usize,
    depth: usize,
    /// The keys of the objects open now, outermost first.
    keys: Vec<&'a [u8]>,
    repeated: bool,
    ascii: bool,
    other_type: bool,
}

impl<'a, S: Fn(&[u8]) -> (u64, u64)> Skimmer<'a, S> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= DEPTH_LIMIT).then_some(())
    }

    /// The value at `at`; `top` when it is the value skimmed (its `type` is wanted).
    fn value(&mut self, top: bool) -> Option<usize> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                Some(STRING + self.string_body()?)
            }
            b'{' => self.object(top),
            b'[' => self.array(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<usize> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| {
            self.at = end;
            SCALAR
        })
    }

    /// RFC 8259's number, the digits run to their end.
    fn number(&mut self) -> Option<usize> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            // No leading zero: `07` is not a number.
            b'0' if !matches!(self.bytes.get(self.at + 1), Some(b'0'..=b'9')) => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(NUMBER)
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// A string's body, from past its opening quote to past its closing one; its decoded
    /// length in bytes. Sixty-four bytes are classified at once, and each quote, backslash or
    /// control character among them is visited by its bit: in tool output, with an escape
    /// every few bytes, that is what a string costs.
    fn string_body(&mut self) -> Option<usize> {
        let start = self.at;
        // Bytes written as escapes beyond what they stand for.
        let mut saved = 0;
        let mut block = start;
        while block < self.bytes.len() {
            let (mut stops, high) = (self.stops)(&self.bytes[block..]);
            while stops != 0 {
                let at = block + stops.trailing_zeros() as usize;
                stops &= stops - 1;
                if at < self.at {
                    // Inside an escape already read.
                    continue;
                }
                match self.bytes[at] {
                    b'"' => {
                        self.ascii &= high & ((1 << (at - block)) - 1) == 0;
                        self.at = at + 1;
                        return Some(at - start - saved);
                    }
                    b'\\' => {
                        self.at = at;
                        let decoded = self.escape()?;
                        saved += self.at - at - decoded;
                    }
                    0..0x20 => return None,
                    // Flagged by the portable scan only: a plain byte.
                    _ => {}
                }
            }
            self.ascii &= high == 0;
            block += 64;
        }
        None
    }

    /// The escape at `at` (its backslash): the UTF-8 length of what it stands for.
    fn escape(&mut self) -> Option<usize> {
        match *self.bytes.get(self.at + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.at += 2;
                Some(1)
            }
            b'u' => {
                let unit = self.hex4(self.at + 2)?;
                self.at += 6;
                match unit {
                    0xD800..=0xDBFF => {
                        // A code point past U+FFFF: this and the low half, escaped next.
                        if self.bytes.get(self.at..self.at + 2)? != b"\\u" {
                            return None;
                        }
                        if !(0xDC00..=0xDFFF).contains(&self.hex4(self.at + 2)?) {
                            return None;
                        }
                        self.at += 6;
                        Some(4)
                    }
                    0xDC00..=0xDFFF => None,
                    0..0x80 => Some(1),
                    0x80..0x800 => Some(2),
                    _ => Some(3),
                }
            }
            _ => None,
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        crate::json_text::hex4(self.bytes.get(at..at + 4)?)
    }

    fn array(&mut self) -> Option<usize> {
        self.at += 1;
        self.whitespace();
        let mut cost = ARRAY;
        if self.peek()? == b']' {
            self.at += 1;
            return Some(cost);
        }
        self.enter()?;
        loop {
            cost = cost.saturating_add(ITEM + self.value(false)?);
            self.whitespace();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.whitespace();
                }
                b']' => break,
                _ => return None,
            }
        }
        self.at += 1;
        self.depth -= 1;
        Some(cost)
    }

    fn object(&mut self, top: bool) -> Option<usize> {
        self.at += 1;
        self.whitespace();
        let mut cost = OBJECT;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(cost);
        }
        self.enter()?;
        let first_key = self.keys.len();
        loop {
            let key = self.key()?;
            self.keys.push(key);
            self.whitespace();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            self.whitespace();
            let start = self.at;
            let value_cost = self.value(false)?;
            if top && key == b"type" {
                self.other_type = self.other_type_than_text(start)?;
            }
            cost = cost.saturating_add(MEMBER + STRING + key.len() + value_cost);
            self.whitespace();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.whitespace();
                }
                b'}' => break,
                _ => return None,
            }
        }
        self.at += 1;
        self.depth -= 1;
        if !self.repeated {
            self.repeated = repeats(&mut self.keys[first_key..]);
        }
        self.keys.truncate(first_key);
        Some(cost)
    }

    /// A key with no escape (its bytes are then its value, and compare as a dict's keys do).
    fn key(&mut self) -> Option<&'a [u8]> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let run = plain_run(&self.bytes[start..]);
        self.ascii &= run.ascii;
        self.at = start + run.bytes.len();
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        Some(run.bytes)
    }

    /// Whether the `type` value that ran from `start` to `at` is a string other than `"text"`;
    /// `None` for one with an escape (compared decoded by the walk).
    fn other_type_than_text(&self, start: usize) -> Option<bool> {
        if self.bytes[start] != b'"' {
            return Some(false);
        }
        let body = &self.bytes[start + 1..self.at - 1];
        if body.contains(&b'\\') {
            return None;
        }
        Some(body != b"text")
    }
}

/// Whether two of `keys` are equal (the order of `keys` is not kept).
fn repeats(keys: &mut [&[u8]]) -> bool {
    if keys.len() <= PAIRWISE_KEYS {
        keys.iter()
            .enumerate()
            .any(|(i, k)| keys[i + 1..].contains(k))
    } else {
        keys.sort_unstable();
        keys.windows(2).any(|w| w[0] == w[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::value::walk;

    /// A deterministic generator of JSON values rich in what a skim must measure: escapes of
    /// every kind, numbers of every form, whitespace, repeated keys, nesting.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(self.0 >> 33).unwrap_or(0) % n
        }

        fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
            items[self.next(items.len())]
        }

        fn value(&mut self, depth: usize, out: &mut String) {
            match self.next(if depth > 5 { 4 } else { 7 }) {
                0 => out.push_str(self.pick(&["null", "true", "false"])),
                1 => out.push_str(self.pick(&[
                    "0",
                    "-0",
                    "12",
                    "-7",
                    "1.5",
                    "2e3",
                    "-1E-2",
                    "1e+9",
                    "1e999",
                    "0.25e-3",
                    "123456789012345678901234",
                ])),
                2 | 3 => self.string(out),
                4 | 5 => {
                    out.push('{');
                    for i in 0..self.next(6) {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(self.pick(&["", " ", "\n\t", "\r\n "]));
                        let key = self.pick(&[
                            "\"a\"",
                            "\"b\"",
                            "\"type\"",
                            "\"é\"",
                            "\"output\"",
                            "\"\"",
                        ]);
                        out.push_str(key);
                        out.push_str(self.pick(&[":", " : ", ":\n"]));
                        if key == "\"type\"" {
                            out.push_str(self.pick(&["\"text\"", "\"image\"", "\"\"", "1"]));
                        } else {
                            self.value(depth + 1, out);
                        }
                        out.push_str(self.pick(&["", " ", "\n"]));
                    }
                    out.push('}');
                }
                _ => {
                    out.push('[');
                    for i in 0..self.next(5) {
                        if i > 0 {
                            out.push_str(self.pick(&[",", " , ", ",\n"]));
                        }
                        self.value(depth + 1, out);
                    }
                    out.push(']');
                }
            }
        }

        fn string(&mut self, out: &mut String) {
            out.push('"');
            for _ in 0..self.next(8) {
                let piece = self.pick(&[
                    "a",
                    "plain text run longer than sixteen bytes",
                    "é",
                    "😀",
                    "\\n",
                    "\\\"",
                    "\\\\",
                    "\\/",
                    "\\b\\f\\r\\t",
                    "\\u001b[31m",
                    "\\u00e9",
                    "\\u20AC",
                    "\\ud83d\\ude00",
                    "\x7f",
                ]);
                out.push_str(piece);
            }
            out.push('"');
        }
    }

    /// A skim, when it accepts (its text checked as UTF-8 unless ASCII, as its callers do),
    /// reads what the walk reads.
    fn agrees(text: &[u8], depth: usize) -> bool {
        let skimmed =
            skim(text, depth).filter(|s| s.ascii || std::str::from_utf8(&text[..s.len]).is_ok());
        // The portable scan flags more bytes, and reads the same.
        assert_eq!(
            skim_with(text, depth, crate::json_text::stops64_words),
            skim(text, depth)
        );
        if let Some(s) = skimmed {
            let walked = walk(text, depth);
            assert_eq!(
                Some((s.len, s.cost, s.repeated)),
                walked,
                "{}",
                String::from_utf8_lossy(text)
            );
            assert_eq!(s.ascii, text[..s.len].is_ascii());
        }
        skimmed.is_some()
    }

    #[test]
    fn a_skim_accepts_what_the_walk_accepts_at_the_same_length_and_cost() {
        let mut texts = Gen(11);
        let noise: &[u8] = b"\"\\{}[],:u0 \xff\x01e-.+Ed\n";
        let mut broken_accepted = 0;
        for _ in 0..20_000 {
            let mut text = String::new();
            texts.value(0, &mut text);
            // Every value generated has plain keys and types: a skim must take it.
            assert!(
                agrees(text.as_bytes(), 0),
                "{text:?} {:?}",
                walk(text.as_bytes(), 0)
            );
            let mut broken = text.clone().into_bytes();
            let at = texts.next(broken.len());
            broken[at] = noise[texts.next(noise.len())];
            broken_accepted += usize::from(agrees(&broken, 0));
            agrees(&text.as_bytes()[..at], 0);
        }
        // Some breaks leave JSON (a digit for a digit, a value cut at a number's end).
        assert!(broken_accepted > 0);
    }

    #[test]
    fn escapes_and_quotes_are_read_across_the_sixty_four_byte_blocks() {
        for escape in [
            r"\n",
            r"\\",
            r#"\""#,
            r"\u001b",
            r"\u20ac",
            r"\ud83d\ude00",
            "é",
        ] {
            for lead in 0..140 {
                let text = format!(
                    "[\"{}{escape}{}\", 1]",
                    "a".repeat(lead),
                    "b".repeat(lead % 7)
                );
                assert!(agrees(text.as_bytes(), 0), "{text}");
                let cut = format!("[\"{}{escape}", "a".repeat(lead));
                assert!(!agrees(cut.as_bytes(), 0), "{cut}");
                let control = format!("[\"{}{escape}\u{1}\"]", "a".repeat(lead));
                assert!(!agrees(control.as_bytes(), 0), "{control}");
            }
        }
    }

    #[test]
    fn refusals_are_left_to_the_walk() {
        for text in [
            &br#"{"a\u0062":1}"#[..],
            br#"{"type":"te\u0078t"}"#,
            br#"["\ud800"]"#,
            br#"["\udc00\ud800"]"#,
            b"[\"\x01\"]",
            b"[01]",
            b"[1.]",
            b"[.5]",
            b"[1e]",
            b"[+1]",
            b"[NaN]",
            b"[tru]",
            b"{\"a\" 1}",
            b"[1,]",
            b"{\"a\":1,}",
            b"[\x0c1]",
        ] {
            assert_eq!(skim(text, 0), None, "{}", String::from_utf8_lossy(text));
        }
        // Nesting: 200 filled containers are taken, 201 are not; empty ones do not count.
        for (depth, taken) in [(200, true), (201, false)] {
            let filled = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            assert_eq!(agrees(filled.as_bytes(), 0), taken);
            assert_eq!(walk(filled.as_bytes(), 0).is_some(), taken);
        }
        assert!(agrees(
            format!("{}[]{}", "[".repeat(200), "]".repeat(200)).as_bytes(),
            0
        ));
        assert!(!agrees(b"[[1]]", DEPTH_LIMIT - 1));
    }

    #[test]
    fn a_skim_ends_at_the_value_and_says_its_type() {
        let text = br#"{"type":"image","data":"aGk=","type":"resource_link"} , 1"#;
        let s = skim(text, 1).expect("an object");
        assert_eq!(&text[s.len..], b" , 1");
        assert!(s.other_type && s.repeated && s.ascii);
        let s = skim(br#"{"type":"image","x":{"type":"text"},"type":"text"}"#, 1).expect("JSON");
        assert!(!s.other_type && s.repeated);
        // Keys compare as a dict's do, past the pairwise limit too.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{}\":{i}", i % 39)).collect();
        let text = format!("{{{}}}", many.join(","));
        assert!(skim(text.as_bytes(), 0).expect("JSON").repeated);
        assert!(agrees(text.as_bytes(), 0));
    }
}
