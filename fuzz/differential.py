"""Coverage-guided differential fuzzing of the two backends (atheris, on the pure backend).

Both backends must give identical results on every input: this feeds the same bytes, cut
at the same places, to the native and the pure ``FrameDecoder``, ``loads``/``dumps``,
``Terminal`` and ``Sessions``, and fails on the first difference. A fifth target builds
JSON-RPC messages from the input (any update variant, any field, any type, requests and
responses of both sides) and compares both stores fed and applied. The pure backend is
instrumented, so the fuzzer steers towards its untried branches.

    pip install atheris
    python fuzz/differential.py fuzz/corpus/differential -max_total_time=600

Seeds: ``python fuzz/seeds.py`` also writes ``fuzz/corpus/differential``.
"""

from __future__ import annotations

import sys
from typing import Any

import atheris

with atheris.instrument_imports(include=["acpwire._pure"]):
    from acpwire import _native as native
    from acpwire import _pure as pure

TARGETS = ("framing", "json_values", "terminal", "sessions", "updates")

# What the structure-aware `updates` target builds messages from. Listed from the protocol, not
# taken from either backend, so that a variant one backend forgot still gets generated.
KINDS = [
    "agent_message_chunk",
    "agent_message",
    "agent_thought_chunk",
    "agent_thought",
    "user_message_chunk",
    "user_message",
    "session_message_chunk",
    "session_message",
    "tool_call",
    "tool_call_update",
    "tool_call_content_chunk",
    "terminal_update",
    "terminal_output_chunk",
    "plan",
    "plan_update",
    "plan_removed",
    "state_update",
    "usage_update",
    "session_info_update",
    "available_commands_update",
    "config_option_update",
    "current_mode_update",
    "compaction_update",
    "compaction_summary_chunk",
    "notice",
    "subagent_update",
    "_vendor_thing",
]
FIELDS = [
    "messageId",
    "content",
    "toolCallId",
    "terminalId",
    "planId",
    "compactionId",
    "title",
    "status",
    "kind",
    "rawInput",
    "locations",
    "command",
    "cwd",
    "exitStatus",
    "output",
    "data",
    "plan",
    "entries",
    "state",
    "stopReason",
    "used",
    "size",
    "cost",
    "availableCommands",
    "configOptions",
    "currentModeId",
    "summary",
    "severity",
    "message",
    "_meta",
    "senderSessionId",
    "recipientSessionId",
    "subagentSessionId",
    "updatedAt",
]
TEXT = {"type": "text", "text": "t\u00e9"}
VALUES = (
    None, "a", "b", "", 0, 3, -1, 2.5, True, {}, [], TEXT, [TEXT], [TEXT, {"type": "image"}],
    {"type": "content", "content": TEXT}, {"exitCode": 1}, {"data": "G1szMW1yZWQ="},
    {"data": "bad!"}, "G1sxbWJvbGQNCg==", "4oI=", "=bad", "idle", "running", "end_turn",
    {"planId": "p", "type": "items", "entries": []}, {"planId": "q", "type": "markdown"},
    {"planId": 7, "type": "items"}, {"k": {"nested": [1, None]}},
    [{"name": "x", "description": "d"}], "completed", "info",
)  # fmt: skip
METHODS = ("session/prompt", "session/request_permission", "session/cancel", "session/new")
RESULTS = (
    {"stopReason": "end_turn"}, {"messageId": "u1"}, {"sessionId": "s2"},
    {"outcome": {"outcome": "selected", "optionId": "o"}}, {"outcome": {"outcome": "cancelled"}},
    None, 5,
)  # fmt: skip


def pieces(fdp: atheris.FuzzedDataProvider) -> tuple[list[int], bytes]:
    cuts = [fdp.ConsumeIntInRange(1, 300) for _ in range(fdp.ConsumeIntInRange(0, 6))]
    data = fdp.ConsumeBytes(fdp.remaining_bytes())
    out, start, k = [], 0, 0
    while start < len(data) and cuts:
        out.append(data[start : start + cuts[k % len(cuts)]])
        start += cuts[k % len(cuts)]
        k += 1
    return out or [data], data


def outcome(call: Any) -> Any:
    """A call's result, or its exception's type name and arguments."""
    try:
        return ("ok", call())
    except (ValueError, TypeError, RecursionError) as e:
        return ("error", type(e).__name__, str(e))


def frame_errors(errors: list) -> list:
    return [(e.reason, e.line, e.offset, e.excerpt, e.detail) for e in errors]


def positions(data: bytes, backend: Any) -> Any:
    """Where ``loads`` places its error, for bytes and for the same text as a str."""
    found = []
    for doc in (data, data.decode("utf-8", "replace")):
        try:
            backend.loads(doc)
        except backend.DecodeError as e:
            found.append((e.msg, e.line, e.column, e.offset))
    return found


