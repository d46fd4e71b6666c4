//! The content blocks of a message, and their bound (`max_message_bytes`): past it a message
//! keeps its head and the end of its tail (`docs/behaviour/sessions.md`, "Messages:
//! `max_message_bytes`").

use crate::session::value::Value;

use super::budget::json_cost;
use super::json::{Json, RawJson, View, obj_get};

/// One content block, in 16 bytes: a streamed message holds one per chunk.
#[derive(Clone, Debug)]
enum Block {
    /// A plain `{"type":"text","text":…}` block (the streaming hot path): its text is
    /// [`Content::text`] up to this offset, from where the previous text block ended.
    Text(usize),
    Raw(Box<Json>),
}

const _: () = assert!(std::mem::size_of::<Block>() <= 16);

/// The content blocks of a message. The text of its plain text blocks lies back to back in
/// one buffer: a streamed message grows one allocation instead of making one per chunk.
#[derive(Clone, Debug, Default)]
pub(super) struct Content {
    blocks: Vec<Block>,
    pub(super) text: String,
    /// The size of the blocks kept: text blocks by their text, others by their cost.
    size: usize,
    /// Set once the message went past its bound (boxed: most never do).
    cut: Option<Box<Cut>>,
}

/// Where a truncated message's head ends and its tail starts. Blocks dropped from the tail's
/// front stay in place (`blocks[head..tail]`, their text `text[head_text..tail_text]`) until
/// they outgrow the live tail, so that each append costs O(1) amortized.
#[derive(Clone, Debug)]
struct Cut {
    head: usize,
    head_text: usize,
    tail: usize,
    /// Where the first kept tail block's text begins (inside it, once its start was cut).
    tail_text: usize,
    tail_size: usize,
    dropped_blocks: u64,
    dropped_bytes: u64,
}

