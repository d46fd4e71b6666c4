//! Session reduction: a stream of ACP JSON-RPC messages in, per-session UI state out.
//!
//! [`Sessions`] takes NDJSON bytes ([`Sessions::feed`]) or decoded messages
//! ([`Sessions::apply`]) of both directions and keeps, per `params.sessionId`, what a client
//! renders: messages, tool calls, terminals (live [`Terminal`]s), plans, compactions, usage,
//! session info, commands, config, permissions, prompts, notices and unknown updates. Each
//! frame is parsed once and reduced straight from the parse tree; streamed chunks are appended
//! in place, so a message built from a million chunks costs time linear in its bytes.
//!
//! The pure-Python twin (`python/acpwire/_pure/session.py`) follows these rules one for one;
//! both give identical snapshots, errors and changes.
//!
//! # Rules
//! - Protocol version: `initialize` (request, then the response's negotiated value) picks v1
//!   (`protocolVersion` < 2) or v2 rules for the connection. Before any `initialize` the
//!   reducer accepts the variants of both versions, v2 patch rules, optional `messageId`.
//! - Patch fields: omitted = unchanged, `null` = clear, a value replaces; arrays replace whole
//!   and `[]` clears. v1 `tool_call_update` and `subagent_update` treat `null` as omitted.
//! - A known variant whose required fields are missing or of the wrong type is an error
//!   record and changes nothing. An optional field of the wrong type is read as absent and an
//!   array item that cannot be read is left out (the schemas' `x-deserialize-default-on-error`
//!   and `x-deserialize-skip-invalid-items`): each is an error record, and the rest of the
//!   update applies ([`check`]). A variant unknown to the active version goes to `other`.
//! - Messages are keyed by (role, messageId); v1 chunks without a `messageId` join the current
//!   message when it has the same role, else start an anonymous message `~1`, `~2`, ... (a
//!   number already used as a real id of that role is skipped, and anonymous messages are
//!   indexed apart, so the two never merge). A `session/prompt` request (the user's turn)
//!   ends the current message.
//! - Responses are matched to the pending request with the same id sent by the other side
//!   (`meta.json` tells which side handles each method; [`Sessions::apply_from`] may name
//!   the sender). If both sides have one pending, the result goes to the request whose
//!   response type's required keys it has (`stopReason` for a v1 prompt, `messageId` for a v2
//!   one, `outcome` for a permission, `content` for `fs/read_text_file`, ...), and to one
//!   whose type requires keys over one whose type requires none; when that does not decide
//!   (both or neither fit, or an error response), a result with `outcome` answers the agent's
//!   request, anything else the client's. Every request with an id is tracked, one refused
//!   for its params included; a notification sent with an id, while the other side has a
//!   request of that id pending. Before `initialize` a prompt requires no key of its result.
//!
//! # Snapshot
//! See [`Session::snapshot`] for the shape (also the README, "Session snapshots").

#[cfg(test)]
mod cases;
mod check;
mod fields;
mod json;
mod scan;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};

// SipHash's DoS resistance buys nothing for per-connection ids and costs a visible share of
// reduction time; aHash is what jiter uses.
use ahash::{AHashMap as HashMap, AHashSet as HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use jiter::JsonValue;

use fields::{Fields, Keyed, patch_op};
use json::Members;
pub use json::{Json, Obj, View, dedup, member, obj_get, obj_remove, obj_set, view_set};

use crate::framing::{self, Event, Framer};
use crate::terminal::{Terminal, TerminalConfig, decode_base64, decode_base64_into};

/// Errors kept by [`Sessions::errors`]; older ones are dropped (and counted).
pub const MAX_ERRORS: usize = 10_000;
/// Errors kept per session for its snapshot.
pub const MAX_SESSION_ERRORS: usize = 1_000;
/// A session's protocol version before `initialize` (a version is 0 to 65,535).
const NO_VERSION: i64 = i64::MIN;

/// Notices kept per session: a live ring, not history.
pub const MAX_NOTICES: usize = 100;
/// Requests awaiting a response; beyond this the oldest is forgotten.
pub const MAX_PENDING: usize = 10_000;

/// Configuration of a [`Sessions`] store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionsConfig {
    /// Longest accepted NDJSON frame.
    pub max_frame_bytes: usize,
    /// Width of terminal grids, `None` for unwrapped transcripts.
    pub terminal_cols: Option<usize>,
    /// Lines of scrollback kept per terminal.
    pub scrollback: usize,
    /// What all the store's terminals may hold together, in the units of a terminal's
    /// `max_bytes` (see [`Terminal::retained_bytes`]): past it, the terminals written least
    /// recently are cleared. Each terminal's own `max_bytes` is at most this.
    pub max_terminal_bytes: usize,
}

/// The default [`SessionsConfig::max_terminal_bytes`]: four terminals at their own default
/// bound.
pub const DEFAULT_MAX_TERMINAL_BYTES: usize = 64 * 1024 * 1024;

impl Default for SessionsConfig {
    fn default() -> Self {
        SessionsConfig {
            max_frame_bytes: framing::DEFAULT_MAX_FRAME_BYTES,
            terminal_cols: None,
            scrollback: 10_000,
            max_terminal_bytes: DEFAULT_MAX_TERMINAL_BYTES,
        }
    }
}

/// One rejected frame or malformed message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorRecord {
    /// 1-based line of the frame (`None` for [`Sessions::apply`]).
    pub line: Option<u64>,
    /// Byte offset of the frame (`None` for [`Sessions::apply`]).
    pub offset: Option<u64>,
    /// The session concerned, when known (shared among the records of one session: an update
    /// may make thousands, and an id may be long).
    pub session_id: Option<Arc<str>>,
    /// A fixed phrase, identical on both backends.
    pub reason: String,
}

impl ErrorRecord {
    /// `{line, offset, sessionId, reason}`, borrowed (a session's records share its id).
    fn view(&self) -> View<'_> {
        View::Object(vec![
            ("line", View::Owned(self.line.into())),
            ("offset", View::Owned(self.offset.into())),
            (
                "sessionId",
                self.session_id
                    .as_deref()
                    .map_or(View::Owned(Json::Null), View::Str),
            ),
            ("reason", View::Str(&self.reason)),
        ])
    }

    /// `{line, offset, sessionId, reason}`, owned.
    pub fn to_json(&self) -> Json {
        self.view().into_json()
    }
}

/// Something that changed: (sessionId, entity type, id).
///
/// Entity types: `message`, `toolCall`, `terminal`, `plan`, `compaction`, `other` (id: its
/// index in `other`), `subagent`, and `session` whose id names the snapshot key that moved
/// (`state`, `usage`, `info`, `prompts`, `errors`, ...).
pub type Change = (String, &'static str, String);

/// The role of a message; the snapshot writes it as `"user"`, `"agent"`, `"thought"` or
/// `"session"` (inter-session messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    User,
    Agent,
    Thought,
    Session,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Agent => "agent",
            Role::Thought => "thought",
            Role::Session => "session",
        }
    }

    /// The role named by `name`, if any.
    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "user" => Some(Role::User),
            "agent" => Some(Role::Agent),
            "thought" => Some(Role::Thought),
            "session" => Some(Role::Session),
            _ => None,
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// One content block, in 16 bytes: a streamed message holds one per chunk.
#[derive(Clone, Debug)]
enum Block {
    /// A plain `{"type":"text","text":…}` block (the streaming hot path): its text is
    /// [`Content::text`] up to this offset, from where the previous text block ended.
    Text(usize),
    Raw(Box<Json>),
}

const _: () = assert!(std::mem::size_of::<Block>() <= 16);
const _: () = assert!(std::mem::size_of::<Message>() <= 64);

/// The content blocks of a message. The text of its plain text blocks lies back to back in
/// one buffer: a streamed message grows one allocation instead of making one per chunk.
#[derive(Clone, Debug, Default)]
struct Content {
    blocks: Vec<Block>,
    text: String,
}

impl Content {
    fn from_values(items: &[JsonValue<'_>]) -> Content {
        let mut content = Content {
            blocks: Vec::with_capacity(items.len()),
            text: String::new(),
        };
        for item in items {
            content.push(item);
        }
        content
    }

    fn push(&mut self, value: &JsonValue<'_>) {
        if let JsonValue::Object(members) = value
            && members.len() == 2
        {
            // Only in this key order: the snapshot writes `type` then `text`, and must keep the
            // order the block arrived in.
            let (t, x) = (&members[0], &members[1]);
            if t.0 == "type"
                && x.0 == "text"
                && let (JsonValue::Str(kind), JsonValue::Str(text)) = (&t.1, &x.1)
                && kind == "text"
            {
                self.push_text(text);
                return;
            }
        }
        self.blocks
            .push(Block::Raw(Box::new(Json::from_value(value))));
    }

    /// Append a plain text block.
    fn push_text(&mut self, text: &str) {
        self.text.push_str(text);
        self.blocks.push(Block::Text(self.text.len()));
    }

    /// The blocks in order, each text block with its text.
    fn iter(&self) -> impl Iterator<Item = BlockRef<'_>> {
        let mut start = 0;
        self.blocks.iter().map(move |block| match block {
            Block::Text(end) => {
                let text = &self.text[start..*end];
                start = *end;
                BlockRef::Text(text)
            }
            Block::Raw(json) => BlockRef::Raw(json),
        })
    }

    fn to_view(&self) -> View<'_> {
        let block_view = |block| match block {
            BlockRef::Text(text) => {
                View::Object(vec![("type", View::Str("text")), ("text", View::Str(text))])
            }
            BlockRef::Raw(json) => View::Json(json),
        };
        View::Array(self.iter().map(block_view).collect())
    }

    /// The text of each block that is text, in order.
    fn texts(&self) -> impl Iterator<Item = &str> {
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
}

/// A block of a [`Content`], its text resolved.
enum BlockRef<'a> {
    Text(&'a str),
    Raw(&'a Json),
}

#[derive(Clone, Debug)]
struct Message {
    id: String,
    role: Role,
    /// Boxed to keep `Message` at 64 bytes: each session holds a growing list of them, and a
    /// larger element cost megabytes of resident memory on mixed streams.
    content: Option<Box<Content>>,
    /// `_meta`, participants and unknown fields, in arrival order (boxed, and only once there
    /// are any: most messages have none).
    fields: Option<Box<Fields>>,
}

/// Holes left in a timeline by removed plans before it is compacted: removal stays amortized
/// O(1) while holes never outnumber live entries by much.
const MAX_HOLES: usize = 32;

impl Message {
    fn fields_mut(&mut self) -> &mut Fields {
        self.fields.get_or_insert_with(Box::default)
    }
}

struct TerminalEntry {
    fields: Fields,
    term: Arc<Mutex<Terminal>>,
    /// When the store last wrote to it (a [`TerminalBudget::writes`] count; 0: not since it
    /// was created or cleared), and what it held then.
    written: u64,
    held: usize,
}

/// A terminal's lock, poisoned or not, as everywhere in the store.
fn lock(term: &Mutex<Terminal>) -> std::sync::MutexGuard<'_, Terminal> {
    term.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The store-wide bound on what terminals hold ([`SessionsConfig::max_terminal_bytes`]).
#[derive(Default)]
struct TerminalBudget {
    limit: usize,
    /// What the terminals held when last written, together.
    held: usize,
    /// Writes so far: the last one's count marks the terminal written last.
    writes: u64,
    /// Terminals written since created or cleared, by when last written, least recent first:
    /// (session index, terminal id).
    order: BTreeMap<u64, (usize, Box<str>)>,
}

impl TerminalBudget {
    /// Counts that `entry` (terminal `id` of session `sidx`), just written, holds `held` now,
    /// and makes it the one written last.
    fn written(&mut self, entry: &mut TerminalEntry, sidx: usize, id: &str, held: usize) {
        self.held = self.held - entry.held + held;
        entry.held = held;
        // A stream of chunks to one terminal leaves the order as it is.
        if entry.written == 0 || entry.written != self.writes {
            if entry.written != 0 {
                self.order.remove(&entry.written);
            }
            self.writes += 1;
            entry.written = self.writes;
            self.order.insert(self.writes, (sidx, id.into()));
        }
    }
}

/// Which rules apply: before `initialize` (0), v1 (1) or v2 (2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Unknown,
    V1,
    V2,
}

