"""Display-only terminal renderer, pure-Python twin of ``src/terminal`` (see its module docs).

Bytes from an ACP ``terminal_output_chunk`` stream go through an incremental UTF-8 decoder and a
DEC/ECMA-48 escape parser (Paul Williams' state machine, the one the ``vte`` crate implements)
into a grid of cells with interned styles. Every rule here mirrors the Rust core rule for rule,
so both backends give the same ``text``, ``lines()``, ``spans()``, ``screen()`` and ``cursor`` for
any input and any chunking.

Model (shared with Rust):

* ``cols=None``: transcript mode. Lines have no practical width limit (a row soft-wraps only
  past ``UNBOUNDED_COLS`` cells, and soft-wrapped rows are joined again in every view), LF also
  returns to column 0 (output captured without a PTY has bare LFs), and cursor movement works
  within a window of ``rows`` lines at the bottom; lines scrolled above it go to scrollback.
* ``cols=N``: a real VT grid: LF moves down only, printing past the last column wraps.
* The cursor column may equal the width: that is the "pending wrap" state after writing the
  last column (as in xterm, vt100-rust and pyte); the next printable character wraps first. As
  in xterm (``ResetWrap``), LF/VT/FF, IND, RI, NEL, CUU/CUD/CNL/CPL, VPA/VPR, CUP/HVP, CHA, EL,
  ED 0-2, ECH, ICH and DCH end it, leaving the cursor on the last column, and BS and CUB count
  back from that column; CUF and CHA end it too. HT, SGR, DECSC (which saves it) and
  scrolling (SU/SD) keep it.
* Soft-wrapped rows are joined by ``text``, ``lines()`` and ``spans()``. EL 0 and 2, ED, ECH
  and DCH end a row's soft wrap (as xterm's ``ClearRight`` and ``ScrnDeleteChar`` do), and so
  does EL 1 from the last column (it blanks the whole row). When a wide character wraps because
  only the last column was left, that column is padding and the joined text skips it.
* Alternate screen, as xterm's charproc.c: ?47h/?1047h show it as it was left (never cleared),
  ?47l shows the primary screen, ?1047l clears the alternate screen (when shown) and then
  leaves it; ?1049h saves the cursor, shows and clears the alternate screen, and ?1049l leaves
  it and restores the cursor, each step whichever screen is shown. RIS clears the alternate
  screen if shown and keeps it if not.
* Text is UTF-8. Invalid bytes become U+FFFD exactly as ``bytes.decode("utf-8", "replace")``
  does, across chunk boundaries. Raw bytes 0x80-0x9F are never C1 controls (they are invalid
  UTF-8); the decoded code points U+0080-U+009F are dropped (never printed, never executed).
* Widths are ``unicode-width`` 0.2 (non-CJK); widths above 2 count as 2; zero-width characters
  (combining marks, ZWJ, variation selectors) join the previous cell.
* Erased cells are default blanks (no background-colour erase). ``text``, ``lines()`` and
  ``screen()`` trim a line's trailing blanks whatever their style; ``spans()`` keeps trailing
  blanks that can be seen (a background colour, inverse, underline or strike-through) and then
  has a row for a trailing line of them that ``lines()`` drops.
* Bounds: OSC payloads over 64 KiB are discarded whole, DCS/SOS/PM/APC payloads are never
  stored, CSI takes at most 32 parameters and sub-parameters (more: the sequence is ignored),
  each saturating at 65535; scrollback is capped by ``scrollback`` lines and by ``max_bytes``
  (one unit per stored cell plus 128 per line); at most 65,536 distinct styles, 4,096 distinct
  OSC 8 links (URIs over 2083 bytes are ignored) and 65,536 distinct grapheme clusters of at
  most 16 code points are kept (beyond: default style, no link, extra marks dropped).

Tab stops are every 8 columns until HTS/TBC set or clear them (HT, CHT and CBT move between
them); origin mode (DECOM) addresses rows from the top margin.

Not implemented (consumed and ignored): character sets (SCS, SO/SI, DEC line drawing), insert
mode (IRM), left/right margins, double-width lines, blink/conceal/underline colour, and every
query.
"""

from __future__ import annotations

import binascii
import functools
import operator
import re
import threading
from bisect import bisect_right
from codecs import utf_8_decode
from collections import deque

from .._errors import TerminalDataError
from .._span import Span
from ._args import BYTES_OR_STR, Unpicklable, at_most, buffer_bytes, size

__all__ = ["Span", "Terminal", "TerminalDataError", "char_width", "render_text"]

UNBOUNDED_COLS = 8192
"""Row width used for ``cols=None``: longer lines soft-wrap, and every view joins them again."""
# The columns DECALN fills when cols is None: the VT100's width, not a whole row of
# UNBOUNDED_COLS (three bytes would otherwise write 8,192 cells per row).
DECALN_TRANSCRIPT_COLS = 80
MAX_COLS = MAX_ROWS = 65_535
"""Largest grid: escape sequences address at most column and row 65535."""
MAX_OSC_BYTES = 64 * 1024
MAX_PARAMS = 32
MAX_STYLES = 65536
MAX_LINKS = 4096
MAX_LINK_BYTES = 2083
MAX_CLUSTERS = 65536
MAX_CLUSTER_CHARS = 16

