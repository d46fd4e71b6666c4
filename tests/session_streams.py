"""Streams for the session tests: chunk shapes of the bulk path, random streams, runs that
feed them split anywhere, and the pieces of PTY output whose held bytes are counted."""

from __future__ import annotations

import random
import re
from typing import Any

from session_builders import (
    SID,
    TOOL_FIELDS,
    b64,
    init,
    output_chunk,
    text,
    upd,
)

# -- message chunks in bulk ------------------------------------------------------------------------


# Complete lines of a feed are reduced in bulk, message chunks of the usual shape without the
# general path. Every other shape, and every line around them, must reduce as before.
def chunk_json(
    text_json: bytes = b'"t"',
    mid: bytes = b'"m"',
    sid: bytes = b'"s"',
    kind: bytes = b"agent_message_chunk",
) -> bytes:
    return (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":' + sid + b',"update":'
        b'{"sessionUpdate":"' + kind + b'","messageId":' + mid + b',"content":'
        b'{"type":"text","text":' + text_json + b"}}}}"
    )


CHUNK_SHAPES = [
    chunk_json(b'"a"'),
    chunk_json(b'"b"'),
    chunk_json(b'"\\"q\\"\\n\\u00e9\\ud83d\\ude00"', mid=b'"m\\u00e9"'),
    # Reversed key order, jsonrpc last, extra keys at every level.
    b'{"params":{"update":{"content":{"text":"c","type":"text","x":[1]},"messageId":"m",'
    b'"sessionUpdate":"agent_message_chunk","_meta":{"k":1}},"sessionId":"s","more":null},'
    b'"method":"session/update","id":7,"jsonrpc":"2.0"}',
    # Duplicate keys: the last one counts.
    b'{"method":"initialize","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"d"}}}}',
    b'{"method":"session/update","params":{"sessionId":"x","sessionId":"s","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"z","messageId":"m","content":'
    b'{"type":"text","text":"e"},"content":{"type":"text","text":"f"}}}}',
    b'{"method":"session/update","method":"session/prompt","id":1,"params":{"sessionId":"s",'
    b'"prompt":[]}}',
    # Wrong types: errors or other variants, never chunks.
    chunk_json(sid=b"5"),
    chunk_json(mid=b"5"),
    chunk_json(mid=b"null"),
    chunk_json(mid=b"12345678901234567890123"),
    chunk_json(b"5"),
    chunk_json(kind=b"session_message_chunk"),
    # One id, three roles: three messages.
    chunk_json(b'"u"', kind=b"user_message_chunk"),
    chunk_json(b'"v"', kind=b"agent_thought_chunk"),
    chunk_json(b'"w"'),
    chunk_json(b'"x"', kind=b"user_message_chunk"),
    chunk_json(b'"\\ud800"'),
    b'{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":'
    b'"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"g"}}}}',
    *(
        b'{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":'
        + kind
        + b',"messageId":"m","content":{"type":"text","text":"h"}}}}'
        for kind in (b"[1]", b'{"a":1}', b"5", b"null", b'"agent_message"', b'"nope"')
    ),
    *(
        b'{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":'
        b'"agent_message_chunk","messageId":"m","content":' + content + b"}}}"
        for content in (b'"text"', b'[{"type":"text","text":"i"}]', b"null", b"{}")
    ),
    b'{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":'
    b'"agent_message_chunk","content":{"type":"text","text":"no id"}}}}',
    b'{"method":"session/update","params":{"sessionId":"s","update":[]}}',
    b'{"method":"session/update","params":["s"]}',
    b'{"method":"session/update","params":"s"}',
    b'{"method":"session/update"}',
    b'{"method":5,"params":{"sessionId":"s"}}',
    # An upsert between chunks of one message replaces its content; the next chunk appends.
    b'{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":'
    b'"agent_message","messageId":"m","content":[{"type":"text","text":"new "}]}}}',
    chunk_json(b'"j"'),
    chunk_json(b'"k"', sid=b'"other"'),
    chunk_json(b'"l"'),
    # Numbers orjson would read as floats: the whole block is checked line by line.
    chunk_json(b'"n","n":123456789012345678901234567890'),
    # Deeper than the decoder allows, in a key nothing reads.
    b'{"x":' + b"[" * 250 + b"]" * 250 + b"," + chunk_json(b'"o"')[1:],
    b"[" + chunk_json(b'"p"') + b"," + chunk_json(b'"q"', mid=b'"m2"') + b"]",
    b"[]",
    b"",
    b"  \t",
    chunk_json(b'"r"') + b"\r",
    b"\r",
    b"{not json",
    b'"a string"',
    chunk_json(b'"s"'),
]


