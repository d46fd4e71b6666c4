//! `session/update`: the variant dispatch, the updates of no entity family (`subagent_update`,
//! and variants unknown to the version in force, kept raw in `other`), and the helpers the
//! families share. Each entity family has a file of its own.

mod compactions;
mod messages;
mod plans;
mod session_state;
mod terminals;
mod tool_calls;

use crate::session::value::Value;

use super::check;
use super::fields::{Fields, patch_op};
use super::json::{Json, Members, Obj, as_str, dedup, member, obj_get, obj_remove, obj_set};
use super::model::Role;
use super::model::{EntryKind, TimelineEntry};
use super::reducer::Reducer;
use super::rpc::Mode;
use super::tables::{V1_ONLY, V2_ONLY};

impl Reducer {
    pub(super) fn session_update(&mut self, params: Option<&Value<'_>>) {
        let Some(sid) = self.params_session("session/update", params) else {
            return;
        };
        let Some(Value::Object(p)) = params else {
            return;
        };
        let Some(raw @ Value::Object(update)) = member(p, "update") else {
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

    fn other(&mut self, sid: &str, update: &Value<'_>) {
        let s = self.session(sid);
        let other = &mut s.cold_mut().other;
        let index = other.len().to_string();
        other.push(Json::from_value(update));
        s.timeline
            .push(TimelineEntry::new(EntryKind::Other, &index));
        self.change(sid, "other", &index);
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
        let (entry, _) = s.cold_mut().subagents.entry(id, Fields::new);
        let ops = dedup(u)
            .into_iter()
            .filter(|(k, v)| *k != "sessionUpdate" && (null_clears || !matches!(v, Value::Null)))
            .map(|(k, v)| patch_op(k, v))
            .collect();
        entry.apply(ops);
        self.change(sid, "subagent", id);
    }
}

/// Append `item` to the array field `key` in place (creating it; a non-array is replaced).
pub(super) fn push_item(fields: &mut Fields, key: &str, item: Json) {
    match fields.get_mut(key) {
        Some(Json::Array(items)) => items.push(item),
        _ => fields.set(key, Json::Array(vec![item])),
    }
}

/// The members of `u` except `skip` and those that are `null` (a field cleared is absent),
/// as an owned object.
fn without(u: &Members<'_>, skip: &[&str]) -> Obj {
    dedup(u)
        .into_iter()
        .filter(|(k, v)| !skip.contains(k) && !matches!(v, Value::Null))
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
fn is_block(v: Option<&Value<'_>>) -> bool {
    match v {
        Some(Value::Object(o)) => as_str(member(o, "type")).is_some(),
        _ => false,
    }
}
