"""The terminal behaviour cases shared with the Rust suite, on both backends.

Each file of ``tests/cases/terminal`` holds cases of one topic (the format is described in that
directory's ``README.md``); ``cargo test`` runs the same files. A malformed file or case, or a
step without an expectation, fails here as there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from terminal_support import views

CASES = Path(__file__).resolve().parents[1] / "cases" / "terminal"
CASE_KEYS = {"name", "config", "feed", "reset", "expect", "steps", "bytewise", "render_text"}
CONFIG_KEYS = {"cols", "rows", "scrollback", "max_bytes"}
FLAGS = ("bold", "dim", "italic", "underline", "inverse", "strike")


def unescape(s: str, at: str) -> bytes:
    """The bytes of an input string: its text as UTF-8, each ``\\xHH`` the byte 0xHH."""
    out = bytearray()
    for k, piece in enumerate(re.split(r"(\\.{0,3})", s, flags=re.DOTALL)):
        if k % 2 == 0:
            out += piece.encode()
        elif re.fullmatch(r"\\x[0-9a-fA-F]{2}", piece):
            out.append(int(piece[2:], 16))
        else:
            raise ValueError(f"{at}: bad escape {piece!r} (only \\xHH)")
    return bytes(out)


def load(path: Path) -> list[dict]:
    at = str(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or set(doc) - {"about", "cases"}:
        raise ValueError(f"{at}: an object of 'about' and 'cases'")
    cases = doc.get("cases")
    if not isinstance(cases, list) or not cases:
        raise ValueError(f"{at}: no cases")
    names = [case.get("name") if isinstance(case, dict) else None for case in cases]
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(f"{at}: every case has a name of its own")
    return cases


def all_cases() -> list[tuple[str, dict]]:
    files = sorted(CASES.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"{CASES}: no case files")
    return [(f"{path.stem}: {case['name']}", case) for path in files for case in load(path)]


def steps(case: dict, at: str) -> list[tuple[bool, bytes, dict]]:
    """(is a reset, bytes, expectation) for each step of ``case``."""
    out = []
    for k, step in enumerate(case.get("steps", [case])):
        where = f"{at} step {k}" if "steps" in case else at
        if not isinstance(step, dict) or set(step) - CASE_KEYS:
            raise ValueError(f"{where}: unknown keys {sorted(set(step) - CASE_KEYS)}")
        if ("feed" in step) == ("reset" in step):
            raise ValueError(f"{where}: a step has a feed or a reset")
        expect = step.get("expect")
        if not isinstance(expect, dict) or not expect:
            raise ValueError(f"{where}: no expectation")
        out.append(("reset" in step, unescape(step.get("feed", step.get("reset")), where), expect))
    if not out:
        raise ValueError(f"{at}: no steps")
    return out


def span_key(span) -> tuple:
    return (span.text, span.fg, span.bg, *(bool(getattr(span, f)) for f in FLAGS), span.link)


def expected_span_key(s: dict, at: str) -> tuple:
    unknown = set(s) - {"text", "fg", "bg", "link", *FLAGS}
    if unknown or "text" not in s:
        raise ValueError(f"{at}: a span is a text and style fields, not {sorted(unknown)}")
    return (s["text"], s.get("fg"), s.get("bg"), *(s.get(f, False) for f in FLAGS), s.get("link"))


def check(t, expect: dict, at: str) -> None:
    for key, want in expect.items():
        where = f"{at}: {key}"
        if key == "text":
            assert t.text == want, where
        elif key == "lines":
            assert t.lines() == want, where
        elif key == "screen":
            assert t.screen() == want, where
        elif key == "cursor":
            assert t.cursor == (None if want is None else tuple(want)), where
        elif key == "span_texts":
            assert [[s.text for s in row] for row in t.spans()] == want, where
        elif key == "spans":
            got = [[span_key(s) for s in row] for row in t.spans()]
            assert got == [[expected_span_key(s, where) for s in row] for row in want], where
        elif key == "title":
            assert t.title == want, where
        elif key == "bell_count":
            assert t.bell_count == want, where
        else:
            raise ValueError(f"{where}: unknown view")


CASE_LIST = all_cases()


@pytest.mark.parametrize(("at", "case"), CASE_LIST, ids=[at for at, _ in CASE_LIST])
def test_case(backend, at, case):
    config = case.get("config", {})
    if set(config) - CONFIG_KEYS:
        raise ValueError(f"{at}: unknown config keys {sorted(set(config) - CONFIG_KEYS)}")
    if set(case) - CASE_KEYS:
        raise ValueError(f"{at}: unknown keys {sorted(set(case) - CASE_KEYS)}")
    for flag in ("bytewise", "render_text"):
        if not isinstance(case.get(flag, False), bool):
            raise ValueError(f"{at}: {flag} is true or false")
    if case.get("render_text"):
        if config:
            raise ValueError(f"{at}: render_text takes no config")
        for reset, data, expect in steps(case, at):
            if reset or set(expect) != {"text"}:
                raise ValueError(f"{at}: render_text feeds and expects a text only")
            assert backend.render_text(data) == expect["text"], at
        return
    whole = backend.Terminal(**config)
    bytewise = backend.Terminal(**config) if case.get("bytewise") else None
    for reset, data, expect in steps(case, at):
        if reset:
            whole.reset(data)
        else:
            whole.feed(data)
        check(whole, expect, at)
        if bytewise is not None:
            if reset:
                bytewise.reset(b"")
            for b in data:
                bytewise.feed(bytes([b]))
            check(bytewise, expect, f"{at} (byte by byte)")
            assert views(bytewise) == views(whole), f"{at} (byte by byte)"