# Without digit runs orjson may misread, a whole feed takes the bulk path for every line.
CHUNK_SHAPES_SHORT_DIGITS = [line for line in CHUNK_SHAPES if not re.search(rb"[0-9]{19}", line)]


def bulk_run(backend, data: bytes, cuts: list[int], **options) -> tuple[dict, list]:
    store = backend.Sessions(**options)
    changes, frames, start = [], 0, 0
    for cut in [*sorted(cuts), len(data)]:
        frames += store.feed(data[start:cut])
        start = cut
        changes.append(store.changes())
    frames += store.finish()
    result = store_state(store)
    result["frames"] = frames
    return result, changes


# -- random streams --------------------------------------------------------------------------------


_KINDS = [
    "agent_message_chunk",
    "user_message_chunk",
    "agent_thought_chunk",
    "agent_message",
    "user_message",
    "agent_thought",
    "tool_call",
    "tool_call_update",
    "tool_call_content_chunk",
    "terminal_update",
    "terminal_output_chunk",
    "plan",
    "plan_update",
    "plan_removed",
    "available_commands_update",
    "config_option_update",
    "current_mode_update",
    "session_info_update",
    "usage_update",
    "state_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
    "session_message",
    "session_message_chunk",
    "subagent_update",
    "_vendor",
    "future_thing",
]


def _maybe(rng: random.Random, value: Any) -> Any:
    """Often the value, sometimes null, sometimes a wrong type (malformed or default-on-error)."""
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.12:
        return rng.choice([3, [], {}, "s", True, 1.5])
    return value


