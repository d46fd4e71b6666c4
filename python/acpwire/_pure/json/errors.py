"""Twin of jiter's errors, raised by src/python/mod.rs: where and why a document is invalid.

The native backend parses with jiter; this module finds the same first fault in the same bytes
and names it the same way, so that both backends report bad JSON identically. It runs only on
documents that may hold a fault (``loads.decode_if_valid`` could not accept them), so it is
written for exactness first: a reading of jiter's grammar and limits (nesting deeper than 200
levels, integer parts longer than 4300 digits, strict escapes, UTF-8 checked once a string
ends), token by token, with string bodies, whitespace and digit runs scanned in C. It keeps its
own stack: no input can make it recurse.
"""

from __future__ import annotations

import re

from ..._contract import MAX_DECODE_DEPTH, MAX_INT_DIGITS

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "first_error", "jiter_position", "position"]

_WHITESPACE = frozenset(b" \t\r\n")
# Searches run in C: a refused frame may be tens of megabytes, and most of a document's bytes
# are whitespace, string bodies and digits.
_NOT_WHITESPACE = re.compile(rb"[^ \t\r\n]")
_STRING_STOP = re.compile(rb'[\x00-\x1f"\\]')
_DIGIT_RUN = re.compile(rb"[0-9]*")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = {
    ord('"'): b'"',
    ord("\\"): b"\\",
    ord("/"): b"/",
    ord("b"): b"\b",
    ord("f"): b"\f",
    ord("n"): b"\n",
    ord("r"): b"\r",
    ord("t"): b"\t",
}
_IDENTS = {ord("t"): b"rue", ord("f"): b"alse", ord("n"): b"ull"}
# A value nested deeper than MAX_DEPTH is refused (the outermost value is at depth 0); an
# integer part longer than MAX_DIGITS too (CPython's own limit on int conversion).
MAX_DEPTH = MAX_DECODE_DEPTH
MAX_DIGITS = MAX_INT_DIGITS
# A container's closing byte for its opening one, and jiter's words for faults inside it
# (keyed by either byte).
_CLOSE = {0x5B: 0x5D, 0x7B: 0x7D}
_EOF_IN = {b: f"EOF while parsing {what}" for b, what in ((0x5B, "a list"), (0x7B, "an object"))}
_EOF_IN.update({_CLOSE[b]: message for b, message in _EOF_IN.items()})
_COMMA_OR_END = {0x5D: "expected `,` or `]`", 0x7D: "expected `,` or `}`"}


class _Fault(Exception):
    def __init__(self, message: str, index: int) -> None:
        super().__init__(message, index)
        self.message = message
        self.index = index


def first_error(data: bytes) -> tuple[str, int] | None:
    """The first fault jiter finds in ``data``, as (message, byte index); None if it is valid."""
    try:
        _Reader(data).document()
    except _Fault as fault:
        return fault.message, fault.index
    return None


def position(data: bytes, index: int, char_offsets: bool) -> tuple[int, int, int]:
    """(line, column, offset) of byte ``index`` as the native ``loads`` reports them: line and
    column from 1, the column in characters, the offset in characters or in bytes."""
    before = data[:index]
    line_start = before.rfind(b"\n") + 1
    column = 1 + len(before[line_start:].decode("utf-8", "replace"))
    offset = len(before.decode("utf-8", "replace")) if char_offsets else len(before)
    return before.count(b"\n") + 1, column, offset


def jiter_position(data: bytes, index: int) -> str:
    """``line L column C`` as jiter words a position: the column counts bytes, and at the end of
    the data it is the length of the last line."""
    line = data.count(b"\n", 0, min(index + 1, len(data))) + 1
    line_start = data.rfind(b"\n", 0, min(index + 1, len(data))) + 1
    column = index + 1 - line_start if index < len(data) else len(data) - line_start
    return f"line {line} column {column}"


