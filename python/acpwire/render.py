"""Session rendering now lives in :mod:`acpwire.cli.render`; this import path stays."""

from .cli.render import FORMATS, render_page, render_session, visible

__all__ = ["FORMATS", "render_page", "render_session", "visible"]
