"""The shape matrix for ``acpwire bench --only shapes``: one workload per layout agents send.

Every shape is the same kind of traffic (a v2 or v1 handshake, then session updates) written the
way one agent or another writes it: keys in another order, ``_meta`` on every update, a new
``messageId`` per chunk, payload-heavy tool calls, images, diffs. A reducer that is fast on one
layout only shows it here. The same arguments always give the same bytes.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

from .sessions import _WORDS

__all__ = ["END_TO_END", "SHAPES", "many_sessions", "opaque_payload", "shape_matrix"]


def _dump(obj: Any, *, sort_keys: bool = False) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return text.encode() + b"\n"


def _handshake(version: int, session_ids: list[str]) -> list[bytes]:
    init: dict[str, Any] = {"protocolVersion": version}
    if version >= 2:
        init["info"] = {"name": "bench-client", "version": "1.0"}
    lines = [
        _dump({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        _dump({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version}}),
    ]
    for n, sid in enumerate(session_ids, 1):
        params = {"cwd": "/home/dev/project", "mcpServers": []}
        lines.append(_dump({"jsonrpc": "2.0", "id": n, "method": "session/new", "params": params}))
        lines.append(_dump({"jsonrpc": "2.0", "id": n, "result": {"sessionId": sid}}))
    return lines


def _words(rng: random.Random, lo: int = 15, hi: int = 45) -> str:
    words: list[str] = []
    size, target = 0, rng.randint(lo, hi)
    while size < target:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word.encode()) + 1
    return " ".join(words) + " "


def _notification(session_id: str, update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }


def _meta(rng: random.Random, i: int) -> dict[str, Any]:
    # What claude-agent-acp and others attach: a vendor object, opaque to the protocol.
    return {
        "claudeCode": {"toolName": rng.choice(["Bash", "Read", "Edit", "Grep"]), "seq": i},
        "traceId": f"{rng.getrandbits(64):016x}",
    }


def _chunks(
    size: int,
    rng: random.Random,
    *,
    version: int = 2,
    sessions: int = 1,
    content: Callable[[random.Random, int], dict[str, Any]] | None = None,
    message_every: int = 400,
    meta: bool = False,
    sort_keys: bool = False,
) -> bytes:
    """Agent message chunks until about ``size`` bytes, in the layout the options describe."""
    ids = [f"sess_shape_{n:05d}" for n in range(sessions)]
    # Many sessions start at their first update: their session/new lines would otherwise be
    # most of a small workload's bytes.
    lines = _handshake(version, ids if sessions == 1 else [])
    total = sum(map(len, lines))
    i = 0
    while total < size:
        block = content(rng, i) if content else {"type": "text", "text": _words(rng)}
        update: dict[str, Any] = {"sessionUpdate": "agent_message_chunk"}
        if version >= 2:
            update["messageId"] = f"msg_{i // message_every:07d}"
        update["content"] = block
        if meta:
            update["_meta"] = _meta(rng, i)
        line = _dump(_notification(ids[i % sessions], update), sort_keys=sort_keys)
        lines.append(line)
        total += len(line)
        i += 1
    return b"".join(lines)


def _text_type_last(rng: random.Random, _: int) -> dict[str, Any]:
    return {"text": _words(rng), "type": "text"}


def _resource_link(rng: random.Random, i: int) -> dict[str, Any]:
    name = f"{rng.choice(['main', 'lib', 'frame', 'screen'])}_{i % 97}.rs"
    return {"type": "resource_link", "name": name, "uri": f"file:///home/dev/src/{name}"}


def _image(rng: random.Random, _: int) -> dict[str, Any]:
    data = base64.b64encode(rng.randbytes(3 * 1024)).decode()  # 4 KB of base64
    return {"type": "image", "mimeType": "image/png", "data": data}


def _escaped_payload(rng: random.Random, size: int) -> dict[str, Any]:
    """A tool's input or output as agents send it: paths, quotes, newlines, tabs, ANSI."""
    lines: list[str] = []
    total = 0
    while total < size:
        line = (
            f"src/{rng.choice(['framing', 'session', 'terminal'])}.rs:{rng.randint(1, 999)}:"
            f'\tlet s = "{_words(rng, 5, 20).strip()}";\\n \x1b[31merror\x1b[0m \u00e9'
        )
        lines.append(line)
        total += len(line) + 8
    return {"command": "rg -n pattern src/", "output": "\n".join(lines), "exitCode": 0}


def _tool_calls(size: int, rng: random.Random) -> bytes:
    sid = "sess_shape_tools"
    lines = _handshake(2, [sid])
    total = sum(map(len, lines))
    i = 0
    while total < size:
        call = f"call_{i:06d}"
        start = {
            "sessionUpdate": "tool_call",
            "toolCallId": call,
            "title": "Search the sources",
            "kind": "search",
            "status": "pending",
            "rawInput": _escaped_payload(rng, rng.randint(1000, 3000)),
            "_meta": _meta(rng, i),
        }
        end = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call,
            "status": "completed",
            "rawOutput": _escaped_payload(rng, rng.randint(1000, 3000)),
            "_meta": _meta(rng, i),
        }
        for update in (start, end):
            line = _dump(_notification(sid, update))
            lines.append(line)
            total += len(line)
        i += 1
    return b"".join(lines)


