//! The byte scanner behind the streaming hot path ([`super::Reducer::fast_chunk`]).
//!
//! It recognises exactly one shape, the message chunk that makes up almost all of a token
//! stream:
//!
//! `{"jsonrpc"?, "method":"session/update", "params":{"sessionId", "update":{"sessionUpdate":
//! "agent_message_chunk"|"agent_thought_chunk"|"user_message_chunk", "messageId"?, "content",
//! "_meta"?}}}`
//!
//! with each key once, the keys of each object in any order, and JSON whitespace between
//! tokens (a v1 chunk has no `messageId`; `_meta`, an object or `null`, is checked, not kept).
//! `content` is a plain text block, `{"type":"text","text"}`, or a block of another type (an
//! image, a resource link, ...), which is validated and costed by the decoder and kept as its
//! JSON text. For anything else, including input that is not JSON at all, it returns `None`
//! and the general path takes the frame.
//!
//! Hand-written rather than built on jiter: jiter's general string decoder copies and
//! re-validates every string, while this shape needs only slices borrowed from the frame (the
//! text is copied once, straight into its message). It declines rather than decides whenever
//! the general path might disagree: escapes anywhere but in the text and other blocks, unknown
//! or repeated keys, other value types, control characters, invalid UTF-8, lone surrogates,
//! trailing data.

use super::Role;
use crate::json_text::{Run, plain_run};

/// How the compact form of a `session/update` begins, up to the `sessionId` string's opening
/// quote.
const CANONICAL_HEAD: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"";

/// A `terminal_output_chunk` in the compact form of the protocol's examples, borrowed from the
/// frame. Any other layout is left to the general path.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TerminalChunk<'a> {
    pub session_id: &'a str,
    pub terminal_id: &'a str,
    /// The bytes between the quotes of `data`, unchecked: the caller's strict base64 decode
    /// admits only the base64 alphabet, which holds no quote, backslash, control or non-ASCII
    /// byte, so wherever it succeeds these bytes are the string's value. (Checking them here
    /// as well would scan the bulk of the frame a second time.)
    pub data: &'a [u8],
}

/// Scan `frame` for exactly `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":
/// S,"update":{"sessionUpdate":"terminal_output_chunk","terminalId":T,"data":D}}}`.
pub(super) fn terminal_chunk(frame: &[u8]) -> Option<TerminalChunk<'_>> {
    let mut scanner = Scanner { rest: frame };
    scanner.skip(CANONICAL_HEAD)?;
    let session_id = scanner.plain_string_body()?;
    scanner.skip(b",\"update\":{\"sessionUpdate\":\"terminal_output_chunk\",\"terminalId\":\"")?;
    let terminal_id = scanner.plain_string_body()?;
    scanner.skip(b",\"data\":\"")?;
    let end = memchr::memchr(b'"', scanner.rest)?;
    let data = &scanner.rest[..end];
    scanner.rest = &scanner.rest[end + 1..];
    scanner.skip(b"}}}")?;
    scanner.skip_whitespace();
    if !scanner.rest.is_empty() {
        return None;
    }
    Some(TerminalChunk {
        session_id,
        terminal_id,
        data,
    })
}

/// One frame of the hot shape, borrowed from the frame (or, for text with escapes, from the
/// buffer it was decoded into).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TextChunk<'a> {
    pub role: Role,
    pub session_id: &'a str,
    /// Absent in a v1 chunk of an anonymous message.
    pub message_id: Option<&'a str>,
    pub body: ChunkBody<'a>,
}

