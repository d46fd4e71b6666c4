"""Twin of src/session/turns.rs: one record per prompt turn, and its place on the timeline.

A turn opens with a ``session/prompt`` (its entry placed last on the timeline) and closes with
its answer (v1) or the idle ``state_update`` (v2), with the stop reason, usage, cancel and
error answer it had; a v2 prompt sent while a turn runs joins it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .parts import JsonObject, JsonValue

if TYPE_CHECKING:
    from .model import Session


class _Turn:
    """One prompt turn: the prompt's request id and content as sent, the user message its v2
    acknowledgement names, how it ended, the v2 prompts that joined it, and the index of its
    timeline entry and the timeline's length when it closed."""

    __slots__ = (
        "cancel_requested",
        "end",
        "error",
        "has_error",
        "joined",
        "message_id",
        "prompt",
        "request_id",
        "start",
        "stop_reason",
        "usage",
    )

    def __init__(self, request_id: Any, prompt: Any, start: int) -> None:
        self.request_id = request_id
        self.prompt = prompt
        self.message_id: str | None = None
        self.stop_reason: str | None = None
        self.cancel_requested = False
        self.usage: JsonObject | None = None
        self.error: Any = None
        self.has_error = False
        self.joined: list[dict[str, Any]] = []
        self.start = start
        self.end: int | None = None


def _sent(rid: Any, has_id: bool, params: JsonObject) -> tuple[Any, Any]:
    """The request id and prompt of a session/prompt, as sent (None when absent)."""
    return (rid if has_id else None, params.get("prompt"))


def open_turn(s: Session, rid: Any, has_id: bool, params: JsonObject) -> tuple[int, int | None]:
    """A turn opened by the prompt, its entry placed last on the timeline: (turn, None)."""
    request_id, prompt = _sent(rid, has_id, params)
    turn = len(s._turns)
    s._turns.append(_Turn(request_id, prompt, len(s._timeline)))
    s._timeline.append(("turn", turn, None))
    return (turn, None)


def join_turn(
    s: Session, turn: int, rid: Any, has_id: bool, params: JsonObject
) -> tuple[int, int | None]:
    """The prompt joins turn ``turn``, which is running: (turn, its place in ``joined``)."""
    request_id, prompt = _sent(rid, has_id, params)
    joined = s._turns[turn].joined
    joined.append({"requestId": request_id, "prompt": prompt})
    return (turn, len(joined) - 1)


def close_turn(s: Session, turn: int, stop_reason: str | None, usage: JsonObject | None) -> None:
    """Close turn ``turn`` (once) with its stop reason and usage, at the timeline's end."""
    record = s._turns[turn]
    if record.end is not None:
        return
    record.end = len(s._timeline)
    record.stop_reason = stop_reason
    record.usage = usage


def answer_turn(
    s: Session, slot: tuple[int, int | None], has_result: bool, result: Any, error: Any
) -> None:
    """The answer to the prompt in ``slot``: the v2 acknowledgement's messageId, or the error."""
    turn, joined = slot
    record = s._turns[turn]
    message_id = result.get("messageId") if has_result and type(result) is dict else None
    if type(message_id) is not str:
        message_id = None
    if joined is None:
        if message_id is not None:
            record.message_id = message_id
        if not has_result:
            record.error = error
            record.has_error = True
    else:
        entry = record.joined[joined]
        if message_id is not None:
            entry["messageId"] = message_id
        if not has_result:
            entry["error"] = error


def remap_turns(s: Session, kept_before: list[int]) -> None:
    """After removed plans' entries were compacted out of the timeline: ``kept_before[i]`` is
    how many entries before old index ``i`` were kept."""
    for record in s._turns:
        record.start = kept_before[record.start]
        if record.end is not None:
            record.end = kept_before[record.end]


def kept_before(timeline: list[JsonValue]) -> list[int]:
    """For each index of ``timeline`` and its length, how many entries before it are not
    holes: where an entry is once the holes are gone."""
    out = []
    kept = 0
    for item in timeline:
        out.append(kept)
        if item is not None:
            kept += 1
    out.append(kept)
    return out
