//! The fields of an entity (a tool call, a message's extra fields, a prompt entry, ...): an
//! ordered map with a Python dict's semantics, cheap for the handful of fields entities
//! usually have and still O(1) per key for entities with very many.

use std::collections::HashMap;

use super::json::{Json, Obj};

/// Entities up to this many slots are searched by scanning; larger ones keep a key index.
const SCAN_SLOTS: usize = 32;

/// Fields in insertion order: a key set again keeps its place, a removed key that returns goes
/// last. Removal leaves a hole, compacted once holes outnumber the fields, so that every
/// operation is amortized O(1) on large entities (O(32) at most on small ones).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields {
    slots: Vec<Option<(String, Json)>>,
    /// Key to slot, kept once the entity outgrows [`SCAN_SLOTS`].
    index: Option<HashMap<String, usize>>,
    holes: usize,
}

impl Fields {
    pub fn new() -> Self {
        Self::default()
    }

    fn find(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self
                .slots
                .iter()
                .position(|slot| slot.as_ref().is_some_and(|(k, _)| k == key)),
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        let i = self.find(key)?;
        self.slots[i].as_mut().map(|(_, v)| v)
    }

    /// Set `key`: in place if present, else at the end.
    pub fn set(&mut self, key: &str, value: Json) {
        if let Some(i) = self.find(key) {
            if let Some(slot) = self.slots[i].as_mut() {
                slot.1 = value;
            }
            return;
        }
        if let Some(index) = &mut self.index {
            index.insert(key.to_owned(), self.slots.len());
        }
        self.slots.push(Some((key.to_owned(), value)));
        if self.index.is_none() && self.slots.len() > SCAN_SLOTS {
            self.reindex();
        }
    }

    /// Remove `key` if present.
    pub fn remove(&mut self, key: &str) {
        let Some(i) = self.find(key) else { return };
        self.slots[i] = None;
        if let Some(index) = &mut self.index {
            index.remove(key);
        }
        self.holes += 1;
        if self.holes * 2 > self.slots.len() {
            self.slots.retain(Option::is_some);
            self.holes = 0;
            self.reindex();
        }
    }

    /// Apply patch operations in order: `Some(value)` sets, `None` removes.
    pub fn apply(&mut self, ops: Vec<(&str, Option<Json>)>) {
        for (key, value) in ops {
            match value {
                Some(value) => self.set(key, value),
                None => self.remove(key),
            }
        }
    }

    /// Rebuild the index for the current slots (none while the entity is small).
    fn reindex(&mut self) {
        self.index = (self.slots.len() > SCAN_SLOTS).then(|| {
            self.slots
                .iter()
                .enumerate()
                .filter_map(|(i, slot)| slot.as_ref().map(|(k, _)| (k.clone(), i)))
                .collect()
        });
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// (key, value) in order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Json)> {
        self.slots.iter().flatten().map(|(k, v)| (k, v))
    }

    /// A copy as a plain ordered object.
    pub fn to_obj(&self) -> Obj {
        self.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// The fields as a plain ordered object.
    pub fn into_obj(self) -> Obj {
        self.slots.into_iter().flatten().collect()
    }

    pub fn to_json(&self) -> Json {
        Json::Object(self.to_obj())
    }
}

impl FromIterator<(String, Json)> for Fields {
    fn from_iter<I: IntoIterator<Item = (String, Json)>>(iter: I) -> Self {
        let mut fields = Fields::new();
        for (k, v) in iter {
            fields.set(&k, v);
        }
        fields
    }
}

#[cfg(test)]
mod tests {
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
                assert_eq!(fields.to_obj(), model, "pool {pool} step {step}");
                assert_eq!(
                    fields.get_mut(&key).map(|v| v.clone()),
                    obj_get(&model, &key).cloned()
                );
            }
            assert!(fields.holes * 2 <= fields.slots.len());
        }
    }
}
