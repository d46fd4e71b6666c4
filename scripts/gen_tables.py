#!/usr/bin/env python3
"""Write the protocol tables of both backends from protocol/tables.json.

`python scripts/gen_tables.py` writes src/session/tables.rs and
python/acpwire/_pure/session/tables.py; `--check` writes nothing and exits 1, naming each
file that differs from what tables.json gives. `--schemas DIR` (an ACP schema tree with v1/
and v2/, as protocol/SOURCES.md describes) also derives the tables that can be read off the
schemas and exits 1 on any difference from tables.json. protocol/SOURCES.md says where each
table comes from.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "protocol" / "tables.json"
RUST = ROOT / "src" / "session" / "tables.rs"
PYTHON = ROOT / "python" / "acpwire" / "_pure" / "session" / "tables.py"
COMMAND = "python scripts/gen_tables.py"
WIDTH = 100

# tables.json's names for a field's JSON type and need, and each backend's spelling.
TYPES = {"string": "Str", "integer": "Int", "number": "Num", "array": "Arr", "object": "Obj"}
PY_TYPES = {"string": "STR", "integer": "INT", "number": "NUM", "array": "ARR", "object": "OBJ"}
NEEDS = {"opt": "Opt", "req": "Req", "inner": "Inner", "default": "Default"}
VERSIONS = {"both": "Both", "v1": "V1", "v2": "V2"}
PY_VERSIONS = {"both": "None", "v1": "V1", "v2": "V2"}


# --- Rust ---------------------------------------------------------------------------------


def rust_str_list(items: list[str], indent: str = "") -> str:
    one = "&[" + ", ".join(f'"{x}"' for x in items) + "]"
    if len(indent) + len(one) < WIDTH - 20:
        return one
    inner = "".join(f'{indent}    "{x}",\n' for x in items)
    return "&[\n" + inner + indent + "]"


def rust_str_const(name: str, items: list[str]) -> str:
    """`pub(super) const NAME: &[&str] = …;` on one line when it fits, else one item a line."""
    head = f"pub(super) const {name}: &[&str] = "
    one = rust_str_list(items)
    if len(head) + len(one) + 1 <= WIDTH and "\n" not in one:
        return f"{head}{one};"
    inner = "".join(f'    "{x}",\n' for x in items)
    return f"{head}&[\n{inner}];"


def rust_ty(field: list, items: dict) -> str:
    ty = TYPES[field[1]]
    inside = field[3] if len(field) > 3 else None
    if inside is None:
        return f"Ty::{ty}"
    ((how, what),) = inside.items()
    if how == "shaped":
        return "Ty::Shaped(&[" + ", ".join(rust_field(f, items) for f in what) + "])"
    return {"items": "Ty::Items", "one": "Ty::One"}[how] + f"(&{what})"


def rust_field(field: list, items: dict) -> str:
    return f'("{field[0]}", {rust_ty(field, items)}, Need::{NEEDS[field[2]]})'


def rust_fields(fields: list, items: dict, indent: str) -> str:
    inner = "".join(f"{indent}    {rust_field(f, items)},\n" for f in fields)
    return "&[\n" + inner + indent + "]"


def rust_item(name: str, item: dict, items: dict) -> str:
    out = [f"pub(super) const {name}: Item = Item {{"]
    out.append(f"    members: {rust_fields(item['members'], items, '    ')},")
    by_type = item.get("byType", [])
    if by_type:
        out.append("    by_type: &[")
        for tag, version, fields in by_type:
            tag = "ANY_TYPE" if tag == "*" else f'"{tag}"'
            out.append(f"        (\n            {tag},\n            Ver::{VERSIONS[version]},")
            out.append(f"            {rust_fields(fields, items, '            ')},\n        ),")
        out.append("    ],")
    else:
        out.append("    by_type: &[],")
    out.append("};")
    return "\n".join(out)


def render_rust(t: dict) -> str:
    ft = t["FIELD_TYPES"]
    items = ft["items"]
    out = [
        f"// Generated from protocol/tables.json by `{COMMAND}`: do not edit.",
        "//! The protocol tables: methods by the side that handles them, the `session/update`",
        "//! variants of one version only, the keys of response types, and the field types of",
        "//! the known variants (read by [`super::check`]). Where each comes from:",
        "//! `protocol/SOURCES.md`.",
        "",
        "use super::check::{Field, Item, Need, Ty, Ver};",
        "",
        "/// Methods handled by the agent (sent by the client), v1 and v2, stable and unstable.",
        f"pub(super) const AGENT_METHODS: &[&str] = {rust_str_list(t['AGENT_METHODS'])};",
        "",
        "/// Methods handled by the client (sent by the agent).",
        f"pub(super) const CLIENT_METHODS: &[&str] = {rust_str_list(t['CLIENT_METHODS'])};",
        "",
        "/// `session/update` variants of v1 only: unknown under v2 rules.",
        f"pub(super) const V1_ONLY: &[&str] = {rust_str_list(t['V1_ONLY'])};",
        "",
        "/// `session/update` variants of v2 only: unknown under v1 rules.",
        f"pub(super) const V2_ONLY: &[&str] = {rust_str_list(t['V2_ONLY'])};",
        "",
        "/// The keys a successful response to `method` must have (for `session/prompt`, under v1",
        "/// rules: see [`V2_PROMPT_KEYS`]).",
        "pub(super) fn response_keys(method: &str) -> &'static [&'static str] {",
        "    match method {",
    ]
    by_keys: dict[tuple, list[str]] = {}
    for method, keys in t["RESPONSE_KEYS"].items():
        by_keys.setdefault(tuple(keys), []).append(method)
    for keys, methods in by_keys.items():
        pattern = " | ".join(f'"{m}"' for m in methods)
        out.append(f"        {pattern} => {rust_str_list(list(keys))},")
    out += [
        "        _ => &[],",
        "    }",
        "}",
        "",
        "/// The keys a v2 prompt's response must have.",
        f"pub(super) const V2_PROMPT_KEYS: &[&str] = {rust_str_list(t['V2_PROMPT_KEYS'])};",
        "",
        "/// In [`Item::by_type`], members every item has in that version, whatever its type.",
        f'pub(super) const ANY_TYPE: &str = "{t["ANY_TYPE"]}";',
        "",
        "/// The values of a tool call's `status` the schemas name, v1 and v2 (a tool call stores",
        "/// one of them as its index).",
        rust_str_const("TOOL_CALL_STATUSES", t["TOOL_CALL_STATUSES"]),
        "",
        "/// The values of a tool call's `kind` the schemas name, v1 and v2.",
        rust_str_const("TOOL_KINDS", t["TOOL_KINDS"]),
        "",
    ]
    for name, item in items.items():
        doc = item.get("doc")
        if doc:
            out += [f"/// {line}" for line in wrap(doc, WIDTH - 4)]
        out += [rust_item(name, item, items), ""]
    out.append("/// Variant -> its checked fields.")
    out.append("pub(super) const FIELD_TYPES: &[(&str, &[Field])] = &[")
    for kind, fields in ft["variants"].items():
        fields = rust_fields(fields, items, "        ")
        out.append(f'    (\n        "{kind}",\n        {fields},\n    ),')
    out.append("];")
    return "\n".join(out) + "\n"


def wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


# --- Python -------------------------------------------------------------------------------


class Code(str):
    """Python source written as is (a name or an expression), not as a string literal."""


def py_literal(value, indent: int, width: int = WIDTH) -> str:
    """`value` as the formatter writes it: on one line when it fits, else one element a line
    with a trailing comma. Tuples, lists, dicts, strings, ints and `Code`."""
    one = py_one_line(value)
    if indent + len(one) <= width:
        return one
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        lines = [
            f"{pad}{py_one_line(k)}: {py_literal(v, indent + 4, width - len(py_one_line(k)) - 2)},"
            for k, v in value.items()
        ]
        return "{\n" + "\n".join(lines) + "\n" + " " * indent + "}"
    if isinstance(value, Call):
        inner = py_literal(value.arg, indent + 4, width)
        return f"{value.name}(\n{pad}{inner}\n" + " " * indent + ")"
    opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
    lines = [f"{pad}{py_literal(v, indent + 4, width - 1)}," for v in value]
    return opening + "\n" + "\n".join(lines) + "\n" + " " * indent + closing


class Call:
    def __init__(self, name: str, arg):
        self.name, self.arg = name, arg


def py_one_line(value) -> str:
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int) or value is None:
        return repr(value)
    if isinstance(value, Call):
        return f"{value.name}({py_one_line(value.arg)})"
    if isinstance(value, dict):
        pairs = ", ".join(f"{py_one_line(k)}: {py_one_line(v)}" for k, v in value.items())
        return "{" + pairs + "}"
    parts = ", ".join(py_one_line(v) for v in value)
    if isinstance(value, list):
        return "[" + parts + "]"
    return "(" + parts + ("," if len(value) == 1 else "") + ")"


def py_field(field: list, items: dict) -> tuple:
    inside = field[3] if len(field) > 3 else None
    if inside is None:
        rule = Code("None")
    else:
        ((how, what),) = inside.items()
        if how == "shaped":
            rule = (how, tuple(py_field(f, items) for f in what))
        else:
            rule = (how, py_item(items[what], items))
    return (field[0], Code("*" + PY_TYPES[field[1]]), Code(NEEDS[field[2]].upper()), rule)


def py_item(item: dict, items: dict) -> tuple:
    members = tuple(py_field(f, items) for f in item["members"])
    by_type = tuple(
        (
            Code("ANY_TYPE") if tag == "*" else tag,
            Code(PY_VERSIONS[version]),
            tuple(py_field(f, items) for f in fields),
        )
        for tag, version, fields in item.get("byType", [])
    )
    return (members, by_type)


def render_python(t: dict) -> str:
    ft = t["FIELD_TYPES"]
    items = ft["items"]

    def assign(name: str, value) -> str:
        return f"{name} = {py_literal(value, 0, WIDTH - len(name) - 3)}"

    variants = {
        kind: tuple(py_field(f, items) for f in fields) for kind, fields in ft["variants"].items()
    }
    out = [
        f"# Generated from protocol/tables.json by `{COMMAND}`: do not edit.",
        '"""Twin of src/session/tables.rs: the protocol tables, generated.',
        "",
        "Methods by the side that handles them, the session/update variants of one version only,",
        "the keys of response types, and the field types of the known variants. Where each comes",
        'from: protocol/SOURCES.md."""',
        "",
        "# The rules in force: before initialize, v1, v2.",
        "UNKNOWN, V1, V2 = 0, 1, 2",
        "# A field's need: absent or null passes (OPT); present with its type (REQ); required, but",
        "# its presence and type are the handler's (INNER); a required array that reads as [] when",
        "# present with another type (DEFAULT).",
        "OPT, REQ, INNER, DEFAULT = 0, 1, 2, 3",
        "# A field's JSON type: the Python types that are it, and its name in error reasons.",
        'STR = ((str,), "a string")',
        'INT = ((int,), "an integer")',
        'NUM = ((int, float), "a number")',
        'ARR = ((list,), "an array")',
        'OBJ = ((dict,), "an object")',
        "# In an item's by_type, members every item has in that version, whatever its type.",
        f"ANY_TYPE = {json.dumps(t['ANY_TYPE'])}",
        "# Methods handled by the agent (sent by the client) and by the client (sent by the",
        "# agent).",
        assign("AGENT_METHODS", Call("frozenset", list(t["AGENT_METHODS"]))),
        assign("CLIENT_METHODS", Call("frozenset", list(t["CLIENT_METHODS"]))),
        "# session/update variants of one version only, and the rules under which each is",
        "# unknown.",
        assign("V1_ONLY", Call("frozenset", tuple(t["V1_ONLY"]))),
        assign("V2_ONLY", Call("frozenset", tuple(t["V2_ONLY"]))),
        "OTHER_VERSION = {**{k: V2 for k in V1_ONLY}, **{k: V1 for k in V2_ONLY}}",
        "# The keys a successful response to a method must have (session/prompt: under v1 rules).",
        assign("RESPONSE_KEYS", {m: tuple(k) for m, k in t["RESPONSE_KEYS"].items()}),
        assign("V2_PROMPT_KEYS", tuple(t["V2_PROMPT_KEYS"])),
        "# The named values of a tool call's status and kind, v1 and v2 (a store keeps these",
        "# objects rather than a copy per tool call).",
        assign("TOOL_CALL_STATUSES", tuple(t["TOOL_CALL_STATUSES"])),
        assign("TOOL_KINDS", tuple(t["TOOL_KINDS"])),
        "# Variant -> its checked fields: (name, types, type name, need, inside), inside being",
        "# None,",
        '# ("shaped", fields), ("items", item) or ("one", item), and an item (members, by_type),',
        "# by_type holding (type, version or None for both, fields).",
        assign("FIELD_TYPES", variants),
        "# The same rules by field name, for walking an update's own keys.",
        "FIELD_RULES = {kind: {field[0]: field for field in fields} for kind, fields in"
        " FIELD_TYPES.items()}",
    ]
    return "\n".join(out) + "\n"


