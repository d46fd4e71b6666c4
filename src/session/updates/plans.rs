//! Plans: the v1 `plan` (one plan, `main`), `plan_update` and `plan_removed`.

use crate::session::value::Value;

use super::super::check;
use super::super::fields::Fields;
use super::super::json::{Json, Members, Obj, as_str, dedup, member};
use super::super::model::{EntryKind, TimelineEntry};
use super::super::reducer::Reducer;
use super::{set_extras, without};

impl Reducer {
    fn set_plan(&mut self, sid: &str, id: &str, plan: Obj) {
        let s = self.session(sid);
        let (slot, new) = s.cold_mut().plans.entry(id, Vec::new);
        *slot = plan;
        if new {
            let at = s.timeline.len();
            s.cold_mut().plan_at.insert(id.to_owned(), at);
            let placed = TimelineEntry::of(EntryKind::Plan, &s.cold_mut().plans, id);
            s.timeline.push(placed);
        }
        self.change(sid, "plan", id);
    }

    pub(super) fn plan_v1(&mut self, sid: &str, u: &Members<'_>) {
        if !matches!(member(u, "entries"), Some(Value::Array(_))) {
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
                !matches!(*k, "sessionUpdate" | "type" | "planId") && !matches!(v, Value::Null)
            })
            .map(|(k, v)| (k, Some(Json::from_value(v))));
        plan.apply(fields.collect());
        self.set_plan(sid, "main", plan.into_obj());
    }

    pub(super) fn plan_update(&mut self, sid: &str, u: &Members<'_>) {
        let Some(Value::Object(plan)) = member(u, "plan") else {
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
        let plan = if matches!(kind, "items" | "markdown" | "file") {
            let mut notes = std::mem::take(&mut self.notes);
            let repaired = check::repair_plan(plan, kind, self.mode(), &mut notes);
            self.notes = notes;
            without(repaired.as_deref().unwrap_or(plan), &[])
        } else {
            // The schema asks receivers to keep an unknown type's raw payload: nulls included.
            dedup(plan)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), Json::from_value(v)))
                .collect()
        };
        self.set_plan(sid, id, plan);
        self.plan_extras(sid, "plan_update", u, &["sessionUpdate", "plan"]);
    }

    /// The update's own `_meta` and unknown fields (beside the plan or plan id) go to
    /// `updateExtras`, the last of each kind, as a session-level update's do.
    fn plan_extras(&mut self, sid: &str, kind: &str, u: &Members<'_>, skip: &[&str]) {
        if set_extras(
            &mut self.session(sid).cold_mut().update_extras,
            kind,
            u,
            skip,
        ) {
            self.change(sid, "session", "updateExtras");
        }
    }

    pub(super) fn plan_removed(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "planId")) else {
            self.error(
                Some(sid),
                "plan_removed: planId must be a string".to_owned(),
            );
            return;
        };
        let s = self.session(sid);
        // Removing a plan that is not there changes nothing (and must not grow the change set).
        if s.cold_mut().plans.remove(id) {
            s.remove_plan_entry(id);
            self.change(sid, "plan", id);
        }
        self.plan_extras(sid, "plan_removed", u, &["sessionUpdate", "planId"]);
    }
}
