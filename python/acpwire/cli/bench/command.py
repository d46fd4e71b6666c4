"""``acpwire bench``: the command: checks its options and outputs, runs the harness, prints."""

from __future__ import annotations

from ... import dumps
from ..output import fail


def bench(
    *,
    trace: str | None,
    rounds: int,
    scale: float,
    only: str | None,
    json_out: str | None,
    plot_out: str | None,
    progress: bool,
) -> int:
    from .harness import format_table, plot, run_bench

    if rounds < 1 or not 0 < scale < float("inf"):
        return fail("bench", "--rounds must be at least 1 and --scale positive and finite")
    selected = {name.strip() for name in only.split(",")} if only else None
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
    try:
        report = run_bench(
            trace=trace, rounds=rounds, scale=scale, contenders=selected, progress=progress
        )
    except OSError as exc:
        return fail("bench", f"cannot read {trace}: {exc.strerror or exc}")
    except ValueError as exc:
        return fail("bench", str(exc))
    print(format_table(report))
    if json_out:
        with open(json_out, "wb") as fp:
            fp.write(dumps(report))
    if plot_out:
        plot(report, plot_out)
    return 1 if report["mismatches"] else 0
