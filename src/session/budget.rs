//! The store's budget (`max_bytes`, `max_payload_bytes`): what retained state costs, the stubs
//! kept for payloads over their bound, and the eviction of the sessions changed least
//! recently. The rules are `docs/behaviour/sessions.md`, "The store's budget".

use std::borrow::Cow;
use std::sync::Arc;

use crate::session::value::Value;

use super::json::{Json, Members, View, dedup};
use super::reducer::Reducer;
use super::snapshot::tool_call_view;
use super::{ErrorRecord, HashMap, HashSet, MAX_ERRORS};

/// What a session costs besides its snapshot.
pub(super) const SESSION_COST: usize = 1024;
/// What the estimate adds for a session made: more than a count finds a new one costs
/// before its first message, which its frame's estimate covers.
pub(super) const SESSION_ESTIMATE: usize = 2 * 1024;
/// What a pending entry of `changes()` costs besides its ids.
pub(super) const CHANGE_COST: usize = 96;
/// What the estimate adds for each frame: this many times its length, plus [`FRAME_COST`].
const FRAME_FACTOR: usize = 4;
const FRAME_COST: usize = 256;
/// No value costs more than this many times its JSON text, so a frame shorter than
/// `max_payload_bytes / PAYLOAD_RATIO` has no member over that bound and is not walked.
const PAYLOAD_RATIO: usize = 64;

/// The updates whose text `content` is a message's, bounded by `max_message_bytes` instead.
const MESSAGE_CHUNKS: [&str; 4] = [
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "session_message_chunk",
];

/// Evictions named in `changes()` until the changes are taken: past it, an eviction is only an
/// error record and a count, so that a store whose changes are never taken stays bounded.
pub(super) const MAX_EVICTIONS_NAMED: usize = 1_000;

/// The cost table (`docs/behaviour/sessions.md`, "Cost"), which the frame decoder also counts
/// opaque values by.
pub(super) const SCALAR: usize = 8;
pub(super) const NUMBER: usize = 24;
pub(super) const STRING: usize = 48;
pub(super) const ARRAY: usize = 56;
pub(super) const ITEM: usize = 8;
pub(super) const OBJECT: usize = 64;
pub(super) const MEMBER: usize = 40;

fn string_cost(s: &str) -> usize {
    STRING + s.len()
}

/// The cost of a parsed value (repeated keys all counted: a bound, never an undercount).
pub(super) fn value_cost(v: &Value<'_>) -> usize {
    match v {
        Value::Null | Value::Bool(_) => SCALAR,
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) => NUMBER,
        Value::Str(s) => string_cost(s),
        Value::Array(items) => items.iter().fold(ARRAY, |sum, item| {
            sum.saturating_add(ITEM + value_cost(item))
        }),
        Value::Object(members) => members_cost(members),
        Value::Raw(raw) => raw.cost,
    }
}

fn members_cost(members: &Members<'_>) -> usize {
    members.iter().fold(OBJECT, |sum, (k, v)| {
        sum.saturating_add(MEMBER + string_cost(k) + value_cost(v))
    })
}

/// The cost of a stored value.
pub(super) fn json_cost(v: &Json) -> usize {
    match v {
        Json::Null | Json::Bool(_) => SCALAR,
        Json::Int(_) | Json::BigInt(_) | Json::Float(_) => NUMBER,
        Json::Str(s) => string_cost(s),
        Json::Array(items) => items.iter().fold(ARRAY, |sum, item| {
            sum.saturating_add(ITEM + json_cost(item))
        }),
        Json::Object(members) => members.iter().fold(OBJECT, |sum, (k, v)| {
            sum.saturating_add(MEMBER + string_cost(k) + json_cost(v))
        }),
        Json::Raw(raw) => raw.cost,
    }
}

/// The cost of a snapshot view.
pub(super) fn view_cost(v: &View<'_>) -> usize {
    match v {
        View::Json(json) => json_cost(json),
        View::Owned(json) => json_cost(json),
        View::Str(s) => string_cost(s),
        View::Array(items) => items.iter().fold(ARRAY, |sum, item| {
            sum.saturating_add(ITEM + view_cost(item))
        }),
        View::Object(members) => members.iter().fold(OBJECT, |sum, (k, v)| {
            sum.saturating_add(MEMBER + string_cost(k) + view_cost(v))
        }),
    }
}

/// Whether `v` is `null`, `[]` or `{}`: the members of a session's snapshot that cost nothing.
pub(super) fn is_empty(v: &View<'_>) -> bool {
    match v {
        View::Json(json) => json_is_empty(json),
        View::Owned(json) => json_is_empty(json),
        View::Str(_) => false,
        View::Array(items) => items.is_empty(),
        View::Object(members) => members.is_empty(),
    }
}

