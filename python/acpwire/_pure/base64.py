"""Twin of src/base64.rs: strict RFC 4648 base64 decoding, as ``feed_base64`` takes it."""

from __future__ import annotations

import binascii
import re

from .._errors import TerminalDataError
from ._args import BYTES_OR_STR, buffer_bytes

_B64_BAD = re.compile(rb"[^A-Za-z0-9+/=]")
# Deleting these leaves only bad bytes: one C pass, cheaper than the regex on valid input.
_B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
_B64_VALUES = {
    c: i for i, c in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


def _decode_base64(data: str | bytes | bytearray | memoryview) -> bytes:
    """Strict RFC 4648 base64 (standard alphabet, padding required, canonical final bits)."""
    if isinstance(data, str):
        raw = data.encode("utf-8", "surrogatepass")
    else:
        raw = buffer_bytes(data, BYTES_OR_STR)
    bad = _B64_BAD.search(raw) if raw.translate(None, _B64_ALPHABET) else None
    if bad is not None:
        i = bad.start()
        raise TerminalDataError(
            f"invalid base64: byte 0x{raw[i]:02x} at offset {i} is not in the RFC 4648 alphabet"
        )
    n = len(raw)
    if n % 4:
        raise TerminalDataError(f"invalid base64: length {n} is not a multiple of 4")
    pad_at = raw.find(b"=")
    if pad_at != -1:
        if pad_at < n - 2 or raw.count(b"=", pad_at) != n - pad_at:
            raise TerminalDataError(f"invalid base64: misplaced padding at offset {pad_at}")
        last = pad_at - 1
        # The final quantum's last data character must not carry bits past the data.
        mask = 0x3 if n - pad_at == 1 else 0xF
        if _B64_VALUES[raw[last]] & mask:
            raise TerminalDataError(f"invalid base64: non-zero padding bits at offset {last}")
    return binascii.a2b_base64(raw)
