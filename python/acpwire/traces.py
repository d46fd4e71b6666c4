"""Trace reading now lives in :mod:`acpwire.cli.traces`; this import path stays."""

import sys

from .cli import traces as _traces

# This name is that module itself, not a copy of its names: setting one of its attributes here
# (its read size, say) sets the one its functions use.
sys.modules[__name__] = _traces
