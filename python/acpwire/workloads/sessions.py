"""Session workloads now live in :mod:`acpwire.cli.bench.workloads.sessions`; this path stays."""

from ..cli.bench.workloads.sessions import heavy_terminal, mixed_sessions, token_stream

__all__ = ["heavy_terminal", "mixed_sessions", "token_stream"]
