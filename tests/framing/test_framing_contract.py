"""The framing's reasons, caps and limits in acpwire._contract are what both backends use."""

from __future__ import annotations

import inspect

import pytest

from acpwire import _contract

REASONS = [
    (b'{"a":\xff}\n', _contract.INVALID_UTF8),
    (b'{"a":}\n', _contract.INVALID_JSON),
    (b'{"a":1} x\n', _contract.TRAILING_DATA),
    (b"[]\n", _contract.EMPTY_BATCH),
    (b'"' + b"z" * 200 + b'"\n', _contract.TOO_LONG),
]


@pytest.mark.parametrize(("frame", "reason"), REASONS)
def test_each_reason_is_the_contracts(backend, frame, reason):
    decoder = backend.FrameDecoder(max_frame_bytes=100)
    assert decoder.feed(frame) == []
    assert [e.reason for e in decoder.take_errors()] == [reason]


def test_the_reasons_are_all_there_are():
    assert {reason for _, reason in REASONS} == {
        _contract.INVALID_UTF8,
        _contract.INVALID_JSON,
        _contract.TRAILING_DATA,
        _contract.EMPTY_BATCH,
        _contract.TOO_LONG,
    }


def test_the_default_cap_is_the_contracts(backend):
    assert backend.FrameDecoder().max_frame_bytes == _contract.DEFAULT_MAX_FRAME_BYTES
    # The signature shown says the same number.
    default = inspect.signature(backend.FrameDecoder).parameters["max_frame_bytes"].default
    assert default == _contract.DEFAULT_MAX_FRAME_BYTES


def test_an_excerpt_is_the_contracts_length(backend):
    decoder = backend.FrameDecoder()
    decoder.feed(b"x" * (3 * _contract.EXCERPT_BYTES) + b"\n")
    (error,) = decoder.take_errors()
    assert error.excerpt == "x" * _contract.EXCERPT_BYTES


def test_errors_kept_are_the_contracts_number(backend):
    decoder = backend.FrameDecoder()
    decoder.feed(b"x\n" * (_contract.MAX_KEPT_ERRORS + 3))
    assert len(decoder.errors) == _contract.MAX_KEPT_ERRORS
    assert decoder.errors_dropped == 3
