//! The schema checker: each known `session/update` variant's fields against their JSON types
//! (`FIELD_TYPES` in [`super::tables`], generated from `protocol/tables.json`), with the
//! members of the nested objects and the items of the arrays the schemas type, one level down
//! (also the one item of a `tool_call_content_chunk`, the entries of a v1 `plan` and, asked by
//! its handler, of a `plan_update`). Required fields (ids, `title` of `tool_call`, ...) are
//! checked by each variant's handler; unknown fields, and the members of items of unknown
//! `type`, stay raw and unchecked.
//!
//! `null` passes for every optional field listed: in v2 it clears, in v1 it is omission. What
//! does not fit is repaired as the schemas' decoding marks say ([`repair`]): an optional field
//! is read as absent, an array item that cannot be read is left out, and a required part that
//! does not fit refuses the update. [`field_error`] finds whether anything needs repair
//! without allocating, which is all a valid update costs. The pure backend reads the same
//! generated table and follows the same rules.

use std::borrow::Cow;

use crate::session::value::Value;

use super::json::{Members, member};
use super::rpc::Mode;
use super::tables::{ANY_TYPE, CONFIG_OPTION, FIELD_TYPES, PLAN_ENTRY};

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
    fn admits(self, value: &Value<'_>) -> bool {
        // An opaque value kept as text (`_meta`) is checked by its kind only.
        if let Value::Raw(raw) = value {
            return match self {
                Ty::Obj => raw.is_object(),
                Ty::Arr => !raw.is_object(),
                _ => false,
            };
        }
        matches!(
            (self, value),
            (Ty::Str, Value::Str(_))
                | (Ty::Int, Value::Int(_) | Value::BigInt(_))
                | (Ty::Num, Value::Int(_) | Value::BigInt(_) | Value::Float(_))
                | (Ty::Arr | Ty::Items(_), Value::Array(_))
                | (Ty::Obj | Ty::Shaped(_) | Ty::One(_), Value::Object(_))
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
    /// A required array the schemas mark default-on-error: absent is the handler's error, but
    /// present with another type (`null` too) it reads as `[]`.
    Default,
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
/// empty, those of its string `type` (listed in `members`; [`ANY_TYPE`] for any item of the
/// version); other types stay raw.
#[derive(Debug)]
pub(super) struct Item {
    pub(super) members: &'static [Field],
    pub(super) by_type: &'static [(&'static str, Ver, &'static [Field])],
}

const fn opt(name: &'static str, ty: Ty) -> Field {
    (name, ty, Need::Opt)
}

const META: Field = opt("_meta", Ty::Obj);

/// What `value` should have been if it does not fit `field` (by type only): its type's name
/// and whether `null` would do.
fn mismatch(value: Option<&Value<'_>>, field: Field) -> Option<(&'static str, &'static str)> {
    let (_, ty, need) = field;
    match (need, value) {
        (Need::Inner, _) | (Need::Default, None) => None,
        (_, Some(v)) if ty.admits(v) => None,
        (Need::Opt, None | Some(Value::Null)) => None,
        (Need::Req | Need::Default, _) => Some((ty.name(), "")),
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
    value: &Value<'_>,
    item: &Item,
    mode: Mode,
) -> Option<String> {
    let Value::Object(o) = value else {
        return Some(format!("{kind}: {at} must be an object"));
    };
    if let Some(e) = members_error(kind, at, o, item.members) {
        return Some(e);
    }
    let tag = match member(o, "type") {
        Some(Value::Str(tag)) => tag.as_ref(),
        _ => "",
    };
    item.by_type
        .iter()
        .filter(|(t, ver, _)| {
            (*t == ANY_TYPE || *t == tag)
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
    value: &Value<'_>,
    item: &Item,
    mode: Mode,
) -> Option<String> {
    let Value::Array(items) = value else {
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

/// The error of the first field of update `u` (of variant `kind`) with the wrong type, if
/// any, under the rules of `mode`.
pub(super) fn field_error(kind: &str, u: &Members<'_>, mode: Mode) -> Option<String> {
    for (field, value) in present_fields(kind, u) {
        let (name, ty, _) = field;
        if let Some((a, or_null)) = mismatch(Some(value), field) {
            return Some(format!("{kind}: {name} must be {a}{or_null}"));
        }
        let at = At { name, index: None };
        let e = match (ty, value) {
            (Ty::Shaped(members), Value::Object(o)) => members_error(kind, at, o, members),
            (Ty::Items(item), v) => items_error(kind, name, v, item, mode),
            (Ty::One(item), v @ Value::Object(_)) => item_error(kind, at, v, item, mode),
            _ => None,
        };
        if e.is_some() {
            return e;
        }
    }
    None
}

/// Each field of update `u` (of variant `kind`) its rules look at, with its value: an update's
/// own fields are optional or the handler's, so absent and `null` pass (but a `null` required
/// array is one that does not fit), and the members of an idle `state_update` are unknown
/// fields on another state.
fn present_fields<'a, 's>(
    kind: &str,
    u: &'a Members<'s>,
) -> impl Iterator<Item = (Field, &'a Value<'s>)> {
    let fields = FIELD_TYPES
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[][..], |(_, fields)| *fields);
    let not_idle = not_idle(kind, u);
    fields.iter().filter_map(move |&field| {
        let (name, _, need) = field;
        let value = member(u, name)?;
        let skipped = (matches!(value, Value::Null) && need != Need::Default)
            || (not_idle && IDLE_MEMBERS.contains(&name));
        (!skipped).then_some((field, value))
    })
}

/// Members only an idle `state_update` has: on another state they are unknown fields.
const IDLE_MEMBERS: [&str; 2] = ["stopReason", "usage"];

/// A `state_update` to another state than `idle`: [`IDLE_MEMBERS`] are unknown fields there.
fn not_idle(kind: &str, u: &Members<'_>) -> bool {
    kind == "state_update" && !matches!(member(u, "state"), Some(Value::Str(s)) if s == "idle")
}

// What a field or item that does not fit its rule comes to (the schemas mark every optional
// field `x-deserialize-default-on-error` and every array of items
// `x-deserialize-skip-invalid-items`): the field falls back to its default, absence, and the
// item is left out. Each is an error record; the rest of the update is applied.
const IGNORED: &str = " (ignored)";
const DROPPED: &str = " (item dropped)";
/// A required array marked default-on-error that is not one reads as its default.
const READ_EMPTY: &str = " (read as [])";

/// A required part of an update that does not fit, and why: the update is not applied.
pub(super) struct Refused(pub(super) String);

/// An object's members, owned where a repair changed them.
pub(super) type Pairs<'s> = Vec<(Cow<'s, str>, Value<'s>)>;

/// Sets member `key` (its last occurrence, the one read) to `value`, or removes every
/// occurrence when `value` is `None`.
fn set_member<'s>(o: &mut Pairs<'s>, key: &str, value: Option<Value<'s>>) {
    match value {
        None => o.retain(|(k, _)| k != key),
        Some(value) => {
            if let Some(slot) = o.iter_mut().rev().find(|(k, _)| k == key) {
                slot.1 = value;
            }
        }
    }
}

/// Object `o` (at `at`) with each optional member of `fields` that does not fit left out, each
/// noted in `notes`; `None` when all fit. A required one that does not fit refuses.
fn repair_members<'s>(
    kind: &str,
    at: At<'_>,
    o: &Members<'s>,
    fields: &[Field],
    notes: &mut Vec<String>,
) -> Result<Option<Pairs<'s>>, Refused> {
    let mut fixed: Option<Pairs<'s>> = None;
    for &field in fields {
        let key = field.0;
        let Some((a, or_null)) = mismatch(member(o, key), field) else {
            continue;
        };
        let reason = format!("{kind}: {at}.{key} must be {a}{or_null}");
        if field.2 == Need::Req {
            return Err(Refused(reason));
        }
        notes.push(reason + IGNORED);
        set_member(fixed.get_or_insert_with(|| o.to_vec()), key, None);
    }
    Ok(fixed)
}

/// One item (at `at`) against `item`, repaired as [`repair_members`] repairs an object;
/// `None` when it fits as it is. An item that cannot be read refuses.
fn repair_item<'s>(
    kind: &str,
    at: At<'_>,
    value: &Value<'s>,
    item: &Item,
    mode: Mode,
    notes: &mut Vec<String>,
) -> Result<Option<Value<'s>>, Refused> {
    let Value::Object(o) = value else {
        return Err(Refused(format!("{kind}: {at} must be an object")));
    };
    let mut own = Vec::new();
    let mut fixed = repair_members(kind, at, o, item.members, &mut own)?;
    for (tag, ver, fields) in item.by_type {
        let base: &Members<'s> = fixed.as_deref().unwrap_or(o);
        let applies = match ver {
            Ver::Both => true,
            Ver::V1 => mode == Mode::V1,
            Ver::V2 => mode == Mode::V2,
        };
        let typed = matches!(member(base, "type"), Some(Value::Str(t)) if t == tag);
        if !applies || !(*tag == ANY_TYPE || typed) {
            continue;
        }
        if let Some(next) = repair_members(kind, at, base, fields, &mut own)? {
            fixed = Some(next);
        }
    }
    notes.append(&mut own);
    Ok(fixed.map(Value::Object))
}

/// The items of array `items` (field `name`) that can be read, each repaired; `None` when all
/// fit as they are. An item that cannot be read is left out and noted.
fn repair_items<'s>(
    kind: &str,
    name: &str,
    items: &[Value<'s>],
    item: &Item,
    mode: Mode,
    notes: &mut Vec<String>,
) -> Option<Vec<Value<'s>>> {
    let mut out: Option<Vec<Value<'s>>> = None;
    for (i, x) in items.iter().enumerate() {
        let at = At {
            name,
            index: Some(i),
        };
        match repair_item(kind, at, x, item, mode, notes) {
            Err(Refused(reason)) => {
                notes.push(reason + DROPPED);
                out.get_or_insert_with(|| items[..i].to_vec());
            }
            Ok(None) => {
                if let Some(kept) = &mut out {
                    kept.push(x.clone());
                }
            }
            Ok(Some(y)) => out.get_or_insert_with(|| items[..i].to_vec()).push(y),
        }
    }
    out
}

