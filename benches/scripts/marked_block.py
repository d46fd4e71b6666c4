"""Rewrite the generated block of a document: the text between two marker lines."""

from __future__ import annotations

from pathlib import Path


def rewrite_block(path: Path, start: str, end: str, block: str) -> None:
    """Replace ``path``'s text from ``start`` through ``end`` with ``block`` (which holds both
    markers); a document without them is an error, not a silent append."""
    text = path.read_text(encoding="utf-8")
    head, found, rest = text.partition(start)
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise SystemExit(f"{path}: no {start!r} … {end!r} markers")
    path.write_text(head + block + tail, encoding="utf-8")