fn mode_of(version: Option<i64>) -> Mode {
    match version {
        None => Mode::Unknown,
        Some(v) if v < 2 => Mode::V1,
        Some(_) => Mode::V2,
    }
}

/// The reduced state of one session.
pub struct Session {
    id: String,
    /// The store's protocol version (every session has the one last negotiated), shared so
    /// that a change of version costs nothing per session ([`NO_VERSION`]: none yet).
    protocol_version: Arc<AtomicI64>,
    state: Option<String>,
    stop_reason: Option<String>,
    messages: Vec<Message>,
    /// messageId -> index in `messages`, per role.
    message_index: HashMap<String, [Option<usize>; 4]>,
    /// The same for anonymous messages, kept apart so that a real id never reaches one.
    anonymous_index: HashMap<String, [Option<usize>; 4]>,
    /// The message that v1 chunks without an id join.
    current: Option<usize>,
    anonymous: u64,
    tool_calls: Keyed<Fields>,
    terminals: Keyed<TerminalEntry>,
    plans: Keyed<Obj>,
    compactions: Keyed<Fields>,
    subagents: Keyed<Fields>,
    usage: Option<Obj>,
    info: Fields,
    available_commands: Option<Json>,
    config_options: Option<Json>,
    current_mode_id: Option<String>,
    update_extras: Obj,
    permissions: Vec<Fields>,
    prompts: Vec<Fields>,
    /// The turn going on, if one is: until the last prompt's v1 response or error response,
    /// or (v2) an idle `state_update` or an error answer to each of its prompts. In v2 a
    /// prompt sent meanwhile joins the turn (the work it contributes to). Only an ongoing turn
    /// can be cancelled.
    turn: Option<Turn>,
    notices: VecDeque<Json>,
    other: Vec<Json>,
    /// (type, id, role) in first-seen order; a removed plan's entry has type [`REMOVED`].
    timeline: Vec<(&'static str, String, Option<Role>)>,
    /// Where each plan's entry is in `timeline`, so that removing a plan is O(1).
    plan_at: HashMap<String, usize>,
    /// Entries of removed plans still in `timeline`.
    timeline_holes: usize,
    errors: VecDeque<ErrorRecord>,
    terminal_config: TerminalConfig,
}

/// The type of a timeline entry whose plan was removed (skipped by the snapshot).
const REMOVED: &str = "";

impl Session {
    /// Appends an empty message `id` of `role`, indexed (apart when `anonymous`) and placed in
    /// the timeline; returns its index.
    fn add_message(&mut self, id: String, role: Role, anonymous: bool) -> usize {
        let i = self.messages.len();
        let index = if anonymous {
            &mut self.anonymous_index
        } else {
            &mut self.message_index
        };
        index.entry(id.clone()).or_default()[role.slot()] = Some(i);
        self.timeline.push(("message", id.clone(), Some(role)));
        self.messages.push(Message {
            id,
            role,
            content: None,
            fields: None,
        });
        i
    }

    /// Drop plan `id`'s timeline entry: it becomes a hole, and the holes are compacted once
    /// they outnumber the rest, so a stream of plan removals stays linear.
    fn remove_plan_entry(&mut self, id: &str) {
        let Some(at) = self.plan_at.remove(id) else {
            return;
        };
        self.timeline[at].0 = REMOVED;
        self.timeline_holes += 1;
        if self.timeline_holes > MAX_HOLES && self.timeline_holes * 2 > self.timeline.len() {
            self.timeline.retain(|(kind, _, _)| *kind != REMOVED);
            self.timeline_holes = 0;
            for (i, (kind, id, _)) in self.timeline.iter().enumerate() {
                if *kind == "plan" {
                    self.plan_at.insert(id.clone(), i);
                }
            }
        }
    }

    /// The terminal `id`, made (and placed on the timeline) on first sight.
    fn terminal_entry(&mut self, id: &str) -> &mut TerminalEntry {
        let config = self.terminal_config;
        let (entry, new) = self.terminals.entry(id, || TerminalEntry {
            fields: [("terminalId".to_owned(), id.into())].into_iter().collect(),
            term: Arc::new(Mutex::new(Terminal::new(config))),
            written: 0,
            held: 0,
        });
        if new {
            self.timeline.push(("terminal", id.to_owned(), None));
        }
        entry
    }

    fn new(
        id: &str,
        protocol_version: &Arc<AtomicI64>,
        terminal_config: TerminalConfig,
    ) -> Session {
        Session {
            id: id.to_owned(),
            protocol_version: Arc::clone(protocol_version),
            state: None,
            stop_reason: None,
            messages: Vec::new(),
            message_index: HashMap::new(),
            anonymous_index: HashMap::new(),
            current: None,
            anonymous: 0,
            tool_calls: Keyed::default(),
            terminals: Keyed::default(),
            plans: Keyed::default(),
            compactions: Keyed::default(),
            subagents: Keyed::default(),
            usage: None,
            info: Fields::new(),
            available_commands: None,
            config_options: None,
            current_mode_id: None,
            update_extras: Vec::new(),
            permissions: Vec::new(),
            prompts: Vec::new(),
            turn: None,
            notices: VecDeque::new(),
            other: Vec::new(),
            timeline: Vec::new(),
            plan_at: HashMap::new(),
            timeline_holes: 0,
            errors: VecDeque::new(),
            terminal_config,
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The foreground state (`running`, `idle`, `requires_action` or any other string sent),
    /// `None` before the first report. v1 has no state updates: a prompt request sets
    /// `running` and its response `idle`.
    pub fn state(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// Why the last turn stopped (only while `idle`).
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// The live terminal `terminal_id`, shared so callers can keep a handle.
    pub fn terminal(&self, terminal_id: &str) -> Option<Arc<Mutex<Terminal>>> {
        self.terminals.get(terminal_id).map(|t| Arc::clone(&t.term))
    }

    /// The concatenated text blocks of message (`role`, `message_id`), or `None` when there is
    /// no such message. `role` is `"user"`, `"agent"`, `"thought"` or `"session"`.
    pub fn message_text(&self, message_id: &str, role: &str) -> Option<String> {
        let role = Role::parse(role)?;
        let slot = |index: &HashMap<String, [Option<usize>; 4]>| {
            index.get(message_id).and_then(|slots| slots[role.slot()])
        };
        let i = slot(&self.message_index).or_else(|| slot(&self.anonymous_index))?;
        Some(
            self.messages[i]
                .content
                .iter()
                .flat_map(|content| content.texts())
                .collect(),
        )
    }

    /// Number of messages.
    pub fn message_count(&self) -> usize {
        self.messages.len()
    }

    /// The session as one JSON object. Top-level keys, always present:
    ///
    /// `sessionId`, `protocolVersion` (int or null), `state`, `stopReason`, `messages` (list
    /// of `{id, role, content?, _meta?, …}` in timeline order), `toolCalls` (by id),
    /// `terminals` (by id: `terminalId`, `command?`, `cwd?`, `exitStatus?`, `_meta?`, `text`,
    /// `bytes`, `truncated`), `plans` (by planId), `compactions` (by id), `usage` (the last
    /// `usage_update` or null), `info` (patched `session_info_update` fields),
    /// `availableCommands`, `configOptions`, `currentModeId` (null until set), `permissions`
    /// and `prompts` (lists in request order, with `response` or `error` once answered),
    /// `notices` (the last 100), `other` (raw unknown updates), `timeline` (`{type, id}` plus
    /// `role` for messages, first-seen order), `errors` (this session's, the last 1000),
    /// `subagents` (by id) and `updateExtras` (`_meta` and unknown fields of the
    /// session-level replace variants and of plan updates and removals, by variant name).
    ///
    /// Inside entities, a field never set or cleared is absent.
    pub fn snapshot(&self) -> Json {
        self.snapshot_view().into_json()
    }

    /// [`Self::snapshot`] borrowed from the session: the same value, with stored values
    /// referred to rather than copied.
    pub fn snapshot_view(&self) -> View<'_> {
        let messages = self.messages.iter().map(message_view).collect();
        let plans = View::Object(
            self.plans
                .iter()
                .map(|(id, o)| (id.as_str(), View::of_obj(o)))
                .collect(),
        );
        let terminals = View::Object(
            self.terminals
                .iter()
                .map(|(id, t)| (id.as_str(), terminal_view(t)))
                .collect(),
        );
        let timeline = self
            .timeline
            .iter()
            .filter(|(kind, _, _)| *kind != REMOVED)
            .map(|(kind, id, role)| {
                let mut o = vec![("type", View::Str(kind)), ("id", View::Str(id))];
                if let Some(role) = role {
                    o.push(("role", View::Str(role.as_str())));
                }
                View::Object(o)
            })
            .collect();
        View::Object(vec![
            ("sessionId", View::Str(&self.id)),
            (
                "protocolVersion",
                View::Owned(match self.protocol_version.load(Ordering::Relaxed) {
                    NO_VERSION => Json::Null,
                    v => Json::Int(v),
                }),
            ),
            ("state", View::of_str(self.state.as_deref())),
            ("stopReason", View::of_str(self.stop_reason.as_deref())),
            ("messages", View::Array(messages)),
            ("toolCalls", keyed(&self.tool_calls)),
            ("terminals", terminals),
            ("plans", plans),
            ("compactions", keyed(&self.compactions)),
            (
                "usage",
                self.usage
                    .as_ref()
                    .map_or(View::Owned(Json::Null), View::of_obj),
            ),
            ("info", self.info.to_view()),
            (
                "availableCommands",
                stored(self.available_commands.as_ref()),
            ),
            ("configOptions", stored(self.config_options.as_ref())),
            (
                "currentModeId",
                View::of_str(self.current_mode_id.as_deref()),
            ),
            ("permissions", objs(&self.permissions)),
            ("prompts", objs(&self.prompts)),
            (
                "notices",
                View::Array(self.notices.iter().map(View::Json).collect()),
            ),
            (
                "other",
                View::Array(self.other.iter().map(View::Json).collect()),
            ),
            ("timeline", View::Array(timeline)),
            (
                "errors",
                View::Array(self.errors.iter().map(ErrorRecord::view).collect()),
            ),
            ("subagents", keyed(&self.subagents)),
            ("updateExtras", View::of_obj(&self.update_extras)),
        ])
    }
}

fn keyed(k: &Keyed<Fields>) -> View<'_> {
    View::Object(k.iter().map(|(id, f)| (id.as_str(), f.to_view())).collect())
}

fn objs(v: &[Fields]) -> View<'_> {
    View::Array(v.iter().map(Fields::to_view).collect())
}

fn stored(v: Option<&Json>) -> View<'_> {
    v.map_or(View::Owned(Json::Null), View::Json)
}