/// The config options of the result of session setup `method` that can be read, each
/// repaired as a `config_option_update`'s (`{method}: result.configOptions[i]...` in the
/// notes); `None` when all fit.
pub(super) fn repair_config_options<'s>(
    method: &str,
    items: &[Value<'s>],
    mode: Mode,
    notes: &mut Vec<String>,
) -> Option<Vec<Value<'s>>> {
    repair_items(
        method,
        "result.configOptions",
        items,
        &CONFIG_OPTION,
        mode,
        notes,
    )
}

/// Update `u` (of variant `kind`, with a field [`field_error`] finds wrong) with what does not
/// fit its rules repaired, and one reason per part left out. A required part that cannot be
/// read refuses the update.
pub(super) fn repair<'s>(
    kind: &str,
    u: &Members<'s>,
    mode: Mode,
) -> Result<(Pairs<'s>, Vec<String>), Refused> {
    let mut notes = Vec::new();
    let mut fixed = u.to_vec();
    for (field, value) in present_fields(kind, u) {
        let (name, ty, need) = field;
        let at = At { name, index: None };
        let new = if need == Need::Default && !ty.admits(value) {
            notes.push(format!("{kind}: {name} must be {}{READ_EMPTY}", ty.name()));
            Some(Value::Array(Vec::new()))
        } else if need != Need::Inner && !ty.admits(value) {
            notes.push(format!(
                "{kind}: {name} must be {} or null{IGNORED}",
                ty.name()
            ));
            None
        } else {
            match (ty, value) {
                (Ty::Shaped(members), Value::Object(o)) => {
                    let mut own = Vec::new();
                    match repair_members(kind, at, o, members, &mut own) {
                        Ok(next) => {
                            notes.append(&mut own);
                            match next {
                                Some(pairs) => Some(Value::Object(pairs)),
                                None => continue,
                            }
                        }
                        Err(Refused(reason)) => {
                            notes.push(format!("{reason} ({name} ignored)"));
                            None
                        }
                    }
                }
                (Ty::Items(item), Value::Array(items)) => {
                    match repair_items(kind, name, items, item, mode, &mut notes) {
                        Some(kept) => Some(Value::Array(kept)),
                        None => continue,
                    }
                }
                // A required item: one that cannot be read refuses the update.
                (Ty::One(item), Value::Object(_)) => {
                    match repair_item(kind, at, value, item, mode, &mut notes)? {
                        Some(next) => Some(next),
                        None => continue,
                    }
                }
                _ => continue,
            }
        };
        set_member(&mut fixed, name, new);
    }
    Ok((fixed, notes))
}