# --- schemas ------------------------------------------------------------------------------


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def required_keys(defs: dict, schema: dict) -> set[str]:
    """The keys every value of `schema` has: its own `required`, those of the types it is all
    of, and those every branch of its `anyOf`/`oneOf` requires."""
    if "$ref" in schema:
        return required_keys(defs, defs[schema["$ref"].rsplit("/", 1)[1]])
    keys = set(schema.get("required", []))
    for part in schema.get("allOf", []):
        keys |= required_keys(defs, part)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            branches = [required_keys(defs, b) for b in schema[union]]
            keys |= set.intersection(*branches) if branches else set()
    return keys


def response_types(defs: dict) -> dict[str, set[str]]:
    """Method -> the keys its response type requires, from the successful-result branches of
    `AgentResponse` and `ClientResponse` (each names its method in its description)."""
    out = {}
    for side in ("AgentResponse", "ClientResponse"):
        for branch in defs[side]["anyOf"]:
            result = branch.get("properties", {}).get("result")
            if result is None:
                continue
            for alt in result["anyOf"]:
                found = re.search(r"for an? `([^`]+)` request", alt.get("description", ""))
                if found:
                    out[found.group(1)] = required_keys(defs, alt)
    return out


def property_names(defs: dict, schema: dict) -> set[str]:
    """The property names a value of `schema` may have, across all its branches."""
    if "$ref" in schema:
        return property_names(defs, defs[schema["$ref"].rsplit("/", 1)[1]])
    names = set(schema.get("properties", {}))
    for part in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        names |= property_names(defs, part)
    return names