/// What a chunk's `content` holds.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ChunkBody<'a> {
    /// A plain text block's text.
    Text(&'a str),
    /// A block of another type (an object whose `type` is a string other than `"text"`),
    /// validated, as its JSON text and its cost: stored as text, as opaque values are.
    Block { json: &'a str, cost: usize },
}

/// Scan `frame`; `decoded` is scratch space for text that has escapes.
pub(super) fn text_chunk<'a>(frame: &'a [u8], decoded: &'a mut String) -> Option<TextChunk<'a>> {
    let mut scanner = Scanner { rest: frame };
    let found = if let Some(found) = scanner.canonical(decoded) {
        found
    } else {
        scanner.rest = frame;
        scanner.top(decoded)?
    };
    scanner.skip_whitespace();
    if !scanner.rest.is_empty() {
        return None;
    }
    let body = match found.text {
        Text::Borrowed(text) => ChunkBody::Text(text),
        Text::Decoded => ChunkBody::Text(decoded.as_str()),
        Text::Block(json, cost) => ChunkBody::Block { json, cost },
    };
    Some(TextChunk {
        role: found.role,
        session_id: found.session_id,
        message_id: found.message_id,
        body,
    })
}

/// Where the text value ended up (or, for a block that is not text, the block).
enum Text<'a> {
    Borrowed(&'a str),
    /// In the caller's `decoded` buffer.
    Decoded,
    Block(&'a str, usize),
}

struct Update<'a> {
    role: Role,
    message_id: Option<&'a str>,
    text: Text<'a>,
}

struct Found<'a> {
    role: Role,
    session_id: &'a str,
    message_id: Option<&'a str>,
    text: Text<'a>,
}

/// Object keys by level, quotes included: keys are matched as raw bytes, so an unknown key or
/// a known one spelled with an escape declines.
const TOP_KEYS: [&[u8]; 3] = [b"\"jsonrpc\"", b"\"method\"", b"\"params\""];
const PARAMS_KEYS: [&[u8]; 2] = [b"\"sessionId\"", b"\"update\""];
const UPDATE_KEYS: [&[u8]; 4] = [
    b"\"sessionUpdate\"",
    b"\"messageId\"",
    b"\"content\"",
    b"\"_meta\"",
];
const CONTENT_KEYS: [&[u8]; 2] = [b"\"type\"", b"\"text\""];
/// The filled containers around an update's members: the message, `params`, `update`.
const UPDATE_DEPTH: usize = 3;
const CHUNK_KINDS: [(&[u8], Role); 3] = [
    (b"\"agent_message_chunk\"", Role::Agent),
    (b"\"agent_thought_chunk\"", Role::Thought),
    (b"\"user_message_chunk\"", Role::User),
];

/// `rest` after `token`, if it starts with it. Spelled out rather than `<[u8]>::strip_prefix`:
/// a build may leave that generic out of line, and every token test then calls `memcmp`
/// (twice the time of a chunk); inlined, a constant token compiles to a few loads.
#[allow(clippy::inline_always)]
#[inline(always)]
fn strip<'a>(rest: &'a [u8], token: &[u8]) -> Option<&'a [u8]> {
    let n = token.len();
    (rest.len() >= n && rest[..n] == *token).then(|| &rest[n..])
}

/// Mark key `index` as seen; `None` when it was seen before (a repeated key declines).
fn first_sight(seen: &mut u8, index: usize) -> Option<usize> {
    let bit = 1 << index;
    if *seen & bit != 0 {
        return None;
    }
    *seen |= bit;
    Some(index)
}

/// A run as text, if it is valid UTF-8 (the framer does not check). A run ends at an ASCII
/// byte, so it holds whole characters or is invalid.
fn utf8(run: Run<'_>) -> Option<&str> {
    if run.ascii {
        // SAFETY: ASCII is valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(run.bytes) })
    } else {
        std::str::from_utf8(run.bytes).ok()
    }
}

struct Scanner<'a> {
    /// The bytes not yet scanned.
    rest: &'a [u8],
}

impl<'a> Scanner<'a> {
    /// Skip JSON whitespace; false when there was none.
    fn skip_whitespace(&mut self) -> bool {
        let before = self.rest.len();
        while let [b' ' | b'\t' | b'\n' | b'\r', tail @ ..] = self.rest {
            self.rest = tail;
        }
        self.rest.len() != before
    }