/// A terminal's fields, then what it shows: `text`, `bytes` and `truncated`.
fn terminal_view(t: &TerminalEntry) -> View<'_> {
    let mut o = t.fields.view_members();
    let term = lock(&t.term);
    view_set(&mut o, "text", View::Owned(Json::Str(term.text())));
    view_set(&mut o, "bytes", View::Owned(term.bytes_fed().into()));
    view_set(
        &mut o,
        "truncated",
        View::Owned(Json::Bool(term.truncated())),
    );
    View::Object(o)
}

fn message_view(m: &Message) -> View<'_> {
    let mut o = vec![
        ("id", View::Str(&m.id)),
        ("role", View::Str(m.role.as_str())),
    ];
    if let Some(content) = &m.content {
        o.push(("content", content.to_view()));
    }
    // No field is named `id`, `role` or `content`: updates never store those as fields.
    o.extend(m.fields.iter().flat_map(|f| f.view_members()));
    View::Object(o)
}

/// Which side sent a message (for a request: which side awaits its response).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Client,
    Agent,
}

impl Side {
    /// The side named `"client"` or `"agent"`.
    pub fn parse(name: &str) -> Option<Side> {
        match name {
            "client" => Some(Side::Client),
            "agent" => Some(Side::Agent),
            _ => None,
        }
    }

    fn other(self) -> Side {
        match self {
            Side::Client => Side::Agent,
            Side::Agent => Side::Client,
        }
    }
}

/// The keys a successful response to `method` must have (its response type's required
/// properties in the v1 and v2 schemas, stable and unstable); used to tell which of two
/// requests sharing an id a result answers. A prompt's response requires `stopReason` in v1
/// only.
fn response_keys(method: &str, mode: Mode) -> &'static [&'static str] {
    match method {
        "initialize" => &["protocolVersion"],
        "session/new" | "session/fork" | "nes/start" => &["sessionId"],
        "session/list" => &["sessions"],
        "session/set_config_option" => &["configOptions"],
        "session/prompt" => match mode {
            Mode::V1 => &["stopReason"],
            // Not required by the v2 schema, yet the spec's prompt lifecycle returns it.
            Mode::V2 => &["messageId"],
            // Before `initialize` either version's result is the prompt's.
            Mode::Unknown => &[],
        },
        "providers/list" => &["providers"],
        "nes/suggest" => &["suggestions"],
        "session/request_permission" => &["outcome"],
        "fs/read_text_file" => &["content"],
        "terminal/create" => &["terminalId"],
        "terminal/output" => &["output", "truncated"],
        "elicitation/create" => &["action"],
        "mcp/connect" => &["connectionId"],
        _ => &[],
    }
}

/// A prompt turn going on (see [`Session::turn`]).
#[derive(Clone, Copy, Debug)]
struct Turn {
    /// Its first prompt.
    start: usize,
    /// Its prompts answered with an error.
    refused: usize,
    /// Its prompts before this one are marked by a cancel already.
    cancelled_to: usize,
}

#[derive(Clone, Debug)]
enum Pending {
    Initialize,
    /// `session/new` and `session/fork` (the method): the result names the session.
    NewSession(String),
    /// `session/load` and `session/resume` of a known session, and `session/set_config_option`
    /// (its result is the full set of options): the result's setup state applies. The session
    /// and the method.
    LoadSession(String, String),
    /// The session, the prompt's index, and the rules in force when it was sent, which its
    /// answer is read by (a connection initialized again meanwhile changes them).
    Prompt(String, usize, Mode),
    Permission(String, usize),
    /// `session/set_mode` (v1): the session and the mode it asks for, current once answered
    /// with a result.
    SetMode(String, String),
    Other,
}

/// What a `session/set_mode` request waits for: the session and the mode it asks for. A
/// request without a session or mode id is still tracked, as any other.
fn set_mode_request(params: Option<&JsonValue<'_>>) -> Pending {
    let Some(JsonValue::Object(p)) = params else {
        return Pending::Other;
    };
    match (as_str(member(p, "sessionId")), as_str(member(p, "modeId"))) {
        (Some(sid), Some(mode)) => Pending::SetMode(sid.to_owned(), mode.to_owned()),
        _ => Pending::Other,
    }
}

/// Methods handled by the agent (sent by the client), v1 and v2, stable and unstable.
const AGENT_METHODS: &[&str] = &[
    "initialize",
    "authenticate",
    "auth/login",
    "auth/logout",
    "logout",
    "providers/list",
    "providers/set",
    "providers/disable",
    "session/new",
    "session/load",
    "session/set_mode",
    "session/set_config_option",
    "session/prompt",
    "session/cancel",
    "session/list",
    "session/delete",
    "session/fork",
    "session/resume",
    "session/close",
    "nes/start",
    "nes/suggest",
    "nes/accept",
    "nes/reject",
    "nes/close",
    "document/didOpen",
    "document/didChange",
    "document/didClose",
    "document/didSave",
    "document/didFocus",
];

/// Methods handled by the client (sent by the agent).
const CLIENT_METHODS: &[&str] = &[
    "session/request_permission",
    "session/update",
    "fs/write_text_file",
    "fs/read_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/release",
    "terminal/wait_for_exit",
    "terminal/kill",
    "mcp/connect",
    "mcp/disconnect",
    "elicitation/create",
    "elicitation/complete",
];

const V1_ONLY: &[&str] = &["tool_call", "plan", "current_mode_update"];
const V2_ONLY: &[&str] = &[
    "user_message",
    "agent_message",
    "agent_thought",
    "state_update",
    "tool_call_content_chunk",
    "terminal_update",
    "terminal_output_chunk",
];

/// The key of a trackable request id: a string, an integer, or a finite number written with a
/// fraction or an exponent (JSON-RPC discourages those, but a response must echo the same
/// value); `null` and other ids are not tracked. `2.0` and `2` are different ids.
fn id_key(id: &JsonValue<'_>) -> Option<String> {
    match id {
        JsonValue::Str(s) => Some(format!("s{s}")),
        JsonValue::Int(i) => Some(format!("i{i}")),
        JsonValue::BigInt(b) => Some(format!("i{b}")),
        JsonValue::Float(f) if f.is_finite() => Some(format!("f{:x}", f.to_bits())),
        _ => None,
    }
}

fn is_object(v: Option<&JsonValue<'_>>) -> bool {
    matches!(v, Some(JsonValue::Object(_)))
}

fn as_str<'a>(v: Option<&'a JsonValue<'_>>) -> Option<&'a str> {
    match v {
        Some(JsonValue::Str(s)) => Some(s.as_ref()),
        _ => None,
    }
}

fn is_non_negative_int(v: Option<&JsonValue<'_>>) -> bool {
    match v {
        Some(JsonValue::Int(i)) => *i >= 0,
        Some(JsonValue::BigInt(b)) => !b.to_string().starts_with('-'),
        _ => false,
    }
}

/// A pending request: its sequence number, what its response updates, and the keys a
/// result must have to be its response.
type PendingEntry = (u64, Pending, &'static [&'static str]);

/// Requests awaiting responses, oldest first, bounded by [`MAX_PENDING`].
#[derive(Default)]
struct PendingMap {
    map: HashMap<(Side, String), PendingEntry>,
    /// Insertion order; entries whose sequence number no longer matches are stale.
    order: VecDeque<(Side, String, u64)>,
    seq: u64,
}

impl PendingMap {
    fn insert(&mut self, side: Side, key: String, what: Pending, keys: &'static [&'static str]) {
        self.seq += 1;
        self.order.push_back((side, key.clone(), self.seq));
        self.map.insert((side, key), (self.seq, what, keys));
        if self.map.len() > MAX_PENDING {
            while let Some((s, k, q)) = self.order.pop_front() {
                let live = self
                    .map
                    .get(&(s, k.clone()))
                    .is_some_and(|(seq, _, _)| *seq == q);
                if live {
                    self.map.remove(&(s, k));
                    break;
                }
            }
        }
        // Drop stale order entries now and then so answered requests cost no memory.
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order.retain(|(s, k, q)| {
                map.get(&(*s, k.clone()))
                    .is_some_and(|(seq, _, _)| seq == q)
            });
        }
    }

    /// The keys a response to the pending request must have, if there is one.
    fn expects(&self, side: Side, key: &str) -> Option<&'static [&'static str]> {
        self.map
            .get(&(side, key.to_owned()))
            .map(|(_, _, keys)| *keys)
    }

    fn take(&mut self, side: Side, key: &str) -> Option<Pending> {
        self.map.remove(&(side, key.to_owned())).map(|(_, p, _)| p)
    }
}

/// Everything but the framer, so frames can be reduced while the framer is borrowed.
struct Reducer {
    terminal_config: TerminalConfig,
    version: Option<i64>,
    /// Sessions in first-seen order, and their index by id.
    sessions: Vec<Session>,
    index: HashMap<String, usize>,
    /// The session and message touched last: streams hit them again and again.
    last_session: Option<usize>,
    last_message: Option<(usize, Role, usize)>,
    /// Where the hot path decodes text with escapes, reused from frame to frame.
    decoded: String,
    pending: PendingMap,
    errors: VecDeque<ErrorRecord>,
    errors_dropped: u64,
    /// The session id of the last error record, shared with the next of that session.
    error_session: Option<Arc<str>>,
    /// Error records for the parts of the update being applied that were left out: recorded
    /// once its handler has applied it, dropped if the handler refuses it (its one record).
    notes: Vec<String>,
    changes: Vec<Change>,
    change_set: HashSet<Change>,
    /// (session index, message index) of a message whose change is already in `changes`, so
    /// the hot path can skip [`Reducer::change`]. Cleared when the changes are taken.
    message_changed: Option<(usize, usize)>,
    /// (line, offset) of the frame being reduced.
    pos: Option<(u64, u64)>,
    /// Who sent the message being applied, when the caller knows.
    sender: Option<Side>,
    /// The buffer terminal output chunks are decoded into (see `fast_terminal_chunk`).
    pty_bytes: Vec<u8>,
    terminal_budget: TerminalBudget,
    /// `version`, as every session reads it ([`NO_VERSION`] until `initialize`).
    shared_version: Arc<AtomicI64>,
    /// The first sessions (by index) whose version change is in `changes` already.
    version_changes_named: usize,
}

