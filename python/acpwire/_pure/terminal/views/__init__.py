"""Twin of src/terminal/views/mod.rs: what is read off the terminal.

``text`` and ``lines()`` (``text``), ``spans()`` (``spans``) and ``screen()`` (``screen``); the
rules are in docs/behaviour/terminal.md.
"""

from __future__ import annotations

from .screen import ScreenViewMixin
from .spans import SpansViewMixin
from .text import TextViewMixin

__all__ = ["ScreenViewMixin", "SpansViewMixin", "TextViewMixin"]
