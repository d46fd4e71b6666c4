//! The state of one session: [`Session`] and what it holds (messages and their content
//! blocks, terminal entries, the timeline), and the store-wide bound on terminal memory.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, LazyLock, Mutex};

use hashbrown::HashTable;

use super::content::Content;
use super::fields::{Fields, Keyed};
use super::json::{Json, Obj};
use super::rpc::Turn;
use super::tool_call::ToolCall;
use super::turns::TurnRecord;
use super::{ErrorRecord, HashMap, MAX_HOLES};
use crate::terminal::{Terminal, TerminalConfig};

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

    /// The entity type of a change to a message of this role (see [`super::Change`]):
    /// `userMessage`, `agentMessage`, `thought` or `sessionMessage`.
    pub fn change_kind(self) -> &'static str {
        match self {
            Role::User => "userMessage",
            Role::Agent => "agentMessage",
            Role::Thought => "thought",
            Role::Session => "sessionMessage",
        }
    }

    pub(super) fn slot(self) -> usize {
        self as usize
    }
}

const _: () = assert!(std::mem::size_of::<Message>() <= 64);
// A store may hold many thousands of sessions: see `Cold`.
const _: () = assert!(std::mem::size_of::<Session>() <= 512);

/// Messages up to this many are found by searching them; a session with more indexes them.
const SCAN_MESSAGES: usize = 8;

