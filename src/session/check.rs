//! The JSON type of every optional field of the known `session/update` variants, read off the
//! v1 and v2 schemas (stable and unstable) and, for `subagent_update` and the session
//! messages, the subagent drafts, with the members of the nested objects and the items of the
//! arrays the schemas type, one level down (also the one item of a `tool_call_content_chunk`,
//! the entries of a v1 `plan` and, asked by its handler, of a `plan_update`). Required fields
//! (ids, `title` of `tool_call`, ...) are checked by each variant's handler; unknown fields,
//! and the members of items of unknown `type`, stay raw and unchecked.
//!
//! `null` passes for every optional field listed: in v2 it clears, in v1 it is omission. The
//! same table is `_FIELD_TYPES` in the pure backend.

use jiter::JsonValue;

use super::Mode;
use super::json::{Members, member};

#[derive(Clone, Copy, Debug)]
pub(super) enum Ty {
    Str,
    Int,
    Num,
    Arr,
    Obj,
    /// An object whose members are checked.
    Shaped(&'static [Field]),
    /// An array each item of which is checked.
    Items(&'static Item),
    /// One item; its absence or a non-object is left to the variant's handler.
    One(&'static Item),
}

impl Ty {
    fn admits(self, value: &JsonValue<'_>) -> bool {
        matches!(
            (self, value),
            (Ty::Str, JsonValue::Str(_))
                | (Ty::Int, JsonValue::Int(_) | JsonValue::BigInt(_))
                | (
                    Ty::Num,
                    JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_)
                )
                | (Ty::Arr | Ty::Items(_), JsonValue::Array(_))
                | (Ty::Obj | Ty::Shaped(_) | Ty::One(_), JsonValue::Object(_))
        )
    }

    fn name(self) -> &'static str {
        match self {
            Ty::Str => "a string",
            Ty::Int => "an integer",
            Ty::Num => "a number",
            Ty::Arr | Ty::Items(_) => "an array",
            Ty::Obj | Ty::Shaped(_) | Ty::One(_) => "an object",
        }
    }
}

/// Whether a field must be present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Need {
    /// Absent or `null` passes.
    Opt,
    /// Present with its type.
    Req,
    /// Required, but its presence and type are the handler's (with its own error); only what
    /// is inside is checked here.
    Inner,
}

/// A field: its name, type and need.
pub(super) type Field = (&'static str, Ty, Need);

/// Which protocol versions a member rule applies to; before `initialize` only the rules of
/// both are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ver {
    Both,
    V1,
    V2,
}

/// The rules of an item of an array: an object with `members`, and when `by_type` is not
/// empty, those of its string `type` (listed in `members`); other types stay raw.
#[derive(Debug)]
pub(super) struct Item {
    members: &'static [Field],
    by_type: &'static [(&'static str, Ver, &'static [Field])],
}

const fn opt(name: &'static str, ty: Ty) -> Field {
    (name, ty, Need::Opt)
}

const fn req(name: &'static str, ty: Ty) -> Field {
    (name, ty, Need::Req)
}

const fn inner(name: &'static str, ty: Ty) -> Field {
    (name, ty, Need::Inner)
}

const META: Field = opt("_meta", Ty::Obj);

/// `ToolCallContent`: v1 and v2 differ in what a diff carries.
const TOOL_CALL_CONTENT: Item = Item {
    members: &[req("type", Ty::Str)],
    by_type: &[
        ("content", Ver::Both, &[req("content", Ty::Obj), META]),
        (
            "diff",
            Ver::V1,
            &[
                req("path", Ty::Str),
                opt("oldText", Ty::Str),
                req("newText", Ty::Str),
                META,
            ],
        ),
        (
            "diff",
            Ver::V2,
            &[req("changes", Ty::Arr), opt("patch", Ty::Obj), META],
        ),
        ("terminal", Ver::Both, &[req("terminalId", Ty::Str), META]),
    ],
};
const TOOL_CALL_LOCATION: Item = Item {
    members: &[req("path", Ty::Str), opt("line", Ty::Int), META],
    by_type: &[],
};
/// A `ContentBlock`, named by its `type`; the members of each type stay raw.
const CONTENT_BLOCK: Item = Item {
    members: &[req("type", Ty::Str)],
    by_type: &[],
};
/// `priority` and `status` are open enums.
const PLAN_ENTRY: Item = Item {
    members: &[
        req("content", Ty::Str),
        req("priority", Ty::Str),
        req("status", Ty::Str),
        META,
    ],
    by_type: &[],
};

