"""Twin of src/session/updates/messages.rs: message chunks and whole messages, by role and id."""

from __future__ import annotations

from ..fields import _patch
from ..model import Session, _Message
from ..parts import JsonObject, _StoreParts
from ..tables import V2

_CHUNK_ROLES = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "session_message_chunk": "session",
}
_FAST_ROLES = {k: v for k, v in _CHUNK_ROLES.items() if v != "session"}
# The entity type of a change to a message, by its role.
_CHANGE_KINDS = {
    "user": "userMessage",
    "agent": "agentMessage",
    "thought": "thought",
    "session": "sessionMessage",
}
_UPSERT_ROLES = {
    "user_message": "user",
    "agent_message": "agent",
    "agent_thought": "thought",
    "session_message": "session",
}


class _Messages(_StoreParts):
    """The handlers of message updates (a part of Sessions)."""

    __slots__ = ()

    def _message_index(self, sid: str, role: str, mid: str) -> int:
        s = self._sessions[sid]
        index = s._message_index.get((role, mid))
        if index is not None:
            return index
        return s._add_message(_Message(mid, role, self._message_room), (role, mid))

    def _anonymous_message(self, s: Session, role: str) -> int:
        """A new anonymous message of ``role``: the next ``~N`` not a real id of that role."""
        index_of = s._message_index
        while True:
            s._anonymous += 1
            mid = f"~{s._anonymous}"
            if (role, mid) not in index_of:
                break
        return s._add_message(_Message(mid, role, self._message_room), (role, mid, True))

    def _chunk(self, sid: str, kind: str, u: JsonObject) -> None:
        role = _CHUNK_ROLES[kind]
        content = u.get("content")
        if type(content) is not dict:
            self._error(sid, f"{kind}: content must be an object")
            return
        if type(content.get("type")) is not str:
            self._error(sid, f"{kind}: content.type must be a string")
            return
        mid = u.get("messageId")
        if type(mid) is str:
            index = self._message_index(sid, role, mid)
        elif role == "session" or self._mode == V2:
            self._error(sid, f"{kind}: messageId must be a string")
            return
        else:
            s = self._sessions[sid]
            current = s._current
            # A v1 message goes on while it is the last thing shown: after a tool call, a
            # plan, a terminal or another message, the next chunk starts a new one.
            if (
                current is not None
                and s._messages[current].role == role
                and s._is_timeline_tail(current)
            ):
                index = current
            else:
                index = self._anonymous_message(s, role)
        s = self._sessions[sid]
        s._current = index
        m = s._messages[index]
        if role == "session":
            for key in ("senderSessionId", "recipientSessionId"):
                value = u.get(key)
                if value is not None:
                    m.own_fields()[key] = value
        self._add_block(sid, m, content)
        self._change(sid, _CHANGE_KINDS[role], m.id)

    def _upsert_message(self, sid: str, kind: str, u: JsonObject) -> None:
        role = _UPSERT_ROLES[kind]
        mid = u.get("messageId")
        if type(mid) is not str:
            self._error(sid, f"{kind}: messageId must be a string")
            return
        index = self._message_index(sid, role, mid)
        s = self._sessions[sid]
        s._current = index
        m = s._messages[index]
        for k, v in u.items():
            # `id` and `role` name the message in the snapshot (its key): a field of that
            # name in an update is not kept, so it cannot pass for another message.
            if k == "sessionUpdate" or k == "messageId" or k == "id" or k == "role":
                continue
            if k == "content":
                if type(v) is list or v is None:
                    self._replace_content(sid, m, v)
            elif role == "session" and (k == "senderSessionId" or k == "recipientSessionId"):
                if v is not None:
                    m.own_fields()[k] = v
            else:
                _patch(m.own_fields(), k, v)
        self._changes[(sid, _CHANGE_KINDS[role], mid)] = None
