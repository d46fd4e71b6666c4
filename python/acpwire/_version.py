"""The package's version: the same string as ``version`` in ``Cargo.toml``, which maturin puts in
the wheel's metadata (``tests/package/test_version.py`` checks the two, and the changelog, agree).

A literal rather than ``importlib.metadata``: reading the installed metadata costs more than the
rest of ``import acpwire``, and a source tree has none.
"""

__version__ = "0.1.0"