class _Reader:
    __slots__ = ("data", "n")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.n = len(data)

    def skip_whitespace(self, i: int) -> int:
        if i < self.n and self.data[i] in _WHITESPACE:
            found = _NOT_WHITESPACE.search(self.data, i)
            return self.n if found is None else found.start()
        return i

    def document(self) -> None:
        data, n = self.data, self.n
        skip = self.skip_whitespace
        i = skip(0)
        if i >= n:
            raise _Fault("EOF while parsing a value", i)
        # The closing byte of each open container; a value is wanted at `i` when `want_value`,
        # else the end of a container's member or of the document.
        stack: list[int] = []
        want_value = True
        while True:
            if want_value:
                if len(stack) > MAX_DEPTH:
                    raise _Fault("recursion limit exceeded", i)
                c = data[i]
                if c in _CLOSE:  # [ or {
                    i = skip(i + 1)
                    if i >= n:
                        raise _Fault(_EOF_IN[c], i)
                    close = _CLOSE[c]
                    if data[i] == close:
                        i += 1
                    else:
                        if close == 0x7D:
                            if data[i] != 0x22:
                                raise _Fault("key must be a string", i)
                            i = self.member_value(i)
                        stack.append(close)
                        continue
                elif c == 0x22:
                    i = self.string(i)
                elif c in _IDENTS:
                    i = self.ident(i, _IDENTS[c])
                else:
                    i = self.number(i)
                want_value = False
            if not stack:
                i = skip(i)
                if i < n:
                    raise _Fault("trailing characters", i)
                return
            # After a member of the innermost container: its end, or a comma and the next.
            close = stack[-1]
            if i < n and data[i] in _WHITESPACE:
                i = skip(i)
            if i >= n:
                raise _Fault(_EOF_IN[close], i)
            c = data[i]
            if c == close:
                i += 1
                stack.pop()
                continue
            if c != 0x2C:
                raise _Fault(_COMMA_OR_END[close], i)
            i = skip(i + 1)
            if i >= n:
                raise _Fault("EOF while parsing a value", i)
            if data[i] == close:
                raise _Fault("trailing comma", i)
            if close == 0x7D:
                if data[i] != 0x22:
                    raise _Fault("key must be a string", i)
                i = self.member_value(i)
            want_value = True

    def member_value(self, i: int) -> int:
        """A key at ``i`` and its colon: where the member's value starts."""
        i = self.skip_whitespace(self.string(i))
        if i >= self.n:
            raise _Fault("EOF while parsing an object", i)
        if self.data[i] != 0x3A:
            raise _Fault("expected `:`", i)
        i = self.skip_whitespace(i + 1)
        if i >= self.n:
            raise _Fault("EOF while parsing a value", i)
        return i

    def ident(self, i: int, rest: bytes) -> int:
        data, n = self.data, self.n
        if data[i + 1 : i + 1 + len(rest)] == rest:
            return i + 1 + len(rest)
        i += 1
        for expected in rest:
            if i >= n:
                break
            if data[i] != expected:
                raise _Fault("expected ident", i)
            i += 1
        raise _Fault("EOF while parsing a value", i)

    def digits_end(self, i: int) -> int:
        if i >= self.n or self.data[i] not in _DIGITS:
            return i
        return _DIGIT_RUN.match(self.data, i).end()  # type: ignore[union-attr]  # `*` always matches

    def number(self, start: int) -> int:
        data, n = self.data, self.n
        i = start
        c = data[i]
        if c == 0x4E:  # NaN: not JSON
            raise _Fault("expected value", i)
        negative = c == 0x2D
        if negative:
            i += 1
            if i >= n:
                raise _Fault("EOF while parsing a value", i)
            c = data[i]
        if c == 0x49:  # Infinity: not JSON
            raise _Fault("invalid number" if negative else "expected value", i)
        if c == 0x30:
            i += 1
            if i < n and data[i] in _DIGITS:
                raise _Fault("invalid number", i)
        elif 0x31 <= c <= 0x39:
            digit_start = i
            i = self.digits_end(i + 1)
            if i - digit_start > MAX_DIGITS:
                raise _Fault("number out of range", digit_start + MAX_DIGITS + 1)
        elif negative:
            raise _Fault("invalid number", i)
        else:
            raise _Fault("expected value", start)
        if i < n and data[i] == 0x2E:  # .
            i += 1
            self.require_digit(i)
            i = self.digits_end(i + 1)
        if i < n and data[i] in (0x45, 0x65):  # e, E
            i += 1
            if i < n and data[i] in (0x2B, 0x2D):
                i += 1
            self.require_digit(i)
            i = self.digits_end(i + 1)
        return i

    def require_digit(self, i: int) -> None:
        if i >= self.n:
            raise _Fault("EOF while parsing a value", i)
        if self.data[i] not in _DIGITS:
            raise _Fault("invalid number", i)

    def string(self, quote: int) -> int:
        """The string whose opening quote is at ``quote``: where it ends."""
        data, n = self.data, self.n
        start = quote + 1
        # The string's bytes with escapes decoded, as jiter checks them (None: no escape yet).
        tape: bytearray | None = None
        i = chunk_start = start
        while True:
            stop = _STRING_STOP.search(data, i)
            if stop is None:
                raise _Fault("EOF while parsing a string", n)
            i = stop.start()
            c = data[i]
            if c < 0x20:
                raise _Fault("control character (\\u0000-\\u001F) found while parsing a string", i)
            if c == 0x22:
                text = data[start:i] if tape is None else bytes(tape + data[chunk_start:i])
                try:
                    text.decode("utf-8")
                except UnicodeDecodeError as exc:
                    # jiter counts from the string's start in the decoded bytes, escapes and all.
                    raise _Fault("invalid unicode code point", start + exc.start) from None
                return i + 1
            if tape is None:
                tape = bytearray()
            tape += data[chunk_start:i]
            i += 1
            if i >= n:
                raise _Fault("EOF while parsing a string", i)
            c = data[i]
            if c in _SIMPLE_ESCAPES:
                tape += _SIMPLE_ESCAPES[c]
            elif c == 0x75:  # u
                char, i = self.unicode_escape(i)
                tape += char.encode("utf-8")
            else:
                raise _Fault("invalid escape", i)
            i += 1
            chunk_start = i

    def hex4(self, u: int) -> tuple[int, int]:
        """The four hex digits after the ``u`` at ``u``: (value, index of the last digit)."""
        data = self.data
        if u + 5 > self.n:
            raise _Fault("EOF while parsing a string", self.n)
        for k in range(u + 1, u + 5):
            if data[k] not in _HEX:
                raise _Fault("invalid escape", k)
        return int(data[u + 1 : u + 5], 16), u + 4

    def unicode_escape(self, u: int) -> tuple[str, int]:
        data, n = self.data, self.n
        code, i = self.hex4(u)
        if 0xDC00 <= code <= 0xDFFF:
            raise _Fault("lone leading surrogate in hex escape", i)
        if not 0xD800 <= code <= 0xDBFF:
            return chr(code), i
        if i + 3 <= n:
            if data[i + 1 : i + 3] == b"\\u":
                low, i = self.hex4(i + 2)
                if not 0xDC00 <= low <= 0xDFFF:
                    raise _Fault("lone leading surrogate in hex escape", i)
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), i
            if data[i + 1] == 0x5C:
                raise _Fault("unexpected end of hex escape", i + 2)
            raise _Fault("unexpected end of hex escape", i + 1)
        if i + 1 >= n or data[i + 1] == 0x5C:
            raise _Fault("EOF while parsing a string", n)
        raise _Fault("unexpected end of hex escape", i + 1)
