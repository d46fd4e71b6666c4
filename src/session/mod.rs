//! Session reduction: a stream of ACP JSON-RPC messages in, per-session UI state out.
//!
//! [`Sessions`] takes NDJSON bytes ([`Sessions::feed`]) or decoded messages
//! ([`Sessions::apply`]) of both directions and keeps, per `params.sessionId`, what a client
//! renders: prompt turns, messages, tool calls, terminals (live [`Terminal`]s, v2's and v1's
//! client terminals), plans, compactions, usage, session info, commands, config,
//! permissions, prompts, notices and unknown updates. Each frame is parsed once and reduced straight from the parse tree; streamed chunks are appended
//! in place, so a message built from a million chunks costs time linear in its bytes.
//!
//! The rules (protocol versions, patch fields, repairs, message keys, response matching) are
//! the behaviour contract in `docs/behaviour/sessions.md`; the pure-Python twin
//! (`python/acpwire/_pure/session/`) follows them one for one, and both give identical
//! snapshots, errors and changes. See [`Session::snapshot`] for the snapshot's shape.
//!
//! This module is the public API: the store, its configuration and its error records. The
//! work is done by:
//! - `reducer`: the `Reducer` state, and the dispatch of frames and JSON-RPC messages;
//! - `rpc`: requests awaiting responses, matching a response to its request, prompt turns;
//! - `turns`: the record of each prompt turn; `client_terminals`: v1's `terminal/*` requests;
//! - `updates`: the `session/update` variants, one file per entity family;
//! - `model` and `snapshot`: a session's state and its snapshot views;
//! - `check`: the field types of the known variants, and repairs of what does not fit;
//! - `tables`: the protocol tables, generated from `protocol/tables.json`;
//! - `json`, `fields`, `scan`: values, patched field sets and the byte fast paths.

mod budget;
#[cfg(test)]
mod cases;
mod check;
mod client_terminals;
mod content;
mod entity;
mod fields;
mod json;
mod model;
mod opaque;
mod reducer;
mod rpc;
mod scan;
mod snapshot;
// Generated (`scripts/gen_tables.py`), and checked against its source rather than formatted.
#[rustfmt::skip]
mod tables;
#[cfg(test)]
mod tests;
mod tool_call;
mod turns;
mod updates;
mod value;
pub use value::{Value, parse as decode};

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicI64;

// SipHash's DoS resistance buys nothing for per-connection ids and costs a visible share of
// reduction time; aHash is what jiter uses.
use foldhash::{HashMap, HashSet};

pub use json::Json;
pub(crate) use json::View;
pub use model::{Role, Session};
pub use rpc::Side;

use budget::Budget;
use model::TerminalBudget;
use reducer::Reducer;
use rpc::PendingMap;

use crate::framing::{self, Framer};
use crate::terminal::TerminalConfig;

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

/// Holes left in a timeline by removed plans before it is compacted: removal stays amortized
/// O(1) while holes never outnumber live entries by much.
const MAX_HOLES: usize = 32;

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
    /// What the store may retain, in cost bytes (see `docs/behaviour/sessions.md`, "The
    /// store's budget"): past it, the sessions changed least recently are evicted. `None`:
    /// no bound.
    pub max_bytes: Option<usize>,
    /// The cost past which an opaque value of an update or request is kept as a stub.
    pub max_payload_bytes: Option<usize>,
    /// The size past which a message keeps only its head and tail.
    pub max_message_bytes: Option<usize>,
}

/// The default [`SessionsConfig::max_terminal_bytes`]: four terminals at their own default
/// bound.
pub const DEFAULT_MAX_TERMINAL_BYTES: usize = 64 * 1024 * 1024;

/// The default [`SessionsConfig::max_bytes`].
pub const DEFAULT_MAX_BYTES: usize = 512 * 1024 * 1024;

/// The default [`SessionsConfig::max_payload_bytes`].
pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 64 * 1024 * 1024;

/// The default [`SessionsConfig::max_message_bytes`].
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

