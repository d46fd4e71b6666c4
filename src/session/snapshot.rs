//! The snapshot of a session ([`Session::snapshot`]): views borrowed from its state, owned
//! only where a value is computed (terminal text, the protocol version).

use std::sync::atomic::Ordering;

use super::ErrorRecord;
use super::NO_VERSION;
use super::budget::{OBJECT, is_empty, item_cost, member_cost};
use super::fields::{Fields, Keyed};
use super::json::{Json, View, view_set};
use super::model::{EntryKind, Message, Session, TerminalEntry, TimelineEntry, kept_before, lock};
use super::tool_call::ToolCall;

impl Session {
    /// The session as one JSON object. Top-level keys, always present:
    ///
    /// `sessionId`, `protocolVersion` (int or null), `state`, `stopReason`, `messages` (list
    /// of `{id, role, content?, _meta?, …}` in timeline order), `toolCalls` (by id),
    /// `terminals` (by id: `terminalId`, `source` (`agent` or `client`), `command?`, `cwd?`,
    /// `exitStatus?`, `_meta?`, `text`, `bytes`, `truncated`), `plans` (by planId),
    /// `compactions` (by id), `usage` (the last `usage_update` or null), `info` (patched
    /// `session_info_update` fields), `availableCommands`, `configOptions`, `currentModeId`
    /// (null until set), `permissions` and `prompts` (lists in request order, with `response`
    /// or `error` once answered), `turns` (one per prompt turn: `requestId`, `prompt`,
    /// `messageId?`, `stopReason`, `cancelRequested`, `usage?`, `error?`, `joined?`, and
    /// `start`/`end` in `timeline`), `notices` (the last 100), `other` (raw unknown updates),
    /// `timeline` (`{type, id}` plus `role` for messages, first-seen order; a turn's id is its
    /// request id), `errors` (this session's, the last 1000), `subagents` (by id) and
    /// `updateExtras` (`_meta` and unknown fields of the session-level replace variants and
    /// of plan updates and removals, by variant name).
    ///
    /// Inside entities, a field never set or cleared is absent.
    pub fn snapshot(&self) -> Json {
        self.snapshot_view().into_json()
    }

