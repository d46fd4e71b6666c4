//! Session-level state: commands, config options and mode (replaced whole), info (patched),
//! usage, the foreground state and notices.

use crate::session::value::Value;

use super::super::MAX_NOTICES;
use super::super::fields::patch_op;
use super::super::json::{Json, Members, as_str, dedup, is_non_negative_int, member};
use super::super::reducer::Reducer;
use super::{set_extras, without};

impl Reducer {
    /// `available_commands_update`, `config_option_update`, `current_mode_update`: the named
    /// field replaces the stored one; the rest of the update goes to `updateExtras`.
    pub(super) fn replace(&mut self, sid: &str, kind: &str, u: &Members<'_>, field: &'static str) {
        let value = member(u, field);
        let ok = match field {
            "currentModeId" => matches!(value, Some(Value::Str(_))),
            _ => matches!(value, Some(Value::Array(_))),
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
            "availableCommands" => s.cold_mut().available_commands = Some(value),
            "configOptions" => s.cold_mut().config_options = Some(value),
            _ => s.cold_mut().current_mode_id = value.as_str().map(str::to_owned),
        }
        let moved = set_extras(
            &mut s.cold_mut().update_extras,
            kind,
            u,
            &["sessionUpdate", field],
        );
        self.change(sid, "session", field);
        if moved {
            self.change(sid, "session", "updateExtras");
        }
    }

    pub(super) fn info(&mut self, sid: &str, u: &Members<'_>) {
        let s = self.session(sid);
        let ops = dedup(u)
            .into_iter()
            .filter(|(k, _)| *k != "sessionUpdate")
            .map(|(k, v)| patch_op(k, v))
            .collect();
        s.info.apply(ops);
        self.change(sid, "session", "info");
    }

    pub(super) fn usage(&mut self, sid: &str, u: &Members<'_>) {
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
            if let Some(Value::BigInt(b)) = value
                && b.parse::<u64>().is_err()
            {
                self.error(
                    Some(sid),
                    format!("usage_update: {field} must be below 2**64"),
                );
                return;
            }
        }
        let s = self.session(sid);
        s.cold_mut().usage = Some(without(u, &["sessionUpdate"]));
        self.change(sid, "session", "usage");
    }

    pub(super) fn state(&mut self, sid: &str, u: &Members<'_>) {
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
        s.stop_reason.clone_from(&stop);
        s.state = Some(state.to_owned());
        // The idle report closes the turn going on, with its stop reason and usage.
        let closed = state == "idle" && s.turn.is_some();
        if let Some(turn) = s.turn.take_if(|_| state == "idle") {
            let usage = member(u, "usage").filter(|v| matches!(v, Value::Object(_)));
            s.close_turn(turn.record, stop.as_deref(), usage);
        }
        // `stopReason` is an idle state's; on another it is an unknown field, kept raw.
        let skip: &[&str] = if state == "idle" {
            &["sessionUpdate", "state", "stopReason"]
        } else {
            &["sessionUpdate", "state"]
        };
        let moved = set_extras(&mut s.cold_mut().update_extras, "state_update", u, skip);
        self.change(sid, "session", "state");
        if stopped {
            self.change(sid, "session", "stopReason");
        }
        if moved {
            self.change(sid, "session", "updateExtras");
        }
        if closed {
            self.change(sid, "session", "turns");
        }
    }

    pub(super) fn notice(&mut self, sid: &str, u: &Members<'_>) {
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
        let notices = &mut s.cold_mut().notices;
        if notices.len() == MAX_NOTICES {
            notices.pop_front();
        }
        notices.push_back(Json::Object(without(u, &["sessionUpdate"])));
        self.change(sid, "session", "notices");
    }
}
