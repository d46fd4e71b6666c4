"""What replay renders, from handcrafted snapshots: turns with their prompts and outcomes,
messages around tool calls as they came, client terminals, blocks under ids that cannot be
shown, the agent's Markdown, unified diffs, the page's palette, and the public ANSI helper."""

from __future__ import annotations

import re
from typing import Any

import pytest

from acpwire.ansi import spans_to_ansi
from acpwire.cli.render import render_page, render_session
from acpwire.cli.render.page import (
    BASIC,
    MIN_CONTRAST,
    PAGE_COLORS,
    TERMINAL_BG,
    TERMINAL_FG,
    contrast,
    palette,
    readable,
    span_colors,
)

FORMATS = ("text", "markdown", "ansi", "html")
SGR = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\")


class FakeSession:
    """What the renderers read of a ``Session``: its snapshot, and no live terminals."""

    def __init__(self, snapshot: dict[str, Any]) -> None:
        self._snapshot = snapshot
        self.id = snapshot["sessionId"]

    def snapshot(self) -> dict[str, Any]:
        return self._snapshot

    def terminal(self, terminal_id: str) -> None:
        return None


def snapshot(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "sessionId": "s1",
        "protocolVersion": 1,
        "state": "idle",
        "stopReason": None,
        "messages": [],
        "toolCalls": {},
        "terminals": {},
        "plans": {},
        "timeline": [],
    }
    return {**base, **fields}