# Code point ranges whose width is not 1, generated from the `unicode-width` crate (0.2) that the
# Rust core uses, so both backends measure every character alike: "start[-end]" in hex, "!" marks
# width 2 (no mark: width 0). Control characters never reach the width lookup.
_WIDTH_TABLE = (
    "ad,300-36f,483-489,591-5bd,5bf,5c1-5c2,5c4-5c5,5c7-5c9,605,610-61a,61c,64b-65f,670,6d6-6dc,"
    "6df-6e4,6e7-6e8,6ea-6ed,70f,711,730-74a,7a6-7b0,7eb-7f3,7fd,816-819,81b-823,825-827,829-82d,"
    "859-85b,890-891,897-89f,8ca-902,93a,93c,941-948,94d,951-957,962-963,981,9bc,9be,9c1-9c4,9cd,"
    "9d7,9e2-9e3,9fe,a01-a02,a3c,a41-a42,a47-a48,a4b-a4d,a51,a70-a71,a75,a81-a82,abc,ac1-ac5,"
    "ac7-ac8,acd,ae2-ae3,afa-aff,b01,b3c,b3e-b3f,b41-b44,b4d,b53-b57,b62-b63,b82,bbe,bc0,bcd,bd7,"
    "c00,c04,c3c,c3e-c40,c46-c48,c4a-c4d,c55-c56,c62-c63,c81,cbc,cbf-cc0,cc2,cc6-cc8,cca-ccd,"
    "cd5-cd6,ce2-ce3,d00-d01,d3b-d3c,d3e,d41-d44,d4d-d4e,d57,d62-d63,d81,dca,dcf,dd2-dd4,dd6,ddf,"
    "e31,e34-e3a,e47-e4e,eb1,eb4-ebc,ec8-ece,f18-f19,f35,f37,f39,f71-f7e,f80-f84,f86-f87,f8d-f97,"
    "f99-fbc,fc6,102d-1030,1032-1037,1039-103a,103d-103e,1058-1059,105e-1060,1071-1074,1082,"
    "1085-1086,108d,109d,1100-115f!,1160-11ff,135d-135f,1712-1715,1732-1734,1752-1753,1772-1773,"
    "17a4!,17b4-17b5,17b7-17bd,17c6,17c9-17d3,17d8!,17dd,180b-180f,1885-1886,18a9,1920-1922,"
    "1927-1928,1932,1939-193b,1a17-1a18,1a1b,1a56,1a58-1a5e,1a60,1a62,1a65-1a6c,1a73-1a7c,1a7f,"
    "1ab0-1af0,1b00-1b03,1b34-1b3d,1b42-1b44,1b6b-1b73,1b80-1b81,1ba2-1ba5,1ba8-1bad,1be6,"
    "1be8-1be9,1bed,1bef-1bf3,1c2c-1c33,1c36-1c37,1cd0-1cd2,1cd4-1ce0,1ce2-1ce8,1ced,1cf4,"
    "1cf8-1cf9,1dc0-1dff,200b-200f,202a-202e,2060-206f,20d0-20f0,231a-231b!,2329-232a!,"
    "23e9-23ec!,23f0!,23f3!,25fd-25fe!,2614-2615!,2630-2637!,2648-2653!,267f!,268a-268f!,2693!,"
    "26a1!,26aa-26ab!,26bd-26be!,26c4-26c5!,26ce!,26d4!,26ea!,26f2-26f3!,26f5!,26fa!,26fd!,2705!,"
    "270a-270b!,2728!,274c!,274e!,2753-2755!,2757!,2795-2797!,27b0!,27bf!,2b1b-2b1c!,2b50!,2b55!,"
    "2cef-2cf1,2de0-2dff,2e80-2e99!,2e9b-2ef3!,2f00-2fd5!,2ff0-3029!,302a-302f,3030-303e!,"
    "3041-3096!,3099-309a,309b-30ff!,3105-312f!,3131-3163!,3164,3165-318e!,3190-31e5!,31ef-321e!,"
    "3220-3247!,3250-a48c!,a490-a4c6!,a66f-a672,a674-a67d,a69e-a69f,a6f0-a6f1,a802,a806,a80b,"
    "a825-a826,a82c,a8c4-a8c5,a8e0-a8f1,a8fa,a8ff,a926-a92d,a947-a951,a953,a960-a97c!,a980-a982,"
    "a9b3,a9b6-a9b9,a9bc-a9bd,a9c0,a9e5,aa29-aa2e,aa31-aa32,aa35-aa36,aa43,aa4c,aa7c,aab0,"
    "aab2-aab4,aab7-aab8,aabe-aabf,aac1,aaec-aaed,aaf6,abe5,abe8,abed,ac00-d7a3!,d7b0-d7c6,"
    "d7cb-d7fb,f900-faff!,fb1e,fe00-fe0f,fe10-fe19!,fe20-fe2f,fe30-fe52!,fe54-fe66!,fe68-fe6b!,"
    "feff,ff01-ff60!,ffa0,ffe0-ffe6!,fff0-fff8,101fd,102e0,10376-1037a,10a01-10a03,10a05-10a06,"
    "10a0c-10a0f,10a38-10a3a,10a3f,10ae5-10ae6,10d24-10d27,10d69-10d6d,10eab-10eac,10ecb-10ecf,"
    "10ef0-10eff,10f46-10f50,10f82-10f85,11001,11038-11046,11070,11073-11074,1107f-11081,"
    "110b3-110b6,110b9-110ba,110c2,11100-11102,11127-1112b,1112d-11134,11173,11180-11181,"
    "111b6-111be,111c0,111c2-111c3,111c9-111cc,111cf,1122f-11231,11234-11237,1123e,11241,112df,"
    "112e3-112ea,11300-11301,1133b-1133c,1133e,11340,1134d,11357,11366-1136c,11370-11374,113b8,"
    "113bb-113c0,113c2,113c5,113c7-113c9,113ce-113d2,113e1-113e2,11438-1143f,11442-11444,11446,"
    "1145e,114b0,114b3-114b8,114ba,114bd,114bf-114c0,114c2-114c3,115af,115b2-115b5,115bc-115bd,"
    "115bf-115c0,115dc-115dd,11633-1163a,1163d,1163f-11640,116ab,116ad,116b0-116b7,1171d,1171f,"
    "11722-11725,11727-1172b,1182f-11837,11839-1183a,11930,1193b-1193f,11941,11943,119d4-119d7,"
    "119da-119db,119e0,11a01-11a0a,11a33-11a38,11a3b-11a3e,11a47,11a51-11a56,11a59-11a5b,"
    "11a84-11a96,11a98-11a99,11b60,11b62-11b64,11b66,11c30-11c36,11c38-11c3d,11c3f,11c92-11ca7,"
    "11caa-11cb0,11cb2-11cb3,11cb5-11cb6,11d31-11d36,11d3a,11d3c-11d3d,11d3f-11d47,11d90-11d91,"
    "11d95,11d97,11df0,11ef3-11ef4,11f00-11f02,11f36-11f3a,11f40-11f42,11f5a,13440,13447-13455,"
    "1611e-16129,1612d-1612f,16af0-16af4,16b30-16b36,16f4f,16f8f-16f92,16fe0-16fe3!,16fe4,"
    "16ff0-16ff1,16ff2-16ff6!,17000-18cda!,18cff-18d20!,18d80-18df2!,18e00-19191!,191a0-191d2!,"
    "1aff0-1aff3!,1aff5-1affb!,1affd-1affe!,1b000-1b128!,1b132!,1b150-1b152!,1b155!,1b164-1b168!,"
    "1b170-1b2fb!,1bc9d-1bc9e,1bca0-1bca3,1cf00-1cf2d,1cf30-1cf46,1d127-1d128,1d165-1d169,"
    "1d16d-1d182,1d185-1d18b,1d1aa-1d1ad,1d242-1d244,1d250-1d252,1d25b-1d25c,1d25f,1d280-1d281,"
    "1d300-1d356!,1d360-1d376!,1da00-1da36,1da3b-1da6c,1da75,1da84,1da9b-1da9f,1daa1-1daaf,"
    "1e000-1e006,1e008-1e018,1e01b-1e021,1e023-1e024,1e026-1e02a,1e08f,1e130-1e136,1e2ae,"
    "1e2ec-1e2ef,1e4ec-1e4ef,1e5ee-1e5ef,1e6e3,1e6e6,1e6ee-1e6ef,1e6f5,1e8d0-1e8d6,1e944-1e94a,"
    "1f004!,1f0cf!,1f18e!,1f191-1f19a!,1f1ae!,1f200-1f202!,1f210-1f23b!,1f240-1f248!,"
    "1f250-1f251!,1f260-1f265!,1f300-1f320!,1f32d-1f335!,1f337-1f37c!,1f37e-1f393!,1f3a0-1f3ca!,"
    "1f3cf-1f3d3!,1f3e0-1f3f0!,1f3f4!,1f3f8-1f43e!,1f440!,1f442-1f4fc!,1f4ff-1f53d!,1f54b-1f54e!,"
    "1f550-1f567!,1f57a!,1f595-1f596!,1f5a4!,1f5fb-1f64f!,1f680-1f6c5!,1f6cc!,1f6d0-1f6d2!,"
    "1f6d5-1f6d9!,1f6dc-1f6df!,1f6eb-1f6ec!,1f6f4-1f6fc!,1f7da!,1f7e0-1f7eb!,1f7f0!,1f90c-1f93a!,"
    "1f93c-1f945!,1f947-1f9ff!,1fa70-1fa7c!,1fa80-1fac6!,1fac8!,1facc-1fadd!,1fadf-1faeb!,"
    "1faef-1fafa!,20000-2fffd!,30000-3fffd!,e0000-e0fff,"
)