fn json_is_empty(json: &Json) -> bool {
    match json {
        Json::Null => true,
        Json::Array(items) => items.is_empty(),
        Json::Object(members) => members.is_empty(),
        _ => false,
    }
}

/// What an item of an array adds to its cost.
pub(super) fn item_cost(v: &View<'_>) -> usize {
    ITEM.saturating_add(view_cost(v))
}

/// What a member of an object adds to its cost.
pub(super) fn member_cost(key: &str, v: &View<'_>) -> usize {
    (MEMBER + string_cost(key)).saturating_add(view_cost(v))
}

/// What a pending change costs.
pub(super) fn change_cost(sid: &str, id: &str) -> usize {
    CHANGE_COST + sid.len() + id.len()
}

/// The bounds of a store, and what the store knows of its cost between counts.
#[derive(Default)]
pub(super) struct Budget {
    pub(super) max_bytes: Option<usize>,
    pub(super) max_payload_bytes: Option<usize>,
    pub(super) max_message_bytes: Option<usize>,
    /// Added since the last count (see `docs/behaviour/sessions.md`).
    estimate: usize,
    /// The estimate past which the store counts again.
    allowance: usize,
    /// The sessions' costs as last counted, together.
    sessions_cost: usize,
    /// What the pending changes cost, together.
    pub(super) changes_cost: usize,
    /// Sessions changed since the last count (their `dirty` set).
    dirty: Vec<usize>,
    /// Changes so far: a session's `changed_at` is the count when it was last changed.
    stamps: u64,
    /// The session changed last.
    pub(super) last_changed: Option<usize>,
    pub(super) evicted: u64,
    /// Evictions named in `changes()` since the changes were last taken (at most
    /// [`MAX_EVICTIONS_NAMED`]).
    pub(super) evictions_named: usize,
}

impl Budget {
    /// The last count, the pending changes and the estimate since, together.
    pub(super) fn approximate(&self) -> usize {
        self.sessions_cost
            .saturating_add(self.changes_cost)
            .saturating_add(self.estimate)
    }

    pub(super) fn new(
        max_bytes: Option<usize>,
        max_payload_bytes: Option<usize>,
        max_message_bytes: Option<usize>,
    ) -> Budget {
        Budget {
            max_bytes,
            max_payload_bytes,
            max_message_bytes,
            allowance: max_bytes.unwrap_or(usize::MAX),
            ..Budget::default()
        }
    }

    /// Whether a frame of `len` bytes may hold a payload over the bound.
    pub(super) fn walks(&self, len: usize) -> bool {
        self.max_payload_bytes
            .is_some_and(|max| len > max / PAYLOAD_RATIO)
    }

    /// Count a frame of `len` bytes into the estimate.
    #[inline]
    pub(super) fn add_frame(&mut self, len: usize) {
        self.add(len.saturating_mul(FRAME_FACTOR).saturating_add(FRAME_COST));
    }

    /// Count a message given to `apply` into the estimate.
    pub(super) fn add_message(&mut self, message: &Value<'_>) {
        if self.max_bytes.is_some() {
            self.add(value_cost(message).saturating_add(FRAME_COST));
        }
    }

    #[inline]
    pub(super) fn add(&mut self, cost: usize) {
        self.estimate = self.estimate.saturating_add(cost);
    }

    pub(super) fn due(&self) -> bool {
        self.max_bytes.is_some() && self.estimate > self.allowance
    }
}

impl Reducer {
    /// Session `si` changed: it becomes the one changed last, to be costed at the next count.
    #[inline]
    pub(super) fn touch(&mut self, si: usize) {
        let s = &mut self.sessions[si];
        if self.budget.last_changed == Some(si) && s.dirty {
            return;
        }
        self.budget.stamps += 1;
        s.changed_at = self.budget.stamps;
        if !s.dirty {
            s.dirty = true;
            self.budget.dirty.push(si);
        }
        self.budget.last_changed = Some(si);
    }

    /// [`Reducer::touch`] of the session named `sid`, if there is one.
    pub(super) fn touch_named(&mut self, sid: &str) {
        if let Some(i) = self.budget.last_changed
            && self.sessions[i].dirty
            && *self.sessions[i].id == *sid
        {
            return;
        }
        // The session looked up last is nearly always the one changed.
        if let Some(i) = self.last_session
            && *self.sessions[i].id == *sid
        {
            self.touch(i);
        } else if let Some(&i) = self.index.get(sid) {
            self.touch(i);
        }
    }

    /// Cost the sessions changed since the last count; return what the store retains.
    pub(super) fn retained(&mut self) -> usize {
        for si in std::mem::take(&mut self.budget.dirty) {
            let s = &mut self.sessions[si];
            s.dirty = false;
            let cost = SESSION_COST.saturating_add(s.snapshot_cost());
            self.budget.sessions_cost = self.budget.sessions_cost - s.cost + cost;
            s.cost = cost;
        }
        self.budget.sessions_cost + self.budget.changes_cost
    }

