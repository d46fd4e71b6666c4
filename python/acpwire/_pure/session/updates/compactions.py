"""Twin of src/session/updates/compactions.rs: context compactions and their summary chunks."""

from __future__ import annotations

from ..fields import _patch, _push_item
from ..parts import JsonObject, _StoreParts


class _Compactions(_StoreParts):
    """The handlers of compaction updates (a part of Sessions)."""

    __slots__ = ()

    def _compaction_entry(self, sid: str, cid: str) -> JsonObject:
        s = self._sessions[sid]
        entry = s._compactions.get(cid)
        if entry is None:
            entry = s._own("_compactions")[cid] = {"compactionId": cid}
            s._timeline.append(("compaction", cid, None))
        return entry

    def _compaction(self, sid: str, kind: str, u: JsonObject) -> None:
        cid = u.get("compactionId")
        if type(cid) is not str:
            self._error(sid, "compaction_update: compactionId must be a string")
            return
        if type(u.get("status")) is not str:
            self._error(sid, "compaction_update: status must be a string")
            return
        c = self._compaction_entry(sid, cid)
        for k, v in u.items():
            if k == "sessionUpdate" or k == "compactionId":
                continue
            if k == "summary":
                if type(v) is list:
                    if v:
                        c[k] = v
                    else:
                        c.pop(k, None)
                elif v is None:
                    c.pop(k, None)
            else:
                _patch(c, k, v)
        self._change(sid, "compaction", cid)

    def _compaction_chunk(self, sid: str, kind: str, u: JsonObject) -> None:
        cid = u.get("compactionId")
        if type(cid) is not str:
            self._error(sid, "compaction_summary_chunk: compactionId must be a string")
            return
        content = u.get("content")
        if type(content) is not dict:
            self._error(sid, "compaction_summary_chunk: content must be an object")
            return
        _push_item(self._compaction_entry(sid, cid), "summary", content)
        self._change(sid, "compaction", cid)
