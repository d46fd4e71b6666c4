"""The JSON limits in acpwire._contract are what both backends keep."""

from __future__ import annotations

import pytest

from acpwire import _contract


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_loads_nests_to_the_contracts_depth(backend):
    # The outermost container is at depth 0: MAX_DECODE_DEPTH + 1 containers in all.
    assert backend.loads(nested(_contract.MAX_DECODE_DEPTH + 1))
    with pytest.raises(backend.DecodeError):
        backend.loads(nested(_contract.MAX_DECODE_DEPTH + 2))


def test_loads_reads_integer_parts_to_the_contracts_digits(backend):
    digits = "7" * _contract.MAX_INT_DIGITS
    assert backend.loads(digits) == int(digits)
    with pytest.raises(backend.DecodeError, match="number out of range"):
        backend.loads(digits + "7")


def test_dumps_nests_to_the_contracts_depth(backend):
    value: list = []
    for _ in range(_contract.MAX_ENCODE_DEPTH - 1):
        value = [value]
    assert backend.dumps(value).startswith(b"[[")
    with pytest.raises(backend.EncodeError, match="Recursion limit reached"):
        backend.dumps([value])
