"""Plans and compactions: upserts, removals, order in the timeline, v1's main plan."""

from __future__ import annotations

import random

from session_builders import (
    SID,
    snap,
    store_of,
    text,
    upd,
)


def test_plans(backend):
    store = store_of(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "plan_update",
                    "plan": {
                        "type": "items",
                        "planId": "p1",
                        "entries": [{"content": "a", "priority": "high", "status": "pending"}],
                    },
                }
            ),
            upd(
                {
                    "sessionUpdate": "plan_update",
                    "plan": {"type": "markdown", "planId": "p2", "content": "# x"},
                }
            ),
            upd(
                {
                    "sessionUpdate": "plan_update",
                    "plan": {"type": "_future", "planId": "p3", "blob": [1, 2]},
                }
            ),
            upd(
                {
                    "sessionUpdate": "plan_update",
                    "plan": {"type": "items", "planId": "p1", "entries": []},
                }
            ),
            upd({"sessionUpdate": "plan_removed", "planId": "p2"}),
        ],
        version=2,
    )
    s = store[SID].snapshot()
    assert s["plans"] == {
        "p1": {"type": "items", "planId": "p1", "entries": []},
        "p3": {"type": "_future", "planId": "p3", "blob": [1, 2]},
    }
    assert [t["id"] for t in s["timeline"]] == ["p1", "p3"]


def test_plan_churn_keeps_timeline_and_plan_order(backend):
    # Many plans added and removed among messages, enough removals to compact the structures
    # that track them, some ids re-added (they go last): the same order as a dict and a list.
    def plan(pid: str, n: int) -> dict:
        return upd(
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": pid, "entries": [], "n": n},
            }
        )

    def message(mid: str) -> dict:
        return upd({"sessionUpdate": "agent_message", "messageId": mid, "content": [text(mid)]})

    rng = random.Random(7)
    messages: list[dict] = []
    plans: dict[str, dict] = {}
    timeline: list[tuple[str, str]] = []
    for step in range(1500):
        r = rng.random()
        # Phases that add many plans, then remove most of them, then mix.
        p_add = (0.8, 0.1, 0.45)[min(step // 300, 2)]
        pid = f"p{rng.randrange(300)}"
        if r < 0.05:
            mid = f"m{step}"
            messages.append(message(mid))
            timeline.append(("message", mid))
        elif r < 0.05 + p_add:
            messages.append(plan(pid, step))
            if pid not in plans:
                timeline.append(("plan", pid))
            plans[pid] = {"type": "items", "planId": pid, "entries": [], "n": step}
        else:
            messages.append(upd({"sessionUpdate": "plan_removed", "planId": pid}))
            if plans.pop(pid, None) is not None:
                timeline.remove(("plan", pid))
    s = snap(backend, messages, version=2)
    assert list(s["plans"].items()) == list(plans.items())
    assert [(t["type"], t["id"]) for t in s["timeline"]] == timeline


def test_v1_plan_is_main(backend):
    s = snap(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "plan",
                    "entries": [{"content": "x", "priority": "low", "status": "pending"}],
                    "_meta": {"a": 1},
                }
            )
        ],
        version=1,
    )
    assert s["plans"] == {
        "main": {
            "type": "items",
            "planId": "main",
            "entries": [{"content": "x", "priority": "low", "status": "pending"}],
            "_meta": {"a": 1},
        }
    }


def test_removing_a_plan_that_is_not_there_changes_nothing(backend):
    # Only a removal that removes something is a change: ids that leave no state must not pile
    # up in the change set of a store whose changes() is never taken (replay, stats).
    store = backend.Sessions()
    plan = {"type": "items", "planId": "p", "entries": []}
    store.apply(upd({"sessionUpdate": "plan_update", "plan": plan}))
    assert store.changes() == [(SID, "session", "sessionId"), (SID, "plan", "p")]
    for i in range(1000):
        store.apply(upd({"sessionUpdate": "plan_removed", "planId": f"gone-{i}"}))
    assert store.changes() == []
    store.apply(upd({"sessionUpdate": "plan_removed", "planId": "p"}))
    store.apply(upd({"sessionUpdate": "plan_removed", "planId": "p"}))
    assert store.changes() == [(SID, "plan", "p")]
    assert store[SID].snapshot()["plans"] == {}


