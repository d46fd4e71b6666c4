"""Deterministic ACP session traces for the session-reduction benchmarks.

Each generator returns NDJSON bytes (one JSON-RPC message per line); the same arguments always
give the same bytes. ``token_stream`` is the streaming-text hot path, ``heavy_terminal`` a
command printing tens of MB through ``terminal_output_chunk``, ``mixed_sessions`` several
interleaved sessions using every variant of both protocol versions and both directions.
"""

from __future__ import annotations

import base64
import json
import random

from ....types import JSONObject, JSONValue
from .terminal import terminal_corpus

__all__ = ["heavy_terminal", "mixed_sessions", "token_stream"]

_WORDS = [
    "the",
    "parser",
    "reads",
    "each",
    "frame",
    "once",
    "and",
    "appends",
    "the",
    "chunk",
    "in",
    "place",
    "so",
    "that",
    "long",
    "answers",
    "stay",
    "linear",
    "while",
    "the",
    "interface",
    "renders",
    "only",
    "what",
    "moved",
    "since",
    "the",
    "last",
    "call",
    "naïve",
    "café",
    "日本語",
    "—",
    "“quoted”",
    "tokens,",
    "paths",
    "like",
    "/home/dev/src/main.rs",
    "and",
    "code",
    "`let",
    "x",
    "=",
    "1;`",
]


def _line(obj: JSONObject) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _handshake(version: int, session_id: str, request_id: int = 1) -> list[bytes]:
    init: JSONObject = {"protocolVersion": version}
    if version >= 2:
        init["info"] = {"name": "bench-client", "version": "1.0"}
    return [
        _line({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": init}),
        _line({"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": version}}),
        _line(
            {
                "jsonrpc": "2.0",
                "id": request_id + 1,
                "method": "session/new",
                "params": {"cwd": "/home/dev/project", "mcpServers": []},
            }
        ),
        _line({"jsonrpc": "2.0", "id": request_id + 1, "result": {"sessionId": session_id}}),
    ]


def _update(session_id: str, update: JSONObject) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
    )


def token_stream(n: int = 100_000, seed: int = 0, per_message: int = 400) -> bytes:
    """A v2 handshake, then ``n`` ``agent_message_chunk`` lines of about 230 bytes each.

    A new ``messageId`` starts every ``per_message`` chunks.
    """
    rng = random.Random(seed)
    sid = "sess_tokens_01"
    lines = _handshake(2, sid)
    # The fixed part of a line is ~180 bytes; the text fills it to ~230 on average.
    for i in range(n):
        words: list[str] = []
        size = 0
        target = rng.randint(15, 45)
        while size < target:
            w = rng.choice(_WORDS)
            words.append(w)
            size += len(w.encode()) + 1
        update: JSONObject = {
            "sessionUpdate": "agent_message_chunk",
            "messageId": f"msg_agent_{i // per_message:06d}",
            "content": {"type": "text", "text": " ".join(words) + " "},
        }
        lines.append(_update(sid, update))
    return b"".join(lines)


