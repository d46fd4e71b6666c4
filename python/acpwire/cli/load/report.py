"""The report of an ``acpwire load`` run: counts, percentiles, throughput and the client's own
costs, as JSON, as text, and as a plot."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .driver import LoadRun

__all__ = ["MEASURES", "draw_plot", "percentile", "summarise", "text_report"]

# Each measure of a turn: its report name, and the TurnMeasure attribute it comes from.
MEASURES = {
    "firstUpdateSeconds": "first_update",
    "firstTextSeconds": "first_text",
    "turnSeconds": "seconds",
    "updatesPerTurn": "updates",
    "bytesPerTurn": "bytes",
}


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile of ascending ``sorted_values``, interpolated linearly between
    the two nearest ranks (as numpy's default)."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    position = (len(sorted_values) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    weight = position - low
    return float(sorted_values[low] + (sorted_values[high] - sorted_values[low]) * weight)


def _statistics(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"count": 0, "p50": None, "p90": None, "p99": None, "mean": None, "max": None}
    ordered = sorted(values)
    return {
        "count": len(ordered),
        "p50": round(percentile(ordered, 0.50), 6),
        "p90": round(percentile(ordered, 0.90), 6),
        "p99": round(percentile(ordered, 0.99), 6),
        "mean": round(sum(ordered) / len(ordered), 6),
        "max": round(ordered[-1], 6),
    }


def summarise(run: LoadRun) -> dict[str, Any]:
    """The run's report as plain data (what ``--json`` writes).

    Measures are taken over the turns that completed (no error); ``failures`` counts every
    failed turn, session and connection, each detailed in ``failureDetails``.
    """
    completed = [t for t in run.turns if t.error is None]
    updates = sum(t.updates for t in run.turns)
    total_bytes = sum(t.bytes for t in run.turns)
    seconds = run.seconds or float("nan")
    measures = {
        name: _statistics([v for t in completed if (v := getattr(t, attribute)) is not None])
        for name, attribute in MEASURES.items()
    }
    rss = [s["rssBytes"] for s in run.samples if s["rssBytes"]]
    options = run.options
    return {
        "command": options.command,
        "agents": options.agents,
        "sessionsPerAgent": options.sessions,
        "turns": len(completed),
        "turnsStarted": len(run.turns),
        "updates": updates,
        "bytes": total_bytes,
        "failures": len(run.failures),
        "badFrames": run.bad_frames,
        "seconds": round(run.seconds, 3),
        "turnsPerSecond": _rate(len(completed), seconds),
        "updatesPerSecond": _rate(updates, seconds),
        "bytesPerSecond": _rate(total_bytes, seconds),
        "stopReasons": dict(Counter(str(t.stop_reason) for t in completed)),
        "protocolVersions": {str(k): v for k, v in sorted(run.protocol_versions.items())},
        "permissions": dict(run.permissions),
        "clientRequests": {
            "served": run.client_requests_served,
            "failed": run.client_requests_failed,
            "refused": run.client_requests_refused,
        },
        "measures": measures,
        "client": {
            "cpuSeconds": round(run.client_cpu_seconds, 4),
            "processCpuSeconds": round(run.process_cpu_seconds, 4),
            # What reading, measuring (and reducing, unless --no-reduce) costs the client.
            "cpuMicrosecondsPerUpdate": round(1e6 * run.client_cpu_seconds / updates, 2)
            if updates
            else None,
            "peakRssBytes": max(rss) if rss else None,
            "reduceErrors": run.reduce_errors if options.reduce else None,
            "samples": run.samples,
        },
        "failureDetails": [f.as_dict() for f in run.failures],
        "traces": run.traces,
        "turnDetails": [t.as_dict() for t in run.turns],
    }


def _rate(count: float, seconds: float) -> float | None:
    return round(count / seconds, 3) if seconds > 0 else None


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1e3:.1f} ms" if value < 10 else f"{value:.2f} s"


def text_report(report: dict[str, Any]) -> list[str]:
    """The report as lines for a terminal. Strings the agent chose (stop reasons, its
    standard error) are shown with their control characters escaped."""
    from ..render import visible

    shown = visible(report, keys=True)
    lines = [
        f"{shown['agents']} agents × {shown['sessionsPerAgent']} sessions: "
        f"{shown['turns']} turns, {shown['updates']:,} updates, {shown['bytes']:,} bytes "
        f"in {shown['seconds']:.2f} s; {shown['failures']} failures"
        + (f", {shown['badFrames']} bad frames" if shown["badFrames"] else ""),
        f"throughput: {shown['turnsPerSecond'] or 0:,.2f} turns/s, "
        f"{shown['updatesPerSecond'] or 0:,.0f} updates/s, "
        f"{(shown['bytesPerSecond'] or 0) / 2**20:,.2f} MiB/s",
    ]
    header = f"{'measure':<20}{'p50':>12}{'p90':>12}{'p99':>12}{'mean':>12}{'max':>12}"
    lines.append(header)
    for name, stats in shown["measures"].items():
        if name.endswith("Seconds"):
            cells = [_seconds(stats[k]) for k in ("p50", "p90", "p99", "mean", "max")]
        else:
            cells = [
                "-" if stats[k] is None else f"{stats[k]:,.0f}"
                for k in ("p50", "p90", "p99", "mean", "max")
            ]
        lines.append(f"{name:<20}" + "".join(f"{c:>12}" for c in cells))
    stops = ", ".join(f"{k} ×{v}" for k, v in shown["stopReasons"].items()) or "none"
    lines.append(f"stop reasons: {stops}")
    requests = shown["clientRequests"]
    if any(requests.values()) or shown["permissions"]:
        permissions = ", ".join(f"{k} ×{v}" for k, v in shown["permissions"].items()) or "none"
        lines.append(
            f"permission requests: {permissions}; client requests: {requests['served']} "
            f"served, {requests['failed']} answered with an error, {requests['refused']} refused"
        )
    client = shown["client"]
    per_update = client["cpuMicrosecondsPerUpdate"]
    peak = client["peakRssBytes"]
    lines.append(
        f"client: {client['cpuSeconds']:.3f} s CPU"
        + ("" if per_update is None else f", {per_update:,.1f} µs per update")
        + ("" if peak is None else f", peak RSS {peak / 2**20:,.1f} MiB")
    )
    for failure in shown["failureDetails"]:
        where = f"agent {failure['agent']}"
        if failure["session"] is not None:
            where += f" session {failure['session']}"
        if failure["turn"] is not None:
            where += f" turn {failure['turn']}"
        lines.append(f"failure: {where}: {failure['reason']}")
        lines.extend(f"  | {line}" for line in failure["stderrTail"].splitlines()[-5:])
    for trace in shown["traces"]:
        lines.append(f"trace: {trace}")
    return lines


def draw_plot(report: dict[str, Any], path: str) -> None:
    """A latency histogram and a timeline (each turn's latency at its start, the client's RSS)
    in one PNG or SVG at ``path``. Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    turns = [t for t in report["turnDetails"] if t["turnSeconds"] is not None]
    figure, (histogram, timeline) = plt.subplots(1, 2, figsize=(12, 4.5))
    latencies = [t["turnSeconds"] for t in turns if t["error"] is None]
    histogram.hist(latencies or [0.0], bins=min(50, max(5, len(latencies) // 4 or 5)))
    histogram.set_xlabel("turn latency (s)")
    histogram.set_ylabel("turns")
    histogram.set_title("Turn latency")
    for name in ("p50", "p90", "p99"):
        value = report["measures"]["turnSeconds"][name]
        if value is not None:
            histogram.axvline(value, linestyle="--", linewidth=1)
            histogram.annotate(name, (value, 0), rotation=90, fontsize=8)
    ok = [t for t in turns if t["error"] is None]
    bad = [t for t in turns if t["error"] is not None]
    timeline.scatter(
        [t["start"] for t in ok], [t["turnSeconds"] for t in ok], s=8, label="turn latency"
    )
    if bad:
        timeline.scatter(
            [t["start"] for t in bad],
            [t["turnSeconds"] for t in bad],
            s=16,
            marker="x",
            label="failed turn",
        )
    timeline.set_xlabel("run time (s)")
    timeline.set_ylabel("turn latency (s)")
    timeline.set_title("Timeline")
    samples = report["client"]["samples"]
    if samples:
        memory = timeline.twinx()
        memory.plot(
            [s["t"] for s in samples],
            [s["rssBytes"] / 2**20 for s in samples],
            linewidth=1,
            color="gray",
            label="client RSS",
        )
        memory.set_ylabel("client RSS (MiB)")
    timeline.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
