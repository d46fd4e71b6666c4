"""Misuses the types reject: each line so marked is a mypy error (tests/package/test_typing.py)."""

from __future__ import annotations

import acpwire


def misuse(store: acpwire.Sessions) -> None:
    snapshot = store["s1"].snapshot()
    snapshot["toolCall"]  # E: no such key
    status: int = snapshot["toolCalls"]["t"]["status"]  # E: a str, not an int
    store.apply({}, sender="server")  # E: sender is "client", "agent" or None
    store["s1"].message("m1")  # E: role and id are both needed
    for record in store.errors:
        record["reasons"]  # E: no such key
    print(status)