def _random_update(rng: random.Random) -> dict:
    kind = rng.choice(_KINDS)
    ids = ["a", "b", "c"]
    u: dict = {"sessionUpdate": kind}
    block = rng.choice(
        [
            text(rng.choice(["x", "y\n", "é", ""])),
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"text": "t", "type": "text"},
        ]
    )
    if kind.endswith("message_chunk") or kind == "agent_thought_chunk":
        if rng.random() < 0.8:
            u["messageId"] = _maybe(rng, rng.choice(ids))
        u["content"] = _maybe(rng, block)
        if kind == "session_message_chunk":
            u["senderSessionId"] = _maybe(rng, "p")
    elif kind in ("agent_message", "user_message", "agent_thought", "session_message"):
        u["messageId"] = _maybe(rng, rng.choice(ids))
        if rng.random() < 0.7:
            u["content"] = _maybe(rng, [block] * rng.randint(0, 2))
        if rng.random() < 0.3:
            u["_meta"] = _maybe(rng, {"k": rng.randint(0, 9)})
    elif kind in ("tool_call", "tool_call_update"):
        u["toolCallId"] = _maybe(rng, rng.choice(ids))
        for field, value in TOOL_FIELDS.items():
            if rng.random() < 0.3:
                u[field] = _maybe(rng, value)
    elif kind == "tool_call_content_chunk":
        u["toolCallId"] = _maybe(rng, rng.choice(ids))
        u["content"] = _maybe(rng, {"type": "content", "content": block})
    elif kind == "terminal_update":
        u["terminalId"] = _maybe(rng, rng.choice(ids))
        for field, value in (
            ("command", "ls"),
            ("cwd", "/"),
            ("exitStatus", {"exitCode": 1}),
            ("_meta", {"m": 1}),
            (
                "output",
                {
                    "data": rng.choice(
                        [b64(b"\x1b[31mred\x1b[0m\r\nline\r\n"), "bad!", b64(b"\xe2\x82")]
                    )
                },
            ),
        ):
            if rng.random() < 0.35:
                u[field] = _maybe(rng, value)
    elif kind == "terminal_output_chunk":
        u["terminalId"] = _maybe(rng, rng.choice(ids))
        u["data"] = _maybe(
            rng,
            rng.choice(
                [b64(b"\xac more\r\n"), b64(b"50%\r\x1b[K"), "=bad", b64(bytes(range(256))[:40])]
            ),
        )
    elif kind == "plan":
        u["entries"] = _maybe(rng, [{"content": "x", "priority": "high", "status": "pending"}])
    elif kind == "plan_update":
        u["plan"] = _maybe(
            rng,
            {
                "type": _maybe(rng, rng.choice(["items", "markdown", "_x"])),
                "planId": _maybe(rng, rng.choice(ids)),
                "entries": [],
            },
        )
    elif kind == "plan_removed":
        u["planId"] = _maybe(rng, rng.choice(ids))
    elif kind == "available_commands_update":
        u["availableCommands"] = _maybe(rng, [{"name": "x"}])
        if rng.random() < 0.3:
            u["_meta"] = {"a": 1}
    elif kind == "config_option_update":
        u["configOptions"] = _maybe(rng, [{"configId": "x"}])
    elif kind == "current_mode_update":
        u["currentModeId"] = _maybe(rng, "code")
    elif kind == "session_info_update":
        for field in ("title", "updatedAt", "_meta"):
            if rng.random() < 0.5:
                u[field] = _maybe(rng, "v")
    elif kind == "usage_update":
        u["used"] = _maybe(rng, rng.choice([0, 5, -1, 2**70]))
        u["size"] = _maybe(rng, 10)
    elif kind == "state_update":
        u["state"] = _maybe(rng, rng.choice(["idle", "running", "requires_action", "_x"]))
        if rng.random() < 0.5:
            u["stopReason"] = _maybe(rng, "end_turn")
    elif kind == "notice":
        u["severity"] = _maybe(rng, "info")
        u["title"] = _maybe(rng, rng.choice(["t", ""]))
    elif kind == "compaction_update":
        u["compactionId"] = _maybe(rng, rng.choice(ids))
        u["status"] = _maybe(rng, rng.choice(["in_progress", "completed"]))
        if rng.random() < 0.4:
            u["summary"] = _maybe(rng, [block])
        if rng.random() < 0.2:
            u["error"] = _maybe(rng, "e")
    elif kind == "compaction_summary_chunk":
        u["compactionId"] = _maybe(rng, rng.choice(ids))
        u["content"] = _maybe(rng, block)
    elif kind == "subagent_update":
        u["subagentSessionId"] = _maybe(rng, rng.choice(ids))
        u["name"] = _maybe(rng, "n")
    else:
        u["payload"] = {"n": rng.random(), "big": 2**65}
    if rng.random() < 0.1:
        u["x-unknown"] = {"v": 1}
    return u


def _terminal_result(rng: random.Random, method: str) -> Any:
    if method == "terminal/create":
        return {"terminalId": "t1"}
    if method == "terminal/output":
        output = rng.choice(["\x1b[1;32mok\x1b[0m\n", "line\r\nmore", 5])
        return {"output": output, "truncated": rng.random() < 0.3, "exitStatus": None}
    if method == "terminal/wait_for_exit":
        return {"exitCode": rng.choice([0, 1]), "signal": None}
    return rng.choice([{}, None])


TERMINAL_METHODS = [
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
]


