"""The protocol's own examples and golden files, read from ``../shared`` and skipped when
absent."""

from __future__ import annotations

import json
import re

import pytest

from session_builders import (
    SID,
    snap,
    store_of,
    text,
    upd,
)


def _examples(doc: str) -> list[dict]:
    """The JSON objects of a spec page: fenced json blocks and bare multi-line objects."""
    fenced = re.findall(r"```json[^\n]*\n(.*?)```", doc, re.S)
    blocks = fenced or re.findall(r"^\{\n.*?^\}$", doc, re.S | re.M)
    return [json.loads(block) for block in blocks]


def _as_message(example: dict) -> dict | None:
    if "jsonrpc" in example:
        return example
    if "sessionUpdate" in example:
        return upd(example)
    return None


@pytest.mark.parametrize(
    "page,version",
    [
        ("v1-prompt-turn-with-draft-updates.md", 1),
        ("v2-draft-prompt-lifecycle.md", 2),
        ("v2-draft-tool-calls.md", 2),
    ],
)
def test_spec_examples_apply_cleanly(backend, shared, page, version):
    examples = _examples((shared / "acp-docs" / page).read_text())
    assert len(examples) >= 5
    store = store_of(backend, [], version=version)
    for example in examples:
        message = _as_message(example)
        if message is not None:
            store.apply(message)
    assert store.errors == []
    sessions = [store[sid].snapshot() for sid in store.ids()]
    assert all(s["other"] == [] for s in sessions), [s["other"] for s in sessions]


def test_spec_examples_v2_prompt_lifecycle(backend, shared):
    examples = _examples((shared / "acp-docs" / "v2-draft-prompt-lifecycle.md").read_text())
    store = store_of(backend, [m for m in map(_as_message, examples) if m], version=2)
    s = store[SID]
    snapshot = s.snapshot()
    assert snapshot["plans"]["plan-1"]["entries"][0] == {
        "content": "Check for syntax errors",
        "priority": "high",
        "status": "pending",
    }
    assert (
        s.message_text("msg_agent_c42b9")
        == "I'll analyze your code for potential issues. Let me examine it... Let me examine it..."
    )
    assert (
        s.message_text("msg_user_8f7a1", "user")
        == "Can you analyze this code for potential issues?"
    )
    assert s.message_text("msg_thought_a12", "thought").startswith("Need to inspect")
    assert snapshot["prompts"][0]["response"] == {"messageId": "msg_user_8f7a1"}
    assert snapshot["toolCalls"]["call_001"]["status"] == "completed"
    assert snapshot["toolCalls"]["call_001"]["content"][0]["content"]["text"].startswith(
        "Analysis complete"
    )
    assert snapshot["usage"]["used"] == 53000
    # The page's last state example is the end of the turn.
    assert (s.state, s.stop_reason) == ("idle", "end_turn")


def test_spec_examples_v2_tool_calls(backend, shared):
    examples = _examples((shared / "acp-docs" / "v2-draft-tool-calls.md").read_text())
    store = store_of(backend, [m for m in map(_as_message, examples) if m], version=2)
    s = store[SID]
    snapshot = s.snapshot()
    term = snapshot["terminals"]["term_001"]
    assert term["command"] == "cargo test" and term["exitStatus"] == {"exitCode": 0, "signal": None}
    assert term["text"].splitlines() == ["running tests", "passed"]
    assert snapshot["toolCalls"]["call_001"]["name"] == "read_file"
    # Two responses share id 5: the first answers the request, the second matches nothing.
    assert snapshot["permissions"][0]["response"] == {
        "outcome": {"outcome": "selected", "optionId": "allow-once"}
    }
    assert [c["content"]["text"] for c in snapshot["toolCalls"]["call_001"]["content"]] == [
        "Found 3 configuration files...",
        "Found 3 configuration files...",
    ]


def test_spec_examples_v1_with_drafts(backend, shared):
    examples = _examples((shared / "acp-docs" / "v1-prompt-turn-with-draft-updates.md").read_text())
    store = store_of(backend, [m for m in map(_as_message, examples) if m], version=1)
    s = store[SID].snapshot()
    assert s["plans"]["main"]["entries"][0]["content"] == "Check for syntax errors"
    assert s["notices"] == [
        {
            "severity": "warning",
            "title": "MCP server unavailable",
            "description": "Continuing without it.",
        }
    ]
    assert s["compactions"]["cmp_001"]["summary"] == [
        text("## Retained context\n\nThe user is updating the ACP schema.")
    ]
    assert (s["state"], s["stopReason"]) == ("idle", "end_turn")
    assert store["child_session"].snapshot()["messages"][0]["senderSessionId"] == "parent_session"


def test_golden_v1_updates(backend, shared):
    root = shared / "conformance" / "acp" / "python-sdk-golden-v1"
    if not root.is_dir():
        pytest.skip("golden files absent")
    for path in sorted(root.glob("session_update_*.json")):
        update = json.loads(path.read_text())
        store = store_of(backend, [upd(update)], version=1)
        assert store.errors == [], path.name
        s = store[SID].snapshot()
        kind = update["sessionUpdate"]
        body = {k: v for k, v in update.items() if k != "sessionUpdate"}
        if kind.endswith("output_chunk"):
            (m,) = s["messages"]
            role = {
                "user_message_chunk": "user",
                "agent_message_chunk": "agent",
                "agent_thought_chunk": "thought",
            }[kind]
            assert m["content"] == [update["content"]] and m["role"] == role
        elif kind in ("tool_call", "tool_call_update"):
            expected = {k: v for k, v in body.items() if v is not None and v != []}
            assert s["toolCalls"][update["toolCallId"]] == expected, path.name
        elif kind == "plan":
            assert s["plans"]["main"] == {"type": "items", "planId": "main", **body}
    for path in sorted(root.glob("tool_content_*.json")):
        item = json.loads(path.read_text())
        s = snap(
            backend,
            [
                upd(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "c",
                        "title": "t",
                        "content": [item],
                    }
                )
            ],
            version=1,
        )
        assert s["toolCalls"]["c"]["content"] == [item]
    cancel = json.loads((root / "cancel_notification.json").read_text())
    store = store_of(
        backend,
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/prompt",
                "params": {"sessionId": cancel["sessionId"], "prompt": []},
            },
            {"jsonrpc": "2.0", "method": "session/cancel", "params": cancel},
        ],
        version=1,
    )
    assert store[cancel["sessionId"]].snapshot()["prompts"][0]["cancelRequested"] is True
