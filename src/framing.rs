//! NDJSON framing: a byte stream in, complete frames (lines) out.
//!
//! ACP speaks JSON-RPC over newline-delimited stdio. A [`Framer`] accepts the stream in pieces
//! of any size and hands out each complete line exactly once, without rescanning bytes it has
//! already seen (linear in the input whatever the piece size) and without ever buffering more
//! than `max_frame_bytes + 1` bytes: a line that grows past the cap is reported once and then
//! skipped up to its newline, so a gigabyte without a newline costs no memory.
//!
//! Lines are terminated by `\n`; one `\r` before it is dropped (CRLF). Blank and
//! whitespace-only lines are skipped silently. A final line without a newline is a frame too,
//! delivered by [`Framer::finish`]. The contract both backends keep is in
//! [`docs/behaviour/framing.md`](../docs/behaviour/framing.md).

use std::fmt;

use memchr::memchr;

use crate::simd::prefetch::prefetch;

/// Bytes of a piece requested ahead of the newline search.
const PREFETCH_AHEAD: usize = 4096;

/// How many bytes of a bad frame an error quotes.
pub const EXCERPT_BYTES: usize = 64;

/// The default cap on one frame: 32 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 32 * 1024 * 1024;

/// The most buffer a framer keeps for the next line once a line held across pieces is done:
/// enough for the lines of a normal stream, so that one huge frame does not pin its size (up
/// to twice it, with the buffer's growth) for the life of the stream.
const KEPT_BUFFER_BYTES: usize = 1024 * 1024;

/// Why a frame was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameErrorKind {
    /// The frame is not valid UTF-8.
    InvalidUtf8,
    /// The frame is not one valid JSON value.
    InvalidJson,
    /// A complete JSON value is followed by more than whitespace.
    TrailingData,
    /// The frame is `[]`: a JSON-RPC batch must not be empty.
    EmptyBatch,
    /// The frame is longer than `max_frame_bytes`.
    TooLong,
}

impl FrameErrorKind {
    /// The fixed, backend-independent phrase for this kind.
    pub fn reason(self) -> &'static str {
        match self {
            Self::InvalidUtf8 => "invalid UTF-8",
            Self::InvalidJson => "invalid JSON",
            Self::TrailingData => "trailing data after JSON value",
            Self::EmptyBatch => "empty batch",
            Self::TooLong => "frame exceeds max_frame_bytes",
        }
    }
}

/// A rejected frame: what was wrong and where it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    pub kind: FrameErrorKind,
    /// 1-based line number in the stream (blank lines count).
    pub line: u64,
    /// Byte offset of the line's first byte in the stream.
    pub offset: u64,
    /// The first [`EXCERPT_BYTES`] bytes of the line, lossily decoded.
    pub excerpt: String,
    /// Parser detail (may differ between backends; `kind` does not).
    pub detail: String,
}

impl FrameError {
    /// Build an error for `frame`, quoting its start.
    pub fn new(kind: FrameErrorKind, frame: &[u8], line: u64, offset: u64, detail: String) -> Self {
        Self {
            kind,
            line,
            offset,
            excerpt: excerpt(frame),
            detail,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {}, byte offset {}",
            self.kind.reason(),
            self.line,
            self.offset
        )?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        write!(f, ": {:?}", self.excerpt)
    }
}

impl std::error::Error for FrameError {}

/// The quoted start of a frame. `from_utf8_lossy` substitutes maximal invalid subparts with
/// U+FFFD exactly as `CPython`'s `decode("utf-8", "replace")` does, so both backends agree.
pub fn excerpt(frame: &[u8]) -> String {
    String::from_utf8_lossy(&frame[..frame.len().min(EXCERPT_BYTES)]).into_owned()
}

/// One complete line handed out by the framer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The line without its terminator (`\n` or `\r\n`).
    pub bytes: &'a [u8],
    pub line: u64,
    pub offset: u64,
}

/// What [`Framer::feed`] reports, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    Frame(Frame<'a>),
    Error(FrameError),
}

