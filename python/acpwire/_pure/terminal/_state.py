"""What the mixins of ``Terminal`` share, for type checkers: its attributes and the methods one
mixin calls on another.

``Terminal`` is one class whose methods are spread over one mixin per concern (as the Rust
core spreads ``impl Terminal`` over its modules), so each mixin reads state another sets. Each
mixin derives from :class:`TerminalState` only for type checkers (at run time its base is
``object``), which then check every attribute and cross-mixin call; a method declared here and
not defined by any mixin makes ``Terminal`` abstract (to mypy), so the two cannot drift apart.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections import deque
from typing import Any

from .line import _Line
from .screen import _Saved
from .style import _Style


class TerminalState:
    # Geometry and bounds.
    _cols: int | None
    _w: int
    _rows: int
    _sb_max: int
    _max_bytes: int
    _lock: threading.RLock
    _busy: bool
    # Parser state.
    _state: int
    _utf8_tail: bytes
    _inter: str
    _ignoring: bool
    _param: int
    _groups: list[list[int]]
    _cur: list[int]
    _count: int
    _first_digits: bool
    _osc: bytearray
    _osc_overflow: bool
    # Scrollback and counters.
    _sb: deque[_Line]
    _sb_cost: int
    _truncated: bool
    _bytes_fed: int
    _bell: int
    _title: str
    _title_bytes: int
    _progress: tuple[int, int | None] | None
    # Interned styles, links and grapheme clusters.
    _styles: list[_Style]
    _style_ids: dict[tuple[int, int, int, int], int]
    _links: list[str]
    _link_ids: dict[str, int]
    _link_bytes: int
    _clusters: set[str]
    _cluster_bytes: int
    # Screens, cursor, pen and modes.
    _prim: list[_Line]
    _alt: list[_Line] | None
    _alt_kept: list[_Line] | None
    _grid: list[_Line]
    _soft_wraps: bool
    row: int
    col: int
    _fg: int
    _bg: int
    _flags: int
    _link: int
    _pen_id: int
    _top: int
    _bot: int
    _autowrap: bool
    _saved: list[_Saved | None]
    _last: str
    _repeatable: str
    _origin: bool
    _tabs: bytearray | None

    # Methods one mixin calls on another.
    @abstractmethod
    def _soft_reset(self) -> None: ...
    @abstractmethod
    def _reset_params(self) -> None: ...
    @abstractmethod
    def _arg(self, i: int, default: int) -> int: ...
    @abstractmethod
    def _execute(self, b: int) -> None: ...
    @abstractmethod
    def _esc_dispatch(self, final: int) -> None: ...
    @abstractmethod
    def _csi(self, f: str) -> None: ...
    @abstractmethod
    def _plain_csi(self, params: bytes, final: int) -> None: ...
    @abstractmethod
    def _dispatch_plain_csi(self, params: bytes, final: bytes) -> None: ...
    @abstractmethod
    def _sgr(self) -> None: ...
    @abstractmethod
    def _osc_end(self) -> None: ...
    @abstractmethod
    def _print(self, s: str) -> None: ...
    @abstractmethod
    def _print_bytes(self, run: bytes) -> None: ...
    @abstractmethod
    def _put_narrow(self, s: str) -> None: ...
    @abstractmethod
    def _end_utf8_tail(self) -> None: ...
    @abstractmethod
    def _style(self) -> int: ...
    @abstractmethod
    def _combine(self, ch: str) -> None: ...
    @abstractmethod
    def _addressed_row(self, n: int) -> int: ...
    @abstractmethod
    def _edit_col(self) -> int: ...
    @abstractmethod
    def _writable_row(self) -> _Line: ...
    @abstractmethod
    def _delete_chars(self, n: int) -> None: ...
    @abstractmethod
    def _insert_chars(self, n: int) -> None: ...
    @abstractmethod
    def _erase_chars(self, n: int) -> None: ...
    @abstractmethod
    def _erase_display(self, mode: int) -> None: ...
    @abstractmethod
    def _erase_line(self, mode: int) -> None: ...
    @abstractmethod
    def _home(self) -> None: ...
    @abstractmethod
    def _index(self) -> None: ...
    @abstractmethod
    def _reverse_index(self) -> None: ...
    @abstractmethod
    def _reset_wrap(self) -> None: ...
    @abstractmethod
    def _save_cursor(self) -> None: ...
    @abstractmethod
    def _restore_cursor(self) -> None: ...
    @abstractmethod
    def _scroll_up(self, n: int) -> None: ...
    @abstractmethod
    def _scroll_down(self, n: int) -> None: ...
    @abstractmethod
    def _show_alternate(self) -> None: ...
    @abstractmethod
    def _show_primary(self) -> None: ...
    @abstractmethod
    def _next_tab(self, col: int) -> int: ...
    @abstractmethod
    def _tab_forward(self, n: int) -> None: ...
    @abstractmethod
    def _tab_back(self, n: int) -> None: ...
    @abstractmethod
    def _tab_stops(self) -> bytearray: ...
    @abstractmethod
    def _push_scrollback(self, lines: list[_Line]) -> None: ...
    @abstractmethod
    def _line_cost(self, line: _Line) -> int: ...
    @abstractmethod
    def _logical(self, styled: bool) -> list[tuple[str, list[tuple[str, int]]]]: ...
    @abstractmethod
    def _trim_runs(self, runs: list[list[Any]]) -> None: ...
    @staticmethod
    @abstractmethod
    def _split(chars: list[str], styles: list[int], x: int) -> None: ...