const CHUNK: &[Field] = &[opt("messageId", Ty::Str), META];
const UPSERT: &[Field] = &[opt("content", Ty::Arr), META];
const SESSION_MESSAGE: &[Field] = &[
    opt("messageId", Ty::Str),
    opt("content", Ty::Arr),
    opt("senderSessionId", Ty::Str),
    opt("recipientSessionId", Ty::Str),
    META,
];
const TOOL_CALL: &[Field] = &[
    opt("title", Ty::Str),
    opt("name", Ty::Str),
    opt("kind", Ty::Str),
    opt("status", Ty::Str),
    opt("content", Ty::Items(&TOOL_CALL_CONTENT)),
    opt("locations", Ty::Items(&TOOL_CALL_LOCATION)),
    META,
];
const ONLY_META: &[Field] = &[META];

/// Variant -> its checked fields. Open enums (`kind`, `status`, `stopReason`, `severity`,
/// `state`) take any string; `rawInput`/`rawOutput` and the subagent `state` (a string or a
/// state object in the drafts) take anything and are not listed.
pub(super) const FIELD_TYPES: &[(&str, &[Field])] = &[
    ("user_message_chunk", CHUNK),
    ("agent_message_chunk", CHUNK),
    ("agent_thought_chunk", CHUNK),
    (
        "session_message_chunk",
        &[
            opt("messageId", Ty::Str),
            opt("senderSessionId", Ty::Str),
            opt("recipientSessionId", Ty::Str),
            META,
        ],
    ),
    ("user_message", UPSERT),
    ("agent_message", UPSERT),
    ("agent_thought", UPSERT),
    ("session_message", SESSION_MESSAGE),
    ("tool_call", TOOL_CALL),
    ("tool_call_update", TOOL_CALL),
    (
        "tool_call_content_chunk",
        &[inner("content", Ty::One(&TOOL_CALL_CONTENT)), META],
    ),
    (
        "terminal_update",
        &[
            opt("command", Ty::Str),
            opt("cwd", Ty::Str),
            opt("output", Ty::Shaped(&[req("data", Ty::Str), META])),
            opt(
                "exitStatus",
                Ty::Shaped(&[opt("exitCode", Ty::Int), opt("signal", Ty::Str), META]),
            ),
            META,
        ],
    ),
    ("terminal_output_chunk", ONLY_META),
    ("plan", &[inner("entries", Ty::Items(&PLAN_ENTRY)), META]),
    ("plan_update", ONLY_META),
    ("plan_removed", ONLY_META),
    ("available_commands_update", ONLY_META),
    ("config_option_update", ONLY_META),
    ("current_mode_update", ONLY_META),
    (
        "session_info_update",
        &[opt("title", Ty::Str), opt("updatedAt", Ty::Str), META],
    ),
    (
        "usage_update",
        &[
            opt(
                "cost",
                Ty::Shaped(&[req("amount", Ty::Num), req("currency", Ty::Str), META]),
            ),
            META,
        ],
    ),
    (
        "state_update",
        &[
            opt("stopReason", Ty::Str),
            opt(
                "usage",
                Ty::Shaped(&[
                    req("totalTokens", Ty::Int),
                    req("inputTokens", Ty::Int),
                    req("outputTokens", Ty::Int),
                    opt("thoughtTokens", Ty::Int),
                    opt("cachedReadTokens", Ty::Int),
                    opt("cachedWriteTokens", Ty::Int),
                    META,
                ]),
            ),
            META,
        ],
    ),
    ("notice", &[opt("description", Ty::Str), META]),
    (
        "compaction_update",
        &[
            opt("summary", Ty::Items(&CONTENT_BLOCK)),
            opt("error", Ty::Str),
            META,
        ],
    ),
    (
        "compaction_summary_chunk",
        &[inner("content", Ty::One(&CONTENT_BLOCK)), META],
    ),
    (
        "subagent_update",
        &[
            opt("name", Ty::Str),
            opt("task", Ty::Str),
            opt("title", Ty::Str),
            opt("description", Ty::Str),
            opt("capabilities", Ty::Obj),
            META,
        ],
    ),
];