def update_branches(defs: dict) -> dict[str, dict]:
    """`session/update` variant -> its branch of `SessionUpdate`."""
    union = defs["SessionUpdate"].get("anyOf", []) + defs["SessionUpdate"].get("oneOf", [])
    return {
        b["properties"]["sessionUpdate"]["const"]: b
        for b in union
        if "const" in b.get("properties", {}).get("sessionUpdate", {})
    }


def unknown_fields(schemas: Path, tables: dict) -> list[str]:
    """Fields FIELD_TYPES lists for a variant of the schemas that no version of it has."""
    names: dict[str, set[str]] = {}
    for version in ("v1", "v2"):
        defs = load(schemas / version / "schema.unstable.json")["$defs"]
        for kind, branch in update_branches(defs).items():
            names.setdefault(kind, set()).update(property_names(defs, branch))
    return [
        f"protocol/tables.json: FIELD_TYPES.variants.{kind}.{field[0]} is in no schema"
        for kind, fields in tables["FIELD_TYPES"]["variants"].items()
        if kind in names
        for field in fields
        if field[0] not in names[kind]
    ]


def enum_values(definition: dict) -> set[str]:
    """The named values of a string enum (its branches' `const`; an open `string` branch adds
    none)."""
    branches = definition.get("oneOf") or definition.get("anyOf") or []
    return {branch["const"] for branch in branches if "const" in branch}


