//! One entity of a session ([`Session::tool_call`], [`Session::message`], ...): exactly its entry
//! in [`Session::snapshot`], read without building the rest of the snapshot.

use super::json::{Json, View};
use super::model::{Role, Session};
use super::snapshot::{message_view, terminal_view, tool_call_view};

impl Session {
    /// Tool call `tool_call_id`, as `snapshot()["toolCalls"][tool_call_id]`.
    pub fn tool_call(&self, tool_call_id: &str) -> Option<Json> {
        self.tool_call_view(tool_call_id).map(View::into_json)
    }

    /// Message (`role`, `message_id`), as its entry of `snapshot()["messages"]`; an anonymous
    /// message (`~1`, ...) is found by its id too, as [`Session::message_text`] finds it.
    pub fn message(&self, role: &str, message_id: &str) -> Option<Json> {
        self.message_view(role, message_id).map(View::into_json)
    }

    /// The content blocks of `snapshot()["messages"][index]`, each as sent (the snapshot shows
    /// a run of plain text blocks as one).
    pub fn message_blocks(&self, index: usize) -> Option<Json> {
        self.message_blocks_view(index).map(View::into_json)
    }

    /// Terminal `terminal_id`'s fields and what it shows, as
    /// `snapshot()["terminals"][terminal_id]` (`text` rendered now).
    pub fn terminal_snapshot(&self, terminal_id: &str) -> Option<Json> {
        self.terminal_snapshot_view(terminal_id)
            .map(View::into_json)
    }

    /// Plan `plan_id`, as `snapshot()["plans"][plan_id]`.
    pub fn plan(&self, plan_id: &str) -> Option<Json> {
        self.plan_view(plan_id).map(View::into_json)
    }

    /// Compaction `compaction_id`, as `snapshot()["compactions"][compaction_id]`.
    pub fn compaction(&self, compaction_id: &str) -> Option<Json> {
        self.compaction_view(compaction_id).map(View::into_json)
    }

    /// Subagent `subagent_id`, as `snapshot()["subagents"][subagent_id]`.
    pub fn subagent(&self, subagent_id: &str) -> Option<Json> {
        self.subagent_view(subagent_id).map(View::into_json)
    }

    pub(crate) fn tool_call_view(&self, tool_call_id: &str) -> Option<View<'_>> {
        self.tool_calls
            .get_key_value(tool_call_id)
            .map(|(id, f)| tool_call_view(id, f))
    }

    pub(crate) fn message_view(&self, role: &str, message_id: &str) -> Option<View<'_>> {
        let i = self.message_named(message_id, Role::parse(role)?)?;
        Some(message_view(&self.messages[i]))
    }

    /// The content blocks of the `index`th message of `snapshot()["messages"]` each as sent
    /// (the snapshot shows a run of plain text blocks as one); `None` without that message or
    /// content.
    pub(crate) fn message_blocks_view(&self, index: usize) -> Option<View<'_>> {
        let content = self.messages.get(index)?.content.as_deref()?;
        Some(content.to_view_as_sent())
    }

    pub(crate) fn terminal_snapshot_view(&self, terminal_id: &str) -> Option<View<'_>> {
        self.cold().terminals.get(terminal_id).map(terminal_view)
    }

    pub(crate) fn plan_view(&self, plan_id: &str) -> Option<View<'_>> {
        self.cold().plans.get(plan_id).map(View::of_obj)
    }

    pub(crate) fn compaction_view(&self, compaction_id: &str) -> Option<View<'_>> {
        self.cold()
            .compactions
            .get(compaction_id)
            .map(|f| f.to_view())
    }

    pub(crate) fn subagent_view(&self, subagent_id: &str) -> Option<View<'_>> {
        self.cold().subagents.get(subagent_id).map(|f| f.to_view())
    }
}

#[cfg(test)]
mod tests {
    use super::super::json::obj_get;
    use super::super::{Json, Sessions};

    fn member<'a>(value: &'a Json, key: &str) -> &'a Json {
        let Json::Object(members) = value else {
            panic!("{key}: not an object");
        };
        obj_get(members, key).unwrap_or_else(|| panic!("no {key}"))
    }

    /// Each read is exactly the snapshot's entry, and None for an id of nothing.
    #[test]
    fn reads_are_snapshot_entries() {
        let updates = [
            r#"{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","status":"pending"}"#,
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}"#,
            r#"{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"b"}}"#,
            r#"{"sessionUpdate":"plan","entries":[{"content":"c","priority":"low","status":"pending"}]}"#,
            r#"{"sessionUpdate":"compaction_update","compactionId":"c","status":"completed"}"#,
            r#"{"sessionUpdate":"subagent_update","subagentSessionId":"sub","name":"n"}"#,
            r#"{"sessionUpdate":"terminal_update","terminalId":"term","command":"ls"}"#,
        ];
        let mut store = Sessions::default();
        for update in updates {
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
            );
            store.feed(format!("{line}\n").as_bytes());
        }
        let session = store.get("s").expect("session s");
        let snapshot = session.snapshot();
        let entry = |key: &str, id: &str| Some(member(member(&snapshot, key), id).clone());
        assert_eq!(session.tool_call("t"), entry("toolCalls", "t"));
        assert_eq!(session.plan("main"), entry("plans", "main"));
        assert_eq!(session.compaction("c"), entry("compactions", "c"));
        assert_eq!(session.subagent("sub"), entry("subagents", "sub"));
        assert_eq!(
            session.terminal_snapshot("term"),
            entry("terminals", "term")
        );
        let Json::Array(messages) = member(&snapshot, "messages") else {
            panic!("messages: not an array");
        };
        assert_eq!(session.message("agent", "~1").as_ref(), messages.first());
        assert_eq!(session.message("thought", "m").as_ref(), messages.get(1));
        assert_eq!(session.message("agent", "m"), None);
        assert_eq!(session.message("nobody", "m"), None);
        assert_eq!(session.tool_call("none"), None);
        assert_eq!(session.terminal_snapshot("none"), None);
    }
}