    /// After a frame or an applied message: count when the estimate is past the allowance,
    /// and evict when the count is past `max_bytes`.
    pub(super) fn check_budget(&mut self) {
        if !self.budget.due() {
            return;
        }
        let Some(max) = self.budget.max_bytes else {
            return;
        };
        let mut total = self.retained();
        if total > max {
            total = self.evict(total, max - max / 8);
        }
        self.budget.allowance = max.saturating_sub(total).max(max / 8);
        self.budget.estimate = 0;
    }

    /// Evict the sessions changed least recently, but the one changed last, until `total` is
    /// at most `target`; return the total left.
    fn evict(&mut self, mut total: usize, target: usize) -> usize {
        let Some(keep) = self.budget.last_changed else {
            return total;
        };
        let mut pending: HashMap<&str, usize> = HashMap::default();
        for (sid, _, id) in &self.changes {
            *pending.entry(&**sid).or_default() += change_cost(sid, id);
        }
        let mut order: Vec<usize> = (0..self.sessions.len()).filter(|&i| i != keep).collect();
        order.sort_unstable_by_key(|&i| self.sessions[i].changed_at);
        let mut victims = Vec::new();
        for i in order {
            if total <= target {
                break;
            }
            let s = &self.sessions[i];
            let freed = s.cost + pending.get(&*s.id).copied().unwrap_or(0);
            total = total.saturating_sub(freed);
            if self.budget.evictions_named + victims.len() < MAX_EVICTIONS_NAMED {
                total += change_cost(&s.id, "evicted");
            }
            victims.push(i);
        }
        if !victims.is_empty() {
            drop(pending);
            self.remove_sessions(&victims);
        }
        let keep = self.budget.last_changed.unwrap_or(keep);
        if total > target {
            total = self.shed_tool_calls(keep, total, target);
        }
        total
    }

    /// Drop the oldest tool calls of session `si` (the one changed last, which is never
    /// evicted) until `total` would be at most `target`; return the total counted again.
    fn shed_tool_calls(&mut self, si: usize, mut total: usize, target: usize) -> usize {
        let s = &self.sessions[si];
        let mut ids = Vec::new();
        for (id, fields) in s.tool_calls.iter() {
            if total <= target {
                break;
            }
            let entry = View::Object(vec![("type", View::Str("toolCall")), ("id", View::Str(id))]);
            let freed = member_cost(id, &tool_call_view(id, fields)) + item_cost(&entry);
            total = total.saturating_sub(freed) + change_cost(&s.id, id);
            ids.push(id.to_owned());
        }
        if ids.is_empty() {
            return total;
        }
        let sid = s.id.clone();
        self.sessions[si].drop_tool_calls(&ids);
        self.touch(si);
        let dropped = ids.len();
        for id in ids {
            self.change(&sid, "toolCall", &id);
        }
        self.error(
            Some(&sid),
            format!("dropped {dropped} tool calls: the store was over max_bytes"),
        );
        self.retained()
    }

    /// Remove the sessions at `victims` (in eviction order) from everything the store holds,
    /// each with its error record and change.
    fn remove_sessions(&mut self, victims: &[usize]) {
        let mut gone = vec![false; self.sessions.len()];
        for &i in victims {
            gone[i] = true;
        }
        let ids: Vec<Arc<str>> = victims
            .iter()
            .map(|&i| Arc::clone(&self.sessions[i].id))
            .collect();
        let names: HashSet<&str> = ids.iter().map(|id| &**id).collect();
        for &i in victims {
            let s = &self.sessions[i];
            self.budget.sessions_cost -= s.cost;
            for (_, t) in s.cold().terminals.iter() {
                self.terminal_budget.held -= t.held;
            }
        }
        self.terminal_budget.order.retain(|_, (si, _)| !gone[*si]);
        self.pending.forget_sessions(&names);
        self.changes.retain(|(sid, _, _)| !names.contains(&**sid));
        drop(names);
        self.reindex_changes();
        self.budget.changes_cost = self
            .changes
            .iter()
            .map(|(sid, _, id)| change_cost(sid, id))
            .sum();
        // Survivors keep their order; every index into `sessions` is remapped.
        let mut remap = vec![usize::MAX; self.sessions.len()];
        let mut kept = 0;
        for (i, slot) in remap.iter_mut().enumerate() {
            if !gone[i] {
                *slot = kept;
                kept += 1;
            }
        }
        let before = self.version_changes_named;
        self.version_changes_named = (0..before.min(gone.len())).filter(|&i| !gone[i]).count();
        let mut index = 0;
        self.sessions.retain(|_| {
            index += 1;
            !gone[index - 1]
        });
        self.index.retain(|_, i| !gone[*i]);
        for i in self.index.values_mut() {
            *i = remap[*i];
        }
        for (si, _) in self.terminal_budget.order.values_mut() {
            *si = remap[*si];
        }
        self.budget.last_changed = self.budget.last_changed.map(|i| remap[i]);
        self.last_session = None;
        self.last_message = None;
        self.message_changed = None;
        for sid in ids {
            self.budget.evicted += 1;
            let record = ErrorRecord {
                line: self.pos.map(|p| p.0),
                offset: self.pos.map(|p| p.1),
                session_id: Some(Arc::clone(&sid)),
                reason: "session evicted: the store was over max_bytes".to_owned(),
            };
            if self.errors.len() == MAX_ERRORS {
                self.errors.pop_front();
                self.errors_dropped += 1;
            }
            self.errors.push_back(record);
            if self.budget.evictions_named < MAX_EVICTIONS_NAMED {
                self.budget.evictions_named += 1;
                self.change(&sid, "session", "evicted");
            }
        }
    }

