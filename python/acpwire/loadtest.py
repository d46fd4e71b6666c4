"""The load test now lives in :mod:`acpwire.cli.loadtest`; this import path stays."""

from .cli.loadtest import LoadReport, rss_bytes, run_agents

__all__ = ["LoadReport", "rss_bytes", "run_agents"]
