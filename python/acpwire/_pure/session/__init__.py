"""Twin of src/session/mod.rs: session reduction for the pure backend, its public API.

A stream of ACP JSON-RPC messages (both directions) goes in; per ``params.sessionId`` the
reducer keeps what a client renders. Every rule, error reason and change record matches the
Rust reducer, so both backends give identical snapshots, errors and changes (the rules:
docs/behaviour/sessions.md). See ``Session.snapshot`` for the shape.
"""

from __future__ import annotations

from ..._contract import DEFAULT_MAX_TERMINAL_BYTES as DEFAULT_MAX_TERMINAL_BYTES
from ..._contract import MAX_ERRORS as MAX_ERRORS
from ..._contract import MAX_HOLES as MAX_HOLES
from ..._contract import MAX_NOTICES as MAX_NOTICES
from ..._contract import MAX_PENDING as MAX_PENDING
from ..._contract import MAX_SESSION_ERRORS as MAX_SESSION_ERRORS
from .binding import reduce_ndjson
from .json import MAX_APPLY_DEPTH as MAX_APPLY_DEPTH
from .model import Session
from .reducer import Sessions

# The method tables by their former names, which tests read.
from .tables import AGENT_METHODS as _AGENT_METHODS  # noqa: F401
from .tables import CLIENT_METHODS as _CLIENT_METHODS  # noqa: F401

__all__ = ["Session", "Sessions", "reduce_ndjson"]
