"""Calls made in the middle of another call on the same thread, as a finalizer run by a garbage
collection makes them: a stateless decode works; a second change to the object being changed
is refused with RuntimeError (as the native objects refuse a second borrow), never waited on
for ever nor applied into a half-done change, and no Rust panic reaches Python."""

from __future__ import annotations

import gc
import sys

import pytest

from acpwire import _pure

UPDATE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"tool_call_update","toolCallId":"t%d","status":"pending"}}}\n'
)


def reentered(outer, function_name, nested):
    """Runs ``outer()``; the first time a pure function named ``function_name`` starts, runs
    ``nested()`` there. Returns what ``outer()`` returned and what ``nested()`` did."""
    seen = []

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name == function_name and not seen:
            try:
                seen.append(("ok", nested()))
            except RuntimeError as exc:
                seen.append(("refused", str(exc)))

    sys.settrace(tracer)
    try:
        result = outer()
    finally:
        sys.settrace(None)
    assert seen, f"{function_name} never ran"
    return result, seen[0]


def test_pure_decoder_refuses_a_nested_call_instead_of_waiting_for_itself():
    decoder = _pure.FrameDecoder()
    frames, nested = reentered(
        lambda: decoder.feed(b'{"a": 1}\n{"b": 2}\n'), "_feed", lambda: decoder.feed(b"{}\n")
    )
    assert nested == ("refused", "Already borrowed")
    assert frames == [{"a": 1}, {"b": 2}] and decoder.frames == 2
    assert decoder.feed(b'{"c": 3}\n') == [{"c": 3}]  # and it still works


def test_pure_terminal_refuses_a_nested_change():
    terminal = _pure.Terminal()
    _, nested = reentered(
        lambda: terminal.feed(b"first\r\n"), "_advance", lambda: terminal.feed(b"nested\r\n")
    )
    assert nested == ("refused", "Already borrowed")
    _, nested = reentered(lambda: terminal.reset(b"snap"), "_advance", terminal.reset)
    assert nested == ("refused", "Already borrowed")
    terminal.feed(b" more")
    assert terminal.text == "snap more"


@pytest.mark.parametrize("how", ["feed", "apply"])
def test_pure_store_refuses_a_nested_change_during_a_feed(how):
    store = _pure.Sessions()
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {"sessionUpdate": "plan_removed", "planId": "p"}},
    }
    nested = (lambda: store.feed(UPDATE % 99)) if how == "feed" else (lambda: store.apply(message))
    count, seen = reentered(
        lambda: store.feed(b"".join(UPDATE % i for i in range(3))), "_dispatch", nested
    )
    assert seen == ("refused", "Already borrowed")
    assert count == 3
    assert sorted(store["s"].snapshot()["toolCalls"]) == ["t0", "t1", "t2"]
    assert store.feed(UPDATE % 3) == 1  # and it still works


def test_pure_store_refuses_a_nested_change_during_an_apply():
    store = _pure.Sessions()
    update = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [{"name": "a", "description": "d"}, 5],
    }
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    _, nested = reentered(lambda: store.apply(message), "_replace", lambda: store.apply(message))
    assert nested == ("refused", "Already borrowed")
    _, nested = reentered(lambda: store.apply(message), "_replace", store.take_errors)
    assert nested == ("refused", "Already borrowed")
    # Each outer apply kept its record of the item it left out.
    assert [e["reason"] for e in store.take_errors()] == [
        "available_commands_update: availableCommands[1] must be an object (item dropped)"
    ] * 2


class Collected:
    """Cyclic garbage whose finalizer runs ``action``."""

    def __init__(self, action, seen):
        self.cycle = self
        self.action = action
        self.seen = seen

    def __del__(self):
        try:
            self.seen.append(("ok", self.action()))
        except BaseException as exc:  # a PanicException is a BaseException
            self.seen.append(("raised", type(exc).__name__))


@pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="CPython 3.12+ collects only between bytecodes"
)
def test_a_decode_inside_a_native_decode_works(backend):
    # CPython up to 3.11 collects when an object is allocated: the decoder's own dicts and
    # lists start the collection, and the finalizer decodes while the outer decode runs.
    document = b"[" + b",".join(b'{"k": [%d]}' % i for i in range(2000)) + b"]"
    for outer in (
        lambda: backend.loads(document),
        lambda: backend.FrameDecoder().feed(document + b"\n"),
    ):
        seen: list = []
        gc.collect()
        keep = [Collected(lambda: backend.loads(b'{"key": 1}'), seen) for _ in range(3)]
        gc.collect(0)  # survivors move to generation 1
        del keep  # garbage only a generation-1 collection frees
        thresholds = gc.get_threshold()
        gc.set_threshold(1, 5)  # which now runs after a few allocations, inside the decode
        try:
            value = outer()
        finally:
            gc.set_threshold(*thresholds)
        assert len(value) == 2000
        assert seen and all(result == ("ok", {"key": 1}) for result in seen), seen
