"""A pytest plugin run inside the official SDK's own test suite: its tests of
``SessionAccumulator``, ``spawn_agent_process`` and ``connect_to_agent`` run against
``acpwire.sdk``'s drop-ins.

Each collected test module's binding of those names is replaced by acpwire's, and only the tests
whose code names one of them are kept. ``ACPWIRE_BACKEND`` picks the backend, as for any import of
acpwire; the summary line reports which one ran and how many tests went through the drop-ins.
"""

from __future__ import annotations

import os

import pytest

import acpwire
from acpwire import sdk

DROP_INS = {
    "SessionAccumulator": sdk.SessionAccumulator,
    "spawn_agent_process": sdk.spawn_agent_process,
    "connect_to_agent": sdk.connect_to_agent,
}


_REBOUND: list[str] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(
        f"acpwire backend={acpwire.BACKEND} from {acpwire.__file__}; "
        f"tests through the drop-ins: {len(_REBOUND)}"
    )


def pytest_configure(config: pytest.Config) -> None:
    wanted = os.environ.get("ACPWIRE_BACKEND")
    if wanted and wanted != acpwire.BACKEND:
        raise pytest.UsageError(f"ACPWIRE_BACKEND={wanted} but acpwire runs {acpwire.BACKEND}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped = [], []
    for item in items:
        module = getattr(item, "module", None)
        function = getattr(item, "function", None)
        names = set(getattr(getattr(function, "__code__", None), "co_names", ()))
        rebound = [name for name in DROP_INS if name in names and hasattr(module, name)]
        for name in rebound:
            setattr(module, name, DROP_INS[name])
        (kept if rebound else dropped).append(item)
        if rebound:
            _REBOUND.append(item.nodeid)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
