//! A tool call's fields, stored small: a store may hold a million tool calls, and most carry
//! a `title`, a `kind` and a `status` besides their payloads. Those three are kept typed (the
//! title as its text, a `kind` or `status` the schemas name as a byte) while no other field
//! precedes them; every other field, and any of the three whose value does not fit, is kept
//! as [`Fields`]. The fields read back in the order a dict would hold them (the pure backend's
//! is one): the typed ones first, in the order set, then the others.

use super::fields::Fields;
use super::json::{Json, View};
use super::tables::{TOOL_CALL_STATUSES, TOOL_KINDS};
use super::updates::push_item;

/// A field kept typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Typed {
    Title = 1,
    Kind = 2,
    Status = 3,
}

impl Typed {
    fn of(key: &str) -> Option<Typed> {
        match key {
            "title" => Some(Typed::Title),
            "kind" => Some(Typed::Kind),
            "status" => Some(Typed::Status),
            _ => None,
        }
    }

    fn from_code(code: u8) -> Option<Typed> {
        match code {
            1 => Some(Typed::Title),
            2 => Some(Typed::Kind),
            3 => Some(Typed::Status),
            _ => None,
        }
    }

    fn key(self) -> &'static str {
        match self {
            Typed::Title => "title",
            Typed::Kind => "kind",
            Typed::Status => "status",
        }
    }
}

/// The index + 1 of `value` in `names`, if it is one of them.
fn code_in(names: &[&str], value: &Json) -> Option<u8> {
    let Json::Str(value) = value else {
        return None;
    };
    let at = names.iter().position(|name| name == value)?;
    u8::try_from(at + 1).ok()
}

/// The fields of one tool call but its `toolCallId` (the key it is stored under).
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolCall {
    title: Option<Box<str>>,
    /// Every field not kept typed, after the typed ones.
    rest: Option<Box<Fields>>,
    /// The typed fields present, in the order set (a [`Typed`] each, 0 past the last).
    order: [u8; 3],
    /// Index + 1 in [`TOOL_KINDS`] and [`TOOL_CALL_STATUSES`] (0: absent).
    kind: u8,
    status: u8,
}

const _: () = assert!(std::mem::size_of::<ToolCall>() <= 32);

impl ToolCall {
    pub fn clear(&mut self) {
        *self = ToolCall::default();
    }

