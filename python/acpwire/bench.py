"""The benchmark harness now lives in :mod:`acpwire.cli.bench.harness`; this import path stays."""

from .cli.bench.harness import (
    Result,
    format_table,
    message_texts,
    native_build,
    plot,
    run_bench,
    snapshot_digest,
    stream_pieces,
)

__all__ = [
    "Result",
    "format_table",
    "message_texts",
    "native_build",
    "plot",
    "run_bench",
    "snapshot_digest",
    "stream_pieces",
]
