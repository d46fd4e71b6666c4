"""Inputs that could make session reduction quadratic, timed at a size and four times it.

Each case feeds a stream to a fresh ``Sessions`` and times the part that grows; linear time
shows as a ratio near 4 between the two sizes, quadratic time as a ratio near 16.

    python benches/scripts/linear_time.py [native|pure|both]
"""

import sys
import time

import orjson

import acpwire._native as N
import acpwire._pure as P


def update(u: dict) -> bytes:
    params = {"sessionId": "s", "update": u}
    return orjson.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}) + b"\n"


INIT = (
    orjson.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
    )
    + b"\n"
)


def many_fields(n: int) -> tuple[bytes, bytes]:
    """One tool_call_update with n fields, then one setting half of them to null."""
    fields = {f"f{i}": i for i in range(n)}
    first = update({"sessionUpdate": "tool_call_update", "toolCallId": "c", **fields})
    nulls = {f"f{i}": None for i in range(0, n, 2)}
    second = update({"sessionUpdate": "tool_call_update", "toolCallId": "c", **nulls})
    return INIT, first + second


def big_entity_then_chunks(n: int) -> tuple[bytes, bytes]:
    """A tool call with 80,000 fields, then n one-item content chunks (timed)."""
    fields = {f"f{i}": i for i in range(80_000)}
    head = INIT + update({"sessionUpdate": "tool_call_update", "toolCallId": "c", **fields})
    chunk = update(
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c",
            "content": {"type": "content", "content": {"type": "text", "text": "x"}},
        }
    )
    return head, chunk * n


def plan_churn(n: int) -> tuple[bytes, bytes]:
    """2n messages, then n plans added and removed (timed)."""
    head = INIT + b"".join(
        update({"sessionUpdate": "agent_message", "messageId": f"m{i}", "content": []})
        for i in range(2 * n)
    )
    plans = b"".join(
        update({"sessionUpdate": "plan_update", "plan": {"planId": f"p{i}", "type": "items"}})
        for i in range(n)
    )
    removals = b"".join(
        update({"sessionUpdate": "plan_removed", "planId": f"p{i}"}) for i in range(n)
    )
    return head, plans + removals


def unanswered_requests(n: int) -> tuple[bytes, bytes]:
    """n prompts never answered (past the 10,000 kept, the oldest are forgotten)."""
    prompts = b"".join(
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "session/prompt",
                "params": {"sessionId": "s", "prompt": []},
            }
        )
        + b"\n"
        for i in range(n)
    )
    return INIT, prompts


def alternating_versions(n: int) -> tuple[bytes, bytes]:
    """n sessions, then n `initialize`s switching between versions 1 and 2 (timed)."""
    head = b"".join(
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": f"s{i}", "update": {"sessionUpdate": "x"}},
            }
        )
        + b"\n"
        for i in range(n)
    )
    switches = b"".join(
        orjson.dumps(
            {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1 + i % 2}}
        )
        + b"\n"
        for i in range(n)
    )
    return head, switches


def one_long_turn(n: int) -> tuple[bytes, bytes]:
    """One v2 turn of n prompts, each followed by a cancel and an error answer to the one
    before it, so that the turn stays open throughout (timed)."""

    def line(message: dict) -> bytes:
        return orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"

    cancel = line({"method": "session/cancel", "params": {"sessionId": "s"}})
    body = b"".join(
        line({"id": i, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}})
        + cancel
        + (line({"id": i - 1, "error": {"code": 1, "message": "busy"}}) if i else b"")
        for i in range(n)
    )
    return INIT + line({"id": 0, "result": {"protocolVersion": 2}}), body


CASES = {
    "update with n fields": (many_fields, 20_000),
    "80,000-field entity, then n chunks": (big_entity_then_chunks, 5_000),
    "n plans added and removed": (plan_churn, 10_000),
    "n unanswered requests": (unanswered_requests, 20_000),
    "n sessions, n switches of version": (alternating_versions, 4_000),
    "one turn of n prompts, each cancelled": (one_long_turn, 5_000),
}


def timed(module, case, n: int) -> float:
    head, body = case(n)
    store = module.Sessions()
    store.feed(head)
    start = time.perf_counter()
    store.feed(body)
    return time.perf_counter() - start


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    modules = {"native": [N], "pure": [P], "both": [N, P]}[which]
    for module in modules:
        name = module.__name__.rsplit(".", 1)[-1].lstrip("_")
        for label, (case, n) in CASES.items():
            small = min(timed(module, case, n) for _ in range(3))
            large = min(timed(module, case, 4 * n) for _ in range(3))
            print(
                f"{name:6s} {label:36s} n={n:>6,}: {small:7.3f} s   4n: {large:7.3f} s"
                f"   ratio {large / small:5.1f}"
            )


if __name__ == "__main__":
    main()