/// A session's messages by id and role, real ids and anonymous ones apart (a real id never
/// reaches an anonymous message spelled alike).
///
/// A table of message positions, hashed by the messages' own (id, role, anonymous): the index
/// keeps no copy of an id, so a new message costs no allocation here, and growing the table
/// moves four bytes per message.
#[derive(Default)]
pub(super) struct MessageIndex {
    at: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl MessageIndex {
    fn hash(&self, id: &str, role: Role, anonymous: bool) -> u64 {
        self.hasher.hash_one((id, role.slot(), anonymous))
    }

    /// Index message `at` of `messages` (already pushed).
    fn insert(&mut self, messages: &[Message], at: usize) {
        let m = &messages[at];
        let hash = self.hash(&m.id, m.role, m.anonymous);
        let hasher = &self.hasher;
        // Positions fit in u32: a session's messages are bounded by its store's budget long
        // before four billion.
        self.at
            .insert_unique(hash, u32::try_from(at).unwrap_or(u32::MAX), |&j| {
                let m = &messages[j as usize];
                hasher.hash_one((&*m.id, m.role.slot(), m.anonymous))
            });
    }

    fn get(&self, messages: &[Message], id: &str, role: Role, anonymous: bool) -> Option<usize> {
        let hash = self.hash(id, role, anonymous);
        self.at
            .find(hash, |&j| {
                let m = &messages[j as usize];
                m.role == role && m.anonymous == anonymous && *m.id == *id
            })
            .map(|&j| j as usize)
    }
}

#[derive(Clone, Debug)]
pub(super) struct Message {
    /// Shared with the message's timeline entry and change records (one allocation).
    pub(super) id: Arc<str>,
    pub(super) role: Role,
    /// An anonymous v1 message (`~N`), indexed apart from real ids.
    pub(super) anonymous: bool,
    /// Boxed to keep `Message` at 64 bytes: each session holds a growing list of them, and a
    /// larger element cost megabytes of resident memory on mixed streams.
    pub(super) content: Option<Box<Content>>,
    /// `_meta`, participants and unknown fields, in arrival order (boxed, and only once there
    /// are any: most messages have none).
    pub(super) fields: Option<Box<Fields>>,
}

impl Message {
    pub(super) fn fields_mut(&mut self) -> &mut Fields {
        self.fields.get_or_insert_with(Box::default)
    }
}

pub(super) struct TerminalEntry {
    pub(super) fields: Fields,
    pub(super) term: Arc<Mutex<Terminal>>,
    /// When the store last wrote to it (a [`TerminalBudget::writes`] count; 0: not since it
    /// was created or cleared), and what it held then.
    pub(super) written: u64,
    pub(super) held: usize,
    /// A v1 client terminal's last `terminal/output` said the client dropped output.
    pub(super) source_truncated: bool,
}

/// A terminal's lock, poisoned or not, as everywhere in the store.
pub(super) fn lock(term: &Mutex<Terminal>) -> std::sync::MutexGuard<'_, Terminal> {
    term.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The store-wide bound on what terminals hold ([`SessionsConfig::max_terminal_bytes`]).
#[derive(Default)]
pub(super) struct TerminalBudget {
    pub(super) limit: usize,
    /// What the terminals held when last written, together.
    pub(super) held: usize,
    /// Writes so far: the last one's count marks the terminal written last.
    pub(super) writes: u64,
    /// Terminals written since created or cleared, by when last written, least recent first:
    /// (session index, terminal id).
    pub(super) order: BTreeMap<u64, (usize, Box<str>)>,
}

impl TerminalBudget {
    /// Counts that `entry` (terminal `id` of session `sidx`), just written, holds `held` now,
    /// and makes it the one written last.
    pub(super) fn written(
        &mut self,
        entry: &mut TerminalEntry,
        sidx: usize,
        id: &str,
        held: usize,
    ) {
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

/// The parts of a session most sessions never use, boxed apart so that a session's own size
/// stays small: a store may hold many thousands.
#[derive(Default)]
pub(super) struct Cold {
    pub(super) terminals: Keyed<TerminalEntry>,
    pub(super) plans: Keyed<Obj>,
    pub(super) compactions: Keyed<Fields>,
    pub(super) subagents: Keyed<Fields>,
    pub(super) usage: Option<Obj>,
    pub(super) available_commands: Option<Json>,
    pub(super) config_options: Option<Json>,
    pub(super) current_mode_id: Option<String>,
    pub(super) update_extras: Obj,
    pub(super) permissions: Vec<Fields>,
    pub(super) notices: VecDeque<Json>,
    pub(super) other: Vec<Json>,
    /// Where each plan's entry is in `timeline`, so that removing a plan is O(1).
    pub(super) plan_at: HashMap<String, usize>,
}

/// The [`Cold`] part of a session that has none.
static NO_COLD: LazyLock<Cold> = LazyLock::new(Cold::default);

/// The reduced state of one session.
pub struct Session {
    /// Shared with the store's change records.
    pub(super) id: Arc<str>,
    /// The store's protocol version (every session has the one last negotiated), shared so
    /// that a change of version costs nothing per session ([`NO_VERSION`]: none yet).
    pub(super) protocol_version: Arc<AtomicI64>,
    pub(super) state: Option<String>,
    pub(super) stop_reason: Option<String>,
    pub(super) messages: Vec<Message>,
    /// messageId -> index in `messages`, per role.
    /// Set once there are more than [`SCAN_MESSAGES`] messages (fewer are searched).
    pub(super) message_index: Option<Box<MessageIndex>>,
    /// The message that v1 chunks without an id join.
    pub(super) current: Option<usize>,
    pub(super) anonymous: u64,
    pub(super) tool_calls: Keyed<ToolCall>,
    pub(super) info: Fields,
    pub(super) prompts: Vec<Fields>,
    /// The turn going on, if one is: until the last prompt's v1 response or error response,
    /// or (v2) an idle `state_update` or an error answer to each of its prompts. In v2 a
    /// prompt sent meanwhile joins the turn (the work it contributes to). Only an ongoing turn
    /// can be cancelled.
    pub(super) turn: Option<Turn>,
    /// Every prompt turn, in order (see [`TurnRecord`]).
    pub(super) turns: Vec<TurnRecord>,
    /// In first-seen order; a removed plan's or tool call's entry is [`EntryKind::Removed`].
    pub(super) timeline: Vec<TimelineEntry>,
    /// Entries of removed plans still in `timeline`.
    pub(super) timeline_holes: usize,
    /// Holes compacted out of `timeline`: with its length, the entries ever placed there.
    pub(super) timeline_dropped: usize,
    /// The message placed last and the count of entries placed once it was: while that count
    /// has not moved, the message is the timeline's last entry.
    pub(super) tail_message: Option<(usize, usize)>,
    pub(super) errors: VecDeque<ErrorRecord>,
    pub(super) terminal_config: TerminalConfig,
    /// Made `serial`-th in its store: a handle names the session, not a later one of its id.
    pub(super) serial: u64,
    /// Its cost when last counted, the change count when it last changed, and whether it
    /// changed since the last count (see `budget`).
    pub(super) cost: usize,
    pub(super) changed_at: u64,
    pub(super) dirty: bool,
    /// What most sessions never have, made on first use (see [`Cold`]).
    pub(super) cold: Option<Box<Cold>>,
}

/// What a timeline entry places: a byte beside its id, as a session may hold a million.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EntryKind {
    Message,
    ToolCall,
    Plan,
    Terminal,
    Compaction,
    Turn,
    Other,
    /// A removed plan's or tool call's entry, skipped by the snapshot until compacted out.
    Removed,
}

impl EntryKind {
    /// The entry's `type` in the snapshot.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            EntryKind::Message => "message",
            EntryKind::ToolCall => "toolCall",
            EntryKind::Plan => "plan",
            EntryKind::Terminal => "terminal",
            EntryKind::Compaction => "compaction",
            EntryKind::Turn => "turn",
            EntryKind::Other => "other",
            EntryKind::Removed => "",
        }
    }
}