impl Default for SessionsConfig {
    fn default() -> Self {
        SessionsConfig {
            max_frame_bytes: framing::DEFAULT_MAX_FRAME_BYTES,
            terminal_cols: None,
            scrollback: 10_000,
            max_terminal_bytes: DEFAULT_MAX_TERMINAL_BYTES,
            max_bytes: Some(DEFAULT_MAX_BYTES),
            max_payload_bytes: Some(DEFAULT_MAX_PAYLOAD_BYTES),
            max_message_bytes: Some(DEFAULT_MAX_MESSAGE_BYTES),
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
/// Entity types: a message's by its role (`userMessage`, `agentMessage`, `thought`,
/// `sessionMessage`: see [`Role::change_kind`]), `toolCall`, `terminal`, `plan`,
/// `compaction`, `other` (id: its index in `other`), `subagent`, and `session` whose id names
/// the snapshot key that moved (`state`, `usage`, `info`, `prompts`, `turns`, `errors`, ...).
pub type Change = (Arc<str>, &'static str, Arc<str>);

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
                index: HashMap::default(),
                last_session: None,
                last_message: None,
                decoded: String::new(),
                pending: PendingMap::default(),
                errors: VecDeque::new(),
                errors_dropped: 0,
                error_session: None,
                notes: Vec::new(),
                changes: Vec::new(),
                change_index: hashbrown::HashTable::new(),
                change_hasher: foldhash::fast::RandomState::default(),
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
                budget: Budget::new(
                    config.max_bytes,
                    config.max_payload_bytes,
                    config.max_message_bytes,
                ),
                walk_payloads: false,
                serials: 0,
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

    /// The bytes of the frame buffers freed so far after frames of megabytes (see
    /// [`Framer::released_bytes`]).
    pub fn released_frame_bytes(&self) -> u64 {
        self.framer.released_bytes()
    }

    /// What the store retained at its last count and what was added since, in cost bytes,
    /// without counting again ([`Sessions::retained_bytes`] counts).
    pub fn approximate_bytes(&self) -> usize {
        self.r.budget.approximate()
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
    pub fn apply(&mut self, message: &Value<'_>) {
        self.apply_at(message, None, None);
    }

    /// [`Sessions::apply`] of a message sent by `sender`, when known: its response goes to
    /// the pending request of the other side (and a request is tracked as `sender`'s).
    pub fn apply_from(&mut self, message: &Value<'_>, sender: Option<Side>) {
        self.apply_at(message, sender, None);
    }

    /// [`Sessions::apply_from`] with error records placed at `pos` (line, offset), as for a
    /// message read from line `line` of a trace.
    pub fn apply_at(&mut self, message: &Value<'_>, sender: Option<Side>, pos: Option<(u64, u64)>) {
        self.r.pos = pos;
        self.r.sender = sender;
        self.r.budget.add_message(message);
        self.r.walk_payloads = self.r.budget.max_payload_bytes.is_some();
        self.r.apply_top(message);
        self.r.walk_payloads = false;
        self.r.sender = None;
        self.r.check_budget();
    }

    /// Record an error for a message that could not be applied at all (a frame that is not
    /// JSON, a message that cannot be read); nothing else changes.
    pub fn reject(&mut self, session_id: Option<&str>, reason: &str, pos: Option<(u64, u64)>) {
        self.r.pos = pos;
        self.r.error(session_id, reason.to_owned());
    }

    /// Session ids in first-seen order.
    pub fn ids(&self) -> Vec<String> {
        self.r.sessions.iter().map(|s| s.id.to_string()).collect()
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
        self.r.index.get(session_id).map(|&i| &*self.r.sessions[i])
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

    /// What the store retains, in cost bytes: its sessions and pending changes (see
    /// `docs/behaviour/sessions.md`, "Cost"). Costs the sessions changed since the last count;
    /// evicts nothing.
    pub fn retained_bytes(&mut self) -> usize {
        self.r.retained()
    }

    /// Sessions evicted so far to keep the store within `max_bytes`.
    pub fn evicted_sessions(&self) -> u64 {
        self.r.budget.evicted
    }

    /// Errors dropped because more than [`MAX_ERRORS`] were waiting.
    pub fn errors_dropped(&self) -> u64 {
        self.r.errors_dropped
    }

    /// Everything changed since the last call, deduplicated, in first-change order.
    pub fn take_changes(&mut self) -> Vec<Change> {
        self.r.change_index.clear();
        self.r.budget.changes_cost = 0;
        self.r.budget.evictions_named = 0;
        self.r.version_changes_named = 0;
        self.r.message_changed = None;
        std::mem::take(&mut self.r.changes)
    }
}
