"""Native against pure on framing and JSON: the same bytes, values and errors, placed alike."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from strategies import json_values


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_backends_write_identical_bytes(both, value):
    native, pure = both
    assert native.dumps(value) == pure.dumps(value)


def test_limit_errors_are_placed_alike(both):
    # Too deep and too many digits: both backends name the same fault at the same place (the
    # bracket one level too deep, the end of the over-long integer), whatever comes after.
    native, pure = both
    docs = [
        "[" * 202 + "]" * 202,
        '["a", ' + "[" * 201 + "]" * 201 + "]",
        '["[[[", ' + "[" * 201 + "]" * 201 + "]",
        '{"a":' * 202 + "1" + "}" * 202,
        "[" * 300,
        "\n" + "[" * 202 + "x",
        "1" * 4301,
        "[" + "1" * 4301 + "]",
        "-" + "1" * 4301,
        '{"é": [' + "1" * 4301 + "]}",
    ]
    for doc in docs:
        for data in (doc, doc.encode()):
            found = []
            for backend in (native, pure):
                with pytest.raises(backend.DecodeError) as info:
                    backend.loads(data)
                e = info.value
                found.append((str(e), e.line, e.column, e.offset))
            assert found[0] == found[1], doc[:20]
            assert found[0][0].startswith(("recursion limit exceeded", "number out of range"))


def test_invalid_utf8_is_placed_alike(both):
    for doc in (b'"\xff"', b'["ok", "a\xe2\x82"]', b"[\xc3]", b'"\\n\xff"'):
        found = []
        for backend in both:
            with pytest.raises(backend.DecodeError) as info:
                backend.loads(doc)
            found.append((info.value.msg, info.value.line, info.value.column, info.value.offset))
        assert found[0] == found[1], doc


def test_dumps_past_the_int_digit_limit_says_so_alike(both):
    messages = set()
    for backend in both:
        with pytest.raises(backend.EncodeError) as caught:
            backend.dumps(10**4300)
        messages.add(str(caught.value))
    (message,) = messages
    assert message.startswith("Exceeds the limit (4300 digits)")
