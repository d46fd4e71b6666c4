//! Ordered maps keyed by string, with a Python dict's semantics: the entities of a session
//! by id (tool calls, terminals, plans, ...), and the fields of each entity. Cheap for the
//! handful of entries they usually hold, and still O(1) per key (amortized) with very many.

use std::hash::BuildHasher;
use std::ops::Deref;
use std::sync::Arc;

use hashbrown::HashTable;

use super::Value;
use super::json::{Json, Obj, View};

/// Maps up to this many slots are searched by scanning; larger ones keep a key index.
const SCAN_SLOTS: usize = 32;

/// A key: the field names of the protocol are static, so that a million tool calls do not
/// hold a million copies of `"status"`; any other key is shared, so that an entity's id in
/// its map and in its session's timeline is one allocation.
#[derive(Clone, Debug)]
enum Key {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Deref for Key {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Key::Static(key) => key,
            Key::Shared(key) => key,
        }
    }
}

/// `key`, static when it is a field name of the protocol common enough to be worth it.
fn key_of(key: &str) -> Key {
    Key::Static(match key {
        "toolCallId" => "toolCallId",
        "title" => "title",
        "kind" => "kind",
        "status" => "status",
        "content" => "content",
        "locations" => "locations",
        "rawInput" => "rawInput",
        "rawOutput" => "rawOutput",
        "_meta" => "_meta",
        "terminalId" => "terminalId",
        "source" => "source",
        "command" => "command",
        "args" => "args",
        "cwd" => "cwd",
        "env" => "env",
        "outputByteLimit" => "outputByteLimit",
        "exitStatus" => "exitStatus",
        "output" => "output",
        "requestId" => "requestId",
        "response" => "response",
        "error" => "error",
        "prompt" => "prompt",
        "options" => "options",
        "toolCall" => "toolCall",
        "cancelRequested" => "cancelRequested",
        "messageId" => "messageId",
        "name" => "name",
        "compactionId" => "compactionId",
        "summary" => "summary",
        "sessionId" => "sessionId",
        "type" => "type",
        "text" => "text",
        "entries" => "entries",
        "priority" => "priority",
        "planId" => "planId",
        "state" => "state",
        "stopReason" => "stopReason",
        "usage" => "usage",
        "killed" => "killed",
        "released" => "released",
        "truncated" => "truncated",
        "modeId" => "modeId",
        "value" => "value",
        "configId" => "configId",
        "subagentId" => "subagentId",
        "senderSessionId" => "senderSessionId",
        "recipientSessionId" => "recipientSessionId",
        "description" => "description",
        "agentId" => "agentId",
        _ => return Key::Shared(Arc::from(key)),
    })
}

/// The index's hash of a key: a fixed seed, as ids come from one connection (see `HashMap`).
fn key_hash(key: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0x243f_6a88_85a3_08d3).hash_one(key)
}

/// Entries in insertion order: a key set again keeps its place, a removed key that returns
/// goes last. Removal leaves a hole, compacted once holes outnumber the entries, so that every
/// operation is amortized O(1) on large maps (O(32) at most on small ones).
#[derive(Clone, Debug)]
pub(crate) struct Keyed<T> {
    slots: Vec<Option<(Key, T)>>,
    /// Slot numbers by their key's hash, kept once the map outgrows [`SCAN_SLOTS`] (boxed:
    /// every entity's fields are a map, and few grow that large).
    index: Option<Box<HashTable<usize>>>,
    holes: usize,
}

/// The fields of an entity.
pub(crate) type Fields = Keyed<Json>;

impl<T> Default for Keyed<T> {
    fn default() -> Self {
        Keyed {
            slots: Vec::new(),
            index: None,
            holes: 0,
        }
    }
}