def random_stream(rng: random.Random, n: int = 60) -> list[Any]:
    """Messages of both directions with the odd malformed frame; JSON values or raw bytes."""
    sids = ["s1", "s2"]
    out: list[Any] = []
    if rng.random() < 0.8:
        out.extend(init(rng.choice([1, 2]), rid=rng.choice([0, "init"])))
    for _ in range(n):
        r = rng.random()
        sid = rng.choice(sids)
        if r < 0.65:
            out.append(upd(_random_update(rng), sid=sid))
        elif r < 0.75:
            # v1 client terminals: the agent's requests, answered among the responses below.
            method = rng.choice(TERMINAL_METHODS)
            params: dict[str, Any] = {"sessionId": sid}
            if method == "terminal/create":
                params["command"] = _maybe(rng, "ls")
                params["args"] = ["-l"]
            else:
                params["terminalId"] = _maybe(rng, "t1")
            rid = rng.randint(5, 6)
            out.append({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            if rng.random() < 0.6:
                # Answered at once, as clients mostly do.
                out.append({"jsonrpc": "2.0", "id": rid, "result": _terminal_result(rng, method)})
        elif r < 0.8:
            out.append(
                {
                    "jsonrpc": "2.0",
                    "id": rng.randint(1, 4),
                    "method": "session/prompt",
                    "params": {"sessionId": sid, "prompt": [text("p")]},
                }
            )
        elif r < 0.84:
            out.append(
                {
                    "jsonrpc": "2.0",
                    "id": rng.randint(1, 4),
                    "method": "session/request_permission",
                    "params": {"sessionId": sid, "options": []},
                }
            )
        elif r < 0.9:
            result = rng.choice(
                [
                    {"stopReason": "end_turn"},
                    {"messageId": "u1"},
                    {"outcome": {"outcome": "cancelled"}},
                    {"terminalId": rng.choice(["t1", "t2"])},
                    {"output": "\x1b[31mred\x1b[0m\n", "truncated": rng.random() < 0.5},
                    {"output": "done\n", "truncated": False, "exitStatus": {"exitCode": 0}},
                    {"exitCode": 1, "signal": None},
                    {},
                    None,
                ]
            )
            resp = {"jsonrpc": "2.0", "id": rng.randint(1, 6)}
            if result is None:
                resp["error"] = {"code": 1, "message": "x"}
            else:
                resp["result"] = result
            out.append(resp)
        elif r < 0.91:
            params = {"sessionId": sid, "modeId": rng.choice(["ask", "code"])}
            out.append(
                {
                    "jsonrpc": "2.0",
                    "id": rng.randint(1, 4),
                    "method": "session/set_mode",
                    "params": params,
                }
            )
        elif r < 0.92:
            out.append({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        elif r < 0.95:
            out.append([upd(_random_update(rng), sid=sid), upd(_random_update(rng), sid=sid)])
        else:
            out.append(
                rng.choice([b"{oops", b"[]", b"7", b'{"jsonrpc":"2.0"}', b'{"a":1} 2', b"\xff{}"])
            )
    return out


def store_state(store) -> dict:
    sessions = {}
    for sid in store.ids():
        s = store[sid]
        snapshot = s.snapshot()
        texts = [s.message_text(m["id"], m["role"]) for m in snapshot["messages"]]
        sessions[sid] = (snapshot, s.state, s.stop_reason, texts)
    return {"ids": store.ids(), "sessions": sessions, "errors": store.errors}


def split_run(backend, data: bytes, cuts: list[int]) -> tuple[dict, list]:
    return bulk_run(backend, data, cuts, terminal_cols=20)


# -- what terminals hold ---------------------------------------------------------------------------


PTY_PIECES = [
    b"abc",
    b"x" * 30,
    b"\r\n",
    b"\n",
    b"\r",
    b"\x1b[K",
    b"\x1b[2J",
    b"\x1b[3J",
    b"\x1b[A",
    b"\x1b[2;5H",
    b"\x1b[3@",
    b"\x1b[2P",
    b"\x1b[4X",
    b"\x1b[9b",
    b"\x1b[31m",
    b"\x1b[38;2;1;2;3mz",
    b"\x1b[m",
    b"e\xcc\x81\xcc\x82",
    "デ".encode(),
    b"\x1b]8;;http://l/\x1b\\",
    b"\x1b]8;;http://example.com/another-link\x07",
    b"\x1b]8;;\x07",
    b"\x1b]0;title\x07",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[?47h",
    b"\x1b[?47l",
    b"\x1b7",
    b"\x1b8",
    b"\x1bc",
    b"\x1b[!p",
    b"\x1b[2;3r",
    b"\x1bM",
    b"\x1b[S",
    b"\x1b[L",
]


def held_bytes(backend, data: bytes, **options) -> int:
    """What a terminal fed `data` counts against a store's bound, found as the largest bound
    at which a second terminal's one-cell row (129) clears it."""

    def cleared(budget: int) -> bool:
        store = backend.Sessions(max_terminal_bytes=budget, **options)
        store.apply(output_chunk("a", data))
        store.apply(output_chunk("b", b"y"))
        return store[SID].snapshot()["terminals"]["a"]["truncated"]

    lo, hi = 0, 1 << 24
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cleared(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo + 1 - 129