/// The largest chunk buffer kept between terminal output chunks.
const MAX_KEPT_DECODED: usize = 1 << 20;

/// All sessions of one connection or trace, keyed by `params.sessionId`.
pub struct Sessions {
    framer: Framer,
    r: Reducer,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new(SessionsConfig::default())
    }
}

impl Sessions {
    /// An empty store.
    pub fn new(config: SessionsConfig) -> Sessions {
        Sessions {
            framer: Framer::new(config.max_frame_bytes),
            r: Reducer {
                terminal_config: TerminalConfig {
                    cols: config.terminal_cols,
                    scrollback: config.scrollback,
                    max_bytes: TerminalConfig::default()
                        .max_bytes
                        .min(config.max_terminal_bytes),
                    ..TerminalConfig::default()
                },
                version: None,
                sessions: Vec::new(),
                index: HashMap::new(),
                last_session: None,
                last_message: None,
                decoded: String::new(),
                pending: PendingMap::default(),
                errors: VecDeque::new(),
                errors_dropped: 0,
                error_session: None,
                notes: Vec::new(),
                changes: Vec::new(),
                change_set: HashSet::new(),
                message_changed: None,
                pos: None,
                sender: None,
                pty_bytes: Vec::new(),
                terminal_budget: TerminalBudget {
                    limit: config.max_terminal_bytes,
                    ..TerminalBudget::default()
                },
                shared_version: Arc::new(AtomicI64::new(NO_VERSION)),
                version_changes_named: 0,
            },
        }
    }

    /// Feed NDJSON bytes (any split); returns the frames completed, good or bad.
    pub fn feed(&mut self, data: &[u8]) -> usize {
        let before = self.framer.frames();
        let r = &mut self.r;
        self.framer.feed(data, |event| r.on_event(event));
        usize::try_from(self.framer.frames() - before).unwrap_or(usize::MAX)
    }

    /// End of stream: reduce a last line that had no newline; returns frames completed.
    pub fn finish(&mut self) -> usize {
        let before = self.framer.frames();
        let r = &mut self.r;
        self.framer.finish(|event| r.on_event(event));
        usize::try_from(self.framer.frames() - before).unwrap_or(usize::MAX)
    }

    /// Reduce one decoded JSON-RPC message of either direction (a batch array applies each
    /// entry). Error records from it have no line or offset.
    pub fn apply(&mut self, message: &JsonValue<'_>) {
        self.apply_at(message, None, None);
    }

    /// [`Sessions::apply`] of a message sent by `sender`, when known: its response goes to
    /// the pending request of the other side (and a request is tracked as `sender`'s).
    pub fn apply_from(&mut self, message: &JsonValue<'_>, sender: Option<Side>) {
        self.apply_at(message, sender, None);
    }

    /// [`Sessions::apply_from`] with error records placed at `pos` (line, offset), as for a
    /// message read from line `line` of a trace.
    pub fn apply_at(
        &mut self,
        message: &JsonValue<'_>,
        sender: Option<Side>,
        pos: Option<(u64, u64)>,
    ) {
        self.r.pos = pos;
        self.r.sender = sender;
        self.r.apply_top(message);
        self.r.sender = None;
    }

    /// Record an error for a message that could not be applied at all (a frame that is not
    /// JSON, a message that cannot be read); nothing else changes.
    pub fn reject(&mut self, session_id: Option<&str>, reason: &str, pos: Option<(u64, u64)>) {
        self.r.pos = pos;
        self.r.error(session_id, reason.to_owned());
    }

    /// Session ids in first-seen order.
    pub fn ids(&self) -> Vec<String> {
        self.r.sessions.iter().map(|s| s.id.clone()).collect()
    }

    pub fn len(&self) -> usize {
        self.r.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.r.sessions.is_empty()
    }

    pub fn contains(&self, session_id: &str) -> bool {
        self.r.index.contains_key(session_id)
    }

    pub fn get(&self, session_id: &str) -> Option<&Session> {
        self.r.index.get(session_id).map(|&i| &self.r.sessions[i])
    }

    /// The negotiated protocol version, if `initialize` was seen.
    pub fn protocol_version(&self) -> Option<i64> {
        self.r.version
    }

    /// Error records not yet taken, oldest first (the last [`MAX_ERRORS`]).
    pub fn errors(&self) -> impl Iterator<Item = &ErrorRecord> {
        self.r.errors.iter()
    }

    /// Return the error records and forget them.
    pub fn take_errors(&mut self) -> Vec<ErrorRecord> {
        self.r.errors.drain(..).collect()
    }

    /// Errors dropped because more than [`MAX_ERRORS`] were waiting.
    pub fn errors_dropped(&self) -> u64 {
        self.r.errors_dropped
    }

    /// Everything changed since the last call, deduplicated, in first-change order.
    pub fn take_changes(&mut self) -> Vec<Change> {
        self.r.change_set.clear();
        self.r.version_changes_named = 0;
        self.r.message_changed = None;
        std::mem::take(&mut self.r.changes)
    }
}

impl Reducer {
    fn on_event(&mut self, event: Event<'_>) {
        match event {
            Event::Frame(frame) => {
                self.pos = Some((frame.line, frame.offset));
                if self.fast_chunk(frame.bytes) || self.fast_terminal_chunk(frame.bytes) {
                    return;
                }
                if framing::is_batch(frame.bytes) {
                    self.apply_batch_frame(frame.bytes);
                } else if let Ok(value) = JsonValue::parse(frame.bytes, false) {
                    self.apply_top(&value);
                } else {
                    let e = framing::diagnose(frame.bytes, frame.line, frame.offset);
                    self.error(None, e.kind.reason().to_owned());
                }
            }
            Event::Error(e) => {
                self.pos = Some((e.line, e.offset));
                self.error(None, e.kind.reason().to_owned());
            }
        }
    }

    /// A batch frame: checked whole (a frame that is not JSON applies no entry), then each entry
    /// decoded and applied in turn, so a frame of many small entries is never held decoded.
    fn apply_batch_frame(&mut self, frame: &[u8]) {
        match framing::check_batch(frame) {
            Ok(_) => framing::for_each_entry(frame, |entry| self.apply_message(entry)),
            Err(kind) => self.error(None, kind.reason().to_owned()),
        }
    }

    /// A frame's value: a batch applies each entry in order; `[]` is an error.
    fn apply_top(&mut self, value: &JsonValue<'_>) {
        if let JsonValue::Array(items) = value {
            if items.is_empty() {
                self.error(
                    None,
                    framing::FrameErrorKind::EmptyBatch.reason().to_owned(),
                );
                return;
            }
            for item in items.iter() {
                self.apply_message(item);
            }
        } else {
            self.apply_message(value);
        }
    }

    fn error(&mut self, session_id: Option<&str>, reason: String) {
        // An error while an update is applied refuses it: what was left out of it is moot.
        self.notes.clear();
        let shared = session_id.map(|sid| match &self.error_session {
            Some(last) if &**last == sid => Arc::clone(last),
            _ => {
                let id: Arc<str> = Arc::from(sid);
                self.error_session = Some(Arc::clone(&id));
                id
            }
        });
        let record = ErrorRecord {
            line: self.pos.map(|p| p.0),
            offset: self.pos.map(|p| p.1),
            session_id: shared,
            reason,
        };
        if let Some(sid) = session_id {
            let session = self.session(sid);
            if session.errors.len() == MAX_SESSION_ERRORS {
                session.errors.pop_front();
            }
            session.errors.push_back(record.clone());
            self.change(sid, "session", "errors");
        }
        if self.errors.len() == MAX_ERRORS {
            self.errors.pop_front();
            self.errors_dropped += 1;
        }
        self.errors.push_back(record);
    }

    fn change(&mut self, sid: &str, kind: &'static str, id: &str) {
        // Streams repeat the same entity; compare with the last change before hashing.
        if let Some((s, k, i)) = self.changes.last()
            && *k == kind
            && i == id
            && s == sid
        {
            return;
        }
        let c = (sid.to_owned(), kind, id.to_owned());
        if self.change_set.insert(c.clone()) {
            self.changes.push(c);
        }
    }

    /// The index of session `sid`, created on first sight.
    fn session_index(&mut self, sid: &str) -> usize {
        if let Some(i) = self.last_session
            && self.sessions[i].id == sid
        {
            return i;
        }
        let i = if let Some(&i) = self.index.get(sid) {
            i
        } else {
            let i = self.sessions.len();
            self.sessions.push(Session::new(
                sid,
                &self.shared_version,
                self.terminal_config,
            ));
            self.index.insert(sid.to_owned(), i);
            self.change(sid, "session", "sessionId");
            i
        };
        self.last_session = Some(i);
        i
    }

    /// The session `sid`, created on first sight.
    fn session(&mut self, sid: &str) -> &mut Session {
        let i = self.session_index(sid);
        &mut self.sessions[i]
    }

    fn mode(&self) -> Mode {
        mode_of(self.version)
    }

    /// `initialize`'s `protocolVersion` (in its `params` or `result`, as `part` says): a
    /// `uint16` in the schema. Any other value present is an error record, and the rules stay.
    fn set_version(&mut self, part: &str, v: Option<&JsonValue<'_>>) {
        let v = match v {
            None => return,
            // The same again: every session has it already (walking them all for each of a
            // stream of `initialize`s would be quadratic).
            Some(JsonValue::Int(v)) if self.version == Some(*v) => return,
            Some(JsonValue::Int(v)) if (0..=i64::from(u16::MAX)).contains(v) => v,
            Some(_) => {
                self.error(
                    None,
                    format!(
                        "initialize: {part}.protocolVersion must be an integer from 0 to 65535"
                    ),
                );
                return;
            }
        };
        self.version = Some(*v);
        self.shared_version.store(*v, Ordering::Relaxed);
        // Every session's version moved; the sessions named for it since the changes were
        // last taken need not be named again (walking them all at each switch of version
        // would be quadratic).
        for i in self.version_changes_named..self.sessions.len() {
            let sid = self.sessions[i].id.clone();
            self.change(&sid, "session", "protocolVersion");
        }
        self.version_changes_named = self.sessions.len();
    }

    fn apply_message(&mut self, msg: &JsonValue<'_>) {
        let JsonValue::Object(m) = msg else {
            self.error(None, "invalid message: not a JSON object".to_owned());
            return;
        };
        let m: &Members<'_> = m;
        if let Some(method) = member(m, "method") {
            let JsonValue::Str(method) = method else {
                self.error(None, "invalid message: method must be a string".to_owned());
                return;
            };
            let id = member(m, "id");
            let params = member(m, "params");
            self.request(method, id, params);
        } else if let Some(id) = member(m, "id") {
            if member(m, "result").is_some() && member(m, "error").is_some() {
                // JSON-RPC: a response has one or the other; which one holds is not known.
                self.error(
                    None,
                    "invalid message: a response has both result and error".to_owned(),
                );
            } else if let Some(result) = member(m, "result") {
                self.response(id, Some(result), None);
            } else if let Some(error) = member(m, "error") {
                self.response(id, None, Some(error));
            } else {
                self.error(
                    None,
                    "invalid message: no method, result or error".to_owned(),
                );
            }
        } else {
            self.error(
                None,
                "invalid message: no method, result or error".to_owned(),
            );
        }
    }

