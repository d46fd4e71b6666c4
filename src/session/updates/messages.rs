//! Messages: chunks (also on the byte fast path) and whole-message
//! upserts, keyed by (role, `messageId`), with anonymous v1 messages.

use std::sync::Arc;

use crate::session::value::Value;

use super::super::content::Content;
use super::super::fields::{Fields, patch_op};
use super::super::json::{Json, Members, as_str, dedup, is_object, member};
use super::super::model::Role;
use super::super::reducer::Reducer;
use super::super::rpc::Mode;
use super::super::scan;
use super::is_block;

/// The error record of a message's first truncation.
const TRUNCATED: &str = "message over max_message_bytes: its middle dropped";

impl Reducer {
    /// The error record of a message's first truncation, before the message's change. It is
    /// no refusal: the notes of the update being applied stay.
    fn truncated(&mut self, sid: &str) {
        let notes = std::mem::take(&mut self.notes);
        self.error(Some(sid), TRUNCATED.to_owned());
        self.notes = notes;
    }

    /// Index of message (`role`, `id`), created (with a timeline entry) when new.
    fn message(&mut self, sid: &str, role: Role, id: &str) -> usize {
        let si = self.session_index(sid);
        self.message_in(si, role, id)
    }

    /// [`Reducer::message`] in the session at index `si`.
    fn message_in(&mut self, si: usize, role: Role, id: &str) -> usize {
        if let Some((s, r, i)) = self.last_message
            && s == si
            && r == role
            && *self.sessions[si].messages[i].id == *id
        {
            return i;
        }
        let s = &mut self.sessions[si];
        if let Some(i) = s.find_message(id, role, false) {
            self.last_message = Some((si, role, i));
            return i;
        }
        let i = s.add_message(Arc::from(id), role, false);
        self.last_message = Some((si, role, i));
        i
    }

    /// A new anonymous message of `role` in session `si`: the next `~N` not already a real id
    /// of that role.
    fn anonymous_message(&mut self, si: usize, role: Role) -> usize {
        let s = &mut self.sessions[si];
        let id = loop {
            s.anonymous += 1;
            let id = format!("~{}", s.anonymous);
            let taken = s.find_message(&id, role, false).is_some();
            if !taken {
                break id;
            }
        };
        s.add_message(Arc::from(id), role, true)
    }

    /// The message of session `si` a v1 chunk of `role` without `messageId` goes on: the
    /// current one while it is the last thing shown; after a tool call, a plan, a terminal or
    /// another message, a new anonymous one.
    fn v1_message(&mut self, si: usize, role: Role) -> usize {
        let s = &self.sessions[si];
        match s.current {
            Some(i) if s.messages[i].role == role && s.is_timeline_tail(i) => i,
            _ => self.anonymous_message(si, role),
        }
    }

    pub(super) fn chunk(&mut self, sid: &str, kind: &str, role: Role, u: &Members<'_>) {
        let content = member(u, "content");
        if !is_object(content) {
            self.error(Some(sid), format!("{kind}: content must be an object"));
            return;
        }
        if !is_block(content) {
            self.error(Some(sid), format!("{kind}: content.type must be a string"));
            return;
        }
        let index = if let Some(id) = as_str(member(u, "messageId")) {
            self.message(sid, role, id)
        } else if role == Role::Session || self.mode() == Mode::V2 {
            self.error(Some(sid), format!("{kind}: messageId must be a string"));
            return;
        } else {
            let si = self.session_index(sid);
            self.v1_message(si, role)
        };
        let limit = self.budget.max_message_bytes;
        let s = self.session(sid);
        s.current = Some(index);
        let m = &mut s.messages[index];
        if role == Role::Session {
            set_participants(m.fields_mut(), u);
        }
        let cut = m
            .content
            .get_or_insert_with(Box::default)
            .push(content.expect("checked above"), limit);
        let id = m.id.clone();
        if cut {
            self.truncated(sid);
        }
        self.change_shared(sid, role.change_kind(), &id);
    }

