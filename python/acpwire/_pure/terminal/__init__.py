"""Twin of src/terminal/mod.rs: the display-only ``Terminal`` (config, feed and reset, views and
accessors), the pure-Python twin of ``src/terminal``.

Bytes from an ACP ``terminal_output_chunk`` stream go through an incremental UTF-8 decoder
(``utf8``) and a DEC/ECMA-48 escape parser (``parser``: Paul Williams' state machine, the one the
``vte`` crate implements) into a grid of cells with interned styles (``screen``, ``line``,
``cell``, ``style``), read by the views (``views``). Every rule mirrors the Rust core's, so both
backends give the same ``text``, ``lines()``, ``spans()``, ``screen()`` and ``cursor`` for any
input and any chunking: the model, the bounds and what is not implemented are in
docs/behaviour/terminal.md.

``Terminal`` is one class; its methods are spread over one mixin per concern, as the Rust core
spreads ``impl Terminal`` over its modules.
"""

from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..._errors import TerminalDataError
from ..._span import Span
from .._args import Unpicklable, at_most, buffer_bytes, size
from ..base64 import _decode_base64
from .cell import CellMixin
from .csi import CsiMixin
from .execute import ExecuteMixin
from .line import _BLANK, _LINE_COST, _Line
from .osc import OscMixin
from .params import ParamsMixin
from .parser import GROUND, ParserMixin
from .print import PrintMixin
from .screen import ScreenMixin, _Saved
from .scrollback import ScrollbackMixin
from .sgr import SgrMixin, _sgr_memo  # noqa: F401
from .style import _INTERNED_COST, StyleMixin, _Style
from .utf8 import Utf8Mixin, _utf8_len
from .views import ScreenViewMixin, SpansViewMixin, TextViewMixin
from .width import char_width

__all__ = ["Span", "Terminal", "TerminalDataError", "char_width", "render_text"]
# Besides these, the session store imports `MAX_COLS`, `_decode_base64` and `_locked` from here,
# and the tests read `_sgr_memo`.

# UNBOUNDED_COLS: the row width of ``cols=None`` (longer lines soft-wrap, and every view joins
# them again). MAX_COLS, MAX_ROWS: escape sequences address at most column and row 65535.
from ..._contract import MAX_COLS, MAX_ROWS, UNBOUNDED_COLS

# A method: the decorators below return it with its signature unchanged (`functools.wraps`
# keeps it for introspection too), so type checkers and stubtest see the method as written.
_Method = TypeVar("_Method", bound=Callable[..., Any])


def _locked(method: _Method) -> _Method:
    """Run ``method`` holding ``self._lock``. A terminal (or a session store) fed on one thread
    can be read from another, which then waits for the current feed, as in the native backend.
    """

    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast("_Method", locked)


def _changing(method: _Method) -> _Method:
    """``_locked``, for a call that changes the terminal: the same thread calling again in the
    middle of one (a finalizer run by a garbage collection inside a feed, say) is refused with
    RuntimeError, as the native terminal refuses a second borrow, instead of feeding into a
    half-applied state."""

    @functools.wraps(method)
    def changing(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            # Other threads wait on the lock: a busy terminal here is this thread's own call.
            if self._busy:
                raise RuntimeError("Already borrowed")
            self._busy = True
            try:
                return method(self, *args, **kwargs)
            finally:
                self._busy = False

    return cast("_Method", changing)


class Terminal(
    ParserMixin,
    ParamsMixin,
    Utf8Mixin,
    PrintMixin,
    ExecuteMixin,
    CsiMixin,
    SgrMixin,
    OscMixin,
    StyleMixin,
    ScreenMixin,
    CellMixin,
    ScrollbackMixin,
    TextViewMixin,
    SpansViewMixin,
    ScreenViewMixin,
    Unpicklable,
):
    """A display-only terminal fed with raw PTY bytes (the model: docs/behaviour/terminal.md).

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
        self._styles: list[_Style] = [_Style(0, 0, 0, 0)]
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
        self._saved: list[_Saved | None] = [None, None]
        # The last character printed, while nothing else has happened since.
        self._last = ""
        # What REP repeats: the character printed just before the escape sequence now being
        # read, as xterm keeps it (anything but printing in between forgets it).
        self._repeatable = ""
        # DECOM: rows are addressed from the top margin and stay within the margins.
        self._origin = False
        # Tab stops set by HTS/TBC, a byte per column (1 = stop); None until then: every 8.
        self._tabs: bytearray | None = None

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
        return self._spans()

    @_locked
    def screen(self) -> list[str] | None:
        """The visible rows of the active screen (None when ``cols`` is None)."""
        if self._cols is None:
            return None
        return self._screen_rows()

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
        self._styles = [_Style(0, 0, 0, 0)]
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
        for saved in self._saved:
            if saved is not None:
                saved.link = relink(saved.link)
        self._link_bytes = sum(_utf8_len(uri) for uri in self._links)
        self._truncated = True

    def _kept_bytes(self) -> int:
        """What ``_drop_retained`` would leave of ``_retained_bytes``: the links the pen and
        the saved cursors carry (each once), the title and a pending OSC sequence."""
        carried = {self._link, *(saved.link for saved in self._saved if saved is not None)}
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
