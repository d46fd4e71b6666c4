"""Trace statistics now live in :mod:`acpwire.cli.stats`; this import path stays."""

from .cli.stats import trace_stats

__all__ = ["trace_stats"]