/// A block of a [`Content`], its text resolved.
pub(super) enum BlockRef<'a> {
    Text(&'a str),
    Raw(&'a Json),
}

/// Block `block`, its text read from `text` where the previous text block ended (`start`).
fn resolve<'a>(text: &'a str, start: &mut usize, block: &'a Block) -> BlockRef<'a> {
    match block {
        Block::Text(end) => {
            let piece = &text[*start..*end];
            *start = *end;
            BlockRef::Text(piece)
        }
        Block::Raw(json) => BlockRef::Raw(json),
    }
}

/// The text of a stored text block (an object whose `type` is `"text"` and whose `text` is a
/// string).
fn text_of(json: &Json) -> Option<&str> {
    if let Json::Object(members) = json
        && let (Some(Json::Str(kind)), Some(Json::Str(text))) =
            (obj_get(members, "type"), obj_get(members, "text"))
        && kind == "text"
    {
        return Some(text);
    }
    None
}

/// A message's size of a stored block: a text block's text, any other block's cost.
fn raw_size(json: &Json) -> usize {
    text_of(json).map_or_else(|| json_cost(json), str::len)
}

impl Content {
    /// Content made of `items` in order, within `limit`; the second value says whether that
    /// truncated it.
    pub(super) fn from_values(items: &[Value<'_>], limit: Option<usize>) -> (Content, bool) {
        let mut content = Content {
            blocks: Vec::with_capacity(items.len()),
            ..Content::default()
        };
        let mut cut = false;
        for item in items {
            cut |= content.push(item, limit);
        }
        (content, cut)
    }

    /// Append a block; true when this made the message truncated.
    pub(super) fn push(&mut self, value: &Value<'_>, limit: Option<usize>) -> bool {
        if let Value::Object(members) = value
            && members.len() == 2
        {
            // A plain text block, its keys in either order (the snapshot writes `type` then
            // `text`), joins the message's text buffer.
            let (t, x) = if members[0].0 == "type" {
                (&members[0], &members[1])
            } else {
                (&members[1], &members[0])
            };
            if t.0 == "type"
                && x.0 == "text"
                && let (Value::Str(kind), Value::Str(text)) = (&t.1, &x.1)
                && kind == "text"
            {
                return self.push_text(text, limit);
            }
        }
        let json = Json::from_value(value);
        let size = raw_size(&json);
        self.blocks.push(Block::Raw(Box::new(json)));
        self.pushed(size, limit)
    }

    /// Append a block that is not text, given as its validated JSON text and its cost (what
    /// [`Content::push`] stores for it, the text standing for the tree); true when this made
    /// the message truncated.
    pub(super) fn push_raw(&mut self, json: &str, cost: usize, limit: Option<usize>) -> bool {
        let raw = RawJson {
            text: json.into(),
            cost,
        };
        self.blocks
            .push(Block::Raw(Box::new(Json::Raw(Box::new(raw)))));
        self.pushed(cost, limit)
    }

    /// Append a plain text block; true when this made the message truncated.
    pub(super) fn push_text(&mut self, text: &str, limit: Option<usize>) -> bool {
        if self.blocks.is_empty() {
            // Most messages are one block or many: the first gets room for itself only.
            self.blocks.reserve_exact(1);
        }
        self.text.push_str(text);
        self.blocks.push(Block::Text(self.text.len()));
        self.pushed(text.len(), limit)
    }

    /// Count the block just pushed, of `size`, and keep the message within `limit`.
    fn pushed(&mut self, size: usize, limit: Option<usize>) -> bool {
        if let Some(cut) = &mut self.cut {
            cut.tail_size += size;
            self.size += size;
            self.trim(limit.unwrap_or(usize::MAX));
            return false;
        }
        self.size += size;
        match limit {
            Some(limit) if self.size > limit => {
                self.split(limit);
                true
            }
            _ => false,
        }
    }

    /// The first truncation: the head is the longest run of first blocks within half the
    /// bound, the rest is the tail.
    fn split(&mut self, limit: usize) {
        let half = limit / 2;
        let (mut head, mut head_size, mut head_text) = (0, 0, 0);
        let mut start = 0;
        for block in &self.blocks {
            let (size, end) = match block {
                Block::Text(end) => (end - start, *end),
                Block::Raw(json) => (raw_size(json), start),
            };
            if head_size + size > half {
                break;
            }
            head += 1;
            head_size += size;
            start = end;
            head_text = end;
        }
        self.cut = Some(Box::new(Cut {
            head,
            head_text,
            tail: head,
            tail_text: head_text,
            tail_size: self.size - head_size,
            dropped_blocks: 0,
            dropped_bytes: 0,
        }));
        self.trim(limit);
    }

    /// Drop the tail's first blocks while it is larger than its half of `limit`.
    fn trim(&mut self, limit: usize) {
        let Some(cut) = self.cut.as_deref_mut() else {
            return;
        };
        let half = limit - limit / 2;
        while cut.tail_size > half && cut.tail < self.blocks.len() {
            let last = cut.tail + 1 == self.blocks.len();
            let dropped = match &self.blocks[cut.tail] {
                Block::Text(end) if last => {
                    // A lone text block keeps its end, from a character's start.
                    let mut start = end - half;
                    while !self.text.is_char_boundary(start) {
                        start += 1;
                    }
                    let dropped = start - cut.tail_text;
                    cut.tail_text = start;
                    cut.tail_size -= dropped;
                    cut.dropped_bytes += dropped as u64;
                    self.size -= dropped;
                    break;
                }
                Block::Text(end) => {
                    let size = end - cut.tail_text;
                    cut.tail_text = *end;
                    size
                }
                Block::Raw(json) if last && text_of(json).is_some() => {
                    let text = text_of(json).unwrap_or_default();
                    let mut start = text.len() - half;
                    while !text.is_char_boundary(start) {
                        start += 1;
                    }
                    let kept = text[start..].to_owned();
                    if let Block::Raw(json) = &mut self.blocks[cut.tail]
                        && let Json::Object(members) = json.as_mut()
                    {
                        for (k, v) in members.iter_mut() {
                            if k == "text" {
                                *v = Json::Str(kept.clone());
                            }
                        }
                    }
                    cut.tail_size -= start;
                    cut.dropped_bytes += start as u64;
                    self.size -= start;
                    break;
                }
                Block::Raw(json) => raw_size(json),
            };
            cut.tail += 1;
            cut.tail_size -= dropped;
            cut.dropped_blocks += 1;
            cut.dropped_bytes += dropped as u64;
            self.size -= dropped;
        }
        self.compact();
    }

    /// Forget the dropped blocks once they outgrow the live tail: amortized O(1) per block.
    fn compact(&mut self) {
        let Some(cut) = self.cut.as_deref_mut() else {
            return;
        };
        let dead_blocks = cut.tail - cut.head;
        let dead_text = cut.tail_text - cut.head_text;
        let live_blocks = self.blocks.len() - cut.tail;
        let live_text = self.text.len() - cut.tail_text;
        if dead_blocks <= live_blocks.max(16) && dead_text <= live_text.max(4096) {
            return;
        }
        self.blocks.drain(cut.head..cut.tail);
        self.text.replace_range(cut.head_text..cut.tail_text, "");
        for block in &mut self.blocks[cut.head..] {
            if let Block::Text(end) = block {
                *end -= dead_text;
            }
        }
        cut.tail = cut.head;
        cut.tail_text = cut.head_text;
    }

    /// The blocks kept, in order, each text block with its text.
    pub(super) fn iter(&self) -> impl Iterator<Item = BlockRef<'_>> {
        let (head, tail) = self.parts();
        head.chain(tail)
    }

    /// The head's blocks and the tail's (none before a truncation), each text block with its
    /// text.
    fn parts(
        &self,
    ) -> (
        impl Iterator<Item = BlockRef<'_>>,
        impl Iterator<Item = BlockRef<'_>>,
    ) {
        let (head, tail, tail_text) = match self.cut.as_deref() {
            Some(cut) => (cut.head, cut.tail, cut.tail_text),
            None => (self.blocks.len(), self.blocks.len(), 0),
        };
        let text = self.text.as_str();
        let mut start = 0;
        let mut tail_start = tail_text;
        (
            self.blocks[..head]
                .iter()
                .map(move |block| resolve(text, &mut start, block)),
            self.blocks[tail..]
                .iter()
                .map(move |block| resolve(text, &mut tail_start, block)),
        )
    }

    /// The text of each block that is text, in order.
    pub(super) fn texts(&self) -> impl Iterator<Item = &str> {
        self.iter().filter_map(|block| match block {
            BlockRef::Text(text) => Some(text),
            BlockRef::Raw(Json::Object(members)) => {
                match (obj_get(members, "type"), obj_get(members, "text")) {
                    (Some(Json::Str(kind)), Some(Json::Str(text))) if kind == "text" => Some(text),
                    _ => None,
                }
            }
            BlockRef::Raw(_) => None,
        })
    }

    /// The blocks kept, as the snapshot shows them: each run of plain text blocks (no member
    /// but `type` and `text`) as one, in the head and in the tail apart.
    pub(super) fn to_view(&self) -> View<'_> {
        let (head, tail) = self.parts();
        let mut out = Vec::new();
        merge_plain_text(&self.text, head, &mut out);
        merge_plain_text(&self.text, tail, &mut out);
        View::Array(out)
    }

    /// The blocks kept, each as sent (no run of text shown as one).
    pub(super) fn to_view_as_sent(&self) -> View<'_> {
        let block_view = |block| match block {
            BlockRef::Text(text) => text_block(View::Str(text)),
            BlockRef::Raw(json) => View::Json(json),
        };
        View::Array(self.iter().map(block_view).collect())
    }

    /// `{blocks, bytes}` dropped, once the message was truncated.
    pub(super) fn truncated_view(&self) -> Option<View<'static>> {
        let cut = self.cut.as_deref()?;
        Some(View::Owned(Json::Object(vec![
            ("blocks".to_owned(), Json::from(cut.dropped_blocks)),
            ("bytes".to_owned(), Json::from(cut.dropped_bytes)),
        ])))
    }
}

