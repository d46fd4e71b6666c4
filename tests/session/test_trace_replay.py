"""Replay of recorded traces into a store: directions, raw and bad lines, over-long lines."""

from __future__ import annotations

import json
import re

import pytest

from session_builders import (
    SID,
    init,
    prompt_request,
    rpc_error,
    rpc_request,
    rpc_result,
    text,
    upd,
)


def test_replay_of_a_recorded_trace_passes_the_direction(backend, tmp_path, monkeypatch):
    import acpwire

    monkeypatch.setattr(acpwire, "_backend", backend)
    messages = [
        ("client", init(1)[0]),
        ("agent", init(1)[1]),
        ("client", prompt_request(2)),
        ("agent", rpc_request(2, "fs/read_text_file", path="/a")),
        ("client", rpc_error(2)),
        ("agent", rpc_result(2, {"stopReason": "end_turn"})),
    ]
    path = tmp_path / "trace.ndjson"
    path.write_text("".join(json.dumps({"t": 0, "dir": d, "msg": m}) + "\n" for d, m in messages))
    s = acpwire.replay(path)[SID].snapshot()
    assert (
        s["prompts"][0]["response"] == {"stopReason": "end_turn"} and "error" not in s["prompts"][0]
    )
    assert s["state"] == "idle"


def test_replay_records_raw_and_bad_lines_as_a_plain_trace_would(backend, tmp_path, monkeypatch):
    import acpwire

    monkeypatch.setattr(acpwire, "_backend", backend)
    good = upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("a")})
    lines = [
        json.dumps({"t": 0.0, "dir": "agent", "msg": good}),
        json.dumps({"t": 0.1, "dir": "agent", "raw": "{not json"}),
        "{truncated",
        "",
        json.dumps(
            {"t": 0.2, "dir": "agent", "raw": "x" * 64, "error": "frame exceeds max_frame_bytes"}
        ),
        json.dumps({"t": 0.3, "dir": "agent", "msg": good}),
        json.dumps({"t": 0.4, "dir": "client", "msg": []}),
    ]
    data = "\n".join(lines) + "\n"
    path = tmp_path / "trace.ndjson"
    path.write_text(data)
    store = acpwire.replay(path)
    assert store[SID].message_text("m") == "aa"
    offsets = [m.start() + 1 for m in re.finditer("\n", data)]
    assert store.errors == [
        {"line": 2, "offset": offsets[0], "sessionId": None, "reason": "invalid JSON"},
        {"line": 3, "offset": offsets[1], "sessionId": None, "reason": "invalid JSON"},
        {
            "line": 5,
            "offset": offsets[3],
            "sessionId": None,
            "reason": "frame exceeds max_frame_bytes",
        },
        {"line": 7, "offset": offsets[5], "sessionId": None, "reason": "empty batch"},
    ]
    # A plain trace of bad lines only is reduced to its error records, as feed does.
    plain = tmp_path / "plain.ndjson"
    plain.write_bytes(b"{oops\n{also bad\n")
    assert [e["reason"] for e in acpwire.replay(plain).errors] == ["invalid JSON"] * 2


@pytest.mark.parametrize("piece", [512, 1 << 20])
def test_replay_reports_an_over_long_record_line_where_it_starts(
    backend, tmp_path, monkeypatch, piece
):
    import acpwire
    from acpwire import traces

    monkeypatch.setattr(acpwire, "_backend", backend)
    # Read in small pieces too (past the first record, which tells a recorded trace), so
    # the over-long line arrives over many reads.
    monkeypatch.setattr(traces, "CHUNK", piece)
    good = upd({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": text("a")})
    record = json.dumps({"t": 0.0, "dir": "agent", "msg": good})
    huge = json.dumps({"t": 0.1, "dir": "agent", "msg": {"pad": "x" * 5000}})
    data = f"{record}\n{huge}\n{record}\n{huge}"
    path = tmp_path / "trace.ndjson"
    path.write_text(data)
    store = acpwire.replay(path, max_frame_bytes=len(record))
    # 6 bytes per byte of the cap (plus 1 KiB) is as long as a record line may be: the
    # 5 KB lines are reported where they start, the records around them applied.
    assert store[SID].message_text("m") == "aa"
    second = len(record) + 1
    fourth = second + len(huge) + 1 + len(record) + 1
    assert store.errors == [
        {"line": 2, "offset": second, "sessionId": None, "reason": "frame exceeds max_frame_bytes"},
        {"line": 4, "offset": fourth, "sessionId": None, "reason": "frame exceeds max_frame_bytes"},
    ]
