"""``python -m acpwire`` and the ``acpwire`` script: the command line is :mod:`acpwire.cli.main`."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
