"""Field types of known variants as the schemas give them: what fits, what is left out with
an error record, what refuses the update."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from session_builders import (
    SID,
    b64,
    init,
    ndjson,
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


# -- parts left out, updates refused ---------------------------------------------------------------


def without_part(update, path):
    """A copy of ``update`` without the member or item at ``path`` (keys and indexes)."""
    update = copy.deepcopy(update)
    *outer, last = path
    holder = update
    for step in outer:
        holder = holder[step]
    del holder[last]
    return update


@pytest.mark.parametrize(
    ("version", "before", "update", "reason", "left_out"),
    [
        (
            2,
            [],
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [
                    {"name": "a", "description": "d"},
                    {"name": 5, "description": "d"},
                ],
            },
            "available_commands_update: availableCommands[1].name must be a string (item dropped)",
            ("availableCommands", 1),
        ),
        (
            2,
            [],
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [{"id": "v1-style", "name": "n"}, {"configId": "c", "name": "n"}],
            },
            "config_option_update: configOptions[0].configId must be a string (item dropped)",
            ("configOptions", 0),
        ),
        (
            1,
            [],
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [{"id": "m", "name": "Model", "category": 5}],
            },
            "config_option_update: configOptions[0].category must be a string or null (ignored)",
            ("configOptions", 0, "category"),
        ),
        (
            2,
            [],
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c",
                "status": "completed",
                "summary": [text("a"), 1],
            },
            "compaction_update: summary[1] must be an object (item dropped)",
            ("summary", 1),
        ),
        (
            2,
            [],
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c",
                "status": "completed",
                "summary": [{"text": "no type"}],
            },
            "compaction_update: summary[0].type must be a string (item dropped)",
            ("summary", 0),
        ),
        (
            2,
            [],
            {"sessionUpdate": "agent_thought", "messageId": "m", "content": [text("a"), {}]},
            "agent_thought: content[1].type must be a string (item dropped)",
            ("content", 1),
        ),
        (
            2,
            [],
            {"sessionUpdate": "session_message", "messageId": "m", "content": [5, text("a")]},
            "session_message: content[0] must be an object (item dropped)",
            ("content", 0),
        ),
        (
            2,
            [],
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "markdown", "planId": "p", "content": "# x", "_meta": 5},
            },
            "plan_update: plan._meta must be an object or null (ignored)",
            ("plan", "_meta"),
        ),
        (
            2,
            [{"sessionUpdate": "state_update", "state": "running"}],
            {
                "sessionUpdate": "state_update",
                "state": "idle",
                "stopReason": "end_turn",
                "usage": {
                    "totalTokens": 3,
                    "inputTokens": 1,
                    "outputTokens": 2,
                    "cachedReadTokens": "1",
                },
            },
            "state_update: usage.cachedReadTokens must be an integer or null (ignored)",
            ("usage", "cachedReadTokens"),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "status": "completed",
                "content": [
                    {"type": "content", "content": text("a")},
                    {"type": "content", "content": text("b"), "_meta": 1},
                ],
            },
            "tool_call_update: content[1]._meta must be an object or null (ignored)",
            ("content", 1, "_meta"),
        ),
        (
            2,
            [{"sessionUpdate": "agent_message", "messageId": "m", "content": [text("kept")]}],
            {"sessionUpdate": "agent_message", "messageId": "m", "content": text("one block")},
            "agent_message: content must be an array or null (ignored)",
            ("content",),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": "oops"},
            "tool_call_update: content must be an array or null (ignored)",
            ("content",),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "locations": {}},
            "tool_call_update: locations must be an array or null (ignored)",
            ("locations",),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": 5},
            "tool_call_update: title must be a string or null (ignored)",
            ("title",),
        ),
        (
            1,
            [{"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T"}],
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": 3},
            "tool_call_update: status must be a string or null (ignored)",
            ("status",),
        ),
        (
            2,
            [
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": "t",
                    "output": {"data": b64(b"ok")},
                }
            ],
            {"sessionUpdate": "terminal_update", "terminalId": "t", "output": {}},
            "terminal_update: output.data must be a string (output ignored)",
            ("output",),
        ),
        (
            2,
            [
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": "t",
                    "output": {"data": b64(b"ok")},
                }
            ],
            {"sessionUpdate": "terminal_update", "terminalId": "t", "output": b64(b"no")},
            "terminal_update: output must be an object or null (ignored)",
            ("output",),
        ),
        (
            2,
            [{"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": {}}],
            {"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": "x"},
            "terminal_update: exitStatus must be an object or null (ignored)",
            ("exitStatus",),
        ),
        (
            2,
            [{"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress"}],
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c",
                "status": "completed",
                "summary": text("S"),
            },
            "compaction_update: summary must be an array or null (ignored)",
            ("summary",),
        ),
        (
            2,
            [{"sessionUpdate": "state_update", "state": "running"}],
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": 5},
            "state_update: stopReason must be a string or null (ignored)",
            ("stopReason",),
        ),
        (
            2,
            [],
            {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": "x"},
            "usage_update: cost must be an object or null (ignored)",
            ("cost",),
        ),
        (
            2,
            [],
            {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": "1"}},
            "usage_update: cost.amount must be a number (cost ignored)",
            ("cost",),
        ),
        (
            2,
            [],
            {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 1}},
            "usage_update: cost.currency must be a string (cost ignored)",
            ("cost",),
        ),
        (
            2,
            [],
            {"sessionUpdate": "notice", "severity": "info", "title": "t", "description": 5},
            "notice: description must be a string or null (ignored)",
            ("description",),
        ),
        (
            2,
            [],
            {"sessionUpdate": "notice", "severity": 1, "title": "t"},
            "notice: severity must be a string",
            None,
        ),
        (
            1,
            [{"sessionUpdate": "subagent_update", "subagentSessionId": "s", "name": "n"}],
            {"sessionUpdate": "subagent_update", "subagentSessionId": "s", "name": 5},
            "subagent_update: name must be a string or null (ignored)",
            ("name",),
        ),
        (
            2,
            [],
            {"sessionUpdate": "session_message", "messageId": "m", "senderSessionId": 5},
            "session_message: senderSessionId must be a string or null (ignored)",
            ("senderSessionId",),
        ),
        (
            2,
            [],
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": text("a"),
                "_meta": "x",
            },
            "agent_message_chunk: _meta must be an object or null (ignored)",
            ("_meta",),
        ),
        (
            1,
            [],
            {"sessionUpdate": "plan", "entries": [], "_meta": []},
            "plan: _meta must be an object or null (ignored)",
            ("_meta",),
        ),
        (
            2,
            [{"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": {}}],
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t",
                "exitStatus": {"exitCode": "0"},
            },
            "terminal_update: exitStatus.exitCode must be an integer or null (ignored)",
            ("exitStatus", "exitCode"),
        ),
        (
            2,
            [{"sessionUpdate": "terminal_update", "terminalId": "t", "command": "ls"}],
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t",
                "command": "rm",
                "exitStatus": {"exitCode": 0, "signal": 9},
            },
            "terminal_update: exitStatus.signal must be a string or null (ignored)",
            ("exitStatus", "signal"),
        ),
        (
            2,
            [{"sessionUpdate": "state_update", "state": "running"}],
            {
                "sessionUpdate": "state_update",
                "state": "idle",
                "stopReason": "end_turn",
                "usage": {"totalTokens": 3, "inputTokens": 1, "outputTokens": 2.5},
            },
            "state_update: usage.outputTokens must be an integer (usage ignored)",
            ("usage",),
        ),
        (
            2,
            [{"sessionUpdate": "state_update", "state": "running"}],
            {
                "sessionUpdate": "state_update",
                "state": "idle",
                "usage": {"totalTokens": 3, "inputTokens": 1, "outputTokens": 2, "_meta": 1},
            },
            "state_update: usage._meta must be an object or null (ignored)",
            ("usage", "_meta"),
        ),
        (
            1,
            [{"sessionUpdate": "tool_call", "toolCallId": "c", "title": "T"}],
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "title": "new",
                "content": [
                    {"type": "content", "content": text("a")},
                    {"type": "_other", "path": 1},
                    {"type": "diff", "path": None, "newText": "b"},
                ],
            },
            "tool_call_update: content[2].path must be a string (item dropped)",
            ("content", 2),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "content": [{"type": "diff", "path": "/a", "newText": "b"}],
            },
            "tool_call_update: content[0].changes must be an array (item dropped)",
            ("content", 0),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": ["text"]},
            "tool_call_update: content[0] must be an object (item dropped)",
            ("content", 0),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c",
                "locations": [{"path": "/a"}, {"path": "/b", "line": -1.0}],
            },
            "tool_call_update: locations[1].line must be an integer or null (ignored)",
            ("locations", 1, "line"),
        ),
        (
            2,
            [{"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": "T"}],
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "c",
                "content": {"type": "terminal", "terminalId": 7},
            },
            "tool_call_content_chunk: content.terminalId must be a string",
            None,
        ),
        (
            1,
            [{"sessionUpdate": "plan", "entries": []}],
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "a", "priority": "high", "status": None}],
            },
            "plan: entries[0].status must be a string (item dropped)",
            ("entries", 0),
        ),
        (
            2,
            [
                {
                    "sessionUpdate": "plan_update",
                    "plan": {"type": "items", "planId": "p", "entries": []},
                }
            ],
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "p",
                    "entries": [
                        {"content": "a", "priority": "_p", "status": "_s"},
                        {"content": "b", "priority": 1, "status": "pending"},
                    ],
                },
            },
            "plan_update: plan.entries[1].priority must be a string (item dropped)",
            ("plan", "entries", 1),
        ),
    ],
)
def test_a_part_that_does_not_fit_is_left_out_with_an_error_record(
    backend, version, before, update, reason, left_out
):
    # The schemas mark every optional field `x-deserialize-default-on-error` and every array
    # of items `x-deserialize-skip-invalid-items`: a field that does not fit is read as absent
    # and an item that does not fit is left out; the rest of the update applies. A required
    # part that does not fit (``left_out`` None) refuses the update: nothing changes.
    before = [{"sessionUpdate": "session_info_update"}, *before]
    messages = [*init(version), *(upd(u) for u in before)]
    as_read = None if left_out is None else without_part(update, left_out)
    for feed in (False, True):

        def reduce(*updates, feed=feed):
            store = backend.Sessions()
            for batch in (messages, [upd(u) for u in updates]):
                if feed:
                    store.feed(ndjson(batch))
                else:
                    for m in batch:
                        store.apply(m)
            return store

        store = reduce(update)
        new = store[SID].snapshot()
        assert [e["reason"] for e in new.pop("errors")] == [reason]
        expected = reduce(*([] if as_read is None else [as_read]))
        want = expected[SID].snapshot()
        assert want.pop("errors") == []
        assert new == want
        if as_read is None:
            assert [c for c in store.changes() if c[2] != "errors"] == [
                c for c in reduce().changes()
            ]


@pytest.mark.parametrize(
    ("version", "update", "field", "reason"),
    [
        (1, {"sessionUpdate": "plan", "entries": "x"}, None, "plan: entries must be an array"),
        (
            2,
            {"sessionUpdate": "available_commands_update", "availableCommands": {"a": 1}},
            "availableCommands",
            "available_commands_update: availableCommands must be an array",
        ),
        (
            2,
            {"sessionUpdate": "config_option_update", "configOptions": None},
            "configOptions",
            "config_option_update: configOptions must be an array",
        ),
        (
            2,
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "p", "entries": 5},
            },
            None,
            "plan_update: plan.entries must be an array",
        ),
    ],
)
def test_a_required_array_of_another_type_reads_as_empty(backend, version, update, field, reason):
    # Required, but marked x-deserialize-default-on-error: present with another type (null
    # too) it is its default, []; absent, the update is refused (above).
    s = snap(backend, [upd(update)], version)
    assert [e["reason"] for e in s["errors"]] == [reason + " (read as [])"]
    if field is None:
        assert next(iter(s["plans"].values()))["entries"] == []
    else:
        assert s[field] == []


@pytest.mark.parametrize(
    ("version", "update", "reason"),
    [
        (
            2,
            {"sessionUpdate": "agent_message_chunk", "messageId": 5, "content": text("a")},
            "agent_message_chunk: messageId must be a string",
        ),
        (
            1,
            {"sessionUpdate": "tool_call", "toolCallId": "c", "title": 5},
            "tool_call: title must be a string",
        ),
        (
            2,
            {"sessionUpdate": "tool_call_update", "title": 5},
            "tool_call_update: toolCallId must be a string",
        ),
        (
            2,
            {"sessionUpdate": "usage_update", "used": -1, "size": 2, "cost": 5},
            "usage_update: used must be a non-negative integer",
        ),
        (
            2,
            {"sessionUpdate": "compaction_update", "compactionId": "c", "summary": [5]},
            "compaction_update: status must be a string",
        ),
        (
            2,
            {"sessionUpdate": "agent_message", "content": [text("a"), 5]},
            "agent_message: messageId must be a string",
        ),
        (
            2,
            {"sessionUpdate": "notice", "severity": "info", "title": "", "description": 7},
            "notice: title must be a non-empty string",
        ),
        (
            2,
            {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "!", "_meta": 1},
            "terminal_output_chunk: data is not valid base64",
        ),
    ],
)
def test_a_refused_update_has_only_its_refusal_record(backend, version, update, reason):
    # What the update would have left out is moot when it is not applied at all.
    s = snap(backend, [upd(update)], version)
    assert [e["reason"] for e in s["errors"]] == [reason]
    assert (s["messages"], s["toolCalls"], s["terminals"], s["compactions"]) == ([], {}, {}, {})


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


def test_stop_reason_and_usage_belong_to_an_idle_state_only(backend):
    # On another state they are unknown fields, unchecked (the schemas' other state variants
    # have neither).
    running = {"sessionUpdate": "state_update", "state": "running", "stopReason": {"v": 1}}
    waiting = {"sessionUpdate": "state_update", "state": "requires_action", "usage": {"x": 1}}
    for update, state in ((running, "running"), (waiting, "requires_action")):
        store = store_of(backend, [upd(update)], version=2)
        assert store.errors == []
        assert (store[SID].state, store[SID].stop_reason) == (state, None)
        # Unknown fields, kept raw.
        extras = store[SID].snapshot()["updateExtras"]["state_update"]
        assert extras == {k: v for k, v in update.items() if k not in ("sessionUpdate", "state")}


def test_an_update_that_sets_the_same_values_is_still_a_change(backend):
    # Values are not compared; only a plan_removed of a plan that is not there names nothing.
    update = upd({"sessionUpdate": "session_info_update", "title": "T"})
    store = store_of(backend, [update], version=2)
    store.changes()
    store.apply(update)
    assert store.changes() == [(SID, "session", "info")]
    store.apply(upd({"sessionUpdate": "plan_removed", "planId": "absent"}))
    assert store.changes() == []


def test_items_of_unknown_type_stay_raw_and_diffs_follow_the_version(backend):
    content = [
        {"type": "_x", "path": 1},
        {"type": "diff", "path": "/a", "newText": "b"},
        {"type": "diff", "changes": []},
    ]
    update = upd({"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": content})
    # Before initialize only the rules of both versions apply.
    s = snap(backend, [update])
    assert s["errors"] == []
    assert s["toolCalls"]["c"]["content"] == content
    # After it, the diff of the other version is an item that cannot be read: left out.
    reasons = {
        1: ("tool_call_update: content[2].path must be a string (item dropped)", 2),
        2: ("tool_call_update: content[1].changes must be an array (item dropped)", 1),
    }
    for version, (reason, dropped) in reasons.items():
        s = snap(backend, [update], version)
        assert [e["reason"] for e in s["errors"]] == [reason]
        assert s["toolCalls"]["c"]["content"] == [c for i, c in enumerate(content) if i != dropped]


def test_open_enums_and_untyped_fields_take_any_string_or_value(backend):
    s = snap(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c",
                    "kind": "_k",
                    "status": "_s",
                    "rawInput": 5,
                    "rawOutput": "x",
                    "_meta": None,
                    "extra": 7,
                }
            ),
            upd({"sessionUpdate": "state_update", "state": "_busy"}),
            upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "_why"}),
            upd({"sessionUpdate": "notice", "severity": "_sev", "title": "t"}),
            upd(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": text("a"),
                    "_meta": {"k": 1},
                }
            ),
        ],
        2,
    )
    assert s["errors"] == []
    assert s["toolCalls"]["c"] == {
        "toolCallId": "c",
        "kind": "_k",
        "status": "_s",
        "rawInput": 5,
        "rawOutput": "x",
        "extra": 7,
    }
    assert (s["state"], s["stopReason"]) == ("idle", "_why")
    assert s["messages"][0]["content"] == [text("a")]