    /// The `sessionId` of a request's params, or an error record naming `method`.
    fn params_session<'a>(
        &mut self,
        method: &str,
        params: Option<&'a JsonValue<'_>>,
    ) -> Option<&'a str> {
        let Some(JsonValue::Object(p)) = params else {
            self.error(None, format!("{method}: params must be an object"));
            return None;
        };
        let sid = as_str(member(p, "sessionId"));
        if sid.is_none() {
            self.error(None, format!("{method}: sessionId must be a string"));
        }
        sid
    }

    /// Remember request `id` of `method` until its response. `side` is the sender the
    /// method implies, unless the caller named the sender.
    fn track(&mut self, side: Side, id: Option<&JsonValue<'_>>, method: &str, what: Pending) {
        if let Some(key) = id.and_then(id_key) {
            let side = self.sender.unwrap_or(side);
            let keys = response_keys(method, self.mode());
            self.pending.insert(side, key, what, keys);
        }
    }

    /// A notification sent with an id (`session/update`, `session/cancel`) by `side`: tracked
    /// only while the other side has a request of that id pending, whose response the
    /// notification's own could otherwise take (nothing answers one as a rule, and untracked
    /// it cannot push real requests out of the pending table).
    fn track_if_contested(&mut self, side: Side, id: Option<&JsonValue<'_>>, method: &str) {
        let side = self.sender.unwrap_or(side);
        if let Some(key) = id.and_then(id_key)
            && self.pending.expects(side.other(), &key).is_some()
        {
            self.track(side, id, method, Pending::Other);
        }
    }

    /// A `session/prompt` request: the user's turn.
    fn prompt(&mut self, id: Option<&JsonValue<'_>>, params: Option<&JsonValue<'_>>) {
        let method = "session/prompt";
        let Some(sid) = self.params_session(method, params) else {
            // Refused, yet its response is still this request's.
            self.track(Side::Client, id, method, Pending::Other);
            return;
        };
        let entry = request_entry(id, params);
        let mode = self.mode();
        let s = self.session(sid);
        s.prompts.push(entry);
        let index = s.prompts.len() - 1;
        if mode != Mode::V2 || s.turn.is_none() {
            s.turn = Some(Turn {
                start: index,
                refused: 0,
                cancelled_to: index,
            });
        }
        // The user's turn: v1 chunks without an id that follow start a new message.
        s.current = None;
        if mode != Mode::V2 {
            s.state = Some("running".to_owned());
            let stopped = s.stop_reason.take().is_some();
            self.change(sid, "session", "state");
            if stopped {
                self.change(sid, "session", "stopReason");
            }
        }
        self.change(sid, "session", "prompts");
        self.check_request(sid, method, params);
        self.track(
            Side::Client,
            id,
            method,
            Pending::Prompt(sid.to_owned(), index, mode),
        );
    }

    /// An error record for each member a `session/prompt` or `session/request_permission`
    /// request must have and lacks (its schema's required params, of the version in use);
    /// the request is kept as it came, and its answer is still awaited.
    fn check_request(&mut self, sid: &str, method: &str, params: Option<&JsonValue<'_>>) {
        let Some(JsonValue::Object(p)) = params else {
            return;
        };
        let array = |v: Option<&JsonValue<'_>>| matches!(v, Some(JsonValue::Array(_)));
        let mut missing: Vec<&str> = Vec::new();
        if method == "session/prompt" {
            if !array(member(p, "prompt")) {
                missing.push("params.prompt must be an array");
            }
        } else {
            match self.mode() {
                Mode::V1 if !matches!(member(p, "toolCall"), Some(JsonValue::Object(_))) => {
                    missing.push("params.toolCall must be an object");
                }
                Mode::V2 if as_str(member(p, "title")).is_none() => {
                    missing.push("params.title must be a string");
                }
                _ => {}
            }
            if !array(member(p, "options")) {
                missing.push("params.options must be an array");
            }
        }
        for what in missing {
            self.error(Some(sid), format!("{method}: {what}"));
        }
    }

    fn request(
        &mut self,
        method: &str,
        id: Option<&JsonValue<'_>>,
        params: Option<&JsonValue<'_>>,
    ) {
        match method {
            "session/update" => {
                self.track_if_contested(Side::Agent, id, method);
                self.session_update(params);
            }
            "session/prompt" => self.prompt(id, params),
            "session/request_permission" => {
                let Some(sid) = self.params_session(method, params) else {
                    self.track(Side::Agent, id, method, Pending::Other);
                    return;
                };
                let entry = request_entry(id, params);
                let s = self.session(sid);
                s.permissions.push(entry);
                let index = s.permissions.len() - 1;
                self.change(sid, "session", "permissions");
                self.check_request(sid, method, params);
                self.track(
                    Side::Agent,
                    id,
                    method,
                    Pending::Permission(sid.to_owned(), index),
                );
            }
            "session/cancel" => {
                self.track_if_contested(Side::Client, id, method);
                let Some(sid) = self.params_session(method, params) else {
                    return;
                };
                let s = self.session(sid);
                // Only an ongoing turn can be cancelled, and in it only the prompts not
                // answered with an error: a finished one stays as it was.
                if let Some(turn) = &mut s.turn {
                    // Each prompt once, however many cancels a turn sees.
                    for prompt in &mut s.prompts[turn.cancelled_to..] {
                        if prompt.get("error").is_none() {
                            prompt.set("cancelRequested", Json::Bool(true));
                        }
                    }
                    turn.cancelled_to = s.prompts.len();
                    self.change(sid, "session", "prompts");
                }
            }
            "initialize" => {
                if let Some(JsonValue::Object(p)) = params {
                    self.set_version("params", member(p, "protocolVersion"));
                }
                self.track(Side::Client, id, method, Pending::Initialize);
            }
            "session/new" | "session/fork" => {
                self.track(
                    Side::Client,
                    id,
                    method,
                    Pending::NewSession(method.to_owned()),
                );
            }
            "session/load" | "session/resume" => {
                let Some(sid) = self.params_session(method, params) else {
                    self.track(Side::Client, id, method, Pending::Other);
                    return;
                };
                self.session(sid);
                self.track(
                    Side::Client,
                    id,
                    method,
                    Pending::LoadSession(sid.to_owned(), method.to_owned()),
                );
            }
            "session/set_mode" => {
                let what = set_mode_request(params);
                self.track(Side::Client, id, method, what);
            }
            "session/set_config_option" => {
                // A request without a session id is still tracked, as any other.
                let what = match params {
                    Some(JsonValue::Object(p)) => as_str(member(p, "sessionId"))
                        .map_or(Pending::Other, |sid| {
                            Pending::LoadSession(sid.to_owned(), method.to_owned())
                        }),
                    _ => Pending::Other,
                };
                self.track(Side::Client, id, method, what);
            }
            _ => {
                let client = AGENT_METHODS.contains(&method);
                let agent = CLIENT_METHODS.contains(&method);
                if client && !agent {
                    self.track(Side::Client, id, method, Pending::Other);
                } else if agent && !client {
                    self.track(Side::Agent, id, method, Pending::Other);
                } else if let Some(sender) = self.sender {
                    // A method of either side or none: tracked when the caller names the sender.
                    self.track(sender, id, method, Pending::Other);
                }
            }
        }
    }

    /// Which side's pending request `key` a response with `result` answers, if any.
    fn answered_side(&self, key: &str, result: Option<&JsonValue<'_>>) -> Option<Side> {
        if let Some(sender) = self.sender {
            // A response answers a request of the other side.
            return Some(sender.other());
        }
        let client = self.pending.expects(Side::Client, key);
        let agent = self.pending.expects(Side::Agent, key);
        let (client, agent) = match (client, agent) {
            (None, None) => return None,
            (Some(_), None) => return Some(Side::Client),
            (None, Some(_)) => return Some(Side::Agent),
            (Some(client), Some(agent)) => (client, agent),
        };
        let fits = |keys: &[&str]| match result {
            Some(JsonValue::Object(r)) => keys.iter().all(|k| member(r, k).is_some()),
            _ => false,
        };
        let (client_fits, agent_fits) = (fits(client), fits(agent));
        // A type that requires keys the result has tells more than one that requires none
        // (which any result fits).
        let named = |fit: bool, keys: &[&str]| fit && !keys.is_empty();
        Some(
            match (named(client_fits, client), named(agent_fits, agent)) {
                (true, false) => Side::Client,
                (false, true) => Side::Agent,
                _ => match (client_fits, agent_fits) {
                    (true, false) => Side::Client,
                    (false, true) => Side::Agent,
                    _ => match result {
                        Some(JsonValue::Object(r)) if member(r, "outcome").is_some() => Side::Agent,
                        _ => Side::Client,
                    },
                },
            },
        )
    }

    fn response(
        &mut self,
        id: &JsonValue<'_>,
        result: Option<&JsonValue<'_>>,
        error: Option<&JsonValue<'_>>,
    ) {
        let Some(key) = id_key(id) else {
            return;
        };
        let Some(side) = self.answered_side(&key, result) else {
            return;
        };
        let Some(what) = self.pending.take(side, &key) else {
            return;
        };
        match what {
            Pending::Initialize => {
                if let Some(JsonValue::Object(r)) = result {
                    self.set_version("result", member(r, "protocolVersion"));
                }
            }
            Pending::NewSession(method) => {
                if let Some(JsonValue::Object(r)) = result
                    && let Some(sid) = as_str(member(r, "sessionId"))
                {
                    self.session(sid);
                    self.session_setup(sid, &method, r);
                }
            }
            Pending::LoadSession(sid, method) => {
                if let Some(JsonValue::Object(r)) = result {
                    self.session_setup(&sid, &method, r);
                }
            }
            Pending::Prompt(sid, index, asked) => {
                self.prompt_answer(&sid, index, asked, result, error);
            }
            Pending::Permission(sid, index) => {
                let s = self.session(&sid);
                answer(&mut s.permissions[index], result, error);
                self.change(&sid, "session", "permissions");
            }
            Pending::SetMode(sid, mode) => {
                // v1 only, as `current_mode_update`: v2 has no modes.
                if result.is_some() && error.is_none() && self.mode() != Mode::V2 {
                    self.session(&sid).current_mode_id = Some(mode);
                    self.change(&sid, "session", "currentModeId");
                }
            }
            Pending::Other => {}
        }
    }

    /// The answer to prompt `index` of session `sid`, sent under the rules `asked`.
    fn prompt_answer(
        &mut self,
        sid: &str,
        index: usize,
        asked: Mode,
        result: Option<&JsonValue<'_>>,
        error: Option<&JsonValue<'_>>,
    ) {
        let r = match result {
            Some(JsonValue::Object(r)) => Some(r),
            _ => None,
        };
        let stop = r.and_then(|r| as_str(member(r, "stopReason")));
        // Sent before `initialize`, it is read by the rules in force now, and before
        // it by the result's shape: a `messageId` without a `stopReason` is a v2
        // acknowledgement.
        let mode = if asked == Mode::Unknown {
            self.mode()
        } else {
            asked
        };
        let v1 = match mode {
            Mode::V2 => false,
            Mode::V1 => true,
            Mode::Unknown => stop.is_some() || r.is_none_or(|r| member(r, "messageId").is_none()),
        };
        // v1: the result ends the turn with its stop reason; a result without one is
        // malformed, and ends the turn as an error response does.
        if v1 && stop.is_none() && result.is_some() {
            self.error(
                Some(sid),
                "session/prompt: result.stopReason must be a string".to_owned(),
            );
        }
        // v2: the acknowledgement names the user message it inserted, always (the
        // prompt lifecycle: "a required, non-null string"); recorded as it came.
        if !v1 && result.is_some() && r.and_then(|r| as_str(member(r, "messageId"))).is_none() {
            self.error(
                Some(sid),
                "session/prompt: result.messageId must be a string".to_owned(),
            );
        }
        let s = self.session(sid);
        answer(&mut s.prompts[index], result, error);
        // A v2 result only acknowledges the prompt: its turn ends with an idle update,
        // or once every prompt of it was refused with an error.
        let prompts = s.prompts.len();
        if let Some(turn) = &mut s.turn
            && error.is_some()
            && index >= turn.start
        {
            turn.refused += 1;
        }
        let ended = if v1 {
            index + 1 == prompts
        } else {
            s.turn
                .is_some_and(|turn| turn.refused == prompts - turn.start)
        };
        if ended {
            s.turn = None;
        }
        // v1: any answer ends the turn (a response carries a result or an error); the
        // answer to an earlier prompt than the last one ends no turn that is going on.
        if v1 && index + 1 == s.prompts.len() {
            s.state = Some("idle".to_owned());
            let stop = stop.map(str::to_owned);
            // Named when set, also to the value it had, or cleared.
            let moved = stop.is_some() || s.stop_reason.is_some();
            s.stop_reason = stop;
            self.change(sid, "session", "state");
            if moved {
                self.change(sid, "session", "stopReason");
            }
        }
        self.change(sid, "session", "prompts");
    }

    /// `configOptions` and `modes.currentModeId` of the result of session setup `method`
    /// (new, fork, load, resume, `set_config_option`), read as the schemas say: an option that
    /// cannot be read is left out, a field of the wrong type is ignored, each with an error
    /// record, as in a `config_option_update`.
    fn session_setup(&mut self, sid: &str, method: &str, r: &Members<'_>) {
        self.session(sid);
        let mode = self.mode();
        let mut notes = Vec::new();
        let options = match member(r, "configOptions") {
            Some(v @ JsonValue::Array(items)) => Some(
                match check::repair_config_options(method, items, mode, &mut notes) {
                    Some(kept) => Json::from_value(&JsonValue::Array(Arc::new(kept))),
                    None => Json::from_value(v),
                },
            ),
            None | Some(JsonValue::Null) => None,
            Some(_) => {
                notes.push(format!(
                    "{method}: result.configOptions must be an array or null (ignored)"
                ));
                None
            }
        };
        let mode_id = match member(r, "modes") {
            Some(JsonValue::Object(modes)) => {
                if let Some(JsonValue::Str(id)) = member(modes, "currentModeId") {
                    Some(id.to_string())
                } else {
                    notes.push(format!(
                        "{method}: result.modes.currentModeId must be a string (modes ignored)"
                    ));
                    None
                }
            }
            None | Some(JsonValue::Null) => None,
            Some(_) => {
                notes.push(format!(
                    "{method}: result.modes must be an object or null (ignored)"
                ));
                None
            }
        };
        for note in notes {
            self.error(Some(sid), note);
        }
        if let Some(options) = options {
            self.session(sid).config_options = Some(options);
            self.change(sid, "session", "configOptions");
        }
        if let Some(id) = mode_id {
            self.session(sid).current_mode_id = Some(id);
            self.change(sid, "session", "currentModeId");
        }
    }

    fn session_update(&mut self, params: Option<&JsonValue<'_>>) {
        let Some(sid) = self.params_session("session/update", params) else {
            return;
        };
        let Some(JsonValue::Object(p)) = params else {
            return;
        };
        let Some(raw @ JsonValue::Object(update)) = member(p, "update") else {
            self.error(
                Some(sid),
                "session/update: update must be an object".to_owned(),
            );
            return;
        };
        let Some(kind) = as_str(member(update, "sessionUpdate")) else {
            self.error(
                Some(sid),
                "session/update: sessionUpdate must be a string".to_owned(),
            );
            return;
        };
        let mode = self.mode();
        let known = match kind {
            k if V1_ONLY.contains(&k) => mode != Mode::V2,
            k if V2_ONLY.contains(&k) => mode != Mode::V1,
            _ => true,
        };
        // Create the session first so that it exists even when the update is rejected.
        self.session(sid);
        let repaired;
        let mut u: &Members<'_> = update;
        self.notes.clear();
        if known && check::field_error(kind, u, mode).is_some() {
            match check::repair(kind, u, mode) {
                Err(check::Refused(reason)) => {
                    self.error(Some(sid), reason);
                    return;
                }
                Ok((fixed, notes)) => {
                    self.notes = notes;
                    repaired = fixed;
                    u = &repaired;
                }
            }
        }
        match kind {
            "user_message_chunk" if known => self.chunk(sid, kind, Role::User, u),
            "agent_message_chunk" if known => self.chunk(sid, kind, Role::Agent, u),
            "agent_thought_chunk" if known => self.chunk(sid, kind, Role::Thought, u),
            "session_message_chunk" if known => self.chunk(sid, kind, Role::Session, u),
            "user_message" if known => self.upsert_message(sid, kind, Role::User, u),
            "agent_message" if known => self.upsert_message(sid, kind, Role::Agent, u),
            "agent_thought" if known => self.upsert_message(sid, kind, Role::Thought, u),
            "session_message" if known => self.upsert_message(sid, kind, Role::Session, u),
            "tool_call" if known => self.tool_call(sid, u, true),
            "tool_call_update" if known => self.tool_call(sid, u, false),
            "tool_call_content_chunk" if known => self.tool_call_chunk(sid, u),
            "terminal_update" if known => self.terminal_update(sid, u),
            "terminal_output_chunk" if known => self.terminal_chunk(sid, u),
            "plan" if known => self.plan_v1(sid, u),
            "plan_update" if known => self.plan_update(sid, u),
            "plan_removed" if known => self.plan_removed(sid, u),
            "available_commands_update" => self.replace(sid, kind, u, "availableCommands"),
            "config_option_update" => self.replace(sid, kind, u, "configOptions"),
            "current_mode_update" if known => self.replace(sid, kind, u, "currentModeId"),
            "session_info_update" => self.info(sid, u),
            "usage_update" => self.usage(sid, u),
            "state_update" if known => self.state(sid, u),
            "notice" => self.notice(sid, u),
            "compaction_update" => self.compaction(sid, u),
            "compaction_summary_chunk" => self.compaction_chunk(sid, u),
            "subagent_update" => self.subagent(sid, u),
            _ => self.other(sid, raw),
        }
        for note in std::mem::take(&mut self.notes) {
            self.error(Some(sid), note);
        }
    }

    fn other(&mut self, sid: &str, update: &JsonValue<'_>) {
        let s = self.session(sid);
        let index = s.other.len().to_string();
        s.other.push(Json::from_value(update));
        s.timeline.push(("other", index.clone(), None));
        self.change(sid, "other", &index);
    }

    /// Index of message (`role`, `id`), created (with a timeline entry) when new.
    fn message(&mut self, sid: &str, role: Role, id: &str) -> usize {
        let si = self.session_index(sid);
        self.message_in(si, role, id)
    }

    /// [`Reducer::message`] in the session at index `si`.
    fn message_in(&mut self, si: usize, role: Role, id: &str) -> usize {
        if let Some((s, r, i)) = self.last_message
            && s == si
            && r == role
            && self.sessions[si].messages[i].id == id
        {
            return i;
        }
        let s = &mut self.sessions[si];
        if let Some(slots) = s.message_index.get(id)
            && let Some(i) = slots[role.slot()]
        {
            self.last_message = Some((si, role, i));
            return i;
        }
        let i = s.add_message(id.to_owned(), role, false);
        self.last_message = Some((si, role, i));
        i
    }

    /// A new anonymous message of `role`: the next `~N` not already a real id of that role.
    fn anonymous_message(&mut self, sid: &str, role: Role) -> usize {
        let s = self.session(sid);
        let id = loop {
            s.anonymous += 1;
            let id = format!("~{}", s.anonymous);
            let taken = s
                .message_index
                .get(&id)
                .is_some_and(|slots| slots[role.slot()].is_some());
            if !taken {
                break id;
            }
        };
        s.add_message(id, role, true)
    }

    fn chunk(&mut self, sid: &str, kind: &str, role: Role, u: &Members<'_>) {
        let content = member(u, "content");
        if !is_object(content) {
            self.error(Some(sid), format!("{kind}: content must be an object"));
            return;
        }
        if !is_block(content) {
            self.error(Some(sid), format!("{kind}: content.type must be a string"));
            return;
        }
        let index = if let Some(id) = as_str(member(u, "messageId")) {
            self.message(sid, role, id)
        } else if role == Role::Session || self.mode() == Mode::V2 {
            self.error(Some(sid), format!("{kind}: messageId must be a string"));
            return;
        } else {
            let s = self.session(sid);
            match s.current {
                Some(i) if s.messages[i].role == role => i,
                _ => self.anonymous_message(sid, role),
            }
        };
        let s = self.session(sid);
        s.current = Some(index);
        let m = &mut s.messages[index];
        if role == Role::Session {
            set_participants(m.fields_mut(), u);
        }
        m.content
            .get_or_insert_with(Box::default)
            .push(content.expect("checked above"));
        let id = m.id.clone();
        self.change(sid, "message", &id);
    }

    fn upsert_message(&mut self, sid: &str, kind: &str, role: Role, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "messageId")) else {
            self.error(Some(sid), format!("{kind}: messageId must be a string"));
            return;
        };
        let index = self.message(sid, role, id);
        let s = self.session(sid);
        s.current = Some(index);
        let m = &mut s.messages[index];
        let mut ops = Vec::new();
        for (k, v) in dedup(u) {
            match k {
                // `id` and `role` name the message in the snapshot (its key): a field of
                // that name in an update is not kept, so it cannot pass for another message.
                "sessionUpdate" | "messageId" | "id" | "role" => {}
                "content" => match v {
                    JsonValue::Array(items) if items.is_empty() => m.content = None,
                    JsonValue::Array(items) => {
                        m.content = Some(Box::new(Content::from_values(items)));
                    }
                    JsonValue::Null => m.content = None,
                    _ => {}
                },
                "senderSessionId" | "recipientSessionId" if role == Role::Session => {
                    if !matches!(v, JsonValue::Null) {
                        ops.push((k, Some(Json::from_value(v))));
                    }
                }
                _ => ops.push(patch_op(k, v)),
            }
        }
        if !ops.is_empty() {
            m.fields_mut().apply(ops);
        }
        self.change(sid, "message", id);
    }

    fn tool_call(&mut self, sid: &str, u: &Members<'_>, create: bool) {
        let kind = if create {
            "tool_call"
        } else {
            "tool_call_update"
        };
        let Some(id) = as_str(member(u, "toolCallId")) else {
            self.error(Some(sid), format!("{kind}: toolCallId must be a string"));
            return;
        };
        if create && as_str(member(u, "title")).is_none() {
            self.error(Some(sid), "tool_call: title must be a string".to_owned());
            return;
        }
        let null_clears = self.mode() != Mode::V1;
        let s = self.session(sid);
        let (call, new) = s.tool_calls.entry(id, Fields::new);
        if create || new {
            call.clear();
            call.set("toolCallId", id.into());
        }
        let mut ops = Vec::new();
        for (k, v) in dedup(u) {
            match (k, v) {
                ("sessionUpdate" | "toolCallId", _) => {}
                (_, JsonValue::Null) if !null_clears => {}
                ("content" | "locations", JsonValue::Array(items)) if items.is_empty() => {
                    ops.push((k, None));
                }
                ("content" | "locations", JsonValue::Array(_) | JsonValue::Null) => {
                    ops.push(patch_op(k, v));
                }
                ("content" | "locations", _) => {}
                _ => ops.push(patch_op(k, v)),
            }
        }
        call.apply(ops);
        if new {
            s.timeline.push(("toolCall", id.to_owned(), None));
        }
        self.change(sid, "toolCall", id);
    }

    fn tool_call_chunk(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "toolCallId")) else {
            self.error(
                Some(sid),
                "tool_call_content_chunk: toolCallId must be a string".to_owned(),
            );
            return;
        };
        let Some(content @ JsonValue::Object(_)) = member(u, "content") else {
            self.error(
                Some(sid),
                "tool_call_content_chunk: content must be an object".to_owned(),
            );
            return;
        };
        if !is_block(Some(content)) {
            self.error(
                Some(sid),
                "tool_call_content_chunk: content.type must be a string".to_owned(),
            );
            return;
        }
        let s = self.session(sid);
        let (call, new) = s.tool_calls.entry(id, || {
            [("toolCallId".to_owned(), id.into())].into_iter().collect()
        });
        push_item(call, "content", Json::from_value(content));
        if new {
            s.timeline.push(("toolCall", id.to_owned(), None));
        }
        self.change(sid, "toolCall", id);
    }

    fn terminal_update(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "terminalId")) else {
            self.error(
                Some(sid),
                "terminal_update: terminalId must be a string".to_owned(),
            );
            return;
        };
        // The bytes to reset the terminal to (`null` resets it empty), if any. A snapshot that
        // is not base64 cannot be read: like any optional object that cannot, it is left out.
        let mut output: Option<Vec<u8>> = None;
        match member(u, "output") {
            Some(JsonValue::Null) => output = Some(Vec::new()),
            Some(JsonValue::Object(o)) => {
                if let Some(JsonValue::Str(data)) = member(o, "data") {
                    if let Ok(bytes) = decode_base64(data.as_bytes()) {
                        output = Some(bytes);
                    } else {
                        self.notes.push(
                            "terminal_update: output.data is not valid base64 (output ignored)"
                                .to_owned(),
                        );
                    }
                }
            }
            _ => {}
        }
        let sidx = self.session_index(sid);
        let entry = self.sessions[sidx].terminal_entry(id);
        let ops = dedup(u)
            .into_iter()
            .filter(|(k, _)| !matches!(*k, "sessionUpdate" | "terminalId" | "output"))
            .map(|(k, v)| patch_op(k, v))
            .collect();
        entry.fields.apply(ops);
        if let Some(output) = output {
            let held = {
                let mut term = lock(&entry.term);
                term.reset(&output);
                term.settle()
            };
            self.terminal_budget.written(entry, sidx, id, held);
            self.clear_past_terminal_bound();
        }
        self.change(sid, "terminal", id);
    }

    fn terminal_chunk(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "terminalId")) else {
            self.error(
                Some(sid),
                "terminal_output_chunk: terminalId must be a string".to_owned(),
            );
            return;
        };
        let Some(data) = as_str(member(u, "data")) else {
            self.error(
                Some(sid),
                "terminal_output_chunk: data must be a string".to_owned(),
            );
            return;
        };
        let Ok(bytes) = decode_base64(data.as_bytes()) else {
            self.error(
                Some(sid),
                "terminal_output_chunk: data is not valid base64".to_owned(),
            );
            return;
        };
        self.terminal_output(sid, id, &bytes);
    }

    /// Feed one decoded chunk of terminal output.
    fn terminal_output(&mut self, sid: &str, id: &str, bytes: &[u8]) {
        let sidx = self.session_index(sid);
        let entry = self.sessions[sidx].terminal_entry(id);
        let held = {
            let mut term = lock(&entry.term);
            term.feed(bytes);
            term.settle()
        };
        self.terminal_budget.written(entry, sidx, id, held);
        self.clear_past_terminal_bound();
        self.change(sid, "terminal", id);
    }

    /// Clears the terminals written least recently until what they all hold fits the
    /// store's bound (never the one written last: its own bounds hold it).
    fn clear_past_terminal_bound(&mut self) {
        loop {
            let budget = &mut self.terminal_budget;
            if budget.held <= budget.limit {
                break;
            }
            let Some(oldest) = budget.order.first_entry() else {
                break;
            };
            if *oldest.key() == budget.writes {
                break;
            }
            let (victim_index, victim_id) = oldest.remove();
            let session = &mut self.sessions[victim_index];
            let victim = session
                .terminals
                .get_mut(&victim_id)
                .expect("terminals are never removed");
            victim.written = 0;
            // One that holds nothing a clear would drop loses nothing: it is not cleared, nor
            // marked truncated. A clear keeps the links its pen and saved cursors carry.
            let mut term = lock(&victim.term);
            let kept = term.kept_bytes();
            if victim.held > kept {
                term.drop_retained();
                drop(term);
                budget.held -= victim.held - kept;
                victim.held = kept;
                let victim_session = session.id.clone();
                self.change(&victim_session, "terminal", &victim_id);
            }
        }
    }

    fn set_plan(&mut self, sid: &str, id: &str, plan: Obj) {
        let s = self.session(sid);
        let (slot, new) = s.plans.entry(id, Vec::new);
        *slot = plan;
        if new {
            s.plan_at.insert(id.to_owned(), s.timeline.len());
            s.timeline.push(("plan", id.to_owned(), None));
        }
        self.change(sid, "plan", id);
    }

    fn plan_v1(&mut self, sid: &str, u: &Members<'_>) {
        if !matches!(member(u, "entries"), Some(JsonValue::Array(_))) {
            self.error(Some(sid), "plan: entries must be an array".to_owned());
            return;
        }
        let mut plan = Fields::new();
        plan.set("type", "items".into());
        plan.set("planId", "main".into());
        // v1: null is omission.
        let fields = dedup(u)
            .into_iter()
            // `type` and `planId` are the synthetic plan's: fields of those names are not kept.
            .filter(|(k, v)| {
                !matches!(*k, "sessionUpdate" | "type" | "planId") && !matches!(v, JsonValue::Null)
            })
            .map(|(k, v)| (k, Some(Json::from_value(v))));
        plan.apply(fields.collect());
        self.set_plan(sid, "main", plan.into_obj());
    }

    fn plan_update(&mut self, sid: &str, u: &Members<'_>) {
        let Some(JsonValue::Object(plan)) = member(u, "plan") else {
            self.error(Some(sid), "plan_update: plan must be an object".to_owned());
            return;
        };
        let Some(id) = as_str(member(plan, "planId")) else {
            self.error(
                Some(sid),
                "plan_update: plan.planId must be a string".to_owned(),
            );
            return;
        };
        let Some(kind) = as_str(member(plan, "type")) else {
            self.error(
                Some(sid),
                "plan_update: plan.type must be a string".to_owned(),
            );
            return;
        };
        // The required field of each known plan type; other types are kept raw.
        let required = match kind {
            // Present with another type, `entries` reads as `[]` (`check::repair_plan`).
            "items" if member(plan, "entries").is_none() => {
                Some("plan_update: plan.entries must be an array")
            }
            "markdown" if as_str(member(plan, "content")).is_none() => {
                Some("plan_update: plan.content must be a string")
            }
            "file" if as_str(member(plan, "uri")).is_none() => {
                Some("plan_update: plan.uri must be a string")
            }
            _ => None,
        };
        if let Some(reason) = required {
            self.error(Some(sid), reason.to_owned());
            return;
        }
        let mut notes = std::mem::take(&mut self.notes);
        let repaired = if matches!(kind, "items" | "markdown" | "file") {
            check::repair_plan(plan, kind, self.mode(), &mut notes)
        } else {
            None
        };
        self.notes = notes;
        let plan = without(repaired.as_deref().unwrap_or(plan), &[]);
        self.set_plan(sid, id, plan);
        self.plan_extras(sid, "plan_update", u, &["sessionUpdate", "plan"]);
    }

    /// The update's own `_meta` and unknown fields (beside the plan or plan id) go to
    /// `updateExtras`, the last of each kind, as a session-level update's do.
    fn plan_extras(&mut self, sid: &str, kind: &str, u: &Members<'_>, skip: &[&str]) {
        if set_extras(&mut self.session(sid).update_extras, kind, u, skip) {
            self.change(sid, "session", "updateExtras");
        }
    }

    fn plan_removed(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "planId")) else {
            self.error(
                Some(sid),
                "plan_removed: planId must be a string".to_owned(),
            );
            return;
        };
        let s = self.session(sid);
        // Removing a plan that is not there changes nothing (and must not grow the change set).
        if s.plans.remove(id) {
            s.remove_plan_entry(id);
            self.change(sid, "plan", id);
        }
        self.plan_extras(sid, "plan_removed", u, &["sessionUpdate", "planId"]);
    }

    /// `available_commands_update`, `config_option_update`, `current_mode_update`: the named
    /// field replaces the stored one; the rest of the update goes to `updateExtras`.
    fn replace(&mut self, sid: &str, kind: &str, u: &Members<'_>, field: &'static str) {
        let value = member(u, field);
        let ok = match field {
            "currentModeId" => matches!(value, Some(JsonValue::Str(_))),
            _ => matches!(value, Some(JsonValue::Array(_))),
        };
        if !ok {
            let want = if field == "currentModeId" {
                "a string"
            } else {
                "an array"
            };
            self.error(Some(sid), format!("{kind}: {field} must be {want}"));
            return;
        }
        let value = Json::from_value(value.expect("checked above"));
        let s = self.session(sid);
        match field {
            "availableCommands" => s.available_commands = Some(value),
            "configOptions" => s.config_options = Some(value),
            _ => s.current_mode_id = value.as_str().map(str::to_owned),
        }
        let moved = set_extras(&mut s.update_extras, kind, u, &["sessionUpdate", field]);
        self.change(sid, "session", field);
        if moved {
            self.change(sid, "session", "updateExtras");
        }
    }

    fn info(&mut self, sid: &str, u: &Members<'_>) {
        let s = self.session(sid);
        let ops = dedup(u)
            .into_iter()
            .filter(|(k, _)| *k != "sessionUpdate")
            .map(|(k, v)| patch_op(k, v))
            .collect();
        s.info.apply(ops);
        self.change(sid, "session", "info");
    }

    fn usage(&mut self, sid: &str, u: &Members<'_>) {
        for field in ["used", "size"] {
            let value = member(u, field);
            if !is_non_negative_int(value) {
                self.error(
                    Some(sid),
                    format!("usage_update: {field} must be a non-negative integer"),
                );
                return;
            }
            // A uint64 in the schema.
            if let Some(JsonValue::BigInt(b)) = value
                && u64::try_from(b).is_err()
            {
                self.error(
                    Some(sid),
                    format!("usage_update: {field} must be below 2**64"),
                );
                return;
            }
        }
        let s = self.session(sid);
        s.usage = Some(without(u, &["sessionUpdate"]));
        self.change(sid, "session", "usage");
    }

    fn state(&mut self, sid: &str, u: &Members<'_>) {
        let Some(state) = as_str(member(u, "state")) else {
            self.error(Some(sid), "state_update: state must be a string".to_owned());
            return;
        };
        let s = self.session(sid);
        let stop = if state == "idle" {
            as_str(member(u, "stopReason")).map(str::to_owned)
        } else {
            None
        };
        // Named when set, also to the value it had, or cleared.
        let stopped = stop.is_some() || s.stop_reason.is_some();
        s.stop_reason = stop;
        s.state = Some(state.to_owned());
        if state == "idle" {
            s.turn = None;
        }
        // `stopReason` is an idle state's; on another it is an unknown field, kept raw.
        let skip: &[&str] = if state == "idle" {
            &["sessionUpdate", "state", "stopReason"]
        } else {
            &["sessionUpdate", "state"]
        };
        let moved = set_extras(&mut s.update_extras, "state_update", u, skip);
        self.change(sid, "session", "state");
        if stopped {
            self.change(sid, "session", "stopReason");
        }
        if moved {
            self.change(sid, "session", "updateExtras");
        }
    }

    fn notice(&mut self, sid: &str, u: &Members<'_>) {
        if as_str(member(u, "severity")).is_none() {
            self.error(Some(sid), "notice: severity must be a string".to_owned());
            return;
        }
        if as_str(member(u, "title")).is_none_or(str::is_empty) {
            self.error(
                Some(sid),
                "notice: title must be a non-empty string".to_owned(),
            );
            return;
        }
        let s = self.session(sid);
        if s.notices.len() == MAX_NOTICES {
            s.notices.pop_front();
        }
        s.notices
            .push_back(Json::Object(without(u, &["sessionUpdate"])));
        self.change(sid, "session", "notices");
    }

    fn compaction_entry(&mut self, sid: &str, id: &str) -> &mut Fields {
        let s = self.session(sid);
        let (_, new) = s.compactions.entry(id, || {
            [("compactionId".to_owned(), id.into())]
                .into_iter()
                .collect()
        });
        if new {
            s.timeline.push(("compaction", id.to_owned(), None));
        }
        s.compactions.get_mut(id).expect("created above")
    }

    fn compaction(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "compactionId")) else {
            self.error(
                Some(sid),
                "compaction_update: compactionId must be a string".to_owned(),
            );
            return;
        };
        if as_str(member(u, "status")).is_none() {
            self.error(
                Some(sid),
                "compaction_update: status must be a string".to_owned(),
            );
            return;
        }
        let c = self.compaction_entry(sid, id);
        let mut ops = Vec::new();
        for (k, v) in dedup(u) {
            match (k, v) {
                ("summary", JsonValue::Array(items)) if items.is_empty() => ops.push((k, None)),
                ("summary", JsonValue::Array(_) | JsonValue::Null) => ops.push(patch_op(k, v)),
                ("sessionUpdate" | "compactionId" | "summary", _) => {}
                _ => ops.push(patch_op(k, v)),
            }
        }
        c.apply(ops);
        self.change(sid, "compaction", id);
    }

    fn compaction_chunk(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "compactionId")) else {
            self.error(
                Some(sid),
                "compaction_summary_chunk: compactionId must be a string".to_owned(),
            );
            return;
        };
        let Some(content @ JsonValue::Object(_)) = member(u, "content") else {
            self.error(
                Some(sid),
                "compaction_summary_chunk: content must be an object".to_owned(),
            );
            return;
        };
        let c = self.compaction_entry(sid, id);
        push_item(c, "summary", Json::from_value(content));
        self.change(sid, "compaction", id);
    }

    fn subagent(&mut self, sid: &str, u: &Members<'_>) {
        let id = as_str(member(u, "subagentSessionId")).or_else(|| as_str(member(u, "sessionId")));
        let Some(id) = id else {
            self.error(
                Some(sid),
                "subagent_update: subagentSessionId must be a string".to_owned(),
            );
            return;
        };
        let null_clears = self.mode() != Mode::V1;
        let s = self.session(sid);
        let (entry, _) = s.subagents.entry(id, Fields::new);
        let ops = dedup(u)
            .into_iter()
            .filter(|(k, v)| {
                *k != "sessionUpdate" && (null_clears || !matches!(v, JsonValue::Null))
            })
            .map(|(k, v)| patch_op(k, v))
            .collect();
        entry.apply(ops);
        self.change(sid, "subagent", id);
    }
}