    /// `message` with each payload over `max_payload_bytes` replaced by its stub, each an
    /// error record; `None` when none is over.
    pub(super) fn stub_payloads<'s>(&mut self, message: &Value<'s>) -> Option<Value<'s>> {
        let max = self.budget.max_payload_bytes?;
        let Value::Object(m) = message else {
            return None;
        };
        let method = m.iter().rev().find(|(k, _)| k == "method")?;
        let Value::Str(method) = &method.1 else {
            return None;
        };
        let params_at = m.iter().rposition(|(k, _)| k == "params")?;
        let Value::Object(params) = &m[params_at].1 else {
            return None;
        };
        let sid = params
            .iter()
            .rev()
            .find_map(|(k, v)| match (k.as_ref(), v) {
                ("sessionId", Value::Str(s)) => Some(s.to_string()),
                _ => None,
            });
        let mut notes = Vec::new();
        let new_params = if method == "session/update" {
            let update_at = params.iter().rposition(|(k, _)| k == "update")?;
            let Value::Object(update) = &params[update_at].1 else {
                return None;
            };
            let chunk = update
                .iter()
                .rev()
                .find_map(|(k, v)| match (k.as_ref(), v) {
                    ("sessionUpdate", Value::Str(kind)) => {
                        Some(MESSAGE_CHUNKS.contains(&kind.as_ref()))
                    }
                    _ => None,
                });
            let update = stubbed(update, max, &mut notes, |k, v| {
                k == "sessionUpdate" || (chunk == Some(true) && k == "content" && is_text_block(v))
            })?;
            let mut p = params.clone();
            p[update_at].1 = Value::Object(update);
            p
        } else {
            stubbed(params, max, &mut notes, |k, _| k == "sessionId")?
        };
        let mut top = m.clone();
        top[params_at].1 = Value::Object(new_params);
        for note in notes {
            self.error(sid.as_deref(), note);
        }
        Some(Value::Object(top))
    }
}

/// A text content block: an object whose `type` is `"text"` and whose `text` is a string.
fn is_text_block(v: &Value<'_>) -> bool {
    let Value::Object(members) = v else {
        return false;
    };
    let last = |key: &str| members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
    matches!(last("type"), Some(Value::Str(t)) if t == "text")
        && matches!(last("text"), Some(Value::Str(_)))
}

/// `members` with each value over `max` (but those `exempt`) replaced by its stub, noted;
/// `None` when none is over. A repeated key is read as a dict reads it: its last value, in
/// its first place.
fn stubbed<'s>(
    members: &Members<'s>,
    max: usize,
    notes: &mut Vec<String>,
    exempt: impl Fn(&str, &Value<'s>) -> bool,
) -> Option<Vec<(Cow<'s, str>, Value<'s>)>> {
    let mut over = Vec::new();
    for (k, v) in dedup(members) {
        if exempt(k, v) {
            continue;
        }
        let cost = value_cost(v);
        if cost > max {
            notes.push(format!("{k} over max_payload_bytes: kept as a stub"));
            over.push((k.to_owned(), cost));
        }
    }
    if over.is_empty() {
        return None;
    }
    let mut out = members.to_vec();
    for (key, cost) in over {
        for (k, v) in &mut out {
            if *k == key {
                *v = stub(cost);
            }
        }
    }
    Some(out)
}

fn stub(cost: usize) -> Value<'static> {
    Value::Object(vec![
        (
            Cow::Borrowed("dropped"),
            Value::Str(Cow::Borrowed("max_payload_bytes")),
        ),
        (
            Cow::Borrowed("cost"),
            Value::Int(i64::try_from(cost).unwrap_or(i64::MAX)),
        ),
    ])
}
