"""Twin of src/session/updates/mod.rs: the handlers of ``session/update``, one module per family.

Each family's handlers are methods of a class of its module, all of them parts of
``Sessions``; a variant the rules in force do not know is kept raw in ``other``.
"""

from __future__ import annotations

from ..parts import JsonObject
from .compactions import _Compactions
from .messages import _Messages
from .plans import _Plans
from .session_state import _SessionState
from .terminals import _Terminals
from .tool_calls import _ToolCalls


class _Updates(_Messages, _ToolCalls, _Terminals, _Plans, _Compactions, _SessionState):
    """The handlers of every update variant (a part of Sessions)."""

    __slots__ = ()

    def _other(self, sid: str, u: JsonObject) -> None:
        s = self._sessions[sid]
        index = str(len(s._other))
        s._own("_other").append(u)
        s._timeline.append(("other", index, None))
        self._change(sid, "other", index)