    fn typed(&self) -> impl Iterator<Item = Typed> + '_ {
        self.order.iter().map_while(|&code| Typed::from_code(code))
    }

    fn has(&self, typed: Typed) -> bool {
        self.order.contains(&(typed as u8))
    }

    fn typed_text(&self, typed: Typed) -> &str {
        let named = |names: &[&'static str], code: u8| {
            names
                .get(usize::from(code).wrapping_sub(1))
                .copied()
                .unwrap_or("")
        };
        match typed {
            Typed::Title => self.title.as_deref().unwrap_or(""),
            Typed::Kind => named(TOOL_KINDS, self.kind),
            Typed::Status => named(TOOL_CALL_STATUSES, self.status),
        }
    }

    /// Keep `value` as field `typed`, if it fits; false (nothing kept) if it does not.
    fn store(&mut self, typed: Typed, value: &Json) -> bool {
        match typed {
            Typed::Title => match value {
                Json::Str(text) => self.title = Some(text.as_str().into()),
                _ => return false,
            },
            Typed::Kind => match code_in(TOOL_KINDS, value) {
                Some(code) => self.kind = code,
                None => return false,
            },
            Typed::Status => match code_in(TOOL_CALL_STATUSES, value) {
                Some(code) => self.status = code,
                None => return false,
            },
        }
        true
    }

    fn rest_is_empty(&self) -> bool {
        self.rest.as_ref().is_none_or(|rest| rest.is_empty())
    }

    fn rest_mut(&mut self, room: usize) -> &mut Fields {
        self.rest
            .get_or_insert_with(|| Box::new(Fields::with_capacity(room)))
    }

    /// Move the typed fields to the front of `rest`, as fields like any other.
    fn spill(&mut self) {
        let mut fields = Fields::new();
        for typed in self.typed() {
            fields.set(typed.key(), Json::Str(self.typed_text(typed).to_owned()));
        }
        if let Some(rest) = self.rest.take() {
            for (key, value) in rest.into_obj() {
                fields.set(&key, value);
            }
        }
        *self = ToolCall {
            rest: Some(Box::new(fields)),
            ..ToolCall::default()
        };
    }

    /// Set `key`: in place if present, else at the end.
    #[cfg(test)]
    pub fn set(&mut self, key: &str, value: Json) {
        self.set_with_room(key, value, 1);
    }

    /// [`Self::set`], with room for `room` fields if this makes the fields kept untyped.
    fn set_with_room(&mut self, key: &str, value: Json, room: usize) {
        match Typed::of(key) {
            Some(typed) if self.has(typed) => {
                if !self.store(typed, &value) {
                    self.spill();
                    self.rest_mut(room).set(key, value);
                }
            }
            Some(typed) if self.rest_is_empty() && self.store(typed, &value) => {
                let free = self.order.iter().position(|&code| code == 0);
                if let Some(at) = free {
                    self.order[at] = typed as u8;
                }
            }
            _ => self.rest_mut(room).set(key, value),
        }
    }

    /// Remove `key`; true if it was present.
    pub fn remove(&mut self, key: &str) -> bool {
        if let Some(typed) = Typed::of(key)
            && let Some(at) = self.order.iter().position(|&code| code == typed as u8)
        {
            self.order.copy_within(at + 1.., at);
            if let Some(last) = self.order.last_mut() {
                *last = 0;
            }
            match typed {
                Typed::Title => self.title = None,
                Typed::Kind => self.kind = 0,
                Typed::Status => self.status = 0,
            }
            return true;
        }
        self.rest.as_mut().is_some_and(|rest| rest.remove(key))
    }

    /// Apply patch operations in order: `Some(value)` sets, `None` removes.
    pub fn apply(&mut self, ops: Vec<(&str, Option<Json>)>) {
        // A tool call's first patch names most of the fields it will have: when it makes
        // the untyped ones, room for those only.
        let mut room = ops
            .iter()
            .filter(|(key, value)| value.is_some() && Typed::of(key).is_none())
            .count();
        for (key, value) in ops {
            match value {
                Some(value) => {
                    room = room.saturating_sub(usize::from(Typed::of(key).is_none()));
                    self.set_with_room(key, value, room + 1);
                }
                None => {
                    self.remove(key);
                }
            }
        }
    }

    /// Append `item` to the array `key` (made, or replacing another value, at the end).
    pub fn push_item(&mut self, key: &str, item: Json) {
        if Typed::of(key).is_some_and(|typed| self.has(typed)) {
            self.spill();
        }
        push_item(self.rest_mut(1), key, item);
    }

    /// Whether field `key` is present.
    #[cfg(test)]
    pub fn contains(&self, key: &str) -> bool {
        Typed::of(key).is_some_and(|typed| self.has(typed))
            || self
                .rest
                .as_ref()
                .is_some_and(|rest| rest.get(key).is_some())
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.typed().count() + self.rest.as_ref().map_or(0, |rest| rest.len())
    }

    /// The fields in order, viewed.
    pub fn members(&self) -> impl Iterator<Item = (&str, View<'_>)> {
        let typed = self
            .typed()
            .map(|typed| (typed.key(), View::Str(self.typed_text(typed))));
        let rest = self
            .rest
            .iter()
            .flat_map(|rest| rest.iter().map(|(key, value)| (key, View::Json(value))));
        typed.chain(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(call: &ToolCall) -> Vec<&str> {
        call.members().map(|(key, _)| key).collect()
    }

    fn text(call: &ToolCall, key: &str) -> Option<Json> {
        call.members()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.into_json())
    }

    #[test]
    fn fields_keep_a_dicts_order_typed_or_not() {
        let mut call = ToolCall::default();
        call.apply(vec![
            ("title", Some("ls".into())),
            ("status", Some("pending".into())),
        ]);
        assert_eq!(keys(&call), ["title", "status"]);
        assert!(call.rest.is_none(), "both typed");
        // A field after an untyped one stays untyped, so the order holds.
        call.set("rawInput", Json::Int(1));
        call.set("kind", "read".into());
        assert_eq!(keys(&call), ["title", "status", "rawInput", "kind"]);
        // A removed key that returns goes last.
        assert!(call.remove("title"));
        call.set("title", "again".into());
        assert_eq!(keys(&call), ["status", "rawInput", "kind", "title"]);
        assert_eq!(text(&call, "title"), Some("again".into()));
        // Set again, a key keeps its place.
        call.set("status", "completed".into());
        assert_eq!(keys(&call), ["status", "rawInput", "kind", "title"]);
        assert_eq!(text(&call, "status"), Some("completed".into()));
        assert_eq!(call.len(), 4);
    }

    #[test]
    fn a_value_that_does_not_fit_keeps_its_place() {
        let mut call = ToolCall::default();
        call.apply(vec![
            ("kind", Some("read".into())),
            ("title", Some("t".into())),
            ("status", Some("pending".into())),
        ]);
        // An open v2 status, a number, a title that is not a string: kept as sent, in place.
        call.set("status", "waiting".into());
        assert_eq!(keys(&call), ["kind", "title", "status"]);
        assert_eq!(text(&call, "status"), Some("waiting".into()));
        call.set("title", Json::Int(7));
        assert_eq!(text(&call, "title"), Some(Json::Int(7)));
        assert_eq!(keys(&call), ["kind", "title", "status"]);
        assert_eq!(text(&call, "kind"), Some("read".into()));
        // Cleared, a tool call starts again typed.
        call.clear();
        call.set("kind", "execute".into());
        assert!(call.rest.is_none());
        assert_eq!(text(&call, "kind"), Some("execute".into()));
    }

    #[test]
    fn every_named_value_is_kept_typed() {
        for (key, names) in [("kind", TOOL_KINDS), ("status", TOOL_CALL_STATUSES)] {
            for name in names {
                let mut call = ToolCall::default();
                call.set(key, (*name).into());
                assert!(call.rest.is_none(), "{key} {name}");
                assert_eq!(text(&call, key), Some((*name).into()));
            }
        }
    }

    #[test]
    fn items_pushed_to_a_typed_key_replace_its_value_in_place() {
        let mut call = ToolCall::default();
        call.set("title", "t".into());
        call.set("status", "failed".into());
        call.push_item("title", Json::Int(1));
        call.push_item("content", Json::Int(2));
        assert_eq!(keys(&call), ["title", "status", "content"]);
        assert_eq!(text(&call, "title"), Some(Json::Array(vec![Json::Int(1)])));
        assert!(call.contains("status") && !call.contains("kind"));
        assert!(call.remove("content") && !call.remove("content"));
    }
}
