"""Field types of known variants as the schemas give them: what fits, what is left out with
an error record, what refuses the update."""

from __future__ import annotations

import json
from typing import Any

from session_builders import (
    SID,
    snap,
    store_of,
    text,
    upd,
)

# -- every field of every variant ------------------------------------------------------------------


# A valid payload of each known variant with only its required fields.
_MINIMAL_UPDATES = {
    "user_message_chunk": {"messageId": "m", "content": text("a")},
    "agent_message_chunk": {"messageId": "m", "content": text("a")},
    "agent_thought_chunk": {"messageId": "m", "content": text("a")},
    "user_message": {"messageId": "m"},
    "agent_message": {"messageId": "m"},
    "agent_thought": {"messageId": "m"},
    "tool_call": {"toolCallId": "c", "title": "t"},
    "tool_call_update": {"toolCallId": "c"},
    "tool_call_content_chunk": {
        "toolCallId": "c",
        "content": {"type": "content", "content": text("a")},
    },
    "terminal_update": {"terminalId": "t"},
    "terminal_output_chunk": {"terminalId": "t", "data": ""},
    "plan": {"entries": []},
    "plan_update": {"plan": {"type": "items", "planId": "p", "entries": []}},
    "plan_removed": {"planId": "p"},
    "available_commands_update": {"availableCommands": []},
    "current_mode_update": {"currentModeId": "m"},
    "config_option_update": {"configOptions": []},
    "session_info_update": {},
    "usage_update": {"used": 1, "size": 2},
    "state_update": {"state": "idle"},
    "notice": {"severity": "info", "title": "t"},
    "compaction_update": {"compactionId": "c", "status": "in_progress"},
    "compaction_summary_chunk": {"compactionId": "c", "content": text("a")},
}