def text_message(mid: str, role: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": role, "content": [{"type": "text", "text": text}]}


def render(snap: dict[str, Any], fmt: str) -> str:
    out = render_session(FakeSession(snap), fmt, color=True, width=200)
    return SGR.sub("", out) if fmt == "ansi" else out


def in_order(text: str, *pieces: str) -> bool:
    positions = [text.find(piece) for piece in pieces]
    return -1 not in positions and positions == sorted(positions)


def turns_snapshot() -> dict[str, Any]:
    """Four v1 turns: one done, one cancelled, one answered with an error, one running;
    messages without ids around a tool call, as an editor places them."""
    turn = {"cancelRequested": False}
    return snapshot(
        turns=[
            {
                **turn,
                "requestId": 2,
                "prompt": [{"type": "text", "text": "first prompt"}],
                "stopReason": "end_turn",
                "start": 0,
                "end": 4,
            },
            {
                **turn,
                "requestId": 3,
                "prompt": [{"type": "text", "text": "second prompt"}],
                "stopReason": "cancelled",
                "cancelRequested": True,
                "start": 5,
                "end": 6,
            },
            {
                **turn,
                "requestId": 4,
                "prompt": [{"type": "text", "text": "third prompt"}],
                "stopReason": None,
                "error": {"code": -32603, "message": "model overloaded"},
                "start": 7,
                "end": 7,
            },
            {
                **turn,
                "requestId": 5,
                "prompt": [{"type": "text", "text": "fourth prompt"}],
                "stopReason": None,
                "start": 8,
                "end": None,
            },
        ],
        messages=[
            text_message("m1", "agent", "I will make a plan."),
            text_message("m2", "agent", "All done."),
            text_message("m3", "agent", "Stopping."),
            text_message("m4", "agent", "Still working"),
        ],
        toolCalls={
            "c1": {
                "toolCallId": "c1",
                "title": "Run ls",
                "kind": "execute",
                "status": "completed",
                "content": [{"type": "terminal", "terminalId": "t1"}],
            },
        },
        terminals={
            "t1": {
                "terminalId": "t1",
                "source": "client",
                "command": "ls",
                "args": ["-la"],
                "cwd": "/work",
                "env": [],
                "outputByteLimit": 1000,
                "killed": True,
                "released": True,
                "exitStatus": {"exitCode": 1},
                "truncated": True,
                "text": "total 0\nfile.txt",
            },
        },
        timeline=[
            {"type": "turn", "id": 2},
            {"type": "message", "id": "m1", "role": "agent"},
            {"type": "toolCall", "id": "c1"},
            {"type": "terminal", "id": "t1"},
            {"type": "message", "id": "m2", "role": "agent"},
            {"type": "turn", "id": 3},
            {"type": "message", "id": "m3", "role": "agent"},
            {"type": "turn", "id": 4},
            {"type": "turn", "id": 5},
            {"type": "message", "id": "m4", "role": "agent"},
        ],
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_turns_in_order_with_prompts_and_outcomes(fmt):
    out = render(turns_snapshot(), fmt)
    assert in_order(
        out,
        "first prompt",
        "I will make a plan.",
        "Run ls",
        "total 0",
        "All done.",
        "end_turn",
        "second prompt",
        "Stopping.",
        "cancelled",
        "third prompt",
        "failed: -32603 model overloaded",
        "fourth prompt",
        "Still working",
        "running",
    ), out
    for number in range(1, 5):
        assert f"Turn {number}" in out
    # The client terminal, shown once, inside its tool call, with what became of it.
    assert out.count("total 0") == 1
    header = "$ ls -la  (in /work, exit 1, killed, released, truncated, client terminal)"
    assert header in out.replace("\\", "")


def test_a_prompt_that_is_also_a_user_message_is_shown_once():
    snap = snapshot(
        turns=[{"requestId": 1, "prompt": [{"type": "text", "text": "hello"}], "messageId": "u1",
                "stopReason": "end_turn", "cancelRequested": False, "start": 0, "end": 1}],
        messages=[text_message("u1", "user", "hello")],
        timeline=[{"type": "turn", "id": 1}, {"type": "message", "id": "u1", "role": "user"}],
    )  # fmt: skip
    for fmt in FORMATS:
        assert render(snap, fmt).count("hello") == 1, fmt


def test_todays_snapshots_without_turns_still_render():
    snap = snapshot(
        stopReason="end_turn",
        messages=[text_message("a", "agent", "answer")],
        timeline=[{"type": "message", "id": "a", "role": "agent"}],
    )
    for fmt in FORMATS:
        out = render(snap, fmt)
        assert "answer" in out and "end_turn" in out, fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_nothing_is_hidden_behind_an_id_that_cannot_be_shown(fmt):
    snap = snapshot(
        toolCalls={"c\x1b1": {"toolCallId": "c\x1b1", "status": "pending", "content": []}},
        plans={"p\x1b1": {"planId": "p\x1b1", "type": "items",
                          "entries": [{"content": "step", "status": "pending"}]}},
        terminals={"t\x1b1": {"terminalId": "t\x1b1", "text": "shell output"}},
        messages=[text_message("m\x1b", "agent", "said"),
                  text_message("lost", "agent", "no timeline entry")],
        timeline=[
            {"type": "toolCall", "id": "c\x1b1"},
            {"type": "plan", "id": "p\x1b1"},
            {"type": "terminal", "id": "t\x1b1"},
            {"type": "message", "id": "m\x1b", "role": "agent"},
            {"type": "toolCall", "id": "gone"},
            {"type": "mystery", "id": "x"},
        ],
    )  # fmt: skip
    # Updates of kinds the reducer does not know, placed and not: shown as sent.
    snap["other"] = [{"sessionUpdate": "future_kind", "x": "y\x1b"}, {"sessionUpdate": "later"}]
    snap["timeline"].append({"type": "other", "id": "0"})
    out = render(snap, fmt)
    assert "future_kind" in out and "later" in out and "yu001b" in out.replace("\\", "")
    for piece in ("c^[1", "p^[1", "step", "shell output", "said", "no timeline entry"):
        assert piece in out.replace("\\", ""), piece
    assert "gone" in out and "mystery" in out
    assert "\x1b" not in out


def test_resources_of_any_shape_render():
    content = [
        {"type": "resource", "resource": "a string"},
        {"type": "resource", "resource": [1, 2]},
        {"type": "resource", "resource": {"uri": "file:///x", "text": "inline text"}},
        {"type": "image", "mimeType": "image/png", "data": "AAAA"},
        "not a block",
    ]
    snap = snapshot(
        messages=[{"id": "m", "role": "agent", "content": content}],
        toolCalls={"c": {"toolCallId": "c", "content": [{"type": "content", "content": b}
                                                         for b in content] + [7]}},
        timeline=[{"type": "message", "id": "m", "role": "agent"}, {"type": "toolCall", "id": "c"}],
    )  # fmt: skip
    for fmt in FORMATS:
        out = render(snap, fmt)
        assert "a string" in out and "inline text" in out and "image/png" in out, fmt


def agent_markdown() -> dict[str, Any]:
    text = (
        "# Title\n\nSome **bold** and `code`. <script>alert(1)</script> <b>raw</b>\n\n"
        "[bad](javascript:alert(1)) [good](https://example.org/) [mail](mailto:a@b.c) "
        "[file](file:///tmp/x) ![pixel](https://tracker.example/p.png)\n\n"
        "```python\nprint('<hi>')\n```\n"
    )
    return snapshot(
        messages=[text_message("m", "agent", text)],
        timeline=[{"type": "message", "id": "m", "role": "agent"}],
    )


def test_agent_markdown_in_html_escapes_raw_html_and_links_only_safe_addresses():
    out = render(agent_markdown(), "html")
    assert "<h1>Title</h1>" in out and "<strong>bold</strong>" in out
    assert "<code>code</code>" in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "<script" not in out
    assert "&lt;b&gt;raw&lt;/b&gt;" in out
    assert 'href="javascript' not in out and "[bad](javascript:alert(1))" in out
    for href in ("https://example.org/", "mailto:a@b.c", "file:///tmp/x"):
        assert f'href="{href}"' in out
    # No image is fetched: it is a link.
    assert "<img" not in out and 'href="https://tracker.example/p.png"' in out
    assert "print(&#x27;&lt;hi&gt;&#x27;)" in out or "print('&lt;hi&gt;')" in out


def test_agent_markdown_in_markdown_keeps_code_and_quotes_the_rest():
    out = render(agent_markdown(), "markdown")
    assert "&lt;script>alert(1)&lt;/script>" in out and "<script>" not in out
    assert "]\\(javascript:alert(1))" in out and "[good](https://example.org/)" in out
    assert "\\![pixel]" in out
    assert "```python\nprint('<hi>')\n```" in out  # code keeps its text


def test_agent_markdown_on_a_terminal_is_drawn():
    raw = render_session(FakeSession(agent_markdown()), "ansi", color=True, width=100)
    plain = SGR.sub("", raw)
    assert "# Title" not in plain and "Title" in plain
    assert "**bold**" not in plain and "\x1b[1mbold\x1b[0m" in raw
    assert "<script>alert(1)</script>" in plain  # raw HTML is text, not dropped
    # Only safe addresses become terminal links.
    links = re.findall(r"\x1b\]8;[^;]*;([^\x1b]*)\x1b\\", raw)
    assert "https://example.org/" in links and not any("javascript" in x for x in links)
    no_color = render_session(FakeSession(agent_markdown()), "ansi", color=False, width=100)
    assert not re.search(r"\x1b\[[0-9;]*3[0-9]m|\x1b\[[0-9;]*38;", no_color)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_v1_diff_is_a_unified_diff_with_context(fmt):
    old = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
    new = "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n"
    snap = snapshot(
        toolCalls={"c": {"toolCallId": "c", "title": "Edit", "kind": "edit", "content": [
            {"type": "diff", "path": "/src/a.txt", "oldText": old, "newText": new}]}},
        timeline=[{"type": "toolCall", "id": "c"}],
    )  # fmt: skip
    out = render(snap, fmt)
    if fmt == "html":
        out = re.sub(r"<[^>]+>", "", out)
    expected = ("--- /src/a.txt", "+++ /src/a.txt", "@@ -1,7 +1,7 @@", " three", "-four", "+FOUR")
    for line in expected:
        assert line in out, line
    assert in_order(out, " three", "-four", "+FOUR", " five")


def test_a_new_file_diffs_against_nothing():
    snap = snapshot(
        toolCalls={"c": {"toolCallId": "c", "content": [
            {"type": "diff", "path": "/n.txt", "oldText": None, "newText": "hello\n"}]}},
        timeline=[{"type": "toolCall", "id": "c"}],
    )  # fmt: skip
    out = render(snap, "text")
    assert "--- /dev/null" in out and "+++ /n.txt" in out and "+hello" in out


def test_the_page_collapses_tool_calls_and_thoughts_and_runs_no_script():
    snap = turns_snapshot()
    snap["messages"].append(text_message("th", "thought", "thinking"))
    snap["timeline"].insert(1, {"type": "message", "id": "th", "role": "thought"})
    page = render_page([FakeSession(snap)])
    assert "<script" not in page.lower()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert '<details class="message thought"><summary>' in page
    assert '<details class="tool completed"><summary>' in page
    assert "monospace" in page


def test_every_terminal_colour_keeps_its_contrast_on_the_page():
    assert contrast(TERMINAL_FG, TERMINAL_BG) >= MIN_CONTRAST
    backgrounds = [TERMINAL_BG, *BASIC, *(palette(i) for i in range(16, 256, 17))]
    for bg in backgrounds:
        for index in range(256):
            fg = readable(palette(index), bg)
            assert contrast(fg, bg) >= MIN_CONTRAST, (index, bg, fg)
    # The xterm blue that was barely readable on the block is lightened, not kept.
    assert contrast(palette(4), TERMINAL_BG) < MIN_CONTRAST
    assert readable(palette(4), TERMINAL_BG) != palette(4)
    # Truecolour and inverse spans too.
    for fg, bg, inverse in (("#101010", "#151515", False), (4, None, True), (None, 0, False)):
        span = type("S", (), {"fg": fg, "bg": bg, "inverse": inverse})()
        shown_fg, shown_bg = span_colors(span)
        assert contrast(shown_fg or TERMINAL_FG, shown_bg or TERMINAL_BG) >= MIN_CONTRAST
    for name, (fg, bg) in PAGE_COLORS.items():
        assert contrast(fg, bg) >= MIN_CONTRAST, name


def test_spans_to_ansi_writes_a_terminals_styles_back(backend):
    term = backend.Terminal()
    term.feed(b"\x1b[1;31mred\x1b[0m plain \x1b[38;2;1;2;3mrgb\x1b[0m\r\n\x1b[4munder\x1b[0m")
    rows = term.spans()
    out = spans_to_ansi(rows)
    assert out.split("\n")[0] == "\x1b[1;38;5;1mred\x1b[0m plain \x1b[38;2;1;2;3mrgb\x1b[0m"
    assert out.split("\n")[1] == "\x1b[4munder\x1b[0m"
    assert spans_to_ansi(rows[0]) == out.split("\n")[0]
    assert spans_to_ansi([]) == ""


def test_a_turn_whose_request_id_is_a_list_renders_with_the_times_of_the_others():
    def turn(request_id: Any, text: str, index: int) -> dict[str, Any]:
        prompt = [{"type": "text", "text": text}]
        return {"requestId": request_id, "prompt": prompt, "stopReason": "end_turn",
                "start": index, "end": index}  # fmt: skip

    snap = snapshot(
        turns=[turn([1], "odd id", 0), turn(2, "plain id", 1)],
        timeline=[{"type": "turn", "id": [1]}, {"type": "turn", "id": 2}],
    )
    page = render_session(FakeSession(snap), "html", times={("turn", 2): 1.25})
    assert in_order(page, "odd id", '<time class="t">1.250 s</time>', "plain id")
    for fmt in FORMATS:
        assert in_order(render(snap, fmt), "odd id", "plain id"), fmt
