"""Trace statistics now live in :mod:`acpwire.cli.stats`; this import path stays."""

from .cli.stats import (
    FrameErrorStats,
    SessionStats,
    TerminalStats,
    ToolCallStats,
    TraceStats,
    TurnTiming,
    trace_stats,
)

__all__ = [
    "FrameErrorStats",
    "SessionStats",
    "TerminalStats",
    "ToolCallStats",
    "TraceStats",
    "TurnTiming",
    "trace_stats",
]