/// Append `item` to the array field `key` in place (creating it; a non-array is replaced).
fn push_item(fields: &mut Fields, key: &str, item: Json) {
    match fields.get_mut(key) {
        Some(Json::Array(items)) => items.push(item),
        _ => fields.set(key, Json::Array(vec![item])),
    }
}

/// The participants of a session message: a concrete id sets it, omitted or null keeps it.
fn set_participants(fields: &mut Fields, u: &Members<'_>) {
    for key in ["senderSessionId", "recipientSessionId"] {
        match member(u, key) {
            None | Some(JsonValue::Null) => {}
            Some(v) => fields.set(key, Json::from_value(v)),
        }
    }
}

/// The members of `u` except `skip` and those that are `null` (a field cleared is absent),
/// as an owned object.
fn without(u: &Members<'_>, skip: &[&str]) -> Obj {
    dedup(u)
        .into_iter()
        .filter(|(k, v)| !skip.contains(k) && !matches!(v, JsonValue::Null))
        .map(|(k, v)| (k.to_owned(), Json::from_value(v)))
        .collect()
}

/// Store the rest of update `u` as `extras[kind]`; returns whether `updateExtras` was
/// touched (it had or now has an entry for `kind`), as any entity touched is a change.
fn set_extras(extras: &mut Obj, kind: &str, u: &Members<'_>, skip: &[&str]) -> bool {
    let rest = without(u, skip);
    if rest.is_empty() {
        let had = obj_get(extras, kind).is_some();
        obj_remove(extras, kind);
        had
    } else {
        obj_set(extras, kind, Json::Object(rest));
        true
    }
}