/// One entry of a session's timeline, in first-seen order.
#[derive(Clone, Debug)]
pub(super) struct TimelineEntry {
    /// Shared with the entity's id where it keeps one: a message's, or its map's key.
    pub(super) id: Arc<str>,
    pub(super) kind: EntryKind,
    /// A message's role.
    pub(super) role: Option<Role>,
}

const _: () = assert!(std::mem::size_of::<TimelineEntry>() <= 24);

impl TimelineEntry {
    pub(super) fn new(kind: EntryKind, id: &str) -> TimelineEntry {
        TimelineEntry::shared(kind, Arc::from(id))
    }

    /// An entry for entity `id` of `kind`, just added to `map` (so its last entry): the
    /// entry shares the map's key.
    pub(super) fn of<T>(kind: EntryKind, map: &Keyed<T>, id: &str) -> TimelineEntry {
        match map.last_key() {
            Some(key) if *key == *id => TimelineEntry::shared(kind, key),
            _ => TimelineEntry::new(kind, id),
        }
    }

    fn shared(kind: EntryKind, id: Arc<str>) -> TimelineEntry {
        TimelineEntry {
            id,
            kind,
            role: None,
        }
    }

    pub(super) fn is_removed(&self) -> bool {
        self.kind == EntryKind::Removed
    }
}

/// For each index of `timeline` and its length, how many entries before it are not
/// removed: where an entry is once the removed ones are gone.
pub(super) fn kept_before(timeline: &[TimelineEntry]) -> Vec<usize> {
    let mut kept = 0;
    let mut out = Vec::with_capacity(timeline.len() + 1);
    for entry in timeline {
        out.push(kept);
        kept += usize::from(!entry.is_removed());
    }
    out.push(kept);
    out
}

impl Session {
    /// Appends an empty message `id` of `role`, indexed (apart when `anonymous`) and placed in
    /// the timeline; returns its index.
    pub(super) fn add_message(&mut self, id: Arc<str>, role: Role, anonymous: bool) -> usize {
        let i = self.messages.len();
        if self.timeline.is_empty() {
            // Most sessions hold a few entries: the first gets room for itself only.
            self.timeline.reserve_exact(1);
        }
        self.timeline.push(TimelineEntry {
            id: id.clone(),
            kind: EntryKind::Message,
            role: Some(role),
        });
        self.tail_message = Some((i, self.timeline_placed()));
        if i == 0 {
            self.messages.reserve_exact(1);
        }
        self.messages.push(Message {
            id,
            role,
            anonymous,
            content: None,
            fields: None,
        });
        if let Some(index) = &mut self.message_index {
            index.insert(&self.messages, i);
        } else if i == SCAN_MESSAGES {
            let mut index = Box::<MessageIndex>::default();
            for j in 0..=i {
                index.insert(&self.messages, j);
            }
            self.message_index = Some(index);
        }
        i
    }

    /// The index of message (`id`, `role`) among the real ids or, if `anonymous`, the
    /// anonymous ones.
    pub(super) fn find_message(&self, id: &str, role: Role, anonymous: bool) -> Option<usize> {
        match &self.message_index {
            Some(index) => index.get(&self.messages, id, role, anonymous),
            None => self
                .messages
                .iter()
                .rposition(|m| m.role == role && m.anonymous == anonymous && *m.id == *id),
        }
    }

    /// [`Session::find_message`] among real ids, then anonymous ones.
    pub(super) fn message_named(&self, id: &str, role: Role) -> Option<usize> {
        self.find_message(id, role, false)
            .or_else(|| self.find_message(id, role, true))
    }

    /// Entries ever placed in the timeline, the compacted holes of removed plans included.
    #[inline]
    fn timeline_placed(&self) -> usize {
        self.timeline_dropped + self.timeline.len()
    }

    /// Whether message `i` is still the timeline's last entry (nothing was placed after it).
    #[inline]
    pub(super) fn is_timeline_tail(&self, i: usize) -> bool {
        self.tail_message == Some((i, self.timeline_placed()))
    }