    /// Consume `token` if it comes next (after any whitespace).
    // With `token` a constant the comparison compiles to a few loads; plain `#[inline]` leaves
    // some calls out of line, and the key-by-key path then costs a quarter more.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn accept(&mut self, token: &[u8]) -> bool {
        // Whitespace is rare: look for it only when the token is not right here.
        let tail = match strip(self.rest, token) {
            Some(tail) => tail,
            None if self.skip_whitespace() => match strip(self.rest, token) {
                Some(tail) => tail,
                None => return false,
            },
            None => return false,
        };
        self.rest = tail;
        true
    }

    /// `token` must come next, with no whitespace before it.
    #[inline]
    fn skip(&mut self, token: &[u8]) -> Option<()> {
        self.rest = strip(self.rest, token)?;
        Some(())
    }

    /// `token` must come next.
    #[inline]
    fn expect(&mut self, token: &[u8]) -> Option<()> {
        self.accept(token).then_some(())
    }

    /// The index in `keys` of the next key of an object, or `None` inside the outer `Some` at
    /// its `}`. `first`: no key read yet.
    #[allow(clippy::option_option)] // the outer level is "well-formed", the inner "more keys"
    #[allow(clippy::inline_always)]
    #[inline(always)] // so that each key is a constant in `accept`
    fn next_key(&mut self, first: &mut bool, keys: &[&[u8]]) -> Option<Option<usize>> {
        let more = if *first {
            *first = false;
            !self.accept(b"}")
        } else if self.accept(b",") {
            true
        } else {
            self.expect(b"}")?;
            false
        };
        if !more {
            return Some(None);
        }
        self.skip_whitespace();
        // A loop over the constant table, each test through `strip`: unrolled and inlined.
        for (index, key) in keys.iter().enumerate() {
            if let Some(tail) = strip(self.rest, key) {
                self.rest = tail;
                self.expect(b":")?;
                return Some(Some(index));
            }
        }
        None
    }

    /// A string without escapes, borrowed.
    fn plain_string(&mut self) -> Option<&'a str> {
        self.expect(b"\"")?;
        self.plain_string_body()
    }

    /// [`Scanner::plain_string`] after its opening quote.
    fn plain_string_body(&mut self) -> Option<&'a str> {
        let run = plain_run(self.rest);
        self.rest = strip(&self.rest[run.bytes.len()..], b"\"")?;
        utf8(run)
    }

    /// A string that may have escapes, after its opening quote: borrowed when it has none,
    /// else decoded into `out`.
    fn text_body(&mut self, out: &mut String) -> Option<Text<'a>> {
        let run = plain_run(self.rest);
        let mut tail = &self.rest[run.bytes.len()..];
        if let Some(after) = strip(tail, b"\"") {
            self.rest = after;
            return Some(Text::Borrowed(utf8(run)?));
        }
        out.clear();
        out.push_str(utf8(run)?);
        loop {
            match tail {
                [b'"', after @ ..] => {
                    self.rest = after;
                    return Some(Text::Decoded);
                }
                [b'\\', after @ ..] => {
                    self.rest = after;
                    out.push(self.escape()?);
                }
                _ => return None, // a control character, or the end of the frame
            }
            let run = plain_run(self.rest);
            tail = &self.rest[run.bytes.len()..];
            out.push_str(utf8(run)?);
        }
    }

    /// The character of the escape after a backslash. A `\u` surrogate must be the high half
    /// of a pair; a lone one declines (the general path decides what it means).
    fn escape(&mut self) -> Option<char> {
        let (&byte, tail) = self.rest.split_first()?;
        self.rest = tail;
        Some(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                if (0xD800..0xDC00).contains(&unit) {
                    self.rest = strip(self.rest, b"\\u")?;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?
                } else {
                    // `None` for a lone low surrogate.
                    char::from_u32(unit)?
                }
            }
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let (digits, tail) = self.rest.split_at_checked(4)?;
        let mut unit = 0;
        for &digit in digits {
            unit = unit * 16 + char::from(digit).to_digit(16)?;
        }
        self.rest = tail;
        Some(unit)
    }

    /// The shape as agents usually write it: compact, every key present, in the order of the
    /// protocol's examples and this project's samples. Each stretch between the values is one
    /// comparison; anything else falls back to [`Scanner::top`], which takes keys one by one.
    fn canonical(&mut self, decoded: &mut String) -> Option<Found<'a>> {
        self.skip(CANONICAL_HEAD)?;
        let session_id = self.plain_string_body()?;
        self.skip(b",\"update\":{\"sessionUpdate\":")?;
        let (_, role) = CHUNK_KINDS
            .iter()
            .find(|(kind, _)| self.skip(kind).is_some())?;
        self.skip(b",\"messageId\":\"")?;
        let message_id = self.plain_string_body()?;
        self.skip(b",\"content\":")?;
        let text = if self.skip(b"{\"type\":\"text\",\"text\":\"").is_some() {
            let text = self.text_body(decoded)?;
            self.skip(b"}")?;
            text
        } else {
            self.body(decoded)?
        };
        self.skip(b"}}}")?;
        Some(Found {
            role: *role,
            session_id,
            message_id: Some(message_id),
            text,
        })
    }

    /// `{"jsonrpc"?, "method", "params"}`.
    fn top(&mut self, decoded: &mut String) -> Option<Found<'a>> {
        self.expect(b"{")?;
        let (mut seen, mut first, mut found) = (0, true, None);
        while let Some(key) = self.next_key(&mut first, &TOP_KEYS)? {
            match first_sight(&mut seen, key)? {
                0 => {
                    // The general path ignores `jsonrpc`; it need only be a valid string.
                    if !self.accept(b"\"2.0\"") {
                        self.plain_string()?;
                    }
                }
                1 => self.expect(b"\"session/update\"")?,
                _ => found = Some(self.params(decoded)?),
            }
        }
        if seen & 0b10 == 0 {
            return None; // no method
        }
        found
    }

    /// `{"sessionId", "update"}`.
    fn params(&mut self, decoded: &mut String) -> Option<Found<'a>> {
        self.expect(b"{")?;
        let (mut seen, mut first) = (0, true);
        let (mut session_id, mut update) = (None, None);
        while let Some(key) = self.next_key(&mut first, &PARAMS_KEYS)? {
            match first_sight(&mut seen, key)? {
                0 => session_id = Some(self.plain_string()?),
                _ => update = Some(self.update(decoded)?),
            }
        }
        let Update {
            role,
            message_id,
            text,
        } = update?;
        Some(Found {
            role,
            session_id: session_id?,
            message_id,
            text,
        })
    }

    /// `{"sessionUpdate", "messageId"?, "content", "_meta"?}`: a chunk's `_meta`, an object or
    /// `null`, is checked as JSON and, as on the general path, not kept.
    fn update(&mut self, decoded: &mut String) -> Option<Update<'a>> {
        self.expect(b"{")?;
        let (mut seen, mut first) = (0, true);
        let (mut role, mut message_id, mut text) = (None, None, None);
        while let Some(key) = self.next_key(&mut first, &UPDATE_KEYS)? {
            match first_sight(&mut seen, key)? {
                0 => {
                    let kind = CHUNK_KINDS.iter().find(|(kind, _)| self.accept(kind))?;
                    role = Some(kind.1);
                }
                1 => message_id = Some(self.plain_string()?),
                2 => text = Some(self.body(decoded)?),
                _ => {
                    self.skip_whitespace();
                    let used = super::value::skip_object_or_null(self.rest, UPDATE_DEPTH)?;
                    self.rest = &self.rest[used..];
                }
            }
        }
        Some(Update {
            role: role?,
            message_id,
            text: text?,
        })
    }

    /// A chunk's `content`: a plain text block, else a block of another type as its JSON text.
    /// A text block with other members, or one whose `type` is not a string, declines (the
    /// general path keeps the first as an object, and refuses the second).
    fn body(&mut self, decoded: &mut String) -> Option<Text<'a>> {
        self.skip_whitespace();
        let start = self.rest;
        if let Some(text) = self.content(decoded) {
            return Some(text);
        }
        self.rest = start;
        self.other_block()
    }

    /// A block that is not text, next.
    fn other_block(&mut self) -> Option<Text<'a>> {
        let (json, cost) = super::value::other_block(self.rest, UPDATE_DEPTH)?;
        self.rest = &self.rest[json.len()..];
        Some(Text::Block(json, cost))
    }

    /// `{"type":"text","text"}`, the keys in either order.
    fn content(&mut self, decoded: &mut String) -> Option<Text<'a>> {
        self.expect(b"{")?;
        let (mut seen, mut first, mut text) = (0, true, None);
        while let Some(key) = self.next_key(&mut first, &CONTENT_KEYS)? {
            if first_sight(&mut seen, key)? == 0 {
                self.expect(b"\"text\"")?;
            } else {
                self.expect(b"\"")?;
                text = Some(self.text_body(decoded)?);
            }
        }
        if seen & 1 == 0 {
            return None; // no type
        }
        text
    }
}
