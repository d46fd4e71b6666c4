"""Twin of src/session/fields.rs: the fields of an entity, patched as updates say.

An omitted field is unchanged, ``null`` clears, a value replaces; the members of an update
its entity does not take go to the session's ``updateExtras``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .parts import JsonObject

if TYPE_CHECKING:
    from .model import Session


def _patch(obj: JsonObject, key: str, value: Any) -> None:
    if value is None:
        obj.pop(key, None)
    else:
        obj[key] = value


def _push_item(obj: JsonObject, key: str, item: Any) -> None:
    items = obj.get(key)
    if type(items) is list:
        items.append(item)
    else:
        obj[key] = [item]


def _without(u: JsonObject, skip: tuple[str, ...] | frozenset[str]) -> JsonObject:
    """The members of ``u`` except ``skip`` and nulls (a field cleared is absent)."""
    return {k: v for k, v in u.items() if k not in skip and v is not None}


def _set_extras(s: Session, kind: str, u: JsonObject, skip: frozenset[str]) -> bool:
    """Store the rest of update ``u`` as session ``s``'s ``updateExtras[kind]``; return whether
    ``updateExtras`` was touched (it had or now has an entry for ``kind``), as any entity
    touched is a change."""
    # Most updates have no member past `skip`: a set comparison in C tells, without a copy.
    rest = None if u.keys() <= skip else _without(u, skip)
    if rest:
        s._own("_update_extras")[kind] = rest
        return True
    return s._update_extras.pop(kind, None) is not None