/// What `value` should have been if it does not fit `field` (by type only): its type's name
/// and whether `null` would do.
fn mismatch(value: Option<&JsonValue<'_>>, field: Field) -> Option<(&'static str, &'static str)> {
    let (_, ty, need) = field;
    match (need, value) {
        (Need::Inner, _) => None,
        (_, Some(v)) if ty.admits(v) => None,
        (Need::Opt, None | Some(JsonValue::Null)) => None,
        (Need::Req, _) => Some((ty.name(), "")),
        (Need::Opt, _) => Some((ty.name(), " or null")),
    }
}

/// Where a nested object sits: field `name`, or its item `index`. Paths are only spelled out
/// for an error, to keep a valid update free of allocations.
#[derive(Clone, Copy)]
struct At<'a> {
    name: &'a str,
    index: Option<usize>,
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{i}]", self.name),
            None => f.write_str(self.name),
        }
    }
}

/// The first of `fields` of object `o` (at `at`) with the wrong type. Members are checked by
/// type only: the rules stop here, one level down.
fn members_error(kind: &str, at: At<'_>, o: &Members<'_>, fields: &[Field]) -> Option<String> {
    fields.iter().find_map(|&field| {
        let (a, or_null) = mismatch(member(o, field.0), field)?;
        Some(format!("{kind}: {at}.{} must be {a}{or_null}", field.0))
    })
}

/// The error of one item (at `at`) against `item`.
fn item_error(
    kind: &str,
    at: At<'_>,
    value: &JsonValue<'_>,
    item: &Item,
    mode: Mode,
) -> Option<String> {
    let JsonValue::Object(o) = value else {
        return Some(format!("{kind}: {at} must be an object"));
    };
    if let Some(e) = members_error(kind, at, o, item.members) {
        return Some(e);
    }
    let Some(JsonValue::Str(tag)) = member(o, "type") else {
        return None;
    };
    item.by_type
        .iter()
        .filter(|(t, ver, _)| {
            t == tag
                && match ver {
                    Ver::Both => true,
                    Ver::V1 => mode == Mode::V1,
                    Ver::V2 => mode == Mode::V2,
                }
        })
        .find_map(|(_, _, fields)| members_error(kind, at, o, fields))
}

/// The error of the first item of array `value` (field `name`) against `item`.
fn items_error(
    kind: &str,
    name: &str,
    value: &JsonValue<'_>,
    item: &Item,
    mode: Mode,
) -> Option<String> {
    let JsonValue::Array(items) = value else {
        return None;
    };
    items.iter().enumerate().find_map(|(i, v)| {
        let at = At {
            name,
            index: Some(i),
        };
        item_error(kind, at, v, item, mode)
    })
}

/// The error of the entries of a `plan_update` of type `items`: the same rule as those of a
/// v1 `plan`, one object further down, so its handler asks once it knows the plan's type.
pub(super) fn plan_entries_error(entries: &JsonValue<'_>, mode: Mode) -> Option<String> {
    items_error("plan_update", "plan.entries", entries, &PLAN_ENTRY, mode)
}

/// The error of the first field of update `u` (of variant `kind`) with the wrong type, if
/// any, under the rules of `mode`.
pub(super) fn field_error(kind: &str, u: &Members<'_>, mode: Mode) -> Option<String> {
    let (_, fields) = FIELD_TYPES.iter().find(|(k, _)| *k == kind)?;
    for &field in *fields {
        let (name, ty, _) = field;
        let value = member(u, name);
        if let Some((a, or_null)) = mismatch(value, field) {
            return Some(format!("{kind}: {name} must be {a}{or_null}"));
        }
        let at = At { name, index: None };
        let e = match (ty, value) {
            (Ty::Shaped(members), Some(JsonValue::Object(o))) => {
                members_error(kind, at, o, members)
            }
            (Ty::Items(item), Some(v)) => items_error(kind, name, v, item, mode),
            (Ty::One(item), Some(v @ JsonValue::Object(_))) => item_error(kind, at, v, item, mode),
            _ => None,
        };
        if e.is_some() {
            return e;
        }
    }
    None
}
