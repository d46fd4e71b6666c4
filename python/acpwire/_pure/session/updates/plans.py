"""Twin of src/session/updates/plans.rs: plans, v1's single one and v2's by id."""

from __future__ import annotations

from ..check import (
    _ONLY_META,
    _PLAN_ENTRY,
    _READ_EMPTY,
    _members_fit,
    _repair_items,
    _repair_members,
)
from ..fields import _set_extras, _without
from ..parts import JsonObject, _StoreParts

_PLAN_UPDATE_SKIP = frozenset(("sessionUpdate", "plan"))
_PLAN_REMOVED_SKIP = frozenset(("sessionUpdate", "planId"))


# plan type -> (its required field, that field's type, the error when it is missing).
_PLAN_REQUIRED = {
    "items": ("entries", list, "plan_update: plan.entries must be an array"),
    "markdown": ("content", str, "plan_update: plan.content must be a string"),
    "file": ("uri", str, "plan_update: plan.uri must be a string"),
}


class _Plans(_StoreParts):
    """The handlers of plan updates (a part of Sessions)."""

    __slots__ = ()

    def _set_plan(self, sid: str, pid: str, plan: JsonObject) -> None:
        s = self._sessions[sid]
        new = pid not in s._plans
        s._own("_plans")[pid] = plan
        if new:
            s._own("_plan_at")[pid] = len(s._timeline)
            s._timeline.append(("plan", pid, None))
        self._change(sid, "plan", pid)

    def _plan_v1(self, sid: str, kind: str, u: JsonObject) -> None:
        if type(u.get("entries")) is not list:
            self._error(sid, "plan: entries must be an array")
            return
        plan = {"type": "items", "planId": "main"}
        for k, v in u.items():
            # v1: null is omission. `type` and `planId` are the synthetic plan's: fields of
            # those names are not kept.
            if v is not None and k not in ("sessionUpdate", "type", "planId"):
                plan[k] = v
        self._set_plan(sid, "main", plan)

    def _plan_update(self, sid: str, kind: str, u: JsonObject) -> None:
        plan = u.get("plan")
        if type(plan) is not dict:
            self._error(sid, "plan_update: plan must be an object")
            return
        pid = plan.get("planId")
        if type(pid) is not str:
            self._error(sid, "plan_update: plan.planId must be a string")
            return
        ptype = plan.get("type")
        if type(ptype) is not str:
            self._error(sid, "plan_update: plan.type must be a string")
            return
        # The required field of each known plan type; other types are kept raw.
        required = _PLAN_REQUIRED.get(ptype)
        if required is not None:
            name, kind_of, reason = required
            if kind_of is list:
                # Present with another type, `entries` reads as `[]` (below).
                unreadable = name not in plan
            else:
                unreadable = type(plan.get(name)) is not kind_of
            if unreadable:
                self._error(sid, reason)
                return
            notes = self._notes
            if not _members_fit(plan, _ONLY_META):
                plan = _repair_members("plan_update", "plan", None, plan, _ONLY_META, notes)
            if ptype == "items":
                # The entries follow the rule of a v1 plan's, one object further down.
                entries = plan["entries"]
                if type(entries) is list:
                    repaired = _repair_items(
                        "plan_update", "plan.entries", entries, _PLAN_ENTRY, self._mode, notes
                    )
                else:
                    notes.append(f"plan_update: plan.entries must be an array{_READ_EMPTY}")
                    repaired = []
                if repaired is not entries:
                    plan = {**plan, "entries": repaired}
            plan = _without(plan, ())
        else:
            # The schema asks receivers to keep an unknown type's raw payload: nulls included.
            plan = dict(plan)
        self._set_plan(sid, pid, plan)
        self._plan_extras(sid, kind, u, _PLAN_UPDATE_SKIP)

    def _plan_extras(self, sid: str, kind: str, u: JsonObject, skip: frozenset[str]) -> None:
        """The update's own _meta and unknown fields (beside the plan or plan id) go to
        updateExtras, the last of each kind, as a session-level update's do."""
        if _set_extras(self._sessions[sid], kind, u, skip):
            self._change(sid, "session", "updateExtras")

    def _plan_removed(self, sid: str, kind: str, u: JsonObject) -> None:
        pid = u.get("planId")
        if type(pid) is not str:
            self._error(sid, "plan_removed: planId must be a string")
            return
        s = self._sessions[sid]
        # Removing a plan that is not there changes nothing (and must not grow the change set).
        if s._plans.pop(pid, None) is not None:
            s._remove_plan_entry(pid)
            self._change(sid, "plan", pid)
        self._plan_extras(sid, kind, u, _PLAN_REMOVED_SKIP)