/// Incremental NDJSON line splitter with a hard cap on buffered bytes.
#[derive(Debug, Clone)]
pub struct Framer {
    max_frame_bytes: usize,
    /// The start of the current line, when it began in an earlier piece.
    partial: Vec<u8>,
    /// Inside a line already reported as too long: drop bytes up to its newline.
    skipping: bool,
    /// 1-based number of the line being assembled.
    line: u64,
    /// Stream offset of the first byte of the line being assembled.
    line_start: u64,
    /// Bytes fed so far.
    position: u64,
    /// Non-blank frames seen, good or bad.
    frames: u64,
    /// See [`Framer::released_bytes`].
    released_bytes: u64,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_FRAME_BYTES)
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl Framer {
    /// A framer that rejects frames longer than `max_frame_bytes` (line terminator excluded).
    pub fn new(max_frame_bytes: usize) -> Self {
        Self {
            max_frame_bytes,
            partial: Vec::new(),
            skipping: false,
            line: 1,
            line_start: 0,
            position: 0,
            frames: 0,
            released_bytes: 0,
        }
    }

    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// Bytes held while waiting for a newline; never more than `max_frame_bytes + 1`.
    pub fn buffered(&self) -> usize {
        self.partial.len()
    }

    /// Non-blank frames seen so far, including rejected ones.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Bytes fed so far.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The most a pending line may hold: the cap plus a possible `\r` before its `\n`.
    fn pending_limit(&self) -> usize {
        self.max_frame_bytes.saturating_add(1)
    }

    /// Feed the next piece of the stream; `sink` receives every frame and error it completes.
    pub fn feed(&mut self, data: &[u8], mut sink: impl FnMut(Event<'_>)) {
        let base = self.position;
        let mut pos = 0;
        // How far the piece has been asked for ahead of the newline search.
        let mut fetched = 0;
        while pos < data.len() {
            // The search is the first touch of the piece, and waits on memory line after
            // line: keep requests for the next few KiB in flight ahead of it.
            while fetched < (pos + PREFETCH_AHEAD).min(data.len()) {
                prefetch(data.as_ptr().wrapping_add(fetched));
                fetched += 64;
            }
            let rest = &data[pos..];
            let Some(newline) = memchr(b'\n', rest) else {
                self.hold(rest, &mut sink);
                break;
            };
            let piece = &rest[..newline];
            if self.skipping {
                self.skipping = false;
            } else if self.partial.is_empty() {
                self.emit(piece, &mut sink);
            } else if self.partial.len() + piece.len() > self.pending_limit() {
                // Too long already; report from what is held without copying `piece`.
                let partial = std::mem::take(&mut self.partial);
                let mut head = partial;
                head.extend_from_slice(&piece[..piece.len().min(EXCERPT_BYTES)]);
                self.report_too_long(&head, &mut sink);
                self.keep_buffer(head);
            } else {
                let mut joined = std::mem::take(&mut self.partial);
                joined.extend_from_slice(piece);
                self.emit(&joined, &mut sink);
                self.keep_buffer(joined);
            }
            pos += newline + 1;
            self.line += 1;
            self.line_start = base + pos as u64;
        }
        self.position = base + data.len() as u64;
    }

    /// Reuse `buffer`, emptied, for the next line held across pieces, unless it grew large.
    fn keep_buffer(&mut self, mut buffer: Vec<u8>) {
        buffer.clear();
        if buffer.capacity() > KEPT_BUFFER_BYTES {
            self.released_bytes += buffer.capacity() as u64;
            buffer = Vec::new();
        }
        self.partial = buffer;
    }

    /// The bytes of the buffers so far released after lines held across pieces grew them past
    /// what is kept (about a MiB): memory free again, for the allocator to return if it will.
    pub fn released_bytes(&self) -> u64 {
        self.released_bytes
    }

    /// Keep the unterminated tail of a piece, or start skipping once it cannot fit.
    fn hold(&mut self, rest: &[u8], sink: &mut impl FnMut(Event<'_>)) {
        if self.skipping {
            return;
        }
        if self.partial.len() + rest.len() > self.pending_limit() {
            let mut head = std::mem::take(&mut self.partial);
            let need = EXCERPT_BYTES.saturating_sub(head.len());
            head.extend_from_slice(&rest[..rest.len().min(need)]);
            self.report_too_long(&head, sink);
            self.skipping = true;
            // Release a large buffer: an over-long line must not pin its memory.
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(rest);
        }
    }

    fn report_too_long(&mut self, head: &[u8], sink: &mut impl FnMut(Event<'_>)) {
        self.frames += 1;
        // Quote no more than the cap allows, so the excerpt is the same however the line arrived.
        let quoted = &head[..head.len().min(self.pending_limit())];
        sink(Event::Error(FrameError::new(
            FrameErrorKind::TooLong,
            quoted,
            self.line,
            self.line_start,
            format!("limit is {} bytes", self.max_frame_bytes),
        )));
    }

    fn emit(&mut self, raw_line: &[u8], sink: &mut impl FnMut(Event<'_>)) {
        let line = strip_cr(raw_line);
        if line.len() > self.max_frame_bytes {
            self.report_too_long(line, sink);
            return;
        }
        if is_blank(line) {
            return;
        }
        self.frames += 1;
        sink(Event::Frame(Frame {
            bytes: line,
            line: self.line,
            offset: self.line_start,
        }));
    }

    /// End of stream: a last line without a newline is still a frame. The framer can be fed
    /// again afterwards; the next byte starts a new line.
    pub fn finish(&mut self, mut sink: impl FnMut(Event<'_>)) {
        let had_line = self.skipping || !self.partial.is_empty();
        if self.skipping {
            self.skipping = false;
        } else if !self.partial.is_empty() {
            let pending = std::mem::take(&mut self.partial);
            self.emit(&pending, &mut sink);
        }
        if had_line {
            self.line += 1;
            self.line_start = self.position;
        }
    }
}

/// Classify a frame that failed to parse, with the same parser that decodes frames, so the
/// native backend's reasons match the pure backend's.
pub fn diagnose(frame: &[u8], line: u64, offset: u64) -> FrameError {
    if let Err(e) = std::str::from_utf8(frame) {
        let detail = format!("invalid byte at frame offset {}", e.valid_up_to());
        return FrameError::new(FrameErrorKind::InvalidUtf8, frame, line, offset, detail);
    }
    match jiter::JsonValue::parse(frame, false) {
        Ok(jiter::JsonValue::Array(items)) if items.is_empty() => FrameError::new(
            FrameErrorKind::EmptyBatch,
            frame,
            line,
            offset,
            String::new(),
        ),
        Ok(_) => FrameError::new(
            FrameErrorKind::InvalidJson,
            frame,
            line,
            offset,
            "rejected by the decoder".to_owned(),
        ),
        Err(e) => {
            let kind = if e.error_type == jiter::JsonErrorType::TrailingCharacters {
                FrameErrorKind::TrailingData
            } else {
                FrameErrorKind::InvalidJson
            };
            FrameError::new(kind, frame, line, offset, e.description(frame))
        }
    }
}

/// jiter's recursion limit, as it applies to the entries of a batch: an entry whose filled
/// containers nest this deep makes the whole frame too deep (the batch's array is one more).
const ENTRY_DEPTH_LIMIT: usize = 200;

/// Whether a frame is a batch: a JSON array (after any leading whitespace).
pub fn is_batch(frame: &[u8]) -> bool {
    frame
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .is_some_and(|&b| b == b'[')
}

/// Decodes the entries of a batch frame one at a time, handing each to `each`: none is
/// kept, so a frame of many small entries costs one entry's memory, not all of theirs.
fn batch_entries(
    frame: &[u8],
    mut each: impl FnMut(&jiter::JsonValue<'_>) -> bool,
) -> Result<usize, jiter::JiterError> {
    let mut jiter = jiter::Jiter::new(frame);
    let mut entries = 0;
    let mut peek = jiter.next_array()?;
    while let Some(next) = peek {
        let entry = jiter.known_value(next)?;
        if !each(&entry) {
            return Ok(entries);
        }
        entries += 1;
        peek = jiter.array_step()?;
    }
    jiter.finish()?;
    Ok(entries)
}

/// Nesting of containers that hold something (what jiter counts against its limit).
fn filled_depth(value: &jiter::JsonValue<'_>) -> usize {
    match value {
        jiter::JsonValue::Array(items) if !items.is_empty() => {
            1 + items.iter().map(filled_depth).max().unwrap_or(0)
        }
        jiter::JsonValue::Object(members) if !members.is_empty() => {
            1 + members
                .iter()
                .map(|(_, v)| filled_depth(v))
                .max()
                .unwrap_or(0)
        }
        _ => 0,
    }
}

/// Checks a batch frame (see [`is_batch`]) entry by entry, accepting exactly what decoding it
/// whole accepts, without holding its entries: the number of entries, or why it is refused
/// (an empty batch is [`FrameErrorKind::EmptyBatch`]).
pub fn check_batch(frame: &[u8]) -> Result<usize, FrameErrorKind> {
    let mut too_deep = false;
    let checked = batch_entries(frame, |entry| {
        too_deep = filled_depth(entry) >= ENTRY_DEPTH_LIMIT;
        !too_deep
    });
    // As `diagnose`: a frame refused for any reason is named invalid UTF-8 first, if it is.
    let refused = too_deep || checked.is_err();
    match checked {
        _ if refused && std::str::from_utf8(frame).is_err() => Err(FrameErrorKind::InvalidUtf8),
        Ok(_) if too_deep => Err(FrameErrorKind::InvalidJson),
        Ok(0) => Err(FrameErrorKind::EmptyBatch),
        Ok(entries) => Ok(entries),
        Err(jiter::JiterError {
            error_type: jiter::JiterErrorType::JsonError(jiter::JsonErrorType::TrailingCharacters),
            ..
        }) => Err(FrameErrorKind::TrailingData),
        Err(_) => Err(FrameErrorKind::InvalidJson),
    }
}

/// Hands the JSON text of each entry of a batch frame that [`check_batch`] accepted to `each`,
/// in order, for a decoder of the caller's.
pub fn for_each_entry(frame: &[u8], mut each: impl FnMut(&[u8])) {
    let mut jiter = jiter::Jiter::new(frame);
    let Ok(mut peek) = jiter.next_array() else {
        return;
    };
    while let Some(next) = peek {
        let start = jiter.current_index();
        if jiter.known_skip(next).is_err() {
            return;
        }
        each(&frame[start..jiter.current_index()]);
        let Ok(step) = jiter.array_step() else {
            return;
        };
        peek = step;
    }
}

#[cfg(test)]
#[allow(clippy::similar_names)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_line_does_not_pin_its_buffer() {
        let mut framer = Framer::new(DEFAULT_MAX_FRAME_BYTES);
        let mut lengths = Vec::new();
        let mut sink = |event: Event<'_>| {
            if let Event::Frame(frame) = event {
                lengths.push(frame.bytes.len());
            }
        };
        // A small line across two pieces: its buffer is kept for the next one.
        framer.feed(b"{\"a\":", &mut sink);
        framer.feed(b"1}\n", &mut sink);
        assert!(framer.partial.capacity() > 0);
        // A 3 MiB line in 64 KiB pieces, then a short one: the large buffer is gone.
        let line = [b"\"".as_slice(), &vec![b'x'; 3 << 20], b"\"\n"].concat();
        for piece in line.chunks(64 << 10) {
            framer.feed(piece, &mut sink);
        }
        assert!(framer.partial.capacity() <= KEPT_BUFFER_BYTES);
        framer.feed(b"[]\n", &mut sink);
        assert_eq!(lengths, [7, line.len() - 1, 2]);
    }

    #[test]
    fn batches_are_checked_entry_by_entry_as_decoding_them_whole_would() {
        let mut frames: Vec<Vec<u8>> = Vec::new();
        for depth in 195..=205 {
            for (open, close) in [("[", "]"), ("{\"k\":", "}")] {
                let nested = format!("{}1{}", open.repeat(depth), close.repeat(depth));
                frames.push(format!("[{nested}]").into_bytes());
                frames.push(format!("[0, {nested}, []]").into_bytes());
                // Empty containers are not counted.
                let hollow = format!("{}[]{}", open.repeat(depth), close.repeat(depth));
                frames.push(format!("[{hollow}]").into_bytes());
            }
        }
        for depth in [199, 200, 201] {
            // Too deep and not UTF-8: named invalid UTF-8, as `diagnose` names it.
            let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            frames.push([format!("[{nested},").as_bytes(), b"\"\xff\"]"].concat());
            frames.push([format!("[{nested}]").as_bytes(), b"\xff"].concat());
        }
        for frame in [
            &b"[]"[..],
            b" [1, 2] ",
            b"[1, 2] x",
            b"[1 2]",
            b"[1, ]",
            b"[\"\xff\"]",
            b"[\"\\ud800\"]",
            b"[1e999, -0, 12345678901234567890123]",
            b"[{\"a\": 1, \"a\": 2}]",
            b"[[], {}, [[]]]",
            b"[nan]",
        ] {
            frames.push(frame.to_vec());
        }
        for frame in &frames {
            assert!(is_batch(frame));
            let whole = jiter::JsonValue::parse(frame, false);
            let expected = match &whole {
                Ok(jiter::JsonValue::Array(items)) => {
                    if items.is_empty() {
                        Err(FrameErrorKind::EmptyBatch)
                    } else {
                        Ok(items.len())
                    }
                }
                Ok(_) => unreachable!("a batch"),
                Err(_) => Err(diagnose(frame, 1, 0).kind),
            };
            assert_eq!(
                check_batch(frame),
                expected,
                "{}",
                String::from_utf8_lossy(frame)
            );
            if let Ok(jiter::JsonValue::Array(items)) = whole {
                let mut entries = Vec::new();
                for_each_entry(frame, |entry| {
                    let value = jiter::JsonValue::parse(entry, false).expect("an entry decodes");
                    entries.push(value.into_static());
                });
                assert_eq!(*items, entries);
            }
        }
        assert!(!is_batch(b" {\"a\": [1]}") && !is_batch(b""));
    }

    /// Feed `chunks`, then finish; collect frames as owned bytes and errors.
    type Collected = (Vec<(Vec<u8>, u64, u64)>, Vec<FrameError>, Framer);

    fn run(max: usize, chunks: &[&[u8]]) -> Collected {
        let mut framer = Framer::new(max);
        let mut frames = Vec::new();
        let mut errors = Vec::new();
        let mut sink = |event: Event<'_>| match event {
            Event::Frame(f) => frames.push((f.bytes.to_vec(), f.line, f.offset)),
            Event::Error(e) => errors.push(e),
        };
        for chunk in chunks {
            framer.feed(chunk, &mut sink);
        }
        framer.finish(&mut sink);
        (frames, errors, framer)
    }

    #[test]
    fn splits_lines_and_tracks_positions() {
        let (frames, errors, framer) = run(100, &[b"{\"a\":1}\n{\"b\":2}\r\n\n  \n[3]"]);
        assert!(errors.is_empty());
        assert_eq!(
            frames,
            vec![
                (b"{\"a\":1}".to_vec(), 1, 0),
                (b"{\"b\":2}".to_vec(), 2, 8),
                (b"[3]".to_vec(), 5, 21),
            ]
        );
        assert_eq!(framer.frames(), 3);
        assert_eq!(framer.buffered(), 0);
    }

    #[test]
    fn every_split_gives_the_same_frames() {
        let stream: &[u8] = b"{\"x\":\"\xc3\xa9\"}\r\n\n[1,2]\n  {\"y\":null}  \nlast";
        let (whole, _, _) = run(64, &[stream]);
        for cut in 0..=stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(run(64, &[a, b]).0, whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(run(64, &bytes).0, whole);
    }

    #[test]
    fn over_long_line_is_skipped_without_buffering() {
        let mut framer = Framer::new(10);
        let mut errors = Vec::new();
        let mut frames = Vec::new();
        let big = vec![b'x'; 4096];
        for _ in 0..1000 {
            framer.feed(&big, |e| match e {
                Event::Frame(f) => frames.push(f.bytes.to_vec()),
                Event::Error(e) => errors.push(e),
            });
            assert!(framer.buffered() <= 11);
        }
        framer.feed(b"\n{}\n", |e| match e {
            Event::Frame(f) => frames.push(f.bytes.to_vec()),
            Event::Error(e) => errors.push(e),
        });
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].kind, FrameErrorKind::TooLong);
        assert_eq!((errors[0].line, errors[0].offset), (1, 0));
        assert_eq!(errors[0].excerpt, "x".repeat(11));
        assert_eq!(frames, vec![b"{}".to_vec()]);
    }

    #[test]
    fn cap_counts_content_not_the_line_ending() {
        let (frames, errors, _) = run(5, &[b"12345\r\n123456\n1234", b"5\r", b"\n"]);
        assert_eq!(frames.len(), 2);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].line, 2);
        assert_eq!(errors[0].offset, 7);
        // The same over-long line, whole or in pieces, quotes the same excerpt.
        let (_, split_errors, _) = run(5, &[b"12345\r\n1", b"23", b"456\n12345\r\n"]);
        assert_eq!(split_errors, errors);
    }

    #[test]
    fn finish_delivers_last_line_and_restarts() {
        let mut framer = Framer::new(100);
        let mut frames = Vec::new();
        framer.feed(b"{}\n{\"a\":", |_| {});
        framer.feed(b"1}", |_| {});
        framer.finish(|e| {
            if let Event::Frame(f) = e {
                frames.push((f.bytes.to_vec(), f.line, f.offset));
            }
        });
        framer.feed(b"[]\n", |e| {
            if let Event::Frame(f) = e {
                frames.push((f.bytes.to_vec(), f.line, f.offset));
            }
        });
        assert_eq!(
            frames,
            vec![(b"{\"a\":1}".to_vec(), 2, 3), (b"[]".to_vec(), 3, 10)]
        );
    }

    #[test]
    fn diagnose_classifies() {
        let kind = |s: &[u8]| diagnose(s, 1, 0).kind;
        assert_eq!(kind(b"{\"a\":\"\xff\"}"), FrameErrorKind::InvalidUtf8);
        assert_eq!(kind(b"{\"a\":}"), FrameErrorKind::InvalidJson);
        assert_eq!(kind(b"{\"a\":1} x"), FrameErrorKind::TrailingData);
        assert_eq!(kind(b"[1]]"), FrameErrorKind::TrailingData);
        assert_eq!(kind(b"[ ]"), FrameErrorKind::EmptyBatch);
        let err = diagnose(b"{\"a\":tru}", 7, 99);
        assert_eq!((err.line, err.offset), (7, 99));
        assert!(
            err.to_string()
                .starts_with("invalid JSON at line 7, byte offset 99")
        );
    }

    #[test]
    fn excerpt_is_lossy_and_bounded() {
        let long = [b'a'; 100];
        assert_eq!(excerpt(&long).len(), EXCERPT_BYTES);
        assert_eq!(excerpt(b"a\xffb"), "a\u{fffd}b");
        // A code point cut by the excerpt's end becomes one replacement character.
        let mut cut = vec![b'a'; EXCERPT_BYTES - 1];
        cut.extend_from_slice("é".as_bytes());
        assert!(excerpt(&cut).ends_with('\u{fffd}'));
    }
}
