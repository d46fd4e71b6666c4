"""Strict base64 of terminal chunks: the bytes of the standard library, and its errors explained.

That both backends give the same errors for any input is in
``tests/differential/test_terminal_differential.py``.
"""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=300, deadline=None)
@given(payload=st.binary(max_size=200))
def test_decodes_like_the_standard_library(backend, payload):
    encoded = base64.b64encode(payload)
    assert backend._b64decode(encoded) == payload
    assert backend._b64decode(encoded.decode()) == payload


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (b"QUJD*A==", "byte 0x2a at offset 4 is not in the RFC 4648 alphabet"),
        (b"QUJDR", "length 5 is not a multiple of 4"),
        (b"QU=D", "misplaced padding at offset 2"),
        (b"QUJ=", "non-zero padding bits at offset 2"),
        (b"QUJD\n", "byte 0x0a at offset 4"),
        ("QUJ\ud800", "byte 0xed at offset 3"),
    ],
)
def test_rejects_non_canonical_input(backend, bad, message):
    with pytest.raises(backend.TerminalDataError, match=message.replace("*", r"\*")):
        backend._b64decode(bad)
