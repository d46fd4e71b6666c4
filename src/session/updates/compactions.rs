//! Compactions: `compaction_update` and `compaction_summary_chunk`, by `compactionId`.

use crate::session::value::Value;

use super::super::fields::{Fields, patch_op};
use super::super::json::{Json, Members, as_str, dedup, member};
use super::super::model::{EntryKind, TimelineEntry};
use super::super::reducer::Reducer;
use super::push_item;

impl Reducer {
    fn compaction_entry(&mut self, sid: &str, id: &str) -> &mut Fields {
        let s = self.session(sid);
        let (_, new) = s.cold_mut().compactions.entry(id, || {
            [("compactionId".to_owned(), id.into())]
                .into_iter()
                .collect()
        });
        if new {
            let placed = TimelineEntry::of(EntryKind::Compaction, &s.cold_mut().compactions, id);
            s.timeline.push(placed);
        }
        s.cold_mut().compactions.get_mut(id).expect("created above")
    }

    pub(super) fn compaction(&mut self, sid: &str, u: &Members<'_>) {
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
                ("summary", Value::Array(items)) if items.is_empty() => ops.push((k, None)),
                ("summary", Value::Array(_) | Value::Null) => ops.push(patch_op(k, v)),
                ("sessionUpdate" | "compactionId" | "summary", _) => {}
                _ => ops.push(patch_op(k, v)),
            }
        }
        c.apply(ops);
        self.change(sid, "compaction", id);
    }

    pub(super) fn compaction_chunk(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "compactionId")) else {
            self.error(
                Some(sid),
                "compaction_summary_chunk: compactionId must be a string".to_owned(),
            );
            return;
        };
        let Some(content @ Value::Object(_)) = member(u, "content") else {
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
}
