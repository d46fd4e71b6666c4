//! Tool calls: `tool_call`, `tool_call_update` and the v2 `tool_call_content_chunk`.

use crate::session::value::Value;

use super::super::fields::patch_op;
use super::super::json::{Json, Members, as_str, dedup, member};
use super::super::model::{EntryKind, TimelineEntry};
use super::super::reducer::Reducer;
use super::super::rpc::Mode;
use super::super::tool_call::ToolCall;
use super::is_block;

impl Reducer {
    pub(super) fn tool_call(&mut self, sid: &str, u: &Members<'_>, create: bool) {
        let kind = if create {
            "tool_call"
        } else {
            "tool_call_update"
        };
        let Some(id) = as_str(member(u, "toolCallId")) else {
            self.error(Some(sid), format!("{kind}: toolCallId must be a string"));
            return;
        };
        if create && as_str(member(u, "title")).is_none() {
            self.error(Some(sid), "tool_call: title must be a string".to_owned());
            return;
        }
        let null_clears = self.mode() != Mode::V1;
        let s = self.session(sid);
        let (call, new) = s.tool_calls.entry(id, ToolCall::default);
        if create && !new {
            call.clear();
        }
        let mut ops = Vec::new();
        for (k, v) in dedup(u) {
            match (k, v) {
                ("sessionUpdate" | "toolCallId", _) => {}
                (_, Value::Null) if !null_clears => {}
                ("content" | "locations", Value::Array(items)) if items.is_empty() => {
                    ops.push((k, None));
                }
                ("content" | "locations", Value::Array(_) | Value::Null) => {
                    ops.push(patch_op(k, v));
                }
                ("content" | "locations", _) => {}
                _ => ops.push(patch_op(k, v)),
            }
        }
        call.apply(ops);
        if new {
            let placed = TimelineEntry::of(EntryKind::ToolCall, &s.tool_calls, id);
            s.timeline.push(placed);
        }
        self.change(sid, "toolCall", id);
    }

    pub(super) fn tool_call_chunk(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "toolCallId")) else {
            self.error(
                Some(sid),
                "tool_call_content_chunk: toolCallId must be a string".to_owned(),
            );
            return;
        };
        let Some(content @ Value::Object(_)) = member(u, "content") else {
            self.error(
                Some(sid),
                "tool_call_content_chunk: content must be an object".to_owned(),
            );
            return;
        };
        if !is_block(Some(content)) {
            self.error(
                Some(sid),
                "tool_call_content_chunk: content.type must be a string".to_owned(),
            );
            return;
        }
        let s = self.session(sid);
        let (call, new) = s.tool_calls.entry(id, ToolCall::default);
        call.push_item("content", Json::from_value(content));
        if new {
            let placed = TimelineEntry::of(EntryKind::ToolCall, &s.tool_calls, id);
            s.timeline.push(placed);
        }
        self.change(sid, "toolCall", id);
    }
}
