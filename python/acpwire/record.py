"""``acpwire record`` now lives in :mod:`acpwire.cli.record`; this path stays, also for
``python -m acpwire.record``."""

import sys

from .cli.record import DEFAULT_MAX_FRAME_BYTES, Recorder, build_parser, main

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "Recorder", "build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
