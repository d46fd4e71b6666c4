"""What apply takes: arguments, nesting and number limits, subclasses of the JSON types,
lone surrogates."""

from __future__ import annotations

import base64
import sys
from typing import Any

import pytest

from session_builders import (
    SID,
    prompt_request,
    rpc_result,
    store_of,
    text,
    upd,
)
from subclasses import Kind, LoudDict, LoudFloat, LoudInt, LoudList, LoudStr, LoudTuple, Side


def test_store_arguments_are_checked(backend):
    for options, message in [
        ({"max_frame_bytes": 0}, "max_frame_bytes must be positive"),
        ({"terminal_cols": -1}, r"terminal_cols must be at least 1 \(or None\)"),
        # As Terminal(cols=0): a grid needs a column.
        ({"terminal_cols": 0}, r"terminal_cols must be at least 1 \(or None\)"),
        ({"terminal_cols": 65_536}, "terminal_cols must be at most 65535"),
        ({"scrollback": -1}, "scrollback must not be negative"),
    ]:
        with pytest.raises(ValueError, match=message):
            backend.Sessions(**options)
    # The widest grid is accepted, and its terminals wrap there.
    chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": "t"}
    store = store_of(
        backend,
        [upd({**chunk, "data": base64.b64encode(b"\x1b[65535Gxy").decode()})],
        terminal_cols=65_535,
    )
    assert store[SID].terminal("t").screen()[:2] == [" " * 65_534 + "x", "y"]


def test_apply_nesting_limit(both):
    # `apply` takes a message nesting 200 levels below its top and no deeper, as `feed` takes
    # a frame, on both backends, and the state it leaves can be read back and written by
    # `dumps` (the pure twin's copies must not recurse past Python's limit); a
    # self-referencing message is refused, not followed forever.
    def message(levels: int) -> dict:
        value: Any = {"a": 1}
        for i in range(levels):
            value = [value] if i % 2 else {"k": value, "n": None}
        return upd({"sessionUpdate": "x_custom", "v": value})  # 4 levels above `value`

    snapshots = []
    for backend in both:
        store = backend.Sessions()
        store.apply(message(196))
        snapshots.append(store[SID].snapshot())
        assert backend.loads(backend.dumps(snapshots[-1])) == snapshots[-1]
        with pytest.raises(ValueError, match="message nests too deeply"):
            store.apply(message(197))
        # The framing draws the line at the same place.
        fed = backend.Sessions()
        fed.feed(backend.dumps(message(196)) + backend.dumps(message(197)))
        assert [e["line"] for e in fed.errors] == [2]
        assert fed[SID].snapshot()["other"] == snapshots[-1]["other"]
        loop: list = []
        loop.append(loop)
        with pytest.raises(ValueError, match="message nests too deeply"):
            store.apply(upd({"sessionUpdate": "x_custom", "v": loop}))
        assert len(store[SID].snapshot()["other"]) == 1
    assert snapshots[0] == snapshots[1]


def test_apply_refuses_an_integer_the_framing_could_not_read(backend):
    # The framing reads integers of up to 4300 digits; apply takes the same, so that a stored
    # message can always be written back (the pure backend once kept any int).
    store = backend.Sessions()
    for value in (10**4300 - 1, -(10**4300 - 1), 2**64, -(2**63) - 1):
        store.apply(upd({"sessionUpdate": "x_custom", "v": value}))
    assert [o["v"] for o in store[SID].snapshot()["other"]] == [
        10**4300 - 1,
        -(10**4300 - 1),
        2**64,
        -(2**63) - 1,
    ]
    for value in (10**4300, -(10**4300)):
        with pytest.raises(ValueError):
            store.apply(upd({"sessionUpdate": "x_custom", "v": value}))
    assert len(store[SID].snapshot()["other"]) == 4


def test_apply_refuses_an_int_past_the_digit_limit_where_the_reader_stops(backend):
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        for value, index in ((10**4300, 4301), (-(10**4300), 4302), (10**9000, 4301)):
            with pytest.raises(ValueError, match=f"^number out of range at index {index}$"):
                backend.Sessions().apply({"jsonrpc": "2.0", "method": "x", "params": [value]})
    finally:
        sys.set_int_max_str_digits(before)


def test_apply_reads_subclasses_by_their_stored_values(backend):
    # A `(str, Enum)` member's str() is its name and its hash the name's: what a message holds
    # is its value, as for every subclass whatever methods it overrides.
    def message(wrap):
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": wrap["str"]("s1"),
                "update": wrap["dict"](
                    {
                        "sessionUpdate": wrap["kind"],
                        "messageId": wrap["str"]("m"),
                        "content": wrap["dict"]({"type": "text", "text": wrap["str"]("hi")}),
                        "_meta": wrap["dict"](
                            {
                                wrap["str"]("n"): wrap["list"](
                                    [wrap["int"](5), wrap["float"](1.5), wrap["tuple"](("t",))]
                                )
                            }
                        ),
                    }
                ),
            },
        }

    plain = {"str": str, "dict": dict, "list": list, "tuple": tuple, "int": int, "float": float}
    plain["kind"] = "agent_message_chunk"
    loud = {
        "str": LoudStr,
        "dict": LoudDict,
        "list": LoudList,
        "tuple": LoudTuple,
        "int": LoudInt,
        "float": LoudFloat,
        "kind": Kind.CHUNK,
    }
    expected, got = backend.Sessions(), backend.Sessions()
    expected.apply(message(plain))
    got.apply(message(loud))
    assert got.errors == [] and got.ids() == ["s1"]
    assert got["s1"].snapshot() == expected["s1"].snapshot()
    assert got["s1"].message_text(LoudStr("m")) == "hi"
    # The sender, too: a `StrEnum`-like member names the side by its value.
    store = backend.Sessions()
    store.apply(prompt_request(1), sender="client")
    store.apply(rpc_result(1, {"stopReason": "end_turn"}), sender=Side.AGENT)
    assert store[SID].snapshot()["prompts"][0]["response"] == {"stopReason": "end_turn"}


@pytest.mark.parametrize(
    ("message", "sid"),
    [
        (
            upd(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": text("a\ud800"),
                }
            ),
            SID,
        ),
        (
            upd(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m\udfff",
                    "content": text("x"),
                }
            ),
            SID,
        ),
        (upd({"sessionUpdate": "_x", "k\udc80": 1}), SID),
        (upd({"sessionUpdate": "_x"}, sid="s\ud800"), None),
        ([upd({"sessionUpdate": "_x"}), upd({"sessionUpdate": "_x", "t": "\ud800"})], None),
    ],
)
def test_a_lone_surrogate_in_apply_is_one_error_record(backend, message, sid):
    store = backend.Sessions()
    store.apply(message)
    reason = "str is not valid UTF-8: surrogates not allowed"
    assert store.errors == [{"line": None, "offset": None, "sessionId": sid, "reason": reason}]
    assert store.ids() == ([] if sid is None else [sid])
    if sid is not None:
        s = store[sid].snapshot()
        assert (s["messages"], s["other"], len(s["errors"])) == ([], [], 1)
    # A type error found first still raises.
    with pytest.raises(TypeError):
        store.apply({"a": {1, 2}, "b": "\ud800"})
