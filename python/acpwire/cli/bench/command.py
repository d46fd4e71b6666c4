"""``acpwire bench``: the command: checks its options and outputs, runs the harness, prints."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ... import dumps
from ..output import fail

if TYPE_CHECKING:
    from rich.console import Console

COLOR_MODES = ("auto", "always", "never")
SHAPES = "shapes"


def console(color: str, stream: Any = None) -> Console:
    """Where the results are printed: styled on a terminal (``auto``, unless ``NO_COLOR`` is
    set and not empty), always or never; ``--color always`` overrides ``NO_COLOR``, as a
    command-line choice does."""
    from rich.console import Console

    file = stream if stream is not None else sys.stdout
    if color == "always":
        return Console(
            file=file, force_terminal=True, color_system="standard", no_color=False, highlight=False
        )
    if color == "never" or os.environ.get("NO_COLOR", ""):
        return Console(file=file, color_system=None, no_color=True, highlight=False)
    return Console(file=file, highlight=False)


def _log(enabled: bool) -> Any:
    def log(line: str) -> None:
        if enabled:
            print(line, file=sys.stderr)

    return log


def bench(
    *,
    trace: str | None,
    rounds: int,
    scale: float,
    only: str | None,
    json_out: str | None,
    plot_out: str | None,
    progress: bool,
    color: str = "auto",
) -> int:
    from .harness import plot, run_bench, table_text

    if rounds < 1 or not 0 < scale < float("inf"):
        return fail("bench", "--rounds must be at least 1 and --scale positive and finite")
    if color not in COLOR_MODES:
        return fail("bench", f"--color must be one of {', '.join(COLOR_MODES)}, not {color!r}")
    selected = {name.strip() for name in only.split(",")} if only else None
    shapes = selected is not None and SHAPES in selected
    if shapes and selected is not None:
        selected.discard(SHAPES)
        if trace is not None:
            return fail("bench", "--only shapes runs the built-in shape matrix, not a --trace")
    if plot_out:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return fail("bench", "--plot needs matplotlib (pip install 'acpwire[plot]')")
    # Where the results go is checked before the run, so that a long run is not lost to a
    # path that cannot be written.
    for target in (json_out, plot_out):
        if target:
            try:
                with open(target, "ab"):
                    pass
            except OSError as exc:
                return fail("bench", f"cannot write {target}: {exc.strerror or exc}")
    out = console(color)
    try:
        if shapes:
            from .shapes import run_shapes, shapes_text

            report = run_shapes(
                rounds=rounds, scale=scale, contenders=selected or None, log=_log(progress)
            )
            text = shapes_text(report)
        else:
            report = run_bench(
                trace=trace, rounds=rounds, scale=scale, contenders=selected, progress=progress
            )
            text = table_text(report)
    except OSError as exc:
        return fail("bench", f"cannot read {trace}: {exc.strerror or exc}")
    except ValueError as exc:
        return fail("bench", str(exc))
    out.print(text, soft_wrap=True)
    if json_out:
        with open(json_out, "wb") as fp:
            fp.write(dumps(report))
    if plot_out:
        plot(report, plot_out)
    return 1 if report["mismatches"] else 0
