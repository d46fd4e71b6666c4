# ruff: noqa: E501
"""A deterministic, realistic terminal-output corpus for the renderer benchmarks.

Mixes what agents' commands print: coloured cargo/rustc diagnostics, npm/pip/tqdm progress bars
redrawn with ``\\r`` and ``ESC[K``, pytest output, Unicode text and OSC 8 links, OSC 9;4
progress and titles. The same ``(size_bytes, seed)`` always gives the same bytes.
"""

from __future__ import annotations

import random

__all__ = ["terminal_corpus"]

_WORDS = [
    "error",
    "warning",
    "note",
    "help",
    "unused",
    "variable",
    "borrow",
    "lifetime",
    "trait",
    "impl",
    "struct",
    "enum",
    "match",
    "expected",
    "found",
    "mismatched",
    "types",
    "cannot",
    "move",
    "out",
    "of",
    "value",
    "used",
    "here",
    "after",
    "move",
    "crate",
    "module",
    "function",
    "argument",
    "parameter",
    "test",
    "passed",
    "failed",
    "skipped",
    "fixture",
    "assert",
]
_UNICODE = [
    "naïve",
    "café",
    "Ünïcödé",
    "日本語",
    "テスト",
    "한국어",
    "✓",
    "✗",
    "→",
    "…",
    "e\u0301",
    "👍",
    "ｆｕｌｌ",
]


def _cargo(rng: random.Random) -> bytes:
    out = []
    for i in range(rng.randint(3, 12)):
        out.append(
            f"\x1b[1m\x1b[32m   Compiling\x1b[0m crate-{rng.randrange(500)} v0.{i}.{rng.randrange(9)}\r\n"
        )
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["\x1b[1m\x1b[33mwarning", "\x1b[1m\x1b[31merror[E0382]"])
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 9)))
        line = rng.randrange(1, 999)
        out.append(f"{kind}\x1b[0m\x1b[1m: {words}\x1b[0m\r\n")
        out.append(f"  \x1b[1m\x1b[34m-->\x1b[0m src/lib.rs:{line}:{rng.randrange(1, 80)}\r\n")
        out.append(
            f"   \x1b[1m\x1b[34m|\x1b[0m\r\n{line:4} \x1b[1m\x1b[34m|\x1b[0m     let x = foo();\r\n"
        )
        out.append(
            "     \x1b[1m\x1b[34m|\x1b[0m         \x1b[1m\x1b[33m^\x1b[0m \x1b[1m\x1b[33mhelp\x1b[0m\r\n"
        )
    total = rng.randint(20, 120)
    for i in range(total):
        bar = "=" * (i * 25 // total) + ">"
        out.append(f"\r\x1b[K\x1b[1m\x1b[36m    Building\x1b[0m [{bar:<26}] {i}/{total}: crate-{i}")
    out.append("\r\x1b[K\x1b[1m\x1b[32m    Finished\x1b[0m `dev` profile in 3.2s\r\n")
    return "".join(out).encode()


def _tqdm(rng: random.Random) -> bytes:
    out = []
    total = rng.randint(50, 300)
    out.append("\x1b]9;4;1;0\x07")
    for i in range(0, total + 1, rng.randint(1, 4)):
        pct = i * 100 // total
        bar = "█" * (pct // 10) + "▌" * (pct % 10 >= 5)
        out.append(
            f"\r{pct:3d}%|{bar:<10}| {i}/{total} [00:{i % 60:02d}<00:10, {rng.random() * 90:.2f}it/s]"
        )
        if i % 20 == 0:
            out.append(f"\x1b]9;4;1;{pct}\x07")
    out.append("\n\x1b]9;4;0\x07")
    return "".join(out).encode()


def _npm(rng: random.Random) -> bytes:
    spin = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
    out = [
        f"\x1b[2K\x1b[1G{spin[i % 10]} reify:pkg-{i}: \x1b[90mtiming\x1b[0m fetch"
        for i in range(rng.randint(20, 80))
    ]
    out.append(f"\x1b[2K\x1b[1G\r\nadded {rng.randrange(900)} packages in {rng.randrange(30)}s\r\n")
    return "".join(out).encode()


def _pip(rng: random.Random) -> bytes:
    out = [
        f"Collecting pkg-{rng.randrange(99)}\r\n  Downloading pkg.whl ({rng.randrange(1, 40)} MB)\r\n"
    ]
    for i in range(0, 41, rng.randint(1, 3)):
        done = "━" * i
        out.append(
            f"\r     \x1b[38;2;249;38;114m{done}\x1b[0m\x1b[38;5;237m{'━' * (40 - i)}\x1b[0m {i}/40 MB \x1b[31m12.0 MB/s\x1b[0m"
        )
    out.append("\r\n")
    return "".join(out).encode()


def _pytest(rng: random.Random) -> bytes:
    out = [
        "\x1b[1m============================= test session starts ==============================\x1b[0m\r\n"
    ]
    for f in range(rng.randint(2, 8)):
        dots = "".join(rng.choice("....................Fs") for _ in range(rng.randint(5, 60)))
        colored = (
            dots.replace(".", "\x1b[32m.\x1b[0m")
            .replace("F", "\x1b[31mF\x1b[0m")
            .replace("s", "\x1b[33ms\x1b[0m")
        )
        out.append(
            f"tests/test_mod{f}.py {colored}\x1b[32m{' ' * 4}[{rng.randrange(100):3d}%]\x1b[0m\r\n"
        )
    out.append(
        f"\x1b[31m\x1b[1m==== {rng.randrange(9)} failed, {rng.randrange(999)} passed in 1.23s ====\x1b[0m\r\n"
    )
    return "".join(out).encode()


def _prose(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.randint(2, 10)):
        words = [rng.choice(_WORDS + _UNICODE) for _ in range(rng.randint(4, 16))]
        if rng.random() < 0.3:
            url = f"https://example.com/docs/{rng.randrange(1000)}"
            words.append(f"\x1b]8;;{url}\x1b\\{url}\x1b]8;;\x1b\\")
        out.append(" ".join(words) + "\r\n")
    if rng.random() < 0.2:
        out.append(f"\x1b]0;agent: step {rng.randrange(100)}\x07")
    return "".join(out).encode()


_KINDS = (_cargo, _tqdm, _npm, _pip, _pytest, _prose)


def terminal_corpus(size_bytes: int = 10_000_000, seed: int = 0) -> bytes:
    """About ``size_bytes`` of realistic terminal output (exactly that many bytes, cut at the end)."""
    rng = random.Random(seed)
    parts: list[bytes] = []
    total = 0
    while total < size_bytes:
        block = rng.choice(_KINDS)(rng)
        parts.append(block)
        total += len(block)
    return b"".join(parts)[:size_bytes]