def _json_types(schema: dict, defs: dict) -> set | None:
    """The JSON types a schema admits, None for any."""
    if "$ref" in schema:
        return _json_types(defs[schema["$ref"].split("/")[-1]], defs)
    if "type" in schema:
        t = schema["type"]
        return set(t) if isinstance(t, list) else {t}
    if "const" in schema:
        return {"string"}
    if "allOf" in schema:
        return _json_types(schema["allOf"][0], defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            out: set = set()
            for branch in schema[key]:
                types = _json_types(branch, defs)
                if types is None:
                    return None
                out |= types
            return out
    return None


def _variant_fields(variant: dict, defs: dict) -> tuple[dict, set]:
    """The properties and required names of a SessionUpdate branch, its allOf refs merged."""
    props: dict = {}
    required: set = set()

    def collect(s: dict) -> None:
        if "$ref" in s:
            collect(defs[s["$ref"].split("/")[-1]])
            return
        props.update(s.get("properties", {}))
        required.update(s.get("required", []))
        for part in s.get("allOf", []):
            collect(part)

    collect(variant)
    if props["sessionUpdate"].get("const") == "state_update":
        # A union on `state`: the idle branch has every field.
        collect(defs["IdleStateUpdate"])
        required.add("state")
    return props, required


def _schema_field_cases(shared) -> list:
    cases = []
    for version in (1, 2):
        for name in ("schema.json", "schema.unstable.json"):
            schema = json.loads((shared / "acp-schema" / f"v{version}" / name).read_text())
            defs = schema["$defs"]
            for variant in defs["SessionUpdate"][
                "anyOf" if "anyOf" in defs["SessionUpdate"] else "oneOf"
            ]:
                props, required = _variant_fields(variant, defs)
                kind = props["sessionUpdate"].get("const")
                if kind is None:  # the "other" branch
                    continue
                for field, prop in props.items():
                    if field == "sessionUpdate" or field in required:
                        continue
                    cases.append((version, kind, field, _json_types(prop, defs)))
    return cases


def test_field_types_follow_the_schemas(backend, shared):
    """Every optional field of every known variant of the four schemas: a value of a type the
    schema does not admit is an error naming the variant and field; null always passes (v2:
    clears, v1: omission); fields typed as anything take anything."""
    cases = _schema_field_cases(shared)
    assert len(cases) > 100
    for version, kind, field, types in cases:
        base = {"sessionUpdate": kind, **_MINIMAL_UPDATES[kind]}
        s = snap(backend, [upd({**base, field: None})], version)
        assert s["errors"] == [], (version, kind, field)
        wrong = {"integer": 5, "string": "x", "array": [], "object": {}, "boolean": True}
        for json_type, value in wrong.items():
            admitted = (
                types is None
                or json_type in types
                or (json_type == "integer" and "number" in types)
            )
            s = snap(backend, [upd({**base, field: value})], version)
            reasons = [e["reason"] for e in s["errors"]]
            if admitted:
                assert not any(r.startswith(f"{kind}: {field} ") for r in reasons), (kind, field)
            else:
                assert len(reasons) == 1 and reasons[0].startswith(f"{kind}: {field} must be "), (
                    version,
                    kind,
                    field,
                    value,
                    reasons,
                )


# -- members of nested objects and items of arrays -------------------------------------------------


# Where the schemas type the members of a nested object or of an array's items: (variant,
# field, its schema definition, how the object sits in the field).
_NESTED = (
    ("terminal_update", "exitStatus", "TerminalExitStatus", "object"),
    ("state_update", "usage", "Usage", "object"),
    ("usage_update", "cost", "Cost", "object"),
    ("terminal_update", "output", "TerminalOutput", "object"),
    ("tool_call_update", "content", "ToolCallContent", "items"),
    ("tool_call", "content", "ToolCallContent", "items"),
    ("tool_call_content_chunk", "content", "ToolCallContent", "one"),
    ("tool_call_update", "locations", "ToolCallLocation", "items"),
    ("plan", "entries", "PlanEntry", "items"),
)


# A string that is also valid base64 (terminal output data).
_A_VALUE = {"string": "eA==", "integer": 1, "number": 1.5, "array": [], "object": {}}


def _nested_cases(shared) -> list:
    """(version, kind, field, how, a valid object, its path, member, member types, required)
    for every member of every nested object and item the schemas type."""
    cases = []
    for version in (1, 2):
        for name in ("schema.json", "schema.unstable.json"):
            schema = json.loads((shared / "acp-schema" / f"v{version}" / name).read_text())
            defs = schema["$defs"]
            variants = {
                _variant_fields(v, defs)[0]["sessionUpdate"].get("const")
                for v in defs["SessionUpdate"][
                    "anyOf" if "anyOf" in defs["SessionUpdate"] else "oneOf"
                ]
            }
            for kind, field, ref, how in _NESTED:
                if kind not in variants or ref not in defs:
                    continue
                branches = defs[ref].get("anyOf") or defs[ref].get("oneOf") or [defs[ref]]
                for branch in branches:
                    props, required = _variant_fields(
                        {"properties": {"sessionUpdate": {}}, "allOf": [branch]}, defs
                    )
                    tag = props.get("type", {}).get("const")
                    if "type" in props and tag is None:  # the unknown-type branch
                        continue
                    valid = {}
                    for m in sorted(required):
                        valid[m] = (
                            tag
                            if m == "type"
                            else _A_VALUE[min(_json_types(props[m], defs) - {"null"})]
                        )
                    path = f"{field}[0]" if how == "items" else field
                    for m, prop in props.items():
                        if m in ("sessionUpdate", "type"):
                            continue
                        types = _json_types(prop, defs)
                        cases.append(
                            (version, kind, field, how, valid, path, m, types, m in required)
                        )
    return cases


def _nested_reasons(backend, case: tuple, value: Any, absent: bool = False) -> list:
    """The error reasons of the case's valid object with member m set to value (or absent)."""
    version, kind, field, how, valid, m = case
    obj = {k: v for k, v in valid.items() if k != m}
    if not absent:
        obj[m] = value
    u = {"sessionUpdate": kind, **_MINIMAL_UPDATES[kind], field: [obj] if how == "items" else obj}
    return [e["reason"] for e in snap(backend, [upd(u)], version)["errors"]]


def _nested_outcome(how: str, field: str, required: bool) -> str:
    """How the error record of a member that does not fit ends: an optional member is left out
    (the schemas' default-on-error); a required one leaves out the item it is in (skip invalid
    items) or the optional object it is in, or refuses the update when the object is its one
    required item."""
    if not required:
        return " or null (ignored)"
    return {"items": " (item dropped)", "object": f" ({field} ignored)", "one": ""}[how]


def test_nested_members_and_items_follow_the_schemas(backend, shared):
    """Every member of every nested object and array item the schemas type, in each version: a
    value of a type the schema does not admit is an error naming the variant and the member's
    path, and what is left out for it; null and absence pass for an optional member only."""
    cases = _nested_cases(shared)
    assert len(cases) > 40
    seen = {(kind, path, m) for _, kind, _, _, _, path, m, _, _ in cases}
    for expected in (
        ("terminal_update", "exitStatus", "exitCode"),
        ("terminal_update", "exitStatus", "signal"),
        ("terminal_update", "exitStatus", "_meta"),
        ("state_update", "usage", "totalTokens"),
        ("state_update", "usage", "cachedWriteTokens"),
        ("state_update", "usage", "_meta"),
        ("tool_call_update", "content[0]", "newText"),
        ("tool_call_update", "content[0]", "changes"),
        ("tool_call_update", "content[0]", "terminalId"),
        ("tool_call_update", "locations[0]", "line"),
        ("plan", "entries[0]", "priority"),
        ("tool_call_content_chunk", "content", "terminalId"),
    ):
        assert expected in seen, expected
    wrong = {"integer": 5, "number": 1.5, "string": "x", "array": [], "object": {}, "boolean": True}
    for version, kind, field, how, valid, path, m, types, required in cases:
        case = (version, kind, field, how, valid, m)
        prefix = f"{kind}: {path}.{m} "

        outcome = _nested_outcome(how, field, required)
        for r in (_nested_reasons(backend, case, None, True), _nested_reasons(backend, case, None)):
            if required:
                assert len(r) == 1 and r[0].startswith(prefix + "must be "), (kind, path, m, r)
                assert r[0].endswith(outcome) and " or null" not in r[0]
            else:
                assert r == [], (version, kind, path, m, r)
        for json_type, value in wrong.items():
            admitted = (
                types is None
                or json_type in types
                or (json_type == "integer" and "number" in types)
            )
            r = _nested_reasons(backend, case, value)
            if admitted:
                # (A string may still be invalid in another way: base64 output data.)
                assert not any(x.startswith(prefix + "must be ") for x in r), (kind, path, m, r)
            else:
                assert (
                    len(r) == 1 and r[0].startswith(prefix + "must be ") and r[0].endswith(outcome)
                ), (
                    version,
                    kind,
                    path,
                    m,
                    value,
                    r,
                )


# -- parts left out, values not compared ------------------------------------------------------


def test_every_part_left_out_has_its_own_record_in_field_order(backend):
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "title": 5,
        "status": "completed",
        "content": [5, {"type": "content", "content": text("a")}, {"type": "terminal"}],
        "locations": [{"path": "/a", "line": "1", "_meta": []}],
    }
    s = snap(backend, [upd(update)], 2)
    assert [e["reason"] for e in s["errors"]] == [
        "tool_call_update: title must be a string or null (ignored)",
        "tool_call_update: content[0] must be an object (item dropped)",
        "tool_call_update: content[2].terminalId must be a string (item dropped)",
        "tool_call_update: locations[0].line must be an integer or null (ignored)",
        "tool_call_update: locations[0]._meta must be an object or null (ignored)",
    ]
    call = s["toolCalls"]["c"]
    assert call["status"] == "completed" and "title" not in call
    assert call["content"] == [{"type": "content", "content": text("a")}]
    assert call["locations"] == [{"path": "/a"}]


def test_an_update_that_sets_the_same_values_is_still_a_change(backend):
    # Values are not compared; only a plan_removed of a plan that is not there names nothing.
    update = upd({"sessionUpdate": "session_info_update", "title": "T"})
    store = store_of(backend, [update], version=2)
    store.changes()
    store.apply(update)
    assert store.changes() == [(SID, "session", "info")]
    store.apply(upd({"sessionUpdate": "plan_removed", "planId": "absent"}))
    assert store.changes() == []
