"""The generated protocol tables of both backends against their one source, protocol/tables.json.

`scripts/gen_tables.py --check` shows the files are what the generator writes; these tests read
each generated table back, independently of the generator, and compare it with the source.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCE = json.loads((ROOT / "protocol" / "tables.json").read_text(encoding="utf-8"))
RUST = (ROOT / "src" / "session" / "tables.rs").read_text(encoding="utf-8")
PYTHON = ROOT / "python" / "acpwire" / "_pure" / "session" / "tables.py"
SCHEMAS = ROOT.parent / "shared" / "acp-schema"

PY_TYPES = {
    "string": ((str,), "a string"),
    "integer": ((int,), "an integer"),
    "number": ((int, float), "a number"),
    "array": ((list,), "an array"),
    "object": ((dict,), "an object"),
}
NEEDS = {"opt": 0, "req": 1, "inner": 2, "default": 3}
VERSIONS = {"both": None, "v1": 1, "v2": 2}


def generated_python() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generated_tables", PYTHON)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_match_the_source():
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_tables.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.skipif(not SCHEMAS.is_dir(), reason="the ACP schemas are not beside the project")
def test_derivable_tables_match_the_schemas():
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_tables.py"), "--check", "--schemas", SCHEMAS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr


# --- the pure tables ----------------------------------------------------------------------


def pure_item(name: str) -> tuple:
    item = SOURCE["FIELD_TYPES"]["items"][name]
    members = tuple(pure_field(f) for f in item["members"])
    by_type = tuple(
        (tag, VERSIONS[version], tuple(pure_field(f) for f in fields))
        for tag, version, fields in item.get("byType", [])
    )
    return (members, by_type)


def pure_field(field: list) -> tuple:
    name, ty, need, *inside = field
    rule = None
    if inside:
        ((how, what),) = inside[0].items()
        rule = (how, tuple(pure_field(f) for f in what) if how == "shaped" else pure_item(what))
    return (name, *PY_TYPES[ty], NEEDS[need], rule)


def test_pure_tables_are_the_source():
    t = generated_python()
    assert (t.UNKNOWN, t.V1, t.V2) == (0, 1, 2)
    assert (t.OPT, t.REQ, t.INNER, t.DEFAULT) == (0, 1, 2, 3)
    assert tuple(PY_TYPES.values()) == (t.STR, t.INT, t.NUM, t.ARR, t.OBJ)
    assert SOURCE["ANY_TYPE"] == t.ANY_TYPE
    for name in ("AGENT_METHODS", "CLIENT_METHODS", "V1_ONLY", "V2_ONLY"):
        assert getattr(t, name) == frozenset(SOURCE[name]), name
    assert {
        **dict.fromkeys(SOURCE["V1_ONLY"], 2),
        **dict.fromkeys(SOURCE["V2_ONLY"], 1),
    } == t.OTHER_VERSION
    assert {m: tuple(k) for m, k in SOURCE["RESPONSE_KEYS"].items()} == t.RESPONSE_KEYS
    assert tuple(SOURCE["V2_PROMPT_KEYS"]) == t.V2_PROMPT_KEYS
    variants = SOURCE["FIELD_TYPES"]["variants"]
    assert list(t.FIELD_TYPES) == list(variants)
    for kind, fields in variants.items():
        assert t.FIELD_TYPES[kind] == tuple(pure_field(f) for f in fields), kind
        assert t.FIELD_RULES[kind] == {f[0]: f for f in t.FIELD_TYPES[kind]}, kind


def test_pure_any_type_is_the_table_entry_itself():
    # The pure checker compares a by_type tag with ANY_TYPE by identity.
    t = generated_python()
    tags = [
        tag
        for fields in t.FIELD_TYPES.values()
        for field in fields
        if field[4] is not None and field[4][0] in ("items", "one")
        for tag, _, _ in field[4][1][1]
    ]
    assert any(tag is t.ANY_TYPE for tag in tags)


# --- the Rust tables ----------------------------------------------------------------------


def rust_str_list(name: str) -> list[str]:
    found = re.search(rf"const {name}: &\[&str\] = &\[(.*?)\];", RUST, re.S)
    assert found, name
    return re.findall(r'"([^"]*)"', found.group(1))


def rust_response_keys() -> dict[str, list[str]]:
    body = re.search(r"fn response_keys\(.*?\{\s*match method \{(.*?)\n    \}", RUST, re.S)
    assert body
    keys = {}
    for arm in re.finditer(r"^\s*(\"[^=]*?) => &\[(.*?)\],", body.group(1), re.S | re.M):
        for method in re.findall(r'"([^"]*)"', arm.group(1)):
            keys[method] = re.findall(r'"([^"]*)"', arm.group(2))
    return keys


class Inside:
    def __init__(self, how: str, what):
        self.how, self.what = how, what


def rust_values() -> dict:
    """The generated consts, evaluated as Python: each Rust construct the generator writes
    becomes the tables.json form it stands for."""
    text = RUST
    for ty, name in [("Str", "string"), ("Int", "integer"), ("Num", "number")]:
        text = text.replace(f"Ty::{ty}", f'"{name}"')
    text = text.replace("Ty::Arr", '"array"').replace("Ty::Obj", '"object"')
    text = re.sub(r"Ty::(Shaped|Items|One)\(&", r"\1(", text)
    text = re.sub(r"Need::(\w+)", lambda m: f'"{m.group(1).lower()}"', text)
    text = re.sub(r"Ver::(\w+)", lambda m: f'"{m.group(1).lower()}"', text)
    text = text.replace("&[", "[").replace("Item {", "dict(").replace("};", ")")
    text = text.replace("members:", "members=").replace("by_type:", "by_type=")
    namespace = {
        "Shaped": lambda fields: Inside("shaped", fields),
        "Items": lambda item: Inside("items", item),
        "One": lambda item: Inside("one", item),
        "ANY_TYPE": SOURCE["ANY_TYPE"],
    }
    values = {}
    for found in re.finditer(r"pub\(super\) const (\w+): (Item|\[\(&str, \[Field\]\)\]) = ", text):
        start = found.end()
        end = text.index("\n)" if found.group(2) == "Item" else "\n];", start) + 2
        values[found.group(1)] = start, end
    # Items first (FIELD_TYPES refers to them by name).
    for name, (start, end) in sorted(values.items(), key=lambda kv: kv[0] == "FIELD_TYPES"):
        expr = text[start:end].rstrip(";")
        namespace[name] = eval(expr, {"__builtins__": {"dict": dict}}, namespace)
    return namespace


def rust_field(field: tuple, names: dict) -> list:
    name, ty, need = field
    if isinstance(ty, Inside):
        if ty.how == "shaped":
            return [name, "object", need, {"shaped": [rust_field(f, names) for f in ty.what]}]
        item = names[id(ty.what)]
        return [name, "array" if ty.how == "items" else "object", need, {ty.how: item}]
    return [name, ty, need]


def test_rust_tables_are_the_source():
    for name in ("AGENT_METHODS", "CLIENT_METHODS", "V1_ONLY", "V2_ONLY", "V2_PROMPT_KEYS"):
        assert rust_str_list(name) == SOURCE[name], name
    assert rust_response_keys() == SOURCE["RESPONSE_KEYS"]
    values = rust_values()
    items = SOURCE["FIELD_TYPES"]["items"]
    names = {id(values[name]): name for name in items}
    for name, item in items.items():
        rust = values[name]
        assert [rust_field(f, names) for f in rust["members"]] == item["members"], name
        by_type = [
            [tag, version, [rust_field(f, names) for f in fields]]
            for tag, version, fields in rust["by_type"]
        ]
        assert by_type == item.get("byType", []), name
    variants = [
        (kind, [rust_field(f, names) for f in fields]) for kind, fields in values["FIELD_TYPES"]
    ]
    assert variants == list(SOURCE["FIELD_TYPES"]["variants"].items())