def test_a_plan_updates_own_meta_and_unknown_fields_are_kept_in_update_extras(backend):
    store = backend.Sessions()
    plan = {"type": "items", "planId": "p", "entries": [], "_meta": {"plan": 1}}
    extras = {"_meta": {"update": 2}, "origin": "planner", "dropped": None}
    store.apply(upd({"sessionUpdate": "plan_update", "plan": plan, **extras}))
    snapshot = store[SID].snapshot()
    # The plan's own _meta stays with the plan; the update's goes beside the others'.
    assert snapshot["plans"] == {"p": plan}
    assert snapshot["updateExtras"] == {
        "plan_update": {"_meta": {"update": 2}, "origin": "planner"}
    }
    assert store.changes() == [
        (SID, "session", "sessionId"),
        (SID, "plan", "p"),
        (SID, "session", "updateExtras"),
    ]
    # The last of each kind: an update without any clears the entry.
    store.apply(upd({"sessionUpdate": "plan_update", "plan": {**plan, "planId": "q"}}))
    assert "plan_update" not in store[SID].snapshot()["updateExtras"]
    assert store.changes() == [(SID, "plan", "q"), (SID, "session", "updateExtras")]
    store.apply(upd({"sessionUpdate": "plan_removed", "planId": "p", "_meta": {"why": "done"}}))
    snapshot = store[SID].snapshot()
    assert list(snapshot["plans"]) == ["q"]
    assert snapshot["updateExtras"] == {"plan_removed": {"_meta": {"why": "done"}}}
    # A malformed update is an error and keeps nothing of its own.
    store.apply(upd({"sessionUpdate": "plan_update", "plan": {"planId": 3}, "_meta": {"x": 1}}))
    assert "plan_update" not in store[SID].snapshot()["updateExtras"]


# -- compactions -----------------------------------------------------------------------------------


def test_compaction(backend):
    store = store_of(
        backend,
        [
            upd(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": text("before"),
                }
            ),
            upd(
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "c1",
                    "status": "in_progress",
                }
            ),
            upd(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m2",
                    "content": text("after"),
                }
            ),
            upd(
                {
                    "sessionUpdate": "compaction_summary_chunk",
                    "compactionId": "c1",
                    "content": text("## Retained\n\n"),
                }
            ),
            upd(
                {
                    "sessionUpdate": "compaction_summary_chunk",
                    "compactionId": "c1",
                    "content": text("more"),
                }
            ),
            upd(
                {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"}
            ),
        ],
        version=2,
    )
    s = store[SID].snapshot()
    assert s["compactions"]["c1"] == {
        "compactionId": "c1",
        "status": "completed",
        "summary": [text("## Retained\n\n"), text("more")],
    }
    assert [t["type"] for t in s["timeline"]] == ["message", "compaction", "message"]
    store.apply(
        upd(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c1",
                "status": "completed",
                "summary": [text("final")],
            }
        )
    )
    assert store[SID].snapshot()["compactions"]["c1"]["summary"] == [text("final")]
    store.apply(
        upd(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c1",
                "status": "failed",
                "summary": None,
                "error": "boom",
            }
        )
    )
    assert store[SID].snapshot()["compactions"]["c1"] == {
        "compactionId": "c1",
        "status": "failed",
        "error": "boom",
    }
    store.apply(
        upd(
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "c1",
                "status": "_x",
                "error": None,
            }
        )
    )
    assert store[SID].snapshot()["compactions"]["c1"] == {"compactionId": "c1", "status": "_x"}
