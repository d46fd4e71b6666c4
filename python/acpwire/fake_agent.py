"""The fake agent now lives in :mod:`acpwire.cli.fake_agent`; this import path stays."""

from .cli.fake_agent import FakeAgent, TurnConfig, build_turn, main_async

__all__ = ["FakeAgent", "TurnConfig", "build_turn", "main_async"]
