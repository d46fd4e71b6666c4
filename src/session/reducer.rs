//! The [`Reducer`]: everything a store holds but its framer, and the dispatch of frames
//! (the byte fast paths first, then the parse tree) and of JSON-RPC messages.

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::AtomicI64;

use crate::session::value::Value;

use super::budget::{Budget, SESSION_ESTIMATE, change_cost};
use super::json::{Members, member};
use super::model::{Role, Session, TerminalBudget};
use super::rpc::{Mode, PendingMap, Side, mode_of};
use super::{Change, ErrorRecord, HashMap, MAX_ERRORS, MAX_SESSION_ERRORS};
use crate::framing::{self, Event};
use crate::terminal::TerminalConfig;

/// Everything but the framer, so frames can be reduced while the framer is borrowed.
pub(super) struct Reducer {
    pub(super) terminal_config: TerminalConfig,
    pub(super) version: Option<i64>,
    /// Sessions in first-seen order, and their index by id.
    /// Boxed: a session is large, and a vector of them would hold up to twice as many.
    #[allow(clippy::vec_box)] // 8 bytes a slot; a vector's spare capacity of sessions is not
    pub(super) sessions: Vec<Box<Session>>,
    pub(super) index: HashMap<Arc<str>, usize>,
    /// The session and message touched last: streams hit them again and again.
    pub(super) last_session: Option<usize>,
    pub(super) last_message: Option<(usize, Role, usize)>,
    /// Where the hot path decodes text with escapes, reused from frame to frame.
    pub(super) decoded: String,
    pub(super) pending: PendingMap,
    pub(super) errors: VecDeque<ErrorRecord>,
    pub(super) errors_dropped: u64,
    /// The session id of the last error record, shared with the next of that session.
    pub(super) error_session: Option<Arc<str>>,
    /// Error records for the parts of the update being applied that were left out: recorded
    /// once its handler has applied it, dropped if the handler refuses it (its one record).
    pub(super) notes: Vec<String>,
    pub(super) changes: Vec<Change>,
    /// `changes` by value, as indices into it: a set of the changes themselves would hold
    /// each twice.
    pub(super) change_index: hashbrown::HashTable<(u64, usize)>,
    pub(super) change_hasher: foldhash::fast::RandomState,
    /// (session index, message index) of a message whose change is already in `changes`, so
    /// the hot path can skip [`Reducer::change`]. Cleared when the changes are taken.
    pub(super) message_changed: Option<(usize, usize)>,
    /// (line, offset) of the frame being reduced.
    pub(super) pos: Option<(u64, u64)>,
    /// Who sent the message being applied, when the caller knows.
    pub(super) sender: Option<Side>,
    /// The buffer terminal output chunks are decoded into (see `fast_terminal_chunk`).
    pub(super) pty_bytes: Vec<u8>,
    pub(super) terminal_budget: TerminalBudget,
    /// `version`, as every session reads it ([`NO_VERSION`] until `initialize`).
    pub(super) shared_version: Arc<AtomicI64>,
    /// The first sessions (by index) whose version change is in `changes` already.
    pub(super) version_changes_named: usize,
    pub(super) budget: Budget,
    /// Whether the message being applied may hold a payload over `max_payload_bytes`.
    pub(super) walk_payloads: bool,
    /// Sessions made so far.
    pub(super) serials: u64,
}

fn change_hash(hasher: &foldhash::fast::RandomState, (sid, kind, id): &Change) -> u64 {
    hasher.hash_one((&**sid, *kind, &**id))
}

impl Reducer {
    pub(super) fn on_event(&mut self, event: Event<'_>) {
        match event {
            Event::Frame(frame) => {
                self.pos = Some((frame.line, frame.offset));
                self.walk_payloads = self.budget.walks(frame.bytes.len());
                // A frame that may hold a payload over its bound takes the general path,
                // where payloads are stubbed.
                let fast = !self.walk_payloads
                    && (self.fast_chunk(frame.bytes) || self.fast_terminal_chunk(frame.bytes));
                // Only a frame that is JSON counts into the estimate.
                if fast || self.reduce_frame(frame.bytes, frame.line, frame.offset) {
                    self.budget.add_frame(frame.bytes.len());
                }
                self.walk_payloads = false;
                self.check_budget();
            }
            Event::Error(e) => {
                self.pos = Some((e.line, e.offset));
                self.error(None, e.kind.reason().to_owned());
            }
        }
    }

    /// A frame off the fast paths: a batch, one message, or not JSON.
    /// Returns whether the frame was JSON.
    fn reduce_frame(&mut self, bytes: &[u8], line: u64, offset: u64) -> bool {
        if framing::is_batch(bytes) {
            self.apply_batch_frame(bytes)
        } else if let Some(value) = super::value::parse(bytes) {
            self.apply_top(&value);
            true
        } else {
            let e = framing::diagnose(bytes, line, offset);
            self.error(None, e.kind.reason().to_owned());
            false
        }
    }