impl<T> Keyed<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        Keyed {
            slots: Vec::with_capacity(n),
            index: None,
            holes: 0,
        }
    }

    fn key_at(&self, i: usize) -> &str {
        self.slots[i].as_ref().map_or("", |(k, _)| k)
    }

    fn find(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index
                .find(key_hash(key), |&i| {
                    self.slots[i].as_ref().is_some_and(|(k, _)| &**k == key)
                })
                .copied(),
            None => self
                .slots
                .iter()
                .position(|slot| slot.as_ref().is_some_and(|(k, _)| &**k == key)),
        }
    }

    /// No entries (holes left by removals do not count).
    pub fn is_empty(&self) -> bool {
        self.slots.len() == self.holes
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.slots.len() - self.holes
    }

    pub fn get(&self, key: &str) -> Option<&T> {
        let i = self.find(key)?;
        self.slots[i].as_ref().map(|(_, v)| v)
    }

    /// The entry of `key`, with the key as stored (which outlives the `key` asked for).
    pub fn get_key_value(&self, key: &str) -> Option<(&str, &T)> {
        let i = self.find(key)?;
        self.slots[i].as_ref().map(|(k, v)| (&**k, v))
    }

    /// The key of the entry added last (if it is still there), shared (made anew for a
    /// static key).
    pub fn last_key(&self) -> Option<Arc<str>> {
        self.slots.last()?.as_ref().map(|(k, _)| match k {
            Key::Static(k) => Arc::from(*k),
            Key::Shared(k) => Arc::clone(k),
        })
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        let i = self.find(key)?;
        self.slots[i].as_mut().map(|(_, v)| v)
    }

    /// Add `key`, known to be absent, at the end; return its slot.
    fn push(&mut self, key: &str, value: T) -> usize {
        let at = self.slots.len();
        if at == 0 {
            // Most maps hold a few entries: the first gets room for itself only.
            self.slots.reserve_exact(1);
        }
        self.slots.push(Some((key_of(key), value)));
        if let Some(index) = &mut self.index {
            let slots = &self.slots;
            index.insert_unique(key_hash(key), at, |&i| {
                key_hash(slots[i].as_ref().map_or("", |(k, _)| k))
            });
        } else if self.slots.len() > SCAN_SLOTS {
            self.reindex();
        }
        at
    }

    /// The entry for `key`, made with `make` at the end when absent (second value: made).
    pub fn entry(&mut self, key: &str, make: impl FnOnce() -> T) -> (&mut T, bool) {
        let (i, new) = match self.find(key) {
            Some(i) => (i, false),
            None => (self.push(key, make()), true),
        };
        match &mut self.slots[i] {
            Some((_, v)) => (v, new),
            None => unreachable!("keys only lead to live slots"),
        }
    }

    /// Set `key`: in place if present, else at the end.
    pub fn set(&mut self, key: &str, value: T) {
        match self.find(key).and_then(|i| self.slots[i].as_mut()) {
            Some(slot) => slot.1 = value,
            None => {
                self.push(key, value);
            }
        }
    }

    /// Remove `key`; true if it was present.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(i) = self.find(key) else {
            return false;
        };
        if let Some(index) = &mut self.index
            && let Ok(entry) = index.find_entry(key_hash(key), |&j| j == i)
        {
            entry.remove();
        }
        self.slots[i] = None;
        self.holes += 1;
        if self.holes * 2 > self.slots.len() {
            self.slots.retain(Option::is_some);
            self.holes = 0;
            self.reindex();
        }
        true
    }

    /// Rebuild the index for the current slots (none while the map is small).
    fn reindex(&mut self) {
        if self.slots.len() <= SCAN_SLOTS {
            self.index = None;
            return;
        }
        let mut index = HashTable::with_capacity(self.slots.len());
        for i in 0..self.slots.len() {
            if self.slots[i].is_some() {
                let slots = &self.slots;
                index.insert_unique(key_hash(self.key_at(i)), i, |&j| {
                    key_hash(slots[j].as_ref().map_or("", |(k, _)| k))
                });
            }
        }
        self.index = Some(Box::new(index));
    }

    /// (key, value) in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.slots.iter().flatten().map(|(k, v)| (k.as_ref(), v))
    }
}