def derive(schemas: Path, tables: dict) -> dict:
    """The tables that can be read off the schemas (see protocol/SOURCES.md)."""
    sides: list[set[str]] = [set(), set()]
    variants: dict[str, set[str]] = {}
    responses: dict[str, dict[str, set[str]]] = {}
    values: dict[str, set[str]] = {"TOOL_CALL_STATUSES": set(), "TOOL_KINDS": set()}
    for version in ("v1", "v2"):
        for name in ("meta.json", "meta.unstable.json"):
            meta = load(schemas / version / name)
            for side, key in zip(sides, ("agentMethods", "clientMethods"), strict=True):
                side.update(meta[key].values())
        defs = load(schemas / version / "schema.unstable.json")["$defs"]
        variants[version] = set(update_branches(defs))
        for table, name in (("TOOL_CALL_STATUSES", "ToolCallStatus"), ("TOOL_KINDS", "ToolKind")):
            values[table] |= enum_values(defs[name])
        responses[version] = response_types(defs)
    agent, client = sides
    both = agent & client
    known = set(tables["FIELD_TYPES"]["variants"])
    keys = {}
    for method in sorted(set(responses["v1"]) | set(responses["v2"])):
        if method == "session/prompt":
            required = responses["v1"][method]
        else:
            required = set.intersection(*(r[method] for r in responses.values() if method in r))
        if required:
            keys[method] = required
    return {
        "AGENT_METHODS": agent - both,
        "CLIENT_METHODS": client - both,
        "V1_ONLY": (variants["v1"] - variants["v2"]) & known,
        "V2_ONLY": (variants["v2"] - variants["v1"]) & known,
        "RESPONSE_KEYS": keys,
        **values,
    }


def compare_with_schemas(schemas: Path, tables: dict) -> list[str]:
    derived = derive(schemas, tables)
    problems = []
    for name, want in derived.items():
        have = tables[name]
        have = {k: set(v) for k, v in have.items()} if isinstance(want, dict) else set(have)
        if have != want:
            problems.append(f"protocol/tables.json: {name} differs from the schemas: {want!r}")
    return problems + unknown_fields(schemas, tables)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on drift")
    parser.add_argument("--schemas", type=Path, help="also compare with the ACP schemas here")
    args = parser.parse_args()
    tables = load(SOURCE)
    problems = []
    if args.schemas is not None:
        problems += compare_with_schemas(args.schemas, tables)
    for path, text in ((RUST, render_rust(tables)), (PYTHON, render_python(tables))):
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.check:
            problems.append(f"{path.relative_to(ROOT)}: differs from protocol/tables.json")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems and args.check:
        print(f"run `{COMMAND}` to regenerate", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