    pub(super) fn upsert_message(&mut self, sid: &str, kind: &str, role: Role, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "messageId")) else {
            self.error(Some(sid), format!("{kind}: messageId must be a string"));
            return;
        };
        let index = self.message(sid, role, id);
        let limit = self.budget.max_message_bytes;
        let mut cut = false;
        let s = self.session(sid);
        s.current = Some(index);
        let m = &mut s.messages[index];
        let shared_id = Arc::clone(&m.id);
        let mut ops = Vec::new();
        for (k, v) in dedup(u) {
            match k {
                // `id` and `role` name the message in the snapshot (its key): a field of
                // that name in an update is not kept, so it cannot pass for another message.
                "sessionUpdate" | "messageId" | "id" | "role" => {}
                "content" => match v {
                    Value::Array(items) if items.is_empty() => m.content = None,
                    Value::Array(items) => {
                        let (content, truncated) = Content::from_values(items, limit);
                        m.content = Some(Box::new(content));
                        cut = truncated;
                    }
                    Value::Null => m.content = None,
                    _ => {}
                },
                "senderSessionId" | "recipientSessionId" if role == Role::Session => {
                    if !matches!(v, Value::Null) {
                        ops.push((k, Some(Json::from_value(v))));
                    }
                }
                _ => ops.push(patch_op(k, v)),
            }
        }
        if !ops.is_empty() {
            m.fields_mut().apply(ops);
        }
        if cut {
            self.truncated(sid);
        }
        self.change_shared(sid, role.change_kind(), &shared_id);
    }

    /// The streaming hot path: a message chunk, reduced without building a parse tree (a
    /// block that is not text is kept as its JSON text). Returns false, having changed nothing, for any other frame (and for a v2 chunk
    /// without `messageId`, an error the general path records); when it returns true the
    /// effect is exactly that of the general path.
    pub(in crate::session) fn fast_chunk(&mut self, bytes: &[u8]) -> bool {
        let mut decoded = std::mem::take(&mut self.decoded);
        let chunk = scan::text_chunk(bytes, &mut decoded)
            .filter(|chunk| chunk.message_id.is_some() || self.mode() != Mode::V2);
        let found = chunk.is_some();
        if let Some(chunk) = chunk {
            self.apply_text_chunk(&chunk);
        }
        self.decoded = decoded;
        found
    }

    /// What `session_update` and `chunk` do with a chunk the scanner took.
    fn apply_text_chunk(&mut self, chunk: &scan::TextChunk<'_>) {
        let si = self.session_index(chunk.session_id);
        let index = if let Some(id) = chunk.message_id {
            self.message_in(si, chunk.role, id)
        } else {
            self.v1_message(si, chunk.role)
        };
        let limit = self.budget.max_message_bytes;
        let s = &mut self.sessions[si];
        s.current = Some(index);
        let content = s.messages[index].content.get_or_insert_with(Box::default);
        let cut = match chunk.body {
            scan::ChunkBody::Text(text) => content.push_text(text, limit),
            scan::ChunkBody::Block { json, cost } => content.push_raw(json, cost, limit),
        };
        // Messages are never removed, and an eviction clears `message_changed`, so the indices
        // name the same message until the changes are taken.
        if cut {
            self.truncated(chunk.session_id);
        }
        self.touch(si);
        if self.message_changed != Some((si, index)) {
            let id = self.sessions[si].messages[index].id.clone();
            self.change_shared(chunk.session_id, chunk.role.change_kind(), &id);
            self.message_changed = Some((si, index));
        }
    }
}

/// The participants of a session message: a concrete id sets it, omitted or null keeps it.
fn set_participants(fields: &mut Fields, u: &Members<'_>) {
    for key in ["senderSessionId", "recipientSessionId"] {
        match member(u, key) {
            None | Some(Value::Null) => {}
            Some(v) => fields.set(key, Json::from_value(v)),
        }
    }
}