/// A `plan_update`'s plan of known type `plan_type`, its `_meta` and (type `items`) its
/// entries repaired as [`repair`] repairs an update's fields; `None` when all fit.
pub(super) fn repair_plan<'s>(
    plan: &Members<'s>,
    plan_type: &str,
    mode: Mode,
    notes: &mut Vec<String>,
) -> Option<Pairs<'s>> {
    let at = At {
        name: "plan",
        index: None,
    };
    // `_meta` is optional: it never refuses.
    let mut fixed = repair_members("plan_update", at, plan, &[META], notes).unwrap_or(None);
    if plan_type == "items" {
        let base: &Members<'s> = fixed.as_deref().unwrap_or(plan);
        let kept = match member(base, "entries") {
            Some(Value::Array(entries)) => repair_items(
                "plan_update",
                "plan.entries",
                entries,
                &PLAN_ENTRY,
                mode,
                notes,
            ),
            // Required, but marked default-on-error: present with another type it is `[]`
            // (absent, the handler refuses the update).
            Some(_) => {
                notes.push(format!(
                    "plan_update: plan.entries must be an array{READ_EMPTY}"
                ));
                Some(Vec::new())
            }
            None => None,
        };
        if let Some(kept) = kept {
            let mut pairs = fixed.take().unwrap_or_else(|| plan.to_vec());
            set_member(&mut pairs, "entries", Some(Value::Array(kept)));
            fixed = Some(pairs);
        }
    }
    fixed
}
