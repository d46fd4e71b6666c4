"""The limits and caps in ``acpwire._contract`` are the Rust core's constants, value for value.

The pure backend and the tools read ``_contract``; the native backend compiles the Rust
constants. This reads each constant's definition from the Rust source, so a change on one side
only fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acpwire import _contract

ROOT = Path(__file__).resolve().parents[2]

# name in _contract -> (Rust file, constant name there)
RUST_CONSTANTS = {
    "DEFAULT_MAX_FRAME_BYTES": ("src/framing.rs", "DEFAULT_MAX_FRAME_BYTES"),
    "EXCERPT_BYTES": ("src/framing.rs", "EXCERPT_BYTES"),
    "MAX_DECODE_DEPTH": ("src/python/json/loads.rs", "MAX_DEPTH"),
    "MAX_INT_DIGITS": ("src/python/json/loads.rs", "MAX_INT_DIGITS"),
    "UNBOUNDED_COLS": ("src/terminal/mod.rs", "UNBOUNDED_COLS"),
    "MAX_COLS": ("src/terminal/mod.rs", "MAX_COLS"),
    "MAX_ROWS": ("src/terminal/mod.rs", "MAX_ROWS"),
    "MAX_OSC_BYTES": ("src/terminal/osc.rs", "MAX_OSC_BYTES"),
    "MAX_PARAMS": ("src/terminal/params.rs", "MAX_PARAMS"),
    "MAX_STYLES": ("src/terminal/style.rs", "MAX_STYLES"),
    "MAX_LINKS": ("src/terminal/style.rs", "MAX_LINKS"),
    "MAX_LINK_BYTES": ("src/terminal/style.rs", "MAX_LINK_BYTES"),
    "MAX_CLUSTERS": ("src/terminal/style.rs", "MAX_CLUSTERS"),
    "MAX_CLUSTER_CHARS": ("src/terminal/style.rs", "MAX_CLUSTER_CHARS"),
    "MAX_ERRORS": ("src/session/mod.rs", "MAX_ERRORS"),
    "MAX_SESSION_ERRORS": ("src/session/mod.rs", "MAX_SESSION_ERRORS"),
    "MAX_NOTICES": ("src/session/mod.rs", "MAX_NOTICES"),
    "MAX_PENDING": ("src/session/mod.rs", "MAX_PENDING"),
    "MAX_HOLES": ("src/session/mod.rs", "MAX_HOLES"),
    "DEFAULT_MAX_TERMINAL_BYTES": ("src/session/mod.rs", "DEFAULT_MAX_TERMINAL_BYTES"),
}

# `const NAME: usize = <integer products>;`, with any visibility.
_INTEGER = r"[0-9_]+(?:\s*\*\s*[0-9_]+)*"


def rust_constant(path: str, name: str) -> int:
    source = (ROOT / path).read_text(encoding="utf-8")
    found = re.findall(rf"\bconst {name}: usize = ({_INTEGER});", source)
    assert len(found) == 1, f"{path} defines {name} {len(found)} times"
    value = 1
    for factor in found[0].split("*"):
        value *= int(factor.strip().replace("_", ""))
    return value


@pytest.mark.parametrize("name", sorted(RUST_CONSTANTS))
def test_contract_constant_is_the_rust_one(name: str) -> None:
    if not (ROOT / "src").is_dir():
        pytest.skip("needs the source tree")
    assert getattr(_contract, name) == rust_constant(*RUST_CONSTANTS[name])


def test_every_contract_limit_is_held_against_rust() -> None:
    reasons = {"EMPTY_BATCH", "INVALID_JSON", "INVALID_UTF8", "TOO_LONG", "TRAILING_DATA"}
    # MAX_ENCODE_DEPTH is orjson's limit, MAX_KEPT_ERRORS the frame decoder's: both are held by
    # behaviour tests on both backends (tests/json, tests/framing).
    behavioural = {"MAX_ENCODE_DEPTH", "MAX_KEPT_ERRORS"}
    assert set(_contract.__all__) == set(RUST_CONSTANTS) | reasons | behavioural