def _diffs(size: int, rng: random.Random) -> bytes:
    sid = "sess_shape_diffs"
    lines = _handshake(2, [sid])
    total = sum(map(len, lines))
    i = 0
    while total < size:
        old = "\n".join(_words(rng, 20, 60) for _ in range(rng.randint(5, 30)))
        new = old.replace("the", "a", 3) + "\n" + _words(rng)
        update = {
            "sessionUpdate": "tool_call",
            "toolCallId": f"edit_{i:06d}",
            "title": "Edit src/main.rs",
            "kind": "edit",
            "status": "completed",
            "content": [
                {"type": "diff", "path": "/home/dev/src/main.rs", "oldText": old, "newText": new}
            ],
        }
        line = _dump(_notification(sid, update))
        lines.append(line)
        total += len(line)
        i += 1
    return b"".join(lines)


# name -> generator of about `size` bytes. The first is the canonical chunk.
SHAPES: dict[str, Callable[[int, random.Random], bytes]] = {
    "v2 agent_message_chunk, canonical": lambda n, rng: _chunks(n, rng),
    "v1 chunk without messageId": lambda n, rng: _chunks(n, rng, version=1),
    "_meta on every update": lambda n, rng: _chunks(n, rng, meta=True),
    'content {"text":…,"type":"text"}': lambda n, rng: _chunks(n, rng, content=_text_type_last),
    "sorted keys": lambda n, rng: _chunks(n, rng, sort_keys=True),
    "resource_link chunks": lambda n, rng: _chunks(n, rng, content=_resource_link),
    "new messageId every chunk": lambda n, rng: _chunks(n, rng, message_every=1),
    "1,000 sessions interleaved": lambda n, rng: _chunks(n, rng, sessions=1000),
    "tool calls, 1–3 KB escaped rawInput/rawOutput, _meta": _tool_calls,
    "4 KB base64 image chunks": lambda n, rng: _chunks(n, rng, content=_image, message_every=8),
    "diff content": _diffs,
}

# End to end: the reduction and then every session's snapshot (the baselines: every message's text).
END_TO_END: dict[str, Callable[[int, random.Random], bytes]] = {
    "end to end with snapshot(), canonical": SHAPES["v2 agent_message_chunk, canonical"],
    "end to end with snapshot(), v1": SHAPES["v1 chunk without messageId"],
}


def shape_matrix(size: int, seed: int = 0) -> dict[str, tuple[bytes, bool]]:
    """Every shape's bytes (about ``size`` each), with whether it is timed end to end."""
    out: dict[str, tuple[bytes, bool]] = {}
    for table, end_to_end in ((SHAPES, False), (END_TO_END, True)):
        for name, make in table.items():
            out[name] = (make(size, random.Random(seed)), end_to_end)
    return out


def opaque_payload(size: int, seed: int = 0) -> bytes:
    """One tool call whose ``rawOutput`` is about ``size`` bytes: grep hits and an escaped log."""
    rng = random.Random(seed)
    sid = "sess_shape_payload"
    hits: list[dict[str, Any]] = []
    total = 0
    while total < size // 2:
        text = _words(rng)
        hits.append(
            {"path": f"src/m{rng.randint(0, 999)}.rs", "line": rng.randint(1, 5000), "text": text}
        )
        total += len(text) + 40
    log = _escaped_payload(rng, size // 2)["output"]
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_big",
        "status": "completed",
        "rawOutput": {"matches": hits, "log": log},
    }
    return b"".join(_handshake(2, [sid])) + _dump(_notification(sid, update))


def many_sessions(sessions: int, chunks_each: int = 4, seed: int = 0) -> bytes:
    """``sessions`` distinct v2 sessions, each a short message of ``chunks_each`` chunks.

    With ``sessions=1`` and ``chunks_each`` scaled up, the same kind of bytes in one session:
    the pair gives the cost per byte of many sessions against one.
    """
    rng = random.Random(seed)
    ids = [f"sess_many_{n:07d}" for n in range(sessions)]
    # A session starts at its first update: no session/new per session, so that the bytes of
    # both runs are chunks alike.
    lines = _handshake(2, [])
    for n, sid in enumerate(ids):
        for k in range(chunks_each):
            update = {
                "sessionUpdate": "agent_message_chunk",
                "messageId": f"msg_{n:07d}_{k // 400}",
                "content": {"type": "text", "text": _words(rng)},
            }
            lines.append(_dump(_notification(sid, update)))
    return b"".join(lines)