/// A block with no member but `type` (`"text"`) and `text`, the kind a run of which shows as
/// one: for a text block of the buffer, where its text lies there.
enum Plain<'a> {
    Buffered(usize, usize),
    Stored(&'a str),
}

fn plain<'a>(buffer: &'a str, block: &BlockRef<'a>) -> Option<Plain<'a>> {
    match block {
        BlockRef::Text(text) => {
            let start = text.as_ptr() as usize - buffer.as_ptr() as usize;
            Some(Plain::Buffered(start, start + text.len()))
        }
        BlockRef::Raw(json) => match json {
            Json::Object(members) if members.len() == 2 => text_of(json).map(Plain::Stored),
            _ => None,
        },
    }
}

/// A run of plain text blocks: a stretch of the buffer while its blocks lie back to back
/// there, else copied.
enum Run {
    Buffered(usize, usize),
    Owned(String),
}

impl Run {
    fn push(&mut self, buffer: &str, piece: &Plain<'_>) {
        match (&mut *self, piece) {
            (Run::Buffered(_, end), Plain::Buffered(start, next_end)) if end == start => {
                *end = *next_end;
            }
            (Run::Owned(owned), piece) => owned.push_str(piece_text(buffer, piece)),
            (Run::Buffered(start, end), piece) => {
                let mut owned = buffer[*start..*end].to_owned();
                owned.push_str(piece_text(buffer, piece));
                *self = Run::Owned(owned);
            }
        }
    }

    fn view(self, buffer: &str) -> View<'_> {
        let text = match self {
            Run::Buffered(start, end) => View::Str(&buffer[start..end]),
            Run::Owned(text) => View::Owned(Json::Str(text)),
        };
        text_block(text)
    }
}

/// `{"type": "text", "text": text}`.
fn text_block(text: View<'_>) -> View<'_> {
    View::Object(vec![("type", View::Str("text")), ("text", text)])
}

fn piece_text<'a>(buffer: &'a str, piece: &Plain<'a>) -> &'a str {
    match piece {
        Plain::Buffered(start, end) => &buffer[*start..*end],
        Plain::Stored(text) => text,
    }
}

/// Push the views of `blocks` (of a message whose text buffer is `buffer`) to `out`, each run
/// of plain text blocks as one.
fn merge_plain_text<'a>(
    buffer: &'a str,
    blocks: impl Iterator<Item = BlockRef<'a>>,
    out: &mut Vec<View<'a>>,
) {
    let mut run: Option<Run> = None;
    for block in blocks {
        if let Some(piece) = plain(buffer, &block) {
            match &mut run {
                Some(run) => run.push(buffer, &piece),
                None => {
                    run = Some(match piece {
                        Plain::Buffered(start, end) => Run::Buffered(start, end),
                        Plain::Stored(text) => Run::Owned(text.to_owned()),
                    });
                }
            }
            continue;
        }
        if let Some(done) = run.take() {
            out.push(done.view(buffer));
        }
        if let BlockRef::Raw(json) = block {
            out.push(View::Json(json));
        }
    }
    if let Some(done) = run {
        out.push(done.view(buffer));
    }
}
