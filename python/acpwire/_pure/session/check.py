"""Twin of src/session/check.rs: the type check and repair of the fields of known updates.

An update whose fields all fit their rules (the ``FIELD_TYPES`` table) is applied as it came;
what does not fit is repaired as the schemas' decoding marks say, each part left out an error
record, and a required part that does not fit refuses the update.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from .parts import FieldRule, FieldRules, ItemRule, JsonObject, JsonValue, RuleInside
from .tables import ANY_TYPE, DEFAULT, FIELD_RULES, FIELD_TYPES, INNER, OPT, REQ

# The generated tables, as their rules' types say: their literals infer plain `str` tags, which
# cannot tell a rule's "shaped" members from its items.
_FIELD_TYPES = cast("Mapping[str, FieldRules]", FIELD_TYPES)
_FIELD_RULES = cast("Mapping[str, Mapping[str, FieldRule]]", FIELD_RULES)


def _item_rule(field: FieldRule) -> ItemRule:
    """The rule of the items of array field ``field`` (or of its one item)."""
    inside = field[4]
    if inside is None or inside[0] == "shaped":
        raise LookupError(f"{field[0]} has no item rule")
    return inside[1]


# The rules a handler applies itself, as the tables hold them for the variants they belong to: a
# plan_update's plan and its entries (those of a v1 plan), a session setup's configOptions.
_ONLY_META = _FIELD_TYPES["plan_update"]
_PLAN_ENTRY = _item_rule(_FIELD_RULES["plan"]["entries"])
_CONFIG_OPTION = _item_rule(_FIELD_RULES["config_option_update"]["configOptions"])


def _mismatch(v: Any, field: FieldRule) -> str | None:
    """What value v (None when absent or null) should have been if it does not fit field, by
    type only."""
    _, types, name, need, _ = field
    if need == INNER or type(v) in types or (v is None and need == OPT):
        return None
    return name + " or null" if need == OPT else name


def _at(name: str, index: int | None) -> str:
    # Paths are only spelled out for an error.
    return name if index is None else f"{name}[{index}]"


def _members_fit(o: JsonObject, fields: FieldRules) -> bool:
    """Whether every member of object o fits its field of fields (`_mismatch` finds nothing).
    Members are checked by type only: the rules stop here, one level down."""
    for name, types, _, need, _ in fields:
        v = o.get(name)
        if type(v) not in types and (v is not None or need != OPT) and need != INNER:
            return False
    return True


def _item_fits(v: Any, item: ItemRule, mode: int) -> bool:
    """Whether one item fits item under mode (`_repair_item` would keep it as it is)."""
    members, by_type = item
    return (
        type(v) is dict
        and _members_fit(v, members)
        and (not by_type or _type_members_fit(v, by_type, mode))
    )


def _type_members_fit(
    v: JsonObject, by_type: tuple[tuple[str, int | None, FieldRules], ...], mode: int
) -> bool:
    """Whether object v fits the members its `type` has under mode, as by_type lists them."""
    tag = v.get("type")
    for t, version, fields in by_type:
        if (
            (t is ANY_TYPE or t == tag)  # the table holds ANY_TYPE itself
            and (version is None or version == mode)
            and not _members_fit(v, fields)
        ):
            return False
    return True


def _items_fit(v: Any, item: ItemRule, mode: int) -> bool:
    """Whether every item of v, when it is an array, fits item under mode."""
    if type(v) is list:
        # `_item_fits` for each item, inline: arrays of content blocks and entries are common.
        members, by_type = item
        for x in v:
            if (
                type(x) is not dict
                or not _members_fit(x, members)
                or (by_type and not _type_members_fit(x, by_type, mode))
            ):
                return False
    return True


def _present_fields(
    kind: str, u: JsonObject
) -> Iterator[tuple[Any, str, tuple[type, ...], str, int, RuleInside | None]]:
    """(value, name, types, want, need, inside) of each field of update u (of variant kind) that
    its rules look at: an update's own fields are optional or the handler's, so absent and null
    pass (but a null required array is one that does not fit), and the members of an idle
    state_update are unknown fields on another state."""
    not_idle = kind == "state_update" and u.get("state") != "idle"
    for name, types, want, need, inside in _FIELD_TYPES[kind]:
        v = u.get(name)
        if (v is None and (need != DEFAULT or name not in u)) or (
            not_idle and name in _IDLE_MEMBERS
        ):
            continue
        yield (v, name, types, want, need, inside)


def _needs_repair(kind: str, u: JsonObject, mode: int) -> bool:
    """Whether a field of update u (of variant kind) does not fit its rule under mode (the
    fields _present_fields gives), found by walking the names that have rules (most kinds
    have as few as an update has keys, or fewer) and testing the update for each."""
    rules = _FIELD_RULES[kind]
    not_idle = kind == "state_update" and u.get("state") != "idle"
    for name in rules:
        if name not in u or (not_idle and name in _IDLE_MEMBERS):
            continue
        v = u[name]
        _, types, _, need, inside = rules[name]
        if v is None:
            if need == DEFAULT:
                return True  # a required array, null: read as []
            continue
        if type(v) not in types and need != INNER:
            return True
        if inside is None:
            continue
        if inside[0] == "shaped":
            if type(v) is dict and not _members_fit(v, inside[1]):
                return True
        elif inside[0] == "items":
            if not _items_fit(v, inside[1], mode):
                return True
        elif type(v) is dict and not _item_fits(v, inside[1], mode):
            return True
    return False


# Members only an idle `state_update` has: on another state they are unknown fields.
_IDLE_MEMBERS = ("stopReason", "usage")
# What a field or item that does not fit its rule comes to (the schemas mark every optional
# field `x-deserialize-default-on-error` and every array of items
# `x-deserialize-skip-invalid-items`): the field falls back to its default, absence, and the
# item is left out. Each is an error record; the rest of the update is applied.
_IGNORED = " (ignored)"
_DROPPED = " (item dropped)"
# A required array marked default-on-error that is not one reads as its default.
_READ_EMPTY = " (read as [])"
_ABSENT = object()


class _Refused(Exception):
    """A required part of an update that does not fit: the update is not applied."""


def _repair_members(
    kind: str, name: str, index: int | None, o: JsonObject, fields: FieldRules, notes: list[str]
) -> JsonObject:
    """Object o (field name, or its item index) with each optional member of fields that does
    not fit left out, each noted; o itself when all fit. Raises _Refused for a required one."""
    fixed = None
    for field in fields:
        key = field[0]
        want = _mismatch(o.get(key), field)
        if want is None:
            continue
        reason = f"{kind}: {_at(name, index)}.{key} must be {want}"
        if field[3] == REQ:
            raise _Refused(reason)
        notes.append(reason + _IGNORED)
        if fixed is None:
            fixed = dict(o)
        del fixed[key]
    return o if fixed is None else fixed


def _repair_item(
    kind: str, name: str, index: int | None, v: Any, item: ItemRule, mode: int, notes: list[str]
) -> Any:
    """One item (field name, or its item index) against item, repaired as _repair_members
    repairs an object. Raises _Refused when it cannot be read."""
    if type(v) is not dict:
        raise _Refused(f"{kind}: {_at(name, index)} must be an object")
    members, by_type = item
    own: list[str] = []
    v = _repair_members(kind, name, index, v, members, own)
    for t, version, fields in by_type:
        if t in (ANY_TYPE, v.get("type")) and (version is None or version == mode):
            v = _repair_members(kind, name, index, v, fields, own)
    notes.extend(own)
    return v


def _repair_items(
    kind: str, name: str, v: list[JsonValue], item: ItemRule, mode: int, notes: list[str]
) -> list[JsonValue]:
    """The items of array v (field name) that can be read, each repaired; v itself when all fit
    as they are. An item that cannot be read is left out and noted."""
    if _items_fit(v, item, mode):
        return v  # the common case, told without the repair's bookkeeping
    out = None
    for i, x in enumerate(v):
        try:
            y = _repair_item(kind, name, i, x, item, mode, notes)
        except _Refused as refused:
            notes.append(str(refused) + _DROPPED)
            y = _ABSENT
        if y is not x and out is None:
            out = v[:i]
        if out is not None and y is not _ABSENT:
            out.append(y)
    return v if out is None else out


def _repair(kind: str, u: JsonObject, mode: int) -> tuple[JsonObject, list[str]]:
    """Update u (of variant kind, with a field _field_error finds wrong) with what does not fit
    its rules repaired, and one reason per part left out. Raises _Refused when a required part
    cannot be read."""
    notes: list[str] = []
    fixed = dict(u)
    for v, name, types, want, need, inside in _present_fields(kind, u):
        new = v
        if need == DEFAULT and type(v) not in types:
            notes.append(f"{kind}: {name} must be {want}{_READ_EMPTY}")
            new = []
        elif type(v) not in types and need != INNER:
            notes.append(f"{kind}: {name} must be {want} or null{_IGNORED}")
            new = _ABSENT
        elif inside is not None:
            if inside[0] == "shaped":
                if type(v) is dict:
                    own: list[str] = []
                    try:
                        new = _repair_members(kind, name, None, v, inside[1], own)
                        notes.extend(own)
                    except _Refused as refused:
                        notes.append(f"{refused} ({name} ignored)")
                        new = _ABSENT
            elif inside[0] == "items":
                if type(v) is list:
                    new = _repair_items(kind, name, v, inside[1], mode, notes)
            elif type(v) is dict:  # "one": a required item
                new = _repair_item(kind, name, None, v, inside[1], mode, notes)
        if new is _ABSENT:
            del fixed[name]
        elif new is not v:
            fixed[name] = new
    return fixed, notes
