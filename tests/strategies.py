"""Hypothesis strategies for JSON-RPC-shaped values."""

from __future__ import annotations

from hypothesis import strategies as st

# Finite floats only: JSON has no NaN or infinity.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)

json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=25,
)

ids = st.integers(min_value=0, max_value=2**31) | st.text(min_size=1, max_size=12)

session_updates = st.fixed_dictionaries(
    {
        "sessionUpdate": st.sampled_from(
            ["agent_message_chunk", "tool_call_update", "terminal_output_chunk", "plan_update"]
        ),
    },
    optional={"content": json_values, "toolCallId": st.text(max_size=8), "_meta": json_values},
)

requests = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": ids,
        "method": st.sampled_from(["initialize", "session/new", "session/prompt", "fs/read"]),
    },
    optional={"params": st.dictionaries(st.text(max_size=10), json_values, max_size=4)},
)

notifications = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "method": st.just("session/update"),
        "params": st.fixed_dictionaries(
            {"sessionId": st.text(min_size=1, max_size=12), "update": session_updates}
        ),
    }
)

responses = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": ids},
    optional={
        "result": json_values,
        "error": st.fixed_dictionaries(
            {"code": st.integers(-32768, 0), "message": st.text(max_size=20)}
        ),
    },
)

messages = requests | notifications | responses