    /// A batch frame: checked whole (a frame that is not JSON applies no entry), then each entry
    /// decoded and applied in turn, so a frame of many small entries is never held decoded.
    fn apply_batch_frame(&mut self, frame: &[u8]) -> bool {
        match framing::check_batch(frame) {
            Ok(_) => {
                framing::for_each_entry(frame, |entry| {
                    // Checked already: every entry decodes.
                    if let Some(value) = super::value::parse(entry) {
                        self.apply_message(&value);
                    }
                });
                true
            }
            Err(kind) => {
                self.error(None, kind.reason().to_owned());
                // `[]` is JSON all the same.
                kind == framing::FrameErrorKind::EmptyBatch
            }
        }
    }

    /// A frame's value: a batch applies each entry in order; `[]` is an error.
    pub(super) fn apply_top(&mut self, value: &Value<'_>) {
        if let Value::Array(items) = value {
            if items.is_empty() {
                self.error(
                    None,
                    framing::FrameErrorKind::EmptyBatch.reason().to_owned(),
                );
                return;
            }
            for item in items {
                self.apply_message(item);
            }
        } else {
            self.apply_message(value);
        }
    }

    pub(super) fn error(&mut self, session_id: Option<&str>, reason: String) {
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

    pub(super) fn change(&mut self, sid: &str, kind: &'static str, id: &str) {
        self.record_change(sid, kind, id, None);
    }

    /// [`Reducer::change`] of an entity whose id is already shared (a message's): the record
    /// takes a reference to it rather than a copy.
    pub(super) fn change_shared(&mut self, sid: &str, kind: &'static str, id: &Arc<str>) {
        self.record_change(sid, kind, id, Some(id));
    }

    fn record_change(
        &mut self,
        sid: &str,
        kind: &'static str,
        id: &str,
        shared: Option<&Arc<str>>,
    ) {
        self.touch_named(sid);
        // Streams repeat the same entity; compare with the last change before hashing.
        if let Some((s, k, i)) = self.changes.last()
            && *k == kind
            && **i == *id
            && **s == *sid
        {
            return;
        }
        let hash = self.change_hasher.hash_one((sid, kind, id));
        let changes = &self.changes;
        let known = self.change_index.find(hash, |&(h, i)| {
            let (s, k, x) = &changes[i];
            h == hash && *k == kind && **x == *id && **s == *sid
        });
        if known.is_none() {
            self.budget.changes_cost += change_cost(sid, id);
            // The session touched is nearly always the one named: its id is shared.
            let sid = match self.budget.last_changed {
                Some(i) if *self.sessions[i].id == *sid => Arc::clone(&self.sessions[i].id),
                _ => Arc::from(sid),
            };
            let id = shared.map_or_else(|| Arc::from(id), Arc::clone);
            self.changes.push((sid, kind, id));
            // Each entry keeps its hash, so that growing the table hashes nothing again.
            self.change_index
                .insert_unique(hash, (hash, self.changes.len() - 1), |&(h, _)| h);
        }
    }

    /// Index `changes` again, after entries were removed.
    pub(super) fn reindex_changes(&mut self) {
        self.change_index.clear();
        for (i, c) in self.changes.iter().enumerate() {
            let hash = change_hash(&self.change_hasher, c);
            self.change_index
                .insert_unique(hash, (hash, i), |&(h, _)| h);
        }
    }

    /// The index of session `sid`, created on first sight.
    pub(super) fn session_index(&mut self, sid: &str) -> usize {
        if let Some(i) = self.last_session
            && *self.sessions[i].id == *sid
        {
            return i;
        }
        let i = if let Some(&i) = self.index.get(sid) {
            i
        } else {
            let i = self.sessions.len();
            self.serials += 1;
            let session = Session::new(
                sid,
                &self.shared_version,
                self.terminal_config,
                self.serials,
            );
            self.index.insert(Arc::clone(&session.id), i);
            self.sessions.push(Box::new(session));
            self.budget.add(SESSION_ESTIMATE);
            // Touched by index, so that `change` need not look the session up again.
            self.touch(i);
            self.change(sid, "session", "sessionId");
            i
        };
        self.last_session = Some(i);
        i
    }

    /// The session `sid`, created on first sight.
    pub(super) fn session(&mut self, sid: &str) -> &mut Session {
        let i = self.session_index(sid);
        &mut self.sessions[i]
    }

    pub(super) fn mode(&self) -> Mode {
        mode_of(self.version)
    }

    fn apply_message(&mut self, msg: &Value<'_>) {
        if self.walk_payloads
            && let Some(stubbed) = self.stub_payloads(msg)
        {
            self.reduce_message(&stubbed);
        } else {
            self.reduce_message(msg);
        }
    }

    fn reduce_message(&mut self, msg: &Value<'_>) {
        let Value::Object(m) = msg else {
            self.error(None, "invalid message: not a JSON object".to_owned());
            return;
        };
        let m: &Members<'_> = m;
        if let Some(method) = member(m, "method") {
            let Value::Str(method) = method else {
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
}