def _build_width_table() -> tuple[list[int], list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    widths: list[int] = []
    for item in _WIDTH_TABLE.split(","):
        if not item:
            continue
        width = 2 if item.endswith("!") else 0
        first, _, last = item.rstrip("!").partition("-")
        starts.append(int(first, 16))
        ends.append(int(last or first, 16))
        widths.append(width)
    return starts, ends, widths


_W_STARTS, _W_ENDS, _W_WIDTHS = _build_width_table()


def _special_class() -> re.Pattern[str]:
    # Code points that may not be simply one cell: C1 (dropped), every width-0/2 range of the
    # BMP, and all of the supplementary planes (a class reaching past the BMP is a slow linear
    # scan in `re`, so those take the per-character path whatever their width).
    parts = ["\x80-\x9f"]
    for first, last in zip(_W_STARTS, _W_ENDS, strict=True):
        first, last = max(first, 0xAD), min(last, 0xFFFF)
        if first <= last:
            parts.append(f"{re.escape(chr(first))}-{re.escape(chr(last))}")
    parts.append("\U00010000-\U0010ffff")
    return re.compile("[" + "".join(parts) + "]")


def char_width(cp: int) -> int:
    """Cells the code point ``cp`` takes on its own: 0 for a control character or a mark that
    joins the previous cell, else 1 or 2. ``ValueError`` for a surrogate or a value beyond
    U+10FFFF, ``OverflowError`` for one outside 0 to 2**32 - 1, ``TypeError`` for a non-integer."""
    cp = operator.index(cp)
    if not 0 <= cp <= 0xFFFF_FFFF:
        # The binding's two messages: read as a C long first, then narrowed to 32 bits.
        if not -(1 << 63) <= cp < 1 << 63:
            raise OverflowError("Python int too large to convert to C long")
        raise OverflowError("out of range integral type conversion attempted")
    if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        raise ValueError(f"{cp:#x} is not a Unicode scalar value")
    if cp < 0x20 or 0x7F <= cp < 0xA0:
        return 0
    return _width(cp)


def _width(cp: int) -> int:
    """Cells taken by the printable code point ``cp``: 0 (joins the previous cell), 1 or 2."""
    if cp < 0xAD:
        return 1
    i = bisect_right(_W_STARTS, cp) - 1
    if i >= 0 and cp <= _W_ENDS[i]:
        return _W_WIDTHS[i]
    return 1


_SPECIAL = _special_class()


# (parameters, (fg, bg, flags)) -> (fg, bg, flags) after that SGR; shared, cleared when full.
_SGR_MEMO = 4096
_SGR_MEMO_KEY_BYTES = 64
_sgr_memo: dict[tuple[bytes, tuple[int, int, int]], tuple[int, int, int]] = {}


def _param(s: bytes) -> int:
    """A CSI parameter as the state machine accumulates it: decimal, saturating at 65535."""
    if len(s) > 5:
        s = s.lstrip(b"0")
        if len(s) > 5:
            return 65535
    return min(int(s or b"0"), 65535)


# Style flags and colour encoding (as in Rust): 0 = default, 1..=256 = palette index + 1,
# RGB_BIT | 0xRRGGBB = true colour.
BOLD, DIM, ITALIC, UNDERLINE, INVERSE, STRIKE = 1, 2, 4, 8, 16, 32
RGB_BIT = 1 << 24


def _color_out(c: int) -> int | str | None:
    if c == 0:
        return None
    if c & RGB_BIT:
        return f"#{c & 0xFFFFFF:06x}"
    return c - 1


def _utf8_len(text: str) -> int:
    """The UTF-8 length of ``text`` (lone surrogates, should one come, as three bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


class _Line:
    """One row: parallel lists of cell text and style ids, plus the soft-wrap flags.

    Cell text is one character, a grapheme cluster, ``""`` for the right half of a wide
    character, or ``" "`` for a blank. Cells past the end of the lists are default blanks.
    ``wide_wrap``: the row wrapped early, before a wide character that did not fit in the last
    column, so that column is padding, not part of the text the views join.
    """

    __slots__ = ("chars", "styles", "wide_wrap", "wrapped")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.styles: list[int] = []
        self.wrapped = False
        self.wide_wrap = False


# What a line kept in scrollback costs of `max_bytes` besides its cells (the native backend's
# first allocation for a line's cells, which a short line keeps whole).
_LINE_COST = 128

# What an interned style or grapheme cluster counts in `_retained_bytes` (a cluster, its
# UTF-8 bytes besides).
_INTERNED_COST = 8

# The row every untouched or cleared row shares, so a new screen costs one list, not a row
# object per line. Its cell lists are tuples: writing to it by mistake raises instead of
# changing every blank row; writers take `Terminal._writable_row()` instead.
_BLANK = _Line()
_BLANK.chars = ()  # type: ignore[assignment]
_BLANK.styles = ()  # type: ignore[assignment]


# Attributes that make a blank cell visible (with a background colour): `spans()` keeps such
# trailing blanks; every other view trims all trailing blanks.
_SHOWS_BLANK = INVERSE | UNDERLINE | STRIKE

# Parser states (Paul Williams' DEC parser, as in vte).
(
    GROUND,
    ESCAPE,
    ESC_INTER,
    CSI_ENTRY,
    CSI_PARAM,
    CSI_INTER,
    CSI_IGNORE,
    DCS_ENTRY,
    DCS_PARAM,
    DCS_INTER,
    DCS_IGNORE,
    DCS_PASS,
    OSC_STRING,
    SOS_STRING,
) = range(14)

_CTRL = re.compile(rb"[\x00-\x1f\x7f]")
# A whole CSI of at most 16 plain decimal parameters: the common case, run without the state
# machine (which gives the same result, byte by byte).
_PLAIN_CSI = re.compile(rb"\x1b\[((?:[0-9]*;){0,15}[0-9]*)([\x40-\x7e])")
# `_advance_small`'s pieces: a printable run, a plain CSI (as `_PLAIN_CSI`), a C0 control
# other than ESC, or an ESC beginning anything else (all groups empty).
_GROUND_TOKENS = re.compile(
    rb"([^\x00-\x1f\x7f]+)|\x1b\[((?:[0-9]*;){0,15}[0-9]*)([\x40-\x7e])|([\x00-\x1a\x1c-\x1f\x7f])|\x1b"
)
# Chunks up to this size take `_advance_small` first; on larger ones a late escape sequence
# would cost a wasted pass.
_SMALL_CHUNK = 1024
_OSC_END = re.compile(rb"[\x07\x18\x1a\x1b]")
_STRING_END = re.compile(rb"[\x18\x1a\x1b]")
# C0 bytes that an OSC string ignores (BEL, CAN, SUB and ESC end it).
_OSC_DROP = bytes(b for b in range(0x20) if b not in (0x07, 0x18, 0x1A, 0x1B))
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


def _uint(s: str) -> int | None:
    """An ASCII decimal, saturating at 65535; None if empty or not all digits."""
    if not s or not (s.isascii() and s.isdigit()):
        return None
    s = s.lstrip("0")
    if len(s) > 5:
        return 65535
    return min(int(s or "0"), 65535)


def _locked(method):
    """Run ``method`` holding ``self._lock``. A terminal (or a session store) fed on one thread
    can be read from another, which then waits for the current feed, as in the native backend.
    """

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def _changing(method):
    """``_locked``, for a call that changes the terminal: the same thread calling again in the
    middle of one (a finalizer run by a garbage collection inside a feed, say) is refused with
    RuntimeError, as the native terminal refuses a second borrow, instead of feeding into a
    half-applied state."""

    @functools.wraps(method)
    def changing(self, *args, **kwargs):
        with self._lock:
            # Other threads wait on the lock: a busy terminal here is this thread's own call.
            if self._busy:
                raise RuntimeError("Already borrowed")
            self._busy = True
            try:
                return method(self, *args, **kwargs)
            finally:
                self._busy = False

    return changing


class Terminal(Unpicklable):
    """A display-only terminal fed with raw PTY bytes (see the module docs for the model).

    Args:
        cols: grid width (1 to 65535), or None for a transcript whose lines do not wrap.
        rows: screen height (1 to 65535; the window cursor movement works in).
        scrollback: most lines kept above the screen.
        max_bytes: most cells (plus 128 per line) kept in scrollback.
    """

    __slots__ = (
        "_alt",
        "_alt_kept",
        "_autowrap",
        "_bell",
        "_bg",
        "_bot",
        "_busy",
        "_bytes_fed",
        "_cluster_bytes",
        "_clusters",
        "_cols",
        "_count",
        "_cur",
        "_fg",
        "_first_digits",
        "_flags",
        "_grid",
        "_groups",
        "_ignoring",
        "_inter",
        "_last",
        "_link",
        "_link_bytes",
        "_link_ids",
        "_links",
        "_lock",
        "_max_bytes",
        "_origin",
        "_osc",
        "_osc_overflow",
        "_param",
        "_pen_id",
        "_prim",
        "_progress",
        "_repeatable",
        "_rows",
        "_saved",
        "_sb",
        "_sb_cost",
        "_sb_max",
        "_soft_wraps",
        "_state",
        "_style_ids",
        "_styles",
        "_tabs",
        "_title",
        "_title_bytes",
        "_top",
        "_truncated",
        "_utf8_tail",
        "_w",
        "col",
        "row",
    )

    def __init__(
        self,
        cols: int | None = None,
        rows: int = 24,
        scrollback: int = 10_000,
        max_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        # Every argument read before any is checked, in the binding's order.
        cols = None if cols is None else size(cols)
        rows, scrollback, max_bytes = size(rows), size(scrollback), size(max_bytes)
        if cols is not None and cols < 1:
            raise ValueError("cols must be at least 1 (or None)")
        if rows < 1:
            raise ValueError("rows must be at least 1")
        if cols is not None:
            at_most("cols", cols, MAX_COLS)
        at_most("rows", rows, MAX_ROWS)
        if scrollback < 0 or max_bytes < 0:
            raise ValueError("scrollback and max_bytes must not be negative")
        self._cols = cols
        self._w = UNBOUNDED_COLS if cols is None else cols
        self._rows = rows
        self._sb_max = scrollback
        self._max_bytes = max_bytes
        self._lock = threading.RLock()
        self._busy = False
        self._clear_all()

    # ----------------------------------------------------------------- state
    def _clear_all(self) -> None:
        # Bytes of a UTF-8 sequence cut at the end of the last printable run.
        self._utf8_tail = b""
        self._state = GROUND
        self._reset_params()
        self._osc = bytearray()
        self._osc_overflow = False
        self._sb: deque[_Line] = deque()
        self._sb_cost = 0
        self._truncated = False
        self._bytes_fed = 0
        self._bell = 0
        self._title = ""
        self._title_bytes = 0
        self._progress: tuple[int, int | None] | None = None
        self._styles: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)]
        self._style_ids: dict[tuple[int, int, int, int], int] = {(0, 0, 0, 0): 0}
        self._links: list[str] = [""]
        self._link_ids: dict[str, int] = {}
        self._link_bytes = 0
        self._clusters: set[str] = set()
        self._cluster_bytes = 0
        # The alternate screen while it is shown, and while it is not (None until first used):
        # ?47 and ?1047 switch back to it as it was left.
        self._alt: list[_Line] | None = None
        self._alt_kept: list[_Line] | None = None
        # Whether a row was soft-wrapped since this clear: until one is, `_retained` need not
        # look for wrapped rows.
        self._soft_wraps = False
        self._soft_reset()

    def _soft_reset(self) -> None:
        """RIS: a fresh screen, cursor, pen and modes; scrollback and metadata stay. As in xterm,
        the alternate screen is cleared if shown, and kept as it is if not."""
        self._prim = [_BLANK] * self._rows
        if self._alt is not None:
            self._alt = self._alt_kept = None
        self._grid = self._prim
        self.row = 0
        self.col = 0
        self._fg = 0
        self._bg = 0
        self._flags = 0
        self._link = 0
        self._pen_id = 0
        self._top = 0
        self._bot = self._rows - 1
        self._autowrap = True
        self._saved: list[tuple[int, ...] | None] = [None, None]
        # The last character printed, while nothing else has happened since.
        self._last = ""
        # What REP repeats: the character printed just before the escape sequence now being
        # read, as xterm keeps it (anything but printing in between forgets it).
        self._repeatable = ""
        # DECOM: rows are addressed from the top margin and stay within the margins.
        self._origin = False
        # Tab stops set by HTS/TBC, a byte per column (1 = stop); None until then: every 8.
        self._tabs: bytearray | None = None

    def _reset_params(self) -> None:
        self._inter = ""
        self._ignoring = False
        self._param = 0
        self._groups: list[list[int]] = []
        self._cur: list[int] = []
        self._count = 0
        # Whether the first parameter was written with digits (`CSI 0 T` is not `CSI T`).
        self._first_digits = False

    # ------------------------------------------------------------ public API
    @_changing
    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Apply raw terminal bytes (any chunking gives the same result)."""
        self._feed(buffer_bytes(data))

    def _feed(self, data: bytes) -> None:
        self._bytes_fed += len(data)
        self._advance(data)

    def feed_base64(self, data: str | bytes) -> None:
        """Decode one strict RFC 4648 base64 chunk and feed it.

        Raises TerminalDataError (nothing applied) when the chunk is not valid base64.
        """
        self.feed(_decode_base64(data))

    @_changing
    def reset(self, snapshot: bytes | bytearray | memoryview | None = b"") -> None:
        """Drop all state and start from ``snapshot`` (the ``terminal_update.output`` rule).

        ``None`` is an empty snapshot, as in the native backend.
        """
        snapshot = b"" if snapshot is None else buffer_bytes(snapshot)
        self._clear_all()
        self._feed(snapshot)

    def reset_base64(self, data: str | bytes) -> None:
        """``reset`` from a base64 snapshot; invalid base64 raises and changes nothing."""
        self.reset(_decode_base64(data))

    @property
    @_locked
    def text(self) -> str:
        """Scrollback plus primary screen as plain text (trailing blanks trimmed)."""
        return "\n".join(self.lines())

    @_locked
    def lines(self) -> list[str]:
        """The logical lines of ``text`` (soft-wrapped rows joined)."""
        return [line for line, _ in self._logical(False)]

    @_locked
    def spans(self) -> list[list[Span]]:
        """Each logical line as runs of one style (adjacent equal styles merged).

        A line's trailing blanks are trimmed back to the last cell that can be seen: a non-blank,
        or a blank with a background colour, inverse, underline or strike-through (which
        ``text`` and ``lines()`` trim too). So a line's spans read as its ``lines()`` entry plus,
        at most, such blanks, and trailing lines holding only such blanks are rows here, not
        there. Runs of one text and style are one Span object, shared by every row that shows it.
        """
        out = []
        # Spans are immutable and output repeats itself: a run of a text and style already
        # made is that span again (as the native backend does it).
        made: dict[tuple[str, int], Span] = {}
        for _, runs in self._logical(True):
            spans = []
            for run in runs:
                span = made.get(run)
                if span is None:
                    text, sid = run
                    fg, bg, flags, link = self._styles[sid]
                    span = made[run] = Span(
                        text,
                        _color_out(fg),
                        _color_out(bg),
                        bool(flags & BOLD),
                        bool(flags & DIM),
                        bool(flags & ITALIC),
                        bool(flags & UNDERLINE),
                        bool(flags & INVERSE),
                        bool(flags & STRIKE),
                        self._links[link] if link else None,
                    )
                spans.append(span)
            out.append(spans)
        return out

    @_locked
    def screen(self) -> list[str] | None:
        """The visible rows of the active screen (None when ``cols`` is None)."""
        if self._cols is None:
            return None
        return ["".join(line.chars).rstrip(" ") for line in self._grid]

    @property
    @_locked
    def cursor(self) -> tuple[int, int] | None:
        """(row, col) on the active screen; col == cols means a wrap is pending."""
        if self._cols is None:
            return None
        return (self.row, self.col)

    @property
    def title(self) -> str:
        """The window title last set with OSC 0 or OSC 2 ("" if never)."""
        return self._title

    @property
    def progress(self) -> tuple[int, int | None] | None:
        """OSC 9;4 progress as (state, percent): state 1 normal, 2 error, 3 indeterminate
        (percent None), 4 paused; percent 0-100 or None when not given. None when cleared."""
        return self._progress

    @property
    def bell_count(self) -> int:
        """BEL characters executed (not counting those that end an OSC)."""
        return self._bell

    @property
    def bytes_fed(self) -> int:
        """Bytes applied since construction or the last reset."""
        return self._bytes_fed

    @property
    def truncated(self) -> bool:
        """True once scrollback lines were dropped to respect ``scrollback``/``max_bytes``."""
        return self._truncated

    @_locked
    def _retained_bytes(self) -> int:
        """What the terminal holds, in the units of ``max_bytes``: its scrollback as it counts
        there; each screen row that holds cells as a scrollback line would count; and 8 per
        style interned and 8 plus its UTF-8 length per grapheme cluster and per OSC 8 link; and
        the UTF-8 length of the title and of an OSC sequence cut short by the last chunk. A
        store's ``max_terminal_bytes`` adds these up."""
        return self._retained()

    @_changing
    def _feed_for_store(self, data: bytes) -> int:
        """``feed``, then ``_retained_bytes``, under one lock: a store's output chunk."""
        self._feed(data)
        return self._retained()

    @_changing
    def _reset_for_store(self, snapshot: bytes) -> int:
        """``reset``, then ``_retained_bytes``, under one lock: a store's terminal_update."""
        self._clear_all()
        self._feed(snapshot)
        return self._retained()

    def _retained(self) -> int:
        # `_retained_bytes`, for a caller holding the lock.
        rows_cost = 0
        for grid in (self._prim, self._alt, self._alt_kept):
            if grid is None:
                continue
            if self._soft_wraps:
                for line in grid:
                    cost = self._line_cost(line)
                    if cost != _LINE_COST:
                        rows_cost += cost
            else:
                # No row is soft-wrapped: each counts its cells and, when it has any, a line's
                # fixed part (a blank row has none).
                lengths = [len(line.chars) for line in grid if line is not _BLANK]
                rows_cost += sum(lengths) + _LINE_COST * (len(lengths) - lengths.count(0))
        return (
            self._sb_cost
            + rows_cost
            + _INTERNED_COST * (len(self._styles) - 1 + len(self._clusters) + len(self._links) - 1)
            + self._cluster_bytes
            + self._link_bytes
            + self._title_bytes
            + len(self._osc)
        )

    @_changing
    def _clear_for_store(self, held: int) -> int | None:
        """A store's clear, past its bound: unless ``held`` (what the store last counted) is
        no more than a clear keeps, drop what the terminal holds; return what it keeps, or
        None when it is passed over. Both under one lock, as in the native store."""
        kept = self._kept_bytes()
        if held <= kept:
            return None
        self._drop_retained()
        return kept

    def _drop_retained(self) -> None:
        """Drop everything the terminal shows, scrollback and screens, with the styles,
        grapheme clusters and links only cells referred to, and set ``truncated``; the cursor,
        modes, rendition (and its link), title and counters stay, as does a sequence cut
        short."""
        self._sb = deque()
        self._sb_cost = 0
        for grid in (self._prim, self._alt, self._alt_kept):
            if grid is not None:
                # In place: `_grid` is one of these lists.
                grid[:] = [_BLANK] * len(grid)
        self._styles = [(0, 0, 0, 0)]
        self._style_ids = {(0, 0, 0, 0): 0}
        self._pen_id = -1
        self._clusters = set()
        self._cluster_bytes = 0
        # The links the pen and the saved cursors still carry are kept, renumbered in that
        # order; the rest go.
        old = self._links
        self._links = [""]
        self._link_ids = {}

        def relink(link: int) -> int:
            if not link:
                return 0
            uri = old[link]
            new = self._link_ids.get(uri)
            if new is None:
                new = self._link_ids[uri] = len(self._links)
                self._links.append(uri)
            return new

        self._link = relink(self._link)
        self._saved = [
            None if saved is None else (*saved[:5], relink(saved[5]), saved[6])
            for saved in self._saved
        ]
        self._link_bytes = sum(_utf8_len(uri) for uri in self._links)
        self._truncated = True

    def _kept_bytes(self) -> int:
        """What ``_drop_retained`` would leave of ``_retained_bytes``: the links the pen and
        the saved cursors carry (each once), the title and a pending OSC sequence."""
        carried = {self._link, *(saved[5] for saved in self._saved if saved is not None)}
        carried.discard(0)
        links = sum(_INTERNED_COST + _utf8_len(self._links[link]) for link in carried)
        return links + self._title_bytes + len(self._osc)

    @property
    def cols(self) -> int | None:
        """The grid's width, or None for a transcript whose lines do not wrap."""
        return self._cols

    @property
    def rows(self) -> int:
        """The screen's height."""
        return self._rows

    def __repr__(self) -> str:
        return f"Terminal(cols={self._cols!r}, rows={self._rows!r}, bytes_fed={self._bytes_fed})"

    # ---------------------------------------------------------------- views
    def _logical(self, styled: bool) -> list[tuple[str, list[tuple[str, int]]]]:
        out: list[tuple[str, list[tuple[str, int]]]] = []
        w = self._w
        parts: list[str] = []
        runs: list[list] = []
        for line in (*self._sb, *self._prim):
            chars = line.chars
            if styled:
                styles = line.styles
                n = len(styles)
                i = 0
                while i < n:
                    sid = styles[i]
                    j = i + 1
                    while j < n and styles[j] == sid:
                        j += 1
                    text = "".join(chars[i:j])
                    if text:
                        if runs and runs[-1][1] == sid:
                            runs[-1][0] += text
                        else:
                            runs.append([text, sid])
                    i = j
            parts.append("".join(chars))
            if line.wrapped:
                pad = w - line.wide_wrap - len(chars)
                if pad > 0:
                    parts.append(" " * pad)
                    if styled:
                        if runs and runs[-1][1] == 0:
                            runs[-1][0] += " " * pad
                        else:
                            runs.append([" " * pad, 0])
                continue
            text = "".join(parts).rstrip(" ")
            parts = []
            if styled:
                self._trim_runs(runs)
            out.append((text, [(t, s) for t, s in runs]))
            runs = []
        if parts:
            text = "".join(parts).rstrip(" ")
            if styled:
                self._trim_runs(runs)
            out.append((text, [(t, s) for t, s in runs]))
        # Trailing empty lines go: for spans, those without a run left.
        k = 1 if styled else 0
        while out and not out[-1][k]:
            out.pop()
        return out

    def _trim_runs(self, runs: list[list]) -> None:
        """Trim a line's trailing blanks back to the last cell that can be seen: a non-blank, or
        a blank whose style shows it (a background colour, inverse, underline or strike)."""
        styles = self._styles
        while runs:
            run = runs[-1]
            _fg, bg, flags, _link = styles[run[1]]
            if bg or flags & _SHOWS_BLANK:
                return
            text = run[0].rstrip(" ")
            if text:
                run[0] = text
                return
            runs.pop()

    # --------------------------------------------------------------- parser
    def _advance(self, data: bytes) -> None:
        n = len(data)
        i = self._advance_small(data) if self._state == GROUND and n <= _SMALL_CHUNK else 0
        while i < n:
            state = self._state
            if state == GROUND:
                m = _CTRL.search(data, i)
                j = m.start() if m is not None else n
                if j > i:
                    self._print_bytes(data[i:j])
                if j == n:
                    return
                if self._utf8_tail:
                    self._end_utf8_tail()
                b = data[j]
                i = j + 1
                if b == 0x0D:
                    self.col = 0
                    self._last = self._repeatable = ""
                elif b == 0x1B:
                    self._repeatable = self._last
                    self._last = ""
                    m = _PLAIN_CSI.match(data, j)
                    if m is not None:
                        i = m.end()
                        self._dispatch_plain_csi(*m.groups())
                        continue
                    self._reset_params()
                    self._state = ESCAPE
                else:
                    self._execute(b)
            elif state == OSC_STRING:
                m = _OSC_END.search(data, i)
                j = m.start() if m is not None else n
                if j > i and not self._osc_overflow:
                    chunk = data[i:j].translate(None, _OSC_DROP)
                    if len(self._osc) + len(chunk) > MAX_OSC_BYTES:
                        self._osc_overflow = True
                        self._osc = bytearray()
                    else:
                        self._osc += chunk
                if j == n:
                    return
                b = data[j]
                i = j + 1
                self._osc_end()
                if b == 0x1B:
                    self._reset_params()
                    self._state = ESCAPE
                else:
                    self._state = GROUND
            elif state in (DCS_PASS, DCS_IGNORE, SOS_STRING):
                # Payloads of these strings are consumed and never stored.
                m = _STRING_END.search(data, i)
                if m is None:
                    return
                j = m.start()
                i = j + 1
                if data[j] == 0x1B:
                    self._reset_params()
                    self._state = ESCAPE
                else:
                    self._state = GROUND
            else:
                self._step(data[i])
                i += 1

    def _print_bytes(self, run: bytes) -> None:
        """Print a run of printable bytes as an incremental "replace" decoder would (without its
        per-call cost), holding back an unfinished UTF-8 sequence for the next run."""
        tail = self._utf8_tail
        if tail:
            run = tail + run
        s, used = utf_8_decode(run, "replace", False)
        self._utf8_tail = run[used:] if used < len(run) else b""
        if s:
            self._print(s)

    def _end_utf8_tail(self) -> None:
        """A control byte ends an incomplete UTF-8 sequence: one U+FFFD, as CPython."""
        self._print(utf_8_decode(self._utf8_tail, "replace", True)[0])
        self._utf8_tail = b""

    def _advance_small(self, data: bytes) -> int:
        """``_advance`` from the ground state over one regex split of ``data`` into printable runs,
        plain CSIs and C0 controls, the pieces of typical short chunks: fewer calls per piece.

        Returns where ``_advance`` goes on: at the first other escape sequence, or the end.
        """
        plain_csis = 0
        for run, params, final, control in _GROUND_TOKENS.findall(data):
            if run:
                if run.isascii() and not self._utf8_tail:
                    # Printable ASCII, nothing held back: one narrow cell a byte (`_print`'s
                    # first case, without the decoder).
                    text = run.decode()
                    self._last = text[-1]
                    self._put_narrow(text)
                else:
                    self._print_bytes(run)
                continue
            if self._utf8_tail:
                self._end_utf8_tail()
            if final:
                plain_csis += 1
                self._repeatable = self._last
                self._last = ""
                self._dispatch_plain_csi(params, final)
            elif control:
                b = control[0]
                if b == 0x0D:
                    self.col = 0
                    self._last = self._repeatable = ""
                else:
                    self._execute(b)
            else:
                # Every ESC before this one began a plain CSI.
                at = -1
                for _ in range(plain_csis + 1):
                    at = data.index(b"\x1b", at + 1)
                return at
        return len(data)

    def _dispatch_plain_csi(self, params: bytes, final: bytes) -> None:
        if final == b"m":
            # SGR is a function of the pen and the parameters: remembered.
            pen = (self._fg, self._bg, self._flags)
            key = (params, pen)
            new = _sgr_memo.get(key)
            if new is None:
                self._plain_csi(params, 0x6D)
                # Parameters are read up to any length (each saturates): only short ones are
                # remembered, so the memo's memory stays bounded.
                if len(params) <= _SGR_MEMO_KEY_BYTES:
                    if len(_sgr_memo) >= _SGR_MEMO:
                        _sgr_memo.clear()
                    _sgr_memo[key] = (self._fg, self._bg, self._flags)
            elif new != pen:
                self._fg, self._bg, self._flags = new
                self._pen_id = -1
        else:
            self._plain_csi(params, final[0])

    def _plain_csi(self, params: bytes, final: int) -> None:
        self._reset_params()
        self._first_digits = params[:1].isdigit()
        groups = [[_param(p)] for p in params.split(b";")]
        self._groups = groups
        self._count = len(groups)
        self._csi(chr(final))

    def _anywhere(self, b: int) -> None:
        if b == 0x1B:
            self._reset_params()
            self._state = ESCAPE
        elif b == 0x18 or b == 0x1A:
            self._state = GROUND

    def _collect(self, b: int) -> None:
        if len(self._inter) == 2:
            self._ignoring = True
        else:
            self._inter += chr(b)

    def _param_digit(self, b: int) -> None:
        if self._count == MAX_PARAMS:
            self._ignoring = True
        else:
            if self._count == 0:
                self._first_digits = True
            self._param = min(self._param * 10 + (b - 0x30), 65535)

    def _param_next(self) -> None:
        if self._count == MAX_PARAMS:
            self._ignoring = True
        else:
            self._cur.append(self._param)
            self._groups.append(self._cur)
            self._cur = []
            self._count += 1
            self._param = 0

    def _param_sub(self) -> None:
        if self._count == MAX_PARAMS:
            self._ignoring = True
        else:
            self._cur.append(self._param)
            self._count += 1
            self._param = 0

    def _step(self, b: int) -> None:
        state = self._state
        if b < 0x20:
            if b == 0x18 or b == 0x1A or b == 0x1B:
                self._anywhere(b)
            elif state <= CSI_IGNORE:
                # ESC and CSI states execute C0 controls in passing; DCS entry states ignore them.
                self._execute(b)
            return
        if b >= 0x7F:
            return
        if state == ESCAPE:
            if b < 0x30:
                self._collect(b)
                self._state = ESC_INTER
            elif b == 0x5B:
                self._state = CSI_ENTRY
            elif b == 0x5D:
                self._osc = bytearray()
                self._osc_overflow = False
                self._state = OSC_STRING
            elif b == 0x50:
                self._state = DCS_ENTRY
            elif b == 0x58 or b == 0x5E or b == 0x5F:
                self._state = SOS_STRING
            else:
                self._state = GROUND
                self._esc_dispatch(b)
        elif state == ESC_INTER:
            if b < 0x30:
                self._collect(b)
            else:
                self._state = GROUND
                self._esc_dispatch(b)
        elif state in (CSI_ENTRY, CSI_PARAM):
            if b < 0x30:
                self._collect(b)
                self._state = CSI_INTER
            elif b < 0x3A:
                self._param_digit(b)
                self._state = CSI_PARAM
            elif b == 0x3A:
                self._param_sub()
                self._state = CSI_PARAM
            elif b == 0x3B:
                self._param_next()
                self._state = CSI_PARAM
            elif b < 0x40:
                if state == CSI_ENTRY:
                    self._collect(b)
                    self._state = CSI_PARAM
                else:
                    self._state = CSI_IGNORE
            else:
                self._csi_end(b)
        elif state == CSI_INTER:
            if b < 0x30:
                self._collect(b)
            elif b < 0x40:
                self._state = CSI_IGNORE
            else:
                self._csi_end(b)
        elif state == CSI_IGNORE:
            if b >= 0x40:
                self._state = GROUND
        elif state in (DCS_ENTRY, DCS_PARAM):
            if b < 0x30:
                self._state = DCS_INTER
            elif b < 0x3C:
                self._state = DCS_PARAM
            elif b < 0x40:
                self._state = DCS_PARAM if state == DCS_ENTRY else DCS_IGNORE
            else:
                self._state = DCS_PASS
        elif state == DCS_INTER:
            if b < 0x30:
                pass
            elif b < 0x40:
                self._state = DCS_IGNORE
            else:
                self._state = DCS_PASS

    def _csi_end(self, final: int) -> None:
        self._state = GROUND
        self._param_next()  # the final byte ends the last parameter as `;` ends the others
        if not self._ignoring:
            self._csi(chr(final))

    def _osc_end(self) -> None:
        if not self._osc_overflow:
            self._osc_dispatch(bytes(self._osc).decode("utf-8", "replace"))
        self._osc = bytearray()
        self._osc_overflow = False

    # -------------------------------------------------------------- actions
    def _execute(self, b: int) -> None:
        self._last = self._repeatable = ""
        if b == 0x0A or b == 0x0B or b == 0x0C:
            self._index()
            if self._cols is None:
                self.col = 0
        elif b == 0x0D:
            self.col = 0
        elif b == 0x08:
            # From a pending wrap, back from the last column (xterm's CursorBack).
            col = self.col
            if col >= self._w:
                col = self._w - 1
            if col > 0:
                col -= 1
            self.col = col
        elif b == 0x09:
            # xterm's TabToNextStop keeps a pending wrap, so HT moves only short of it.
            if self.col < self._w:
                self.col = self._next_tab(self.col)
        elif b == 0x07:
            self._bell += 1

    def _esc_dispatch(self, final: int) -> None:
        if self._ignoring:
            return
        inter = self._inter
        if inter == "":
            if final == 0x37:  # DECSC
                self._save_cursor()
            elif final == 0x38:  # DECRC
                self._restore_cursor()
            elif final == 0x44:  # IND
                self._index()
            elif final == 0x45:  # NEL
                self.col = 0
                self._index()
            elif final == 0x4D:  # RI
                self._reverse_index()
            elif final == 0x48:  # HTS
                self._tab_stops()[self._edit_col()] = 1
            elif final == 0x63:  # RIS
                self._soft_reset()
        elif inter == "#" and final == 0x38:
            # DECALN: fill the screen with 'E' (a transcript, with no width, the 80 columns of
            # the VT100 it tests), then, as xterm, leave origin mode and the rendition (not a
            # link).
            w = self._w if self._cols is not None else DECALN_TRANSCRIPT_COLS
            for r in range(self._rows):
                line = _Line()
                line.chars = ["E"] * w
                line.styles = [0] * w
                self._grid[r] = line
            self._top = 0
            self._bot = self._rows - 1
            self.row = 0
            self.col = 0
            self._origin = False
            self._fg = self._bg = self._flags = 0
            self._pen_id = -1

    def _osc_dispatch(self, text: str) -> None:
        num, sep, rest = text.partition(";")
        if not sep:
            return
        if num == "0" or num == "2":
            self._title = rest
            self._title_bytes = _utf8_len(rest)
        elif num == "8":
            _params, sep, uri = rest.partition(";")
            if not sep:
                return
            link = 0
            size = _utf8_len(uri)
            if uri and size <= MAX_LINK_BYTES:
                link = self._link_ids.get(uri, 0)
                if not link and len(self._links) <= MAX_LINKS:
                    link = len(self._links)
                    self._links.append(uri)
                    self._link_ids[uri] = link
                    self._link_bytes += size
            if link != self._link:
                self._link = link
                self._pen_id = -1
        elif num == "9":
            fields = rest.split(";")
            if fields[0] != "4":
                return
            state = _uint(fields[1]) if len(fields) > 1 else 0
            if state == 0:
                self._progress = None
            elif state == 3:
                self._progress = (3, None)
            elif state in (1, 2, 4):
                pct = _uint(fields[2]) if len(fields) > 2 else None
                self._progress = (state, None if pct is None else min(pct, 100))

    def _style(self) -> int:
        sid = self._pen_id
        if sid < 0:
            key = (self._fg, self._bg, self._flags, self._link)
            sid = self._style_ids.get(key, -1)
            if sid < 0:
                if len(self._styles) >= MAX_STYLES:
                    sid = 0
                else:
                    sid = len(self._styles)
                    self._styles.append(key)
                    self._style_ids[key] = sid
            self._pen_id = sid
        return sid

    def _decstr(self) -> None:
        """DECSTR (``CSI ! p``), as xterm's soft reset: the margins, origin mode, autowrap and
        the rendition (not an OSC 8 link, as SGR 0) to their defaults, and this screen's saved
        cursor to home with them; the cursor, the screens, tab stops and scrollback stay."""
        self._top = 0
        self._bot = self._rows - 1
        self._origin = False
        self._autowrap = True
        self._fg = self._bg = self._flags = 0
        self._pen_id = 0 if self._link == 0 else -1
        slot = 0 if self._alt is None else 1
        self._saved[slot] = (0, 0, 0, 0, 0, self._link, False)

    def _save_cursor(self) -> None:
        slot = 0 if self._alt is None else 1
        self._saved[slot] = (
            self.row,
            self.col,
            self._fg,
            self._bg,
            self._flags,
            self._link,
            self._origin,
        )

    def _restore_cursor(self) -> None:
        saved = self._saved[0 if self._alt is None else 1]
        if saved is None:
            saved = (0, 0, 0, 0, 0, 0, False)
        self.row, self.col, self._fg, self._bg, self._flags, self._link, self._origin = saved
        self._pen_id = -1
        if self._origin:
            # As xterm (`CursorSet`): in origin mode the cursor stays above the bottom margin
            # set since; a row above the top margin stays where it was.
            self.row = min(self.row, self._bot)

    def _home(self) -> None:
        """The cursor to the first column of the first row it may address."""
        self.row = self._top if self._origin else 0
        self.col = 0

    def _addressed_row(self, n: int) -> int:
        """The screen row of row ``n`` (1-based) as CUP and VPA address it."""
        if self._origin:
            return min(self._top + n - 1, self._bot)
        return min(n - 1, self._rows - 1)

    def _tab_stops(self) -> bytearray:
        """The tab stops, made explicit (every 8 columns) the first time they are changed."""
        if self._tabs is None:
            # Made in C: RIS and an HTS may alternate, each rebuilding the table.
            tabs = bytearray(self._w)
            tabs[8::8] = b"\x01" * len(range(8, self._w, 8))
            self._tabs = tabs
        return self._tabs

    def _next_tab(self, col: int) -> int:
        """The first tab stop right of ``col``, or the last column."""
        last = self._w - 1
        col = min(col, last)
        if self._tabs is None:
            return min((col // 8 + 1) * 8, last)
        found = self._tabs.find(1, col + 1)
        return last if found < 0 else found

    def _tab_forward(self, n: int) -> None:
        """CHT: ``n`` times to the next tab stop, stopping at the last column. Found by
        arithmetic, or by bisecting on counts of stops (each step counting only the half it
        tests), not stop by stop: a count may be as large as the row is wide."""
        last = self._w - 1
        col = self.col
        if col >= last:
            return
        tabs = self._tabs
        if tabs is None:
            self.col = min((col // 8 + n) * 8, last)
            return
        if n == 1:
            self.col = self._next_tab(col)
            return
        if tabs.count(1, col + 1) < n:
            self.col = last
            return
        # The first column x with n stops in col+1..=x; `below` counts those before `lo`.
        lo, hi, below = col + 1, last, 0
        while lo < hi:
            mid = (lo + hi) // 2
            upto = below + tabs.count(1, lo, mid + 1)
            if upto >= n:
                hi = mid
            else:
                lo, below = mid + 1, upto
        self.col = lo

    def _tab_back(self, n: int) -> None:
        """CBT: ``n`` times to the previous tab stop, stopping at column 0 (as ``_tab_forward``)."""
        end = min(self.col, self._w)
        if end == 0:
            return
        tabs = self._tabs
        if tabs is None:
            self.col = max(((end - 1) // 8 - (n - 1)) * 8, 0)
            return
        if n == 1:
            self.col = max(tabs.rfind(1, 0, end), 0)
            return
        if tabs.count(1, 0, end) < n:
            self.col = 0
            return
        # The last column x with n stops in x..end; `above` counts those after `hi`.
        lo, hi, above = 0, end - 1, 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            upto = above + tabs.count(1, mid, hi + 1)
            if upto >= n:
                lo = mid
            else:
                hi, above = mid - 1, upto
        self.col = lo

    # ---------------------------------------------------------------- print
    def _print(self, s: str) -> None:
        if s.isascii():
            self._last = s[-1]
            self._put_narrow(s)
            return
        # Runs of one-cell characters are written whole; writing them in pieces is the same.
        pos = 0
        n = len(s)
        search = _SPECIAL.search
        while pos < n:
            m = search(s, pos)
            k = n if m is None else m.start()
            if k > pos:
                run = s[pos:k]
                self._last = run[-1]
                self._put_narrow(run)
            if m is None:
                return
            pos = k + 1
            ch = s[k]
            o = ord(ch)
            if o < 0xA0:
                continue  # C1 code points are never printed
            w = _width(o)
            if w == 2:
                self._last = ch
                self._put_wide(ch)
            elif w == 0:
                # xterm's REP repeats nothing after a zero-width character.
                self._last = ""
                self._combine(ch)
            else:
                self._last = ch
                self._put_narrow(ch)

    def _writable_row(self) -> _Line:
        line = self._grid[self.row]
        if line is _BLANK:
            line = self._grid[self.row] = _Line()
        return line

    def _wrap(self, wide: bool = False) -> None:
        """Soft-wrap to the start of the next row; ``wide``: early, for a wide character that
        the last column could not hold."""
        line = self._writable_row()
        line.wrapped = True
        line.wide_wrap = wide
        self._soft_wraps = True
        self._index()
        self.col = 0

    def _put_narrow(self, s: str) -> None:
        w = self._w
        n = len(s)
        col = self.col
        if col + n < w:
            # Fits before the last column: no wrap, pending or new.
            self._write(col, s)
            self.col = col + n
            return
        pos = 0
        while pos < n:
            col = self.col
            if col >= w:
                if self._autowrap:
                    self._wrap()
                    col = 0
                else:
                    col = w - 1
            room = w - col
            k = n - pos
            if k > room:
                if not self._autowrap:
                    # Without autowrap the rest overwrites the last column: the final one stays.
                    self._write(col, s[pos : pos + room - 1] + s[n - 1])
                    self.col = w - 1
                    return
                k = room
            self._write(col, s[pos : pos + k])
            pos += k
            col += k
            self.col = col if col < w or self._autowrap else w - 1

    @staticmethod
    def _split(chars: list[str], styles: list[int], x: int) -> None:
        # Cutting between the halves of a wide character blanks both halves.
        if 0 < x < len(chars) and chars[x] == "":
            chars[x - 1] = " "
            chars[x] = " "
            styles[x - 1] = 0
            styles[x] = 0

    def _write(self, col: int, text: str) -> None:
        # `_writable_row`, inline: every printed run comes here.
        line = self._grid[self.row]
        if line is _BLANK:
            line = self._grid[self.row] = _Line()
        chars = line.chars
        styles = line.styles
        sid = self._pen_id
        if sid < 0:
            sid = self._style()
        end = col + len(text)
        have = len(chars)
        if col >= have:
            if col > have:
                chars.extend(" " * (col - have))
                styles.extend([0] * (col - have))
            chars.extend(text)
            styles.extend([sid] * len(text))
            return
        if col and chars[col] == "":
            self._split(chars, styles, col)
        if end < have and chars[end] == "":
            self._split(chars, styles, end)
        chars[col:end] = text
        styles[col:end] = [sid] * len(text)

    def _put_wide(self, ch: str) -> None:
        w = self._w
        col = self.col
        if col + 2 < w:
            line = self._grid[self.row]
            chars = line.chars
            if col == len(chars) and line is not _BLANK:
                # Appended at the end of the row, before the last column: no wrap, no cell cut.
                sid = self._pen_id
                if sid < 0:
                    sid = self._style()
                chars += (ch, "")
                line.styles += (sid, sid)
                self.col = col + 2
                return
        if w < 2:
            return
        if col >= w:
            if self._autowrap:
                self._wrap()
                col = 0
            else:
                col = w - 1
        if col == w - 1:
            if self._autowrap:
                # It does not fit: the last column is left as it is and the character wraps.
                self._wrap(True)
                col = 0
            else:
                col = w - 2
        line = self._writable_row()
        chars = line.chars
        styles = line.styles
        sid = self._style()
        have = len(chars)
        if col > have:
            chars.extend(" " * (col - have))
            styles.extend([0] * (col - have))
        else:
            self._split(chars, styles, col)
        self._split(chars, styles, col + 2)
        chars[col : col + 2] = (ch, "")
        styles[col : col + 2] = (sid, sid)
        col += 2
        self.col = col if col < w or self._autowrap else w - 1

    def _combine(self, ch: str) -> None:
        x = self.col - 1
        if x < 0:
            return  # nothing to join at the start of a row
        line = self._writable_row()
        chars = line.chars
        have = len(chars)
        if x < have and chars[x] == "" and x > 0:
            x -= 1
        if x >= have:
            chars.extend(" " * (x + 1 - have))
            line.styles.extend([0] * (x + 1 - have))
        old = chars[x]
        if len(old) >= MAX_CLUSTER_CHARS:
            return
        new = old + ch
        if new not in self._clusters:
            if len(self._clusters) >= MAX_CLUSTERS:
                return
            self._clusters.add(new)
            self._cluster_bytes += _utf8_len(new)
        chars[x] = new

    # ------------------------------------------------------------ scrolling
    def _index(self) -> None:
        if self.col >= self._w:
            self.col = self._w - 1  # ends a pending wrap, as `_reset_wrap`
        if self.row == self._bot:
            self._scroll_up(1)
        elif self.row < self._rows - 1:
            self.row += 1

    def _reset_wrap(self) -> None:
        """Ends a pending wrap, leaving the cursor on the last column: xterm's ``ResetWrap``,
        which every vertical move, erase and character insertion or deletion does."""
        if self.col >= self._w:
            self.col = self._w - 1

    def _reverse_index(self) -> None:
        self._reset_wrap()
        if self.row == self._top:
            self._scroll_down(1)
        elif self.row > 0:
            self.row -= 1

    def _scroll_up(self, n: int) -> None:
        top, bot = self._top, self._bot
        n = min(n, bot - top + 1)
        g = self._grid
        removed = g[top : top + n]
        del g[top : top + n]
        g[bot - n + 1 : bot - n + 1] = [_BLANK] * n
        if top == 0 and self._alt is None:
            self._push_scrollback(removed)

    def _scroll_down(self, n: int) -> None:
        top, bot = self._top, self._bot
        n = min(n, bot - top + 1)
        g = self._grid
        del g[bot - n + 1 : bot + 1]
        g[top:top] = [_BLANK] * n

    def _line_cost(self, line: _Line) -> int:
        """What a scrollback line counts against max_bytes: the cells the views show (a soft-
        wrapped row is padded to the width, whatever cells it holds) and a fixed part."""
        shown = len(line.chars)
        if line.wrapped:
            shown = max(shown, self._w - line.wide_wrap)
        return shown + _LINE_COST

    def _push_scrollback(self, lines: list[_Line]) -> None:
        sb = self._sb
        for line in lines:
            sb.append(line)
            self._sb_cost += self._line_cost(line)
        while sb and (len(sb) > self._sb_max or self._sb_cost > self._max_bytes):
            old = sb.popleft()
            self._sb_cost -= self._line_cost(old)
            self._truncated = True

    # ------------------------------------------------------------------ CSI
    def _arg(self, i: int, default: int) -> int:
        groups = self._groups
        v = groups[i][0] if i < len(groups) else 0
        return v if v else default

    def _csi(self, f: str) -> None:
        inter = self._inter
        if inter == "?":
            if f == "h" or f == "l":
                self._private_modes(f == "h")
            elif f == "J":
                self._erase_display(self._arg(0, 0))
            elif f == "K":
                self._erase_line(self._arg(0, 0))
            return
        if inter == "!" and f == "p":
            self._decstr()
            return
        if inter:
            return
        w = self._w
        rows = self._rows
        if f == "m":
            self._sgr()
        elif f == "K":
            self._erase_line(self._arg(0, 0))
        elif f == "J":
            self._erase_display(self._arg(0, 0))
        elif f == "A" or f == "F":
            n = self._arg(0, 1)
            floor = self._top if self.row >= self._top else 0
            self.row = max(self.row - n, floor)
            if f == "F":
                self.col = 0
            else:
                self._reset_wrap()
        elif f == "B" or f == "e" or f == "E":
            n = self._arg(0, 1)
            ceil = self._bot if self.row <= self._bot else rows - 1
            self.row = min(self.row + n, ceil)
            if f == "E":
                self.col = 0
            else:
                self._reset_wrap()
        elif f == "C" or f == "a":
            self.col = min(self.col + self._arg(0, 1), w - 1)
        elif f == "D":
            # From a pending wrap, back from the last column (xterm's CursorBack).
            self.col = max(self._edit_col() - self._arg(0, 1), 0)
        elif f == "G" or f == "`":
            self.col = min(self._arg(0, 1) - 1, w - 1)
        elif f == "H" or f == "f":
            self.row = self._addressed_row(self._arg(0, 1))
            self.col = min(self._arg(1, 1) - 1, w - 1)
        elif f == "d":
            self.row = self._addressed_row(self._arg(0, 1))
            self._reset_wrap()
        elif f == "I":
            self._tab_forward(self._arg(0, 1))
        elif f == "Z":
            # From a pending wrap, back from the last column (only stops left of it).
            self._reset_wrap()
            self._tab_back(self._arg(0, 1))
        elif f == "g":
            mode = self._arg(0, 0)
            if mode == 0:
                self._tab_stops()[self._edit_col()] = 0
            elif mode == 3:
                self._tabs = bytearray(w)
        elif f == "@":
            self._insert_chars(self._arg(0, 1))
        elif f == "P":
            self._delete_chars(self._arg(0, 1))
        elif f == "X":
            self._erase_chars(self._arg(0, 1))
        elif f == "L" or f == "M":
            top, bot = self._top, self._bot
            if top <= self.row <= bot:
                n = min(self._arg(0, 1), bot - self.row + 1)
                g = self._grid
                if f == "L":
                    del g[bot - n + 1 : bot + 1]
                    g[self.row : self.row] = [_BLANK] * n
                else:
                    del g[self.row : self.row + n]
                    g[bot - n + 1 : bot - n + 1] = [_BLANK] * n
                self.col = 0
        elif f == "S":
            self._scroll_up(self._arg(0, 1))
        elif f == "T":
            # As xterm: more than one parameter, or an explicit 0, is mouse tracking.
            if len(self._groups) <= 1 and not (self._first_digits and self._arg(0, 0) == 0):
                self._scroll_down(self._arg(0, 1))
        elif f == "b":
            if self._repeatable:
                self._print(self._repeatable * self._arg(0, 1))
                self._repeatable = ""
                # A REP does not make its character repeatable again.
                self._last = ""
        elif f == "r":
            top = self._arg(0, 1)
            bot = min(self._arg(1, rows), rows)
            if top < bot:
                self._top = top - 1
                self._bot = bot - 1
                self._home()
        elif (f == "s" or f == "u") and self._groups == [[0]]:
            if f == "s":
                self._save_cursor()
            else:
                self._restore_cursor()

    def _private_modes(self, on: bool) -> None:
        for group in self._groups:
            mode = group[0]
            if mode == 6:
                self._origin = on
                self._home()
            elif mode == 7:
                self._autowrap = on
            elif mode == 1048:
                if on:
                    self._save_cursor()
                else:
                    self._restore_cursor()
            # As xterm's charproc.c: only the switch itself depends on the screen shown;
            # ?1049 saves, clears and restores whichever it is on.
            elif mode == 47 or mode == 1047:
                if on:
                    self._show_alternate()
                else:
                    if mode == 1047 and self._alt is not None:
                        self._erase_display(2)
                    self._show_primary()
            elif mode == 1049:
                if on:
                    self._save_cursor()
                    self._show_alternate()
                    self._erase_display(2)
                else:
                    self._show_primary()
                    self._restore_cursor()

    def _show_alternate(self) -> None:
        """Show the alternate screen as it was last left (blank the first time)."""
        if self._alt is None:
            alt = self._alt_kept
            self._alt_kept = None
            self._alt = self._grid = [_BLANK] * self._rows if alt is None else alt

    def _show_primary(self) -> None:
        """Show the primary screen, keeping the alternate one as it is."""
        if self._alt is not None:
            self._alt_kept = self._alt
            self._alt = None
            self._grid = self._prim

    def _edit_col(self) -> int:
        return min(self.col, self._w - 1)

    def _erase_line(self, mode: int) -> None:
        """EL: from the cursor (0), to it (1) or the whole row (2). A row erased to its end is no
        longer soft-wrapped (xterm's ``ClearRight``), nor is one erased whole."""
        if mode > 2:
            return
        x = self.col = self._edit_col()
        line = self._grid[self.row]
        if line is _BLANK:
            return  # every mode leaves a blank row blank
        chars = line.chars
        styles = line.styles
        if mode == 0:
            self._split(chars, styles, x)
            del chars[x:]
            del styles[x:]
            line.wrapped = False
        elif mode == 1 and x + 1 < self._w:
            self._split(chars, styles, x + 1)
            end = min(x + 1, len(chars))
            chars[:end] = " " * end
            styles[:end] = [0] * end
        else:
            self._grid[self.row] = _BLANK

    def _erase_display(self, mode: int) -> None:
        g = self._grid
        if mode == 0:
            self._erase_line(0)
            for r in range(self.row + 1, self._rows):
                g[r] = _BLANK
        elif mode == 1:
            for r in range(self.row):
                g[r] = _BLANK
            self._erase_line(1)
        elif mode == 2:
            self._reset_wrap()
            for r in range(self._rows):
                g[r] = _BLANK
        elif mode == 3:
            self._sb.clear()
            self._sb_cost = 0

    def _insert_chars(self, n: int) -> None:
        line = self._grid[self.row]
        chars = line.chars
        styles = line.styles
        w = self._w
        x = self.col = self._edit_col()
        n = min(n, w - x)
        if x >= len(chars):
            return
        self._split(chars, styles, x)
        self._split(chars, styles, w - n)
        chars[x:x] = " " * n
        styles[x:x] = [0] * n
        del chars[w:]
        del styles[w:]
        # Trailing blanks show as nothing but count against max_bytes (as in the Rust core).
        # Found by comparing slices, in C, of doubling then halving sizes: a run of blanks
        # may be as long as the row is wide.
        kept = len(chars)
        size = 1
        while (
            kept >= size
            and chars[kept - size : kept] == [" "] * size
            and styles[kept - size : kept] == [0] * size
        ):
            kept -= size
            size *= 2
        while size > 1:
            size //= 2
            if (
                kept >= size
                and chars[kept - size : kept] == [" "] * size
                and styles[kept - size : kept] == [0] * size
            ):
                kept -= size
        del chars[kept:]
        del styles[kept:]

    def _delete_chars(self, n: int) -> None:
        """DCH; as in xterm, the row is no longer soft-wrapped."""
        line = self._grid[self.row]
        if line.wrapped:
            line.wrapped = False
        chars = line.chars
        styles = line.styles
        x = self.col = self._edit_col()
        n = min(n, self._w - x)
        if x >= len(chars):
            return
        self._split(chars, styles, x)
        self._split(chars, styles, x + n)
        del chars[x : x + n]
        del styles[x : x + n]

    def _erase_chars(self, n: int) -> None:
        """ECH; as in xterm (``ClearRight``), the row is no longer soft-wrapped."""
        line = self._grid[self.row]
        if line.wrapped:
            line.wrapped = False
        chars = line.chars
        styles = line.styles
        x = self.col = self._edit_col()
        end = min(x + n, self._w)
        if x >= len(chars):
            return
        self._split(chars, styles, x)
        self._split(chars, styles, end)
        end = min(end, len(chars))
        chars[x:end] = " " * (end - x)
        styles[x:end] = [0] * (end - x)

    def _sgr(self) -> None:
        groups = self._groups
        n = len(groups)
        fg, bg, flags = self._fg, self._bg, self._flags
        i = 0
        while i < n:
            g = groups[i]
            v = g[0]
            i += 1
            if v == 0:
                fg = bg = flags = 0
            elif v == 1:
                flags |= BOLD
            elif v == 2:
                flags |= DIM
            elif v == 3:
                flags |= ITALIC
            elif v == 4:
                if len(g) > 1 and g[1] == 0:
                    flags &= ~UNDERLINE
                else:
                    flags |= UNDERLINE
            elif v == 7:
                flags |= INVERSE
            elif v == 9:
                flags |= STRIKE
            elif v == 21:
                flags |= UNDERLINE
            elif v == 22:
                flags &= ~(BOLD | DIM)
            elif v == 23:
                flags &= ~ITALIC
            elif v == 24:
                flags &= ~UNDERLINE
            elif v == 27:
                flags &= ~INVERSE
            elif v == 29:
                flags &= ~STRIKE
            elif 30 <= v <= 37:
                fg = v - 30 + 1
            elif v == 39:
                fg = 0
            elif 40 <= v <= 47:
                bg = v - 40 + 1
            elif v == 49:
                bg = 0
            elif 90 <= v <= 97:
                fg = v - 90 + 9
            elif 100 <= v <= 107:
                bg = v - 100 + 9
            elif v == 38 or v == 48 or v == 58:
                color = -1
                if len(g) > 1:
                    # Colon form: 38:5:n, 38:2:r:g:b or 38:2:colourspace:r:g:b.
                    if g[1] == 5 and len(g) >= 3 and g[2] <= 255:
                        color = g[2] + 1
                    elif g[1] == 2 and len(g) >= 5:
                        r, gg, b = g[2:5] if len(g) == 5 else g[3:6]
                        if r <= 255 and gg <= 255 and b <= 255:
                            color = RGB_BIT | r << 16 | gg << 8 | b
                elif i < n and len(groups[i]) > 1:
                    # xterm's mixed form: 38;5:n, 38;2:r:g:b or 38;2:colourspace:r:g:b.
                    g2 = groups[i]
                    at = 2 if len(g2) > 4 else 1
                    if g2[0] == 5 and len(g2) > at and g2[at] <= 255:
                        color = g2[at] + 1
                    elif g2[0] == 2 and len(g2) >= at + 3:
                        r, gg, b = g2[at : at + 3]
                        if r <= 255 and gg <= 255 and b <= 255:
                            color = RGB_BIT | r << 16 | gg << 8 | b
                    i += 1
                elif i < n:
                    mode = groups[i][0]
                    if mode == 5:
                        if i + 1 < n:
                            idx = groups[i + 1][0]
                            if idx <= 255:
                                color = idx + 1
                            i += 2
                        else:
                            i = n
                    elif mode == 2:
                        if i + 3 < n:
                            r, gg, b = groups[i + 1][0], groups[i + 2][0], groups[i + 3][0]
                            if r <= 255 and gg <= 255 and b <= 255:
                                color = RGB_BIT | r << 16 | gg << 8 | b
                            i += 4
                        else:
                            i = n
                    else:
                        i += 1
                if color >= 0:
                    if v == 38:
                        fg = color
                    elif v == 48:
                        bg = color
        if (fg, bg, flags) != (self._fg, self._bg, self._flags):
            self._fg, self._bg, self._flags = fg, bg, flags
            self._pen_id = -1


def render_text(data: bytes | bytearray | memoryview) -> str:
    """The ``text`` view of a whole buffer fed to a fresh ``Terminal()``.

    The buffer is all there is: an incomplete UTF-8 sequence at its end becomes U+FFFD, as in
    ``data.decode("utf-8", "replace")``, where a stream would wait for the rest.
    """
    term = Terminal()
    term.feed(data)
    if term._utf8_tail:
        term._end_utf8_tail()
    return term.text