/// Whether `v` is a content block: an object with a string `type`.
fn is_block(v: Option<&JsonValue<'_>>) -> bool {
    match v {
        Some(JsonValue::Object(o)) => as_str(member(o, "type")).is_some(),
        _ => false,
    }
}

/// Keys of a prompt or permission entry that the reducer sets: params of those names are not
/// kept, so that an unanswered request cannot pass for an answered one.
const ENTRY_KEYS: [&str; 5] = [
    "sessionId",
    "requestId",
    "response",
    "error",
    "cancelRequested",
];

/// A prompt or permission entry: `requestId` then the params other than [`ENTRY_KEYS`].
fn request_entry(id: Option<&JsonValue<'_>>, params: Option<&JsonValue<'_>>) -> Fields {
    let mut entry = Fields::new();
    entry.set("requestId", id.map_or(Json::Null, Json::from_value));
    if let Some(JsonValue::Object(p)) = params {
        let fields = dedup(p)
            .into_iter()
            .filter(|(k, _)| !ENTRY_KEYS.contains(k))
            .map(|(k, v)| (k, Some(Json::from_value(v))));
        entry.apply(fields.collect());
    }
    entry
}

fn answer(entry: &mut Fields, result: Option<&JsonValue<'_>>, error: Option<&JsonValue<'_>>) {
    if let Some(r) = result {
        entry.set("response", Json::from_value(r));
    } else if let Some(e) = error {
        entry.set("error", Json::from_value(e));
    }
}