    /// Drop plan `id`'s timeline entry: it becomes a hole, and the holes are compacted once
    /// they outnumber the rest, so a stream of plan removals stays linear.
    pub(super) fn remove_plan_entry(&mut self, id: &str) {
        let Some(at) = self.cold.as_mut().and_then(|c| c.plan_at.remove(id)) else {
            return;
        };
        self.timeline[at].kind = EntryKind::Removed;
        self.timeline_holes += 1;
        if self.timeline_holes > MAX_HOLES && self.timeline_holes * 2 > self.timeline.len() {
            self.compact_timeline();
        }
    }

    /// Drop the holes of removed entries from `timeline`.
    fn compact_timeline(&mut self) {
        if !self.turns.is_empty() {
            self.remap_turns(&kept_before(&self.timeline));
        }
        self.timeline.retain(|entry| !entry.is_removed());
        self.timeline_dropped += self.timeline_holes;
        self.timeline_holes = 0;
        if let Some(cold) = self.cold.as_deref_mut()
            && !cold.plan_at.is_empty()
        {
            for (i, entry) in self.timeline.iter().enumerate() {
                if entry.kind == EntryKind::Plan {
                    cold.plan_at.insert(entry.id.to_string(), i);
                }
            }
        }
    }

    /// Remove tool calls `ids` and their timeline entries (see `budget`).
    pub(super) fn drop_tool_calls(&mut self, ids: &[String]) {
        let gone: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
        for id in ids {
            self.tool_calls.remove(id);
        }
        for entry in &mut self.timeline {
            if entry.kind == EntryKind::ToolCall && gone.contains(&*entry.id) {
                entry.kind = EntryKind::Removed;
                self.timeline_holes += 1;
            }
        }
        self.compact_timeline();
    }

    /// The terminal `id`, made (and placed on the timeline) on first sight, run by `source`:
    /// `"agent"` (v2 terminal updates) or `"client"` (v1 `terminal/create`).
    pub(super) fn terminal_entry(&mut self, id: &str, source: &str) -> &mut TerminalEntry {
        let config = self.terminal_config;
        let terminals = &mut self.cold.get_or_insert_with(Box::default).terminals;
        let (entry, new) = terminals.entry(id, || TerminalEntry {
            fields: [
                ("terminalId".to_owned(), id.into()),
                ("source".to_owned(), source.into()),
            ]
            .into_iter()
            .collect(),
            term: Arc::new(Mutex::new(Terminal::new(config))),
            written: 0,
            held: 0,
            source_truncated: false,
        });
        if new {
            self.timeline
                .push(TimelineEntry::new(EntryKind::Terminal, id));
        }
        entry
    }

    pub(super) fn new(
        id: &str,
        protocol_version: &Arc<AtomicI64>,
        terminal_config: TerminalConfig,
        serial: u64,
    ) -> Session {
        Session {
            id: Arc::from(id),
            protocol_version: Arc::clone(protocol_version),
            state: None,
            stop_reason: None,
            messages: Vec::new(),
            message_index: None,
            cold: None,
            current: None,
            anonymous: 0,
            tool_calls: Keyed::default(),
            info: Fields::new(),
            prompts: Vec::new(),
            turn: None,
            turns: Vec::new(),
            timeline: Vec::new(),
            timeline_holes: 0,
            timeline_dropped: 0,
            tail_message: None,
            errors: VecDeque::new(),
            terminal_config,
            serial,
            cost: 0,
            changed_at: 0,
            dirty: false,
        }
    }

    /// Which session of its store this is: a session made again under the id of an evicted
    /// one has another serial.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The parts most sessions never use (empty when never used).
    pub(super) fn cold(&self) -> &Cold {
        self.cold.as_deref().unwrap_or(&NO_COLD)
    }

    /// [`Session::cold`], made on first use.
    pub(super) fn cold_mut(&mut self) -> &mut Cold {
        self.cold.get_or_insert_with(Box::default)
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
        self.cold()
            .terminals
            .get(terminal_id)
            .map(|t| Arc::clone(&t.term))
    }

    /// The concatenated text blocks of message (`role`, `message_id`), or `None` when there is
    /// no such message. `role` is `"user"`, `"agent"`, `"thought"` or `"session"`.
    pub fn message_text(&self, message_id: &str, role: &str) -> Option<String> {
        let i = self.message_named(message_id, Role::parse(role)?)?;
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
}