def heavy_terminal(
    size_bytes: int = 32 * 1024 * 1024, seed: int = 0, chunk_bytes: int = 48 * 1024
) -> bytes:
    """One v2 session whose command prints ``size_bytes`` of PTY output (progress bars,
    colour, Unicode) as base64 ``terminal_output_chunk`` updates of ~``chunk_bytes`` raw bytes,
    around a tool call that anchors the terminal and a final exit status. ``size_bytes`` counts
    the NDJSON produced (about 4/3 of the raw output)."""
    rng = random.Random(seed)
    sid = "sess_bench_terminal_0001"
    tid = "term_0001"
    raw = terminal_corpus(size_bytes * 3 // 4, seed)
    lines = _handshake(2, sid)
    lines.append(
        _update(
            sid,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_0001",
                "title": "Run the test suite",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": tid}],
            },
        )
    )
    lines.append(
        _update(
            sid,
            {
                "sessionUpdate": "terminal_update",
                "terminalId": tid,
                "command": "cargo test --workspace",
                "cwd": "/home/dev/project",
            },
        )
    )
    pos = 0
    while pos < len(raw):
        # Chunk sizes vary so cuts land inside UTF-8 sequences and escape sequences.
        step = rng.randint(chunk_bytes // 2, chunk_bytes * 3 // 2)
        piece = raw[pos : pos + step]
        pos += step
        lines.append(
            _update(
                sid,
                {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": tid,
                    "data": base64.b64encode(piece).decode(),
                },
            )
        )
    lines.append(
        _update(
            sid,
            {"sessionUpdate": "terminal_update", "terminalId": tid, "exitStatus": {"exitCode": 0}},
        )
    )
    lines.append(
        _update(
            sid,
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_0001", "status": "completed"},
        )
    )
    return b"".join(lines)


def _text(rng: random.Random, lo: int = 3, hi: int = 12) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def _block(rng: random.Random) -> JSONObject:
    if rng.random() < 0.9:
        return {"type": "text", "text": _text(rng)}
    return {"type": "resource_link", "name": "main.rs", "uri": "file:///home/dev/src/main.rs"}


def mixed_sessions(
    sessions: int = 8, updates: int = 50_000, seed: int = 0, version: int = 2
) -> bytes:
    """``sessions`` interleaved sessions on one connection, ``updates`` messages in all:
    prompts and their responses, streamed and upserted messages, thoughts, tool calls with
    content chunks, terminals, plans, permissions (agent requests, client responses), usage,
    info, commands, state updates (v2) or prompt stop reasons (v1), and the odd unknown
    variant."""
    rng = random.Random(seed)
    lines = _handshake(version, "sess_mixed_000", 1)
    sids = [f"sess_mixed_{i:03d}" for i in range(sessions)]
    next_id = 3
    for sid in sids[1:]:
        lines.append(
            _line(
                {"jsonrpc": "2.0", "id": next_id, "method": "session/new", "params": {"cwd": "/w"}}
            )
        )
        lines.append(_line({"jsonrpc": "2.0", "id": next_id, "result": {"sessionId": sid}}))
        next_id += 1
    agent_id = 0
    counters = dict.fromkeys(sids, 0)
    open_prompts: dict[str, int] = {}
    while len(lines) < updates:
        sid = rng.choice(sids)
        counters[sid] += 1
        n = counters[sid]
        turn = n // 60
        r = rng.random()
        if sid not in open_prompts or r < 0.02:
            rid = next_id
            next_id += 1
            open_prompts[sid] = rid
            lines.append(
                _line(
                    {
                        "jsonrpc": "2.0",
                        "id": rid,
                        "method": "session/prompt",
                        "params": {"sessionId": sid, "prompt": [_block(rng)]},
                    }
                )
            )
            if version >= 2:
                lines.append(
                    _line({"jsonrpc": "2.0", "id": rid, "result": {"messageId": f"u{rid}"}})
                )
                lines.append(
                    _update(
                        sid,
                        {
                            "sessionUpdate": "user_message",
                            "messageId": f"u{rid}",
                            "content": [_block(rng)],
                        },
                    )
                )
                lines.append(_update(sid, {"sessionUpdate": "state_update", "state": "running"}))
            continue
        if r < 0.45:
            kind = "agent_message_chunk" if rng.random() < 0.75 else "agent_thought_chunk"
            lines.append(
                _update(
                    sid, {"sessionUpdate": kind, "messageId": f"m{turn}", "content": _block(rng)}
                )
            )
        elif r < 0.5 and version >= 2:
            lines.append(
                _update(
                    sid,
                    {
                        "sessionUpdate": "agent_message",
                        "messageId": f"m{turn}",
                        "content": [_block(rng), _block(rng)],
                    },
                )
            )
        elif r < 0.62:
            call = f"call_{turn}_{rng.randint(0, 3)}"
            update: JSONObject = {
                "sessionUpdate": "tool_call_update"
                if version >= 2 or rng.random() < 0.5
                else "tool_call",
                "toolCallId": call,
                "title": _text(rng, 2, 5),
                "kind": rng.choice(["read", "edit", "execute", "search", "_custom"]),
                "status": rng.choice(["pending", "in_progress", "completed", "failed"]),
            }
            if rng.random() < 0.3:
                update["content"] = [{"type": "content", "content": _block(rng)}]
            if rng.random() < 0.2:
                update["rawInput"] = {"path": "/home/dev/src/lib.rs", "line": rng.randint(1, 500)}
            lines.append(_update(sid, update))
        elif r < 0.68 and version >= 2:
            lines.append(
                _update(
                    sid,
                    {
                        "sessionUpdate": "tool_call_content_chunk",
                        "toolCallId": f"call_{turn}_0",
                        "content": {"type": "content", "content": _block(rng)},
                    },
                )
            )
        elif r < 0.74 and version >= 2:
            tid = f"term_{turn}"
            if rng.random() < 0.2:
                lines.append(
                    _update(
                        sid,
                        {
                            "sessionUpdate": "terminal_update",
                            "terminalId": tid,
                            "command": "make test",
                            "cwd": "/w",
                            "output": {
                                "data": base64.b64encode(b"\x1b[1mbuilding\x1b[0m\r\n").decode()
                            },
                        },
                    )
                )
            else:
                data = f"\x1b[32m{_text(rng)}\x1b[0m\r\n{rng.randint(0, 100)}%\r".encode()
                lines.append(
                    _update(
                        sid,
                        {
                            "sessionUpdate": "terminal_output_chunk",
                            "terminalId": tid,
                            "data": base64.b64encode(data).decode(),
                        },
                    )
                )
        elif r < 0.78:
            entries: list[JSONValue] = [
                {
                    "content": _text(rng, 2, 6),
                    "priority": "medium",
                    "status": rng.choice(["pending", "completed"]),
                }
                for _ in range(rng.randint(1, 5))
            ]
            if version >= 2:
                update = {
                    "sessionUpdate": "plan_update",
                    "plan": {"type": "items", "planId": "p1", "entries": entries},
                }
            else:
                update = {"sessionUpdate": "plan", "entries": entries}
            lines.append(_update(sid, update))
        elif r < 0.81:
            agent_id += 1
            permission_id = f"perm-{agent_id}"
            lines.append(
                _line(
                    {
                        "jsonrpc": "2.0",
                        "id": permission_id,
                        "method": "session/request_permission",
                        "params": {
                            "sessionId": sid,
                            "title": "Allow edit?",
                            "options": [
                                {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
                            ],
                        },
                    }
                )
            )
            lines.append(
                _line(
                    {
                        "jsonrpc": "2.0",
                        "id": permission_id,
                        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
                    }
                )
            )
        elif r < 0.85:
            lines.append(
                _update(
                    sid,
                    {
                        "sessionUpdate": "usage_update",
                        "used": rng.randint(0, 200_000),
                        "size": 200_000,
                    },
                )
            )
        elif r < 0.87:
            lines.append(
                _update(sid, {"sessionUpdate": "session_info_update", "title": _text(rng, 2, 4)})
            )
        elif r < 0.88:
            lines.append(
                _update(
                    sid,
                    {
                        "sessionUpdate": "available_commands_update",
                        "availableCommands": [{"name": "test", "description": "Run tests"}],
                    },
                )
            )
        elif r < 0.89:
            lines.append(_update(sid, {"sessionUpdate": "_vendor_progress", "value": rng.random()}))
        else:
            rid = open_prompts.pop(sid)
            reason = rng.choice(["end_turn", "end_turn", "max_tokens", "cancelled"])
            if version >= 2:
                lines.append(
                    _update(
                        sid,
                        {"sessionUpdate": "state_update", "state": "idle", "stopReason": reason},
                    )
                )
            else:
                lines.append(_line({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": reason}}))
    return b"".join(lines)
