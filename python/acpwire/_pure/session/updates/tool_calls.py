"""Twin of src/session/updates/tool_calls.rs: tool calls, their updates and content chunks."""

from __future__ import annotations

from ..fields import _push_item
from ..parts import JsonObject, _StoreParts
from ..tables import TOOL_CALL_STATUSES, TOOL_KINDS, V1

# A status or kind the schemas name is kept as the table's own string: a million tool calls
# then hold no copy of "completed".
_NAMED = {value: value for value in (*TOOL_CALL_STATUSES, *TOOL_KINDS)}


class _ToolCalls(_StoreParts):
    """The handlers of tool call updates (a part of Sessions)."""

    __slots__ = ()

    def _tool_call(self, sid: str, kind: str, u: JsonObject) -> None:
        create = kind == "tool_call"
        tid = u.get("toolCallId")
        if type(tid) is not str:
            self._error(sid, f"{kind}: toolCallId must be a string")
            return
        if create and type(u.get("title")) is not str:
            self._error(sid, "tool_call: title must be a string")
            return
        null_clears = self._mode != V1
        s = self._sessions[sid]
        found = s._tool_calls.get(tid)
        new = found is None
        if found is None or create:
            call: JsonObject = {"toolCallId": tid}
            s._tool_calls[tid] = call
        else:
            call = found
        for k, v in u.items():
            if v is None:
                if null_clears and k != "sessionUpdate" and k != "toolCallId":
                    call.pop(k, None)
            elif k == "content" or k == "locations":
                # Arrays replace whole, [] clears; any other value is ignored.
                if type(v) is list:
                    if v:
                        call[k] = v
                    else:
                        call.pop(k, None)
            elif (k == "status" or k == "kind") and type(v) is str:
                call[k] = _NAMED.get(v, v)
            elif k != "sessionUpdate" and k != "toolCallId":
                call[k] = v
        if new:
            s._timeline.append(("toolCall", tid, None))
        self._changes[(sid, "toolCall", tid)] = None

    def _tool_call_chunk(self, sid: str, kind: str, u: JsonObject) -> None:
        tid = u.get("toolCallId")
        if type(tid) is not str:
            self._error(sid, "tool_call_content_chunk: toolCallId must be a string")
            return
        content = u.get("content")
        if type(content) is not dict:
            self._error(sid, "tool_call_content_chunk: content must be an object")
            return
        if type(content.get("type")) is not str:
            self._error(sid, "tool_call_content_chunk: content.type must be a string")
            return
        s = self._sessions[sid]
        call = s._tool_calls.get(tid)
        if call is None:
            call = s._tool_calls[tid] = {"toolCallId": tid}
            _push_item(call, "content", content)
            s._timeline.append(("toolCall", tid, None))
        else:
            _push_item(call, "content", content)
        self._changes[(sid, "toolCall", tid)] = None