    /// [`Self::snapshot`] borrowed from the session: the same value, with stored values
    /// referred to rather than copied.
    pub(crate) fn snapshot_view(&self) -> View<'_> {
        View::Object(self.snapshot_members(true))
    }

    /// The cost of [`Self::snapshot_view`] (see `budget`) without its empty members (`null`,
    /// `[]`, `{}`: every new session has a score of them, and a store of many small sessions
    /// would otherwise be counted several times what it holds), its messages, tool calls and
    /// timeline entries viewed one at a time: a count never holds a large session's whole view.
    pub(super) fn snapshot_cost(&self) -> usize {
        let members = self.snapshot_members(false);
        let mut cost = OBJECT;
        for (key, value) in &members {
            let whole_is_empty = match *key {
                "messages" => self.messages.is_empty(),
                "toolCalls" => self.tool_calls.is_empty(),
                "timeline" => self.timeline.iter().all(TimelineEntry::is_removed),
                _ => is_empty(value),
            };
            if !whole_is_empty {
                cost = cost.saturating_add(member_cost(key, value));
            }
        }
        for m in &self.messages {
            cost = cost.saturating_add(item_cost(&message_view(m)));
        }
        for (id, f) in self.tool_calls.iter() {
            cost = cost.saturating_add(member_cost(id, &tool_call_view(id, f)));
        }
        let mut turn = 0;
        for entry in self.timeline.iter().filter(|entry| !entry.is_removed()) {
            cost = cost.saturating_add(item_cost(&self.timeline_entry(entry, &mut turn)));
        }
        cost
    }

    /// A timeline entry; `turn` counts the turn entries before it (a turn's entry shows its
    /// request id; turns are placed in order, one entry each).
    fn timeline_entry<'a>(&'a self, entry: &'a TimelineEntry, turn: &mut usize) -> View<'a> {
        let id = if entry.kind == EntryKind::Turn {
            *turn += 1;
            View::Json(self.turn_request_id(*turn - 1))
        } else {
            View::Str(&entry.id)
        };
        let mut o = vec![("type", View::Str(entry.kind.as_str())), ("id", id)];
        if let Some(role) = entry.role {
            o.push(("role", View::Str(role.as_str())));
        }
        View::Object(o)
    }

    /// The snapshot's members; with `whole` false, its messages, tool calls and timeline are
    /// left empty (see [`Self::snapshot_cost`]).
    fn snapshot_members(&self, whole: bool) -> Vec<(&'static str, View<'_>)> {
        let cold = self.cold();
        let (messages, tool_calls, timeline) = if whole {
            let mut turn = 0;
            (
                self.messages.iter().map(message_view).collect(),
                View::Object(
                    self.tool_calls
                        .iter()
                        .map(|(id, f)| (id, tool_call_view(id, f)))
                        .collect(),
                ),
                self.timeline
                    .iter()
                    .filter(|entry| !entry.is_removed())
                    .map(|entry| self.timeline_entry(entry, &mut turn))
                    .collect(),
            )
        } else {
            (Vec::new(), View::Object(Vec::new()), Vec::new())
        };
        let plans = View::Object(
            cold.plans
                .iter()
                .map(|(id, o)| (id, View::of_obj(o)))
                .collect(),
        );
        let terminals = View::Object(
            cold.terminals
                .iter()
                .map(|(id, t)| (id, terminal_view(t)))
                .collect(),
        );
        vec![
            ("sessionId", View::Str(&self.id)),
            (
                "protocolVersion",
                View::Owned(match self.protocol_version.load(Ordering::Relaxed) {
                    NO_VERSION => Json::Null,
                    v => Json::Int(v),
                }),
            ),
            ("state", View::of_str(self.state.as_deref())),
            ("stopReason", View::of_str(self.stop_reason.as_deref())),
            ("messages", View::Array(messages)),
            ("toolCalls", tool_calls),
            ("terminals", terminals),
            ("plans", plans),
            ("compactions", keyed(&cold.compactions)),
            (
                "usage",
                cold.usage
                    .as_ref()
                    .map_or(View::Owned(Json::Null), View::of_obj),
            ),
            ("info", self.info.to_view()),
            (
                "availableCommands",
                stored(cold.available_commands.as_ref()),
            ),
            ("configOptions", stored(cold.config_options.as_ref())),
            (
                "currentModeId",
                View::of_str(cold.current_mode_id.as_deref()),
            ),
            ("permissions", objs(&cold.permissions)),
            ("prompts", objs(&self.prompts)),
            ("turns", self.turns_view(&kept_before(&self.timeline))),
            (
                "notices",
                View::Array(cold.notices.iter().map(View::Json).collect()),
            ),
            (
                "other",
                View::Array(cold.other.iter().map(View::Json).collect()),
            ),
            ("timeline", View::Array(timeline)),
            (
                "errors",
                View::Array(self.errors.iter().map(ErrorRecord::view).collect()),
            ),
            ("subagents", keyed(&cold.subagents)),
            ("updateExtras", View::of_obj(&cold.update_extras)),
        ]
    }
}

fn keyed(k: &Keyed<Fields>) -> View<'_> {
    View::Object(k.iter().map(|(id, f)| (id, f.to_view())).collect())
}

/// Tool call `id`: its `toolCallId` (the key it is stored under, not kept again among its
/// fields), then its fields.
pub(super) fn tool_call_view<'a>(id: &'a str, call: &'a ToolCall) -> View<'a> {
    let mut members = Vec::with_capacity(call.len() + 1);
    members.push(("toolCallId", View::Str(id)));
    members.extend(call.members());
    View::Object(members)
}

fn objs(v: &[Fields]) -> View<'_> {
    View::Array(v.iter().map(Fields::to_view).collect())
}

fn stored(v: Option<&Json>) -> View<'_> {
    v.map_or(View::Owned(Json::Null), View::Json)
}

/// A terminal's fields, then what it shows: `text`, `bytes` and `truncated`.
pub(super) fn terminal_view(t: &TerminalEntry) -> View<'_> {
    let mut o = t.fields.view_members();
    let term = lock(&t.term);
    view_set(&mut o, "text", View::Owned(Json::Str(term.text())));
    view_set(&mut o, "bytes", View::Owned(term.bytes_fed().into()));
    view_set(
        &mut o,
        "truncated",
        View::Owned(Json::Bool(term.truncated() || t.source_truncated)),
    );
    View::Object(o)
}

pub(super) fn message_view(m: &Message) -> View<'_> {
    let mut o = vec![
        ("id", View::Str(&m.id)),
        ("role", View::Str(m.role.as_str())),
    ];
    if let Some(content) = &m.content {
        o.push(("content", content.to_view()));
    }
    // No field is named `id`, `role` or `content`: updates never store those as fields.
    o.extend(m.fields.iter().flat_map(|f| f.view_members()));
    if let Some(truncated) = m.content.as_ref().and_then(|c| c.truncated_view()) {
        o.push(("truncated", truncated));
    }
    View::Object(o)
}