impl Reducer {
    /// The streaming hot path: a plain-text message chunk with a `messageId`, reduced without
    /// building a parse tree. Returns false, having changed nothing, for any other frame;
    /// when it returns true the effect is exactly that of the general path.
    fn fast_chunk(&mut self, bytes: &[u8]) -> bool {
        let mut decoded = std::mem::take(&mut self.decoded);
        let chunk = scan::text_chunk(bytes, &mut decoded);
        let found = chunk.is_some();
        if let Some(chunk) = chunk {
            self.apply_text_chunk(&chunk);
        }
        self.decoded = decoded;
        found
    }

    /// The terminal-output hot path (see [`scan::terminal_chunk`]): a heavy terminal session
    /// is mostly these frames, and their base64 is fed without building a parse tree. Returns
    /// false, having changed nothing, for any other frame, and where v1 rules make the variant
    /// unknown (the general path keeps it raw).
    fn fast_terminal_chunk(&mut self, bytes: &[u8]) -> bool {
        if self.mode() == Mode::V1 {
            return false;
        }
        let Some(chunk) = scan::terminal_chunk(bytes) else {
            return false;
        };
        // Invalid base64, or a string with escapes, is the general path's to record or decode.
        // Chunks are decoded into one reused buffer: no allocation per chunk.
        let mut output = std::mem::take(&mut self.pty_bytes);
        let valid = decode_base64_into(chunk.data, &mut output).is_ok();
        if valid {
            self.terminal_output(chunk.session_id, chunk.terminal_id, &output);
        }
        // Kept unless one huge chunk grew it: memory between chunks stays small.
        if output.capacity() <= MAX_KEPT_DECODED {
            self.pty_bytes = output;
        }
        valid
    }

    /// What `session_update` and `chunk` do with a plain-text chunk that has a `messageId`.
    fn apply_text_chunk(&mut self, chunk: &scan::TextChunk<'_>) {
        let si = self.session_index(chunk.session_id);
        let index = self.message_in(si, chunk.role, chunk.message_id);
        let s = &mut self.sessions[si];
        s.current = Some(index);
        s.messages[index]
            .content
            .get_or_insert_with(Box::default)
            .push_text(chunk.text);
        // Sessions and messages are never removed, so the indices name the same message
        // until the changes are taken.
        if self.message_changed != Some((si, index)) {
            self.change(chunk.session_id, "message", chunk.message_id);
            self.message_changed = Some((si, index));
        }
    }
}
