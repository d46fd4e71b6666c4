"""The terminal corpus now lives in :mod:`acpwire.cli.bench.workloads.terminal`; this path stays."""

from ..cli.bench.workloads.terminal import terminal_corpus

__all__ = ["terminal_corpus"]