def framing(fdp: atheris.FuzzedDataProvider) -> Any:
    cap = fdp.ConsumeIntInRange(1, 200)
    raw = fdp.ConsumeBool()
    cut, _ = pieces(fdp)

    def run(backend: Any) -> Any:
        decoder = backend.FrameDecoder(max_frame_bytes=cap, raw=raw)
        got = [decoder.feed(piece) for piece in cut] + [decoder.finish()]
        return got, frame_errors(decoder.take_errors()), decoder.buffered, decoder.frames

    return run


def json_values(fdp: atheris.FuzzedDataProvider) -> Any:
    data = fdp.ConsumeBytes(fdp.remaining_bytes())

    def run(backend: Any) -> Any:
        value = outcome(lambda: backend.loads(data))
        if value[0] != "ok":
            return value, positions(data, backend)
        return value, outcome(lambda: backend.dumps(value[1]))

    return run


def terminal(fdp: atheris.FuzzedDataProvider) -> Any:
    cols = fdp.ConsumeIntInRange(0, 40) or None
    rows = fdp.ConsumeIntInRange(1, 10)
    scrollback = fdp.ConsumeIntInRange(0, 30)
    max_bytes = fdp.ConsumeIntInRange(0, 4000)
    as_base64 = fdp.ConsumeBool()
    cut, _ = pieces(fdp)

    def run(backend: Any) -> Any:
        t = backend.Terminal(cols=cols, rows=rows, scrollback=scrollback, max_bytes=max_bytes)
        errors = []
        for piece in cut:
            if as_base64:
                errors.append(outcome(lambda p=piece: t.feed_base64(p)))
            else:
                t.feed(piece)
        return (
            errors,
            t.text,
            t.lines(),
            [[(s.text, s.fg, s.bg, s.bold, s.dim, s.italic, s.underline, s.inverse, s.strike,
               s.link) for s in line] for line in t.spans()],
            t.screen() if cols else None,
            t.cursor if cols else None,
            t.title,
            t.progress,
            t.bell_count,
            t.bytes_fed,
            t.truncated,
        )  # fmt: skip

    return run


def sessions(fdp: atheris.FuzzedDataProvider) -> Any:
    cols = fdp.ConsumeIntInRange(0, 30) or None
    cap = fdp.ConsumeIntInRange(64, 4096)
    cut, _ = pieces(fdp)

    def run(backend: Any) -> Any:
        store = backend.Sessions(max_frame_bytes=cap, terminal_cols=cols, scrollback=5)
        frames = [store.feed(piece) for piece in cut] + [store.finish()]
        state = {}
        for sid in store.ids():
            s = store[sid]
            snapshot = s.snapshot()
            texts = [s.message_text(m["id"], m["role"]) for m in snapshot["messages"]]
            state[sid] = (snapshot, s.state, s.stop_reason, texts)
        return frames, store.ids(), state, store.take_errors(), store.changes()

    return run


def message(fdp: atheris.FuzzedDataProvider) -> Any:
    """One JSON-RPC message of either direction, mostly session/update, any field any type."""

    def pick(options: Any) -> Any:
        return options[fdp.ConsumeIntInRange(0, len(options) - 1)]

    sid = pick(["s1", "s1", "s2", 5, None])
    shape = fdp.ConsumeIntInRange(0, 9)
    if shape < 6:
        update: dict[str, Any] = {"sessionUpdate": pick(KINDS)}
        for _ in range(fdp.ConsumeIntInRange(0, 5)):
            update[pick(FIELDS)] = pick(VALUES)
        params = {"sessionId": sid, "update": update}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}
    rid = pick([1, 2, "1", 3.0])
    if shape < 8:
        params = {"sessionId": sid, "prompt": [TEXT], "options": []}
        return {"jsonrpc": "2.0", "id": rid, "method": pick(METHODS), "params": params}
    result = pick(RESULTS)
    if result is None:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -1, "message": "no"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def updates(fdp: atheris.FuzzedDataProvider) -> Any:
    version = (1, 2, None)[fdp.ConsumeIntInRange(0, 2)]
    messages = []
    if version is not None:
        params = {"protocolVersion": version}
        messages.append({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        messages.append({"jsonrpc": "2.0", "id": 0, "result": params})
    while fdp.remaining_bytes() and len(messages) < 60:
        messages.append(message(fdp))
    data = b"".join(native.dumps(m) for m in messages)
    half = len(data) // 2

    def run(backend: Any) -> Any:
        fed = backend.Sessions(terminal_cols=12)
        fed.feed(data[:half])
        fed.feed(data[half:])
        applied = backend.Sessions(terminal_cols=12)
        for m in messages:
            applied.apply(m)
        return [
            {sid: s[sid].snapshot() for sid in s.ids()} for s in (fed, applied)
        ], fed.take_errors()

    return run


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    target = TARGETS[fdp.ConsumeIntInRange(0, len(TARGETS) - 1)]
    run = globals()[target](fdp)
    expected = run(native)
    got = run(pure)
    if got != expected:
        raise AssertionError(
            f"{target}: the backends differ\nnative: {expected!r}\npure:   {got!r}"
        )


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