impl Fields {
    /// Apply patch operations in order: `Some(value)` sets, `None` removes.
    pub fn apply(&mut self, ops: Vec<(&str, Option<Json>)>) {
        if self.slots.is_empty() {
            // An entity's first patch names most of the fields it will have: room for those
            // only (a million tool calls would otherwise hold a million spare slots).
            self.slots.reserve_exact(ops.len());
        }
        for (key, value) in ops {
            match value {
                Some(value) => self.set(key, value),
                None => {
                    self.remove(key);
                }
            }
        }
    }

    /// The fields as a plain ordered object.
    pub fn into_obj(self) -> Obj {
        self.slots
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    /// The fields as a view, borrowed.
    pub fn to_view(&self) -> View<'_> {
        View::Object(self.view_members())
    }

    /// The members of [`Self::to_view`].
    pub fn view_members(&self) -> Vec<(&str, View<'_>)> {
        self.iter().map(|(k, v)| (k, View::Json(v))).collect()
    }
}

/// The operation of a patch field: `null` clears, a value replaces.
pub(crate) fn patch_op<'k>(key: &'k str, value: &Value<'_>) -> (&'k str, Option<Json>) {
    if matches!(value, Value::Null) {
        (key, None)
    } else {
        (key, Some(Json::from_value(value)))
    }
}

impl<T> FromIterator<(String, T)> for Keyed<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(iter: I) -> Self {
        let mut map = Keyed::new();
        for (k, v) in iter {
            map.set(&k, v);
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::super::MAX_HOLES;
    use super::super::json::{obj_get, obj_remove, obj_set};
    use super::*;

    #[test]
    fn fields_behave_as_an_ordered_dict() {
        // Random sets, removals and reads over a pool of keys, against key-by-key operations on
        // a plain ordered object; the pool crosses the scan/index cut-over both ways.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for pool in [8_u64, 40, 200] {
            let mut fields = Fields::new();
            let mut model: Obj = Vec::new();
            for step in 0..4000_i64 {
                let key = format!("k{}", next(pool));
                match next(10) {
                    0..=4 => {
                        fields.set(&key, Json::Int(step));
                        obj_set(&mut model, &key, Json::Int(step));
                    }
                    5..=7 => {
                        fields.remove(&key);
                        obj_remove(&mut model, &key);
                    }
                    _ => {
                        if let Some(Json::Int(v)) = fields.get_mut(&key) {
                            *v += 1;
                        }
                        if let Some((_, Json::Int(v))) = model.iter_mut().find(|(k, _)| *k == key) {
                            *v += 1;
                        }
                    }
                }
                assert_eq!(fields.clone().into_obj(), model, "pool {pool} step {step}");
                assert_eq!(
                    fields.get_mut(&key).map(|v| v.clone()),
                    obj_get(&model, &key).cloned()
                );
            }
            assert!(fields.holes * 2 <= fields.slots.len());
        }
    }

    #[test]
    fn keyed_removal_keeps_order_through_compaction() {
        let mut keyed: Keyed<u32> = Keyed::default();
        let mut model: Vec<(String, u32)> = Vec::new();
        for round in 0..3_u32 {
            for i in 0..100_u32 {
                let id = format!("k{}", (i * 7 + round) % 130);
                let (v, new) = keyed.entry(&id, || i);
                *v = i + round;
                if let Some(slot) = model.iter_mut().find(|(k, _)| *k == id) {
                    assert!(!new);
                    slot.1 = i + round;
                } else {
                    assert!(new);
                    model.push((id, i + round));
                }
            }
            // Remove four in five: enough holes to compact at least once per round.
            for i in 0..130_u32 {
                if i % 5 != 0 {
                    let id = format!("k{i}");
                    let present = model.iter().position(|(k, _)| *k == id);
                    assert_eq!(keyed.remove(&id), present.is_some());
                    if let Some(p) = present {
                        model.remove(p);
                    }
                }
            }
            let got: Vec<(String, u32)> = keyed.iter().map(|(k, v)| (k.to_owned(), *v)).collect();
            assert_eq!(got, model, "round {round}");
            for (k, v) in &model {
                assert_eq!(keyed.get(k), Some(v));
            }
            assert!(keyed.holes <= MAX_HOLES || keyed.holes * 2 <= keyed.slots.len());
        }
    }
}
