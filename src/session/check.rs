//! The JSON type of every optional field of the known `session/update` variants, read off the
//! v1 and v2 schemas (stable and unstable) and, for `subagent_update` and the session
//! messages, the subagent drafts. Required fields (ids, `title` of `tool_call`, ...) are
//! checked by each variant's handler; unknown fields stay raw and unchecked.
//!
//! `null` passes for every field listed: in v2 it clears, in v1 it is omission. The same
//! table is `_FIELD_TYPES` in the pure backend.

use jiter::JsonValue;

use super::json::{Members, member};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ty {
    Str,
    Num,
    Arr,
    Obj,
}

impl Ty {
    fn admits(self, value: &JsonValue<'_>) -> bool {
        matches!(
            (self, value),
            (Ty::Str, JsonValue::Str(_))
                | (
                    Ty::Num,
                    JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_)
                )
                | (Ty::Arr, JsonValue::Array(_))
                | (Ty::Obj, JsonValue::Object(_))
        )
    }

    fn name(self) -> &'static str {
        match self {
            Ty::Str => "a string",
            Ty::Num => "a number",
            Ty::Arr => "an array",
            Ty::Obj => "an object",
        }
    }
}

/// A field of an update; `parent.member` names a required member of the object field
/// `parent`, checked when `parent` is an object.
type Field = (&'static str, Ty);

const META: Field = ("_meta", Ty::Obj);
const CHUNK: &[Field] = &[("messageId", Ty::Str), META];
const UPSERT: &[Field] = &[("content", Ty::Arr), META];
const SESSION_MESSAGE: &[Field] = &[
    ("messageId", Ty::Str),
    ("content", Ty::Arr),
    ("senderSessionId", Ty::Str),
    ("recipientSessionId", Ty::Str),
    META,
];
const TOOL_CALL: &[Field] = &[
    ("title", Ty::Str),
    ("name", Ty::Str),
    ("kind", Ty::Str),
    ("status", Ty::Str),
    ("content", Ty::Arr),
    ("locations", Ty::Arr),
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
            ("messageId", Ty::Str),
            ("senderSessionId", Ty::Str),
            ("recipientSessionId", Ty::Str),
            META,
        ],
    ),
    ("user_message", UPSERT),
    ("agent_message", UPSERT),
    ("agent_thought", UPSERT),
    ("session_message", SESSION_MESSAGE),
    ("tool_call", TOOL_CALL),
    ("tool_call_update", TOOL_CALL),
    ("tool_call_content_chunk", ONLY_META),
    (
        "terminal_update",
        &[
            ("command", Ty::Str),
            ("cwd", Ty::Str),
            ("output", Ty::Obj),
            ("output.data", Ty::Str),
            ("exitStatus", Ty::Obj),
            META,
        ],
    ),
    ("terminal_output_chunk", ONLY_META),
    ("plan", ONLY_META),
    ("plan_update", ONLY_META),
    ("plan_removed", ONLY_META),
    ("available_commands_update", ONLY_META),
    ("config_option_update", ONLY_META),
    ("current_mode_update", ONLY_META),
    (
        "session_info_update",
        &[("title", Ty::Str), ("updatedAt", Ty::Str), META],
    ),
    (
        "usage_update",
        &[
            ("cost", Ty::Obj),
            ("cost.amount", Ty::Num),
            ("cost.currency", Ty::Str),
            META,
        ],
    ),
    (
        "state_update",
        &[("stopReason", Ty::Str), ("usage", Ty::Obj), META],
    ),
    ("notice", &[("description", Ty::Str), META]),
    (
        "compaction_update",
        &[("summary", Ty::Arr), ("error", Ty::Str), META],
    ),
    ("compaction_summary_chunk", ONLY_META),
    (
        "subagent_update",
        &[
            ("name", Ty::Str),
            ("task", Ty::Str),
            ("title", Ty::Str),
            ("description", Ty::Str),
            ("capabilities", Ty::Obj),
            META,
        ],
    ),
];

/// The error of the first field of update `u` (of variant `kind`) with the wrong type, if any.
pub(super) fn field_error(kind: &str, u: &Members<'_>) -> Option<String> {
    let (_, fields) = FIELD_TYPES.iter().find(|(k, _)| *k == kind)?;
    for &(field, ty) in *fields {
        if let Some((parent, name)) = field.split_once('.') {
            // A required member of an object field.
            if let Some(JsonValue::Object(p)) = member(u, parent)
                && !member(p, name).is_some_and(|v| ty.admits(v))
            {
                return Some(format!("{kind}: {field} must be {}", ty.name()));
            }
        } else if let Some(v) = member(u, field)
            && !matches!(v, JsonValue::Null)
            && !ty.admits(v)
        {
            return Some(format!("{kind}: {field} must be {} or null", ty.name()));
        }
    }
    None
}
