"""``acpwire bench``: acpwire against what Python ACP clients use today, in one run.

Every contender reduces the same workload bytes; rounds are interleaved (round 1 of every
contender, then round 2, ...) so that drift on a shared machine hits all alike, and the table
reports the median round with its spread. The two acpwire backends must reach the same final
state: a digest of every session snapshot is compared, and a mismatch is reported loudly.
The baselines reduce less than ``Sessions`` does, so for them the check is the text of every
message, which they do compute.
"""

from __future__ import annotations

import hashlib
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from ... import __version__, dumps
from . import baselines
from .workloads.sessions import heavy_terminal, mixed_sessions, token_stream

__all__ = ["Result", "run_bench"]

FEED_CHUNK = 1 << 20


def _workloads(scale: float) -> dict[str, Callable[[], bytes]]:
    return {
        "token stream": lambda: token_stream(n=max(1000, int(100_000 * scale))),
        "heavy terminal": lambda: heavy_terminal(size_bytes=max(100_000, int(24e6 * scale))),
        "mixed sessions": lambda: mixed_sessions(updates=max(1000, int(40_000 * scale))),
    }


# Bytes of a workload each slow contender gets, so that the default run stays near a minute;
# its throughput is measured on that prefix.
_CAPS = {"pure": 3_000_000, "sdk": 8_000_000, "pyte": 1_000_000}


def _prefix(data: bytes, cap: int | None) -> bytes:
    if cap is None or len(data) <= cap:
        return data
    end = data.rfind(b"\n", 0, cap)
    return data[: end + 1] if end > 0 else data


def snapshot_digest(store: Any) -> str:
    """A digest of every session's snapshot, independent of dict order."""
    digest = hashlib.sha256()
    for session_id in store.ids():
        snap = store[session_id].snapshot()
        digest.update(json.dumps(snap, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def message_texts(store: Any) -> dict[tuple[str, str, str], str]:
    """(sessionId, role, messageId) -> text, from a Sessions store."""
    texts = {}
    for session_id in store.ids():
        for message in store[session_id].snapshot()["messages"]:
            content = message.get("content") or []
            blocks = content if isinstance(content, list) else [content]
            texts[(session_id, message["role"], message["id"])] = "".join(
                b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            )
    return texts


@dataclass
class Result:
    workload: str
    contender: str
    label: str
    bytes: int
    messages: int
    seconds: list[float] = field(default_factory=list)
    check: str = ""
    excluded: bool = False

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def rate(self, seconds: float | None = None) -> float:
        return self.bytes / (seconds if seconds is not None else self.median) / 1e6

    def as_dict(self) -> dict[str, Any]:
        timed = bool(self.seconds)  # a contender that could not reduce the input has no times
        return {
            "workload": self.workload,
            "contender": self.contender,
            "label": self.label,
            "bytes": self.bytes,
            "messages": self.messages,
            "seconds": self.seconds,
            "median_seconds": self.median if timed else None,
            "mb_per_s": self.rate() if timed else None,
            "mb_per_s_min": self.rate(max(self.seconds)) if timed else None,
            "mb_per_s_max": self.rate(min(self.seconds)) if timed else None,
            "messages_per_s": self.messages / self.median if timed else None,
            "check": self.check,
            "excluded": self.excluded,
        }


def stream_pieces(data: bytes) -> list[bytes]:
    """``data`` as a stream reader hands it over: pieces of ``FEED_CHUNK`` bytes, cut anywhere.

    Cut before the clock starts, as a reader's buffers arrive already made; the baselines'
    own cutting into lines (their ``split``) is part of their timed work.
    """
    return [data[start : start + FEED_CHUNK] for start in range(0, len(data), FEED_CHUNK)]


def _sessions_runner(module: Any) -> Callable[[list[bytes]], Any]:
    def run(pieces: list[bytes]) -> Any:
        store = module.Sessions()
        for piece in pieces:
            store.feed(piece)
        store.finish()
        return store

    return run


def _baseline_runner(cls: type[baselines.Baseline]) -> Callable[[bytes], Any]:
    def run(data: bytes) -> Any:
        reducer = cls()
        reducer.feed_lines(data.split(b"\n"))
        return reducer

    return run


def _unchanged(data: bytes) -> bytes:
    return data


# (key, label, run, prepare): `prepare` makes run's input from the workload's bytes, untimed.
Contender = tuple[str, str, Callable[[Any], Any], Callable[[bytes], Any]]


def _contenders(selected: set[str] | None) -> list[Contender]:
    from ... import _pure

    found: list[Contender] = []
    try:
        from ... import _native
    except ImportError:
        _native = None  # type: ignore[assignment]
    if _native is not None:
        found.append(("native", "acpwire native", _sessions_runner(_native), stream_pieces))
    found.append(("pure", "acpwire pure", _sessions_runner(_pure), stream_pieces))
    for key, cls in baselines.available().items():
        found.append((key, cls.name, _baseline_runner(cls), _unchanged))
    if selected:
        found = [c for c in found if c[0] in selected]
    return found


def run_bench(
    *,
    trace: str | None = None,
    rounds: int = 5,
    scale: float = 1.0,
    contenders: set[str] | None = None,
    progress: bool = True,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> dict[str, Any]:
    """Run the benchmark; return a JSON-serializable report (see ``acpwire bench --json``)."""
    workloads: dict[str, Callable[[], bytes]]
    if trace is not None:
        data, recorded = _trace_input(trace)
        if not data.strip():
            raise ValueError(f"{trace} holds no frames to reduce")
        name = f"{trace} (its recorded messages)" if recorded else trace
        workloads = {name: lambda: data}
    else:
        workloads = _workloads(scale)
    chosen = _contenders(contenders)
    if not chosen:
        raise ValueError("no contender selected is available")
    inputs: dict[str, bytes] = {}
    for name, make in workloads.items():
        log(f"generating {name} ...")
        inputs[name] = make()
    plan: list[tuple[str, str, str, Callable[[Any], Any], Any]] = []
    results: dict[tuple[str, str], Result] = {}
    for workload, data in inputs.items():
        for key, label, run, prepare in chosen:
            # pyte renders terminal output only: time it where that is nearly all the bytes.
            if key == "pyte" and data.count(b"terminal_output_chunk") * 20 < data.count(b"\n"):
                continue
            piece = _prefix(data, _CAPS.get(key))
            results[(workload, key)] = Result(
                workload, key, label, len(piece), piece.count(b"\n") + (not piece.endswith(b"\n"))
            )
            plan.append((workload, key, label, run, prepare(piece)))
    bar = _progress(len(plan) * rounds, progress)
    finals: dict[tuple[str, str], Any] = {}
    failed: set[tuple[str, str]] = set()
    for _ in range(rounds):
        for workload, key, label, run, piece in plan:
            bar.set_description(f"{workload}: {label}")
            if (workload, key) in failed:
                bar.update(1)
                continue
            start = time.perf_counter()
            try:
                outcome = run(piece)
            except Exception as exc:
                if key in ("native", "pure"):
                    raise
                # A baseline's parser or models refuse what a trace holds (a bad line, say):
                # it is listed as such, and the others are still timed.
                failed.add((workload, key))
                result = results[(workload, key)]
                result.check = f"could not reduce it: {type(exc).__name__}: {str(exc)[:120]}"
                result.excluded = True
                bar.update(1)
                continue
            results[(workload, key)].seconds.append(time.perf_counter() - start)
            finals[(workload, key)] = outcome
            bar.update(1)
    bar.close()
    mismatches = _check(results, finals, inputs, chosen)
    return {
        "acpwire": __version__,
        "native_build": native_build(),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "platform": platform.platform(),
        "rounds": rounds,
        "results": [r.as_dict() for r in results.values()],
        "mismatches": mismatches,
    }


def _trace_input(path: str) -> tuple[bytes, bool]:
    """A trace's bytes, and whether it holds records: a recorded trace is timed on the
    messages its records hold, one per line, as the traffic they were recorded from."""
    from ..traces import iter_trace, sniff

    with open(path, "rb") as fp:
        head, recorded = sniff(fp, strict=False)
        if not recorded:
            return head + fp.read(), False
    messages = (entry.message for entry in iter_trace(path) if entry.error is None)
    return b"".join(dumps(message) for message in messages if message is not None), True


def native_build() -> str | None:
    """How the installed extension was built ("release, plain" or "release, profile-guided",
    the release wheels' build), or None without it."""
    try:
        from ... import _native
    except ImportError:
        return None
    return str(_native._build)


def _check(
    results: dict[tuple[str, str], Result],
    finals: dict[tuple[str, str], Any],
    inputs: dict[str, bytes],
    chosen: list[Contender],
) -> list[str]:
    """Compare every contender's final state with the native (or pure) reducer's."""
    from ... import _pure

    reference_module: Any = _pure
    try:
        from ... import _native

        reference_module = _native
    except ImportError:
        pass
    mismatches: list[str] = []
    references: dict[tuple[str, int], Any] = {}
    for workload, data in inputs.items():
        for key, _, _, _ in chosen:
            result = results.get((workload, key))
            final = finals.get((workload, key))
            if result is None or final is None:
                continue
            if (workload, result.bytes) not in references:
                reduce = _sessions_runner(reference_module)
                references[(workload, result.bytes)] = reduce(stream_pieces(data[: result.bytes]))
            expected = references[(workload, result.bytes)]
            if key in ("native", "pure"):
                digest = snapshot_digest(final)
                same = digest == snapshot_digest(expected)
                if not same:
                    result.check = "MISMATCH"
                elif key == "native" or result.bytes == len(data):
                    result.check = f"snapshot digest {digest}"
                else:
                    result.check = f"snapshot digest {digest}, as native's on the same prefix"
                if not same:
                    mismatches.append(f"{workload}: {result.label} disagrees with the reference")
            elif hasattr(final, "message_texts"):
                theirs, ours = final.message_texts(), message_texts(expected)
                wrong = sum(theirs.get(k) != v for k, v in ours.items()) + len(theirs.keys() - ours)
                result.check = (
                    "message texts equal"
                    if not wrong
                    else f"{wrong} of {len(ours)} message texts differ (no upsert/replace rules)"
                )
            elif hasattr(final, "count"):
                updates = data[: result.bytes].count(b'"session/update"')
                result.check = f"decode only; the SDK's models took {final.count} of {updates}"
                # Failing validation early is cheap: a rate over mostly refused updates would
                # flatter the SDK, so such rows are listed apart.
                result.excluded = final.count < 0.9 * updates
            else:
                result.check = "renders terminal output only"
    return mismatches


class _NoBar:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.enabled = total, 0, enabled

    def set_description(self, text: str) -> None:
        self.text = text

    def update(self, n: int) -> None:
        self.done += n
        if self.enabled:
            print(f"\r[{self.done}/{self.total}] {self.text[:60]:<60}", end="", file=sys.stderr)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def _progress(total: int, enabled: bool) -> Any:
    if enabled:
        try:
            from tqdm import tqdm

            return tqdm(total=total, unit="run", file=sys.stderr, dynamic_ncols=True)
        except ImportError:
            pass
    return _NoBar(total, enabled)


def format_table(report: dict[str, Any]) -> str:
    """The results as an aligned text table, one block per workload."""
    return table_text(report).plain


def table_text(report: dict[str, Any]) -> Text:
    """The results as aligned text, styled for a terminal (``.plain`` for the bare text)."""
    out = Text()
    if report.get("native_build"):
        out.append(f"acpwire native build: {report['native_build']}\n\n", style="dim")
    by_workload: dict[str, list[dict[str, Any]]] = {}
    for row in report["results"]:
        by_workload.setdefault(row["workload"], []).append(row)
    for workload, rows in by_workload.items():
        native = next((r for r in rows if r["contender"] == "native"), rows[0])
        out.append(f"{workload}\n", style="bold")
        header = f"  {'contender':<38} {'MB/s':>9} {'spread':>17} {'msg/s':>12} {'vs native':>10}"
        out.append(header + "\n", style="bold")
        for r in sorted(rows, key=lambda r: (r["excluded"], -(r["mb_per_s"] or 0))):
            if r["excluded"]:
                out.append(f"  {r['label']:<38} ")
                out.append(f"not comparable: {r['check']}\n", style="yellow")
                continue
            spread = f"{r['mb_per_s_min']:.1f}–{r['mb_per_s_max']:.1f}"
            ratio = r["mb_per_s"] / native["mb_per_s"]
            ours = r["contender"] in ("native", "pure")
            out.append(f"  {r['label']:<38}", style="cyan" if ours else "")
            out.append(f" {r['mb_per_s']:>9.1f}")
            out.append(f" {spread:>17}", style="dim")
            out.append(f" {r['messages_per_s']:>12,.0f} ")
            # A baseline faster than native is worth seeing at a glance.
            style = "red" if ratio > 1 and not ours else ""
            out.append(f"{ratio:>9.3f}×\n", style=style)
            if r["check"]:
                mismatch = r["check"] == "MISMATCH"
                out.append(f"  {'':<38} {r['check']}\n", style="bold red" if mismatch else "dim")
        out.append("\n")
    if report["mismatches"]:
        out.append("!!! ACPWIRE BACKENDS DISAGREE ON THE FINAL STATE:\n", style="bold red")
        for m in report["mismatches"]:
            out.append(f"!!!   {m}\n", style="bold red")
    else:
        out.append("native and pure reached the same final state (snapshot digests equal)")
    out.rstrip()
    return out


def _bars(
    ax: Any, groups: list[str], series: dict[str, dict[str, tuple[float, float, float]]]
) -> None:
    """Grouped bars with spread bars: ``series[label][group] = (value, low, high)``.

    Each group holds only the series it has, side by side and centred, so that a contender
    missing from a group leaves no gap; a label keeps its colour in every group.
    """
    colours = {label: f"C{i}" for i, label in enumerate(series)}
    for j, group in enumerate(groups):
        present = [label for label in series if group in series[label]]
        width = 0.8 / max(1, len(present))
        for k, label in enumerate(present):
            value, low, high = series[label][group]
            x = j - 0.4 + (k + 0.5) * width
            ax.bar(x, value, width, color=colours[label])
            ax.errorbar(
                x,
                value,
                yerr=[[max(0.0, value - low)], [max(0.0, high - value)]],
                fmt="none",
                ecolor="black",
                capsize=3,
                linewidth=1,
            )
    from matplotlib.patches import Patch

    handles = [Patch(color=colours[label], label=label) for label in series]
    ax.figure.legend(handles=handles, loc="lower center", ncol=3, fontsize="small", frameon=False)
    ax.set_xticks(range(len(groups)))


def plot(report: dict[str, Any], path: str) -> None:
    """A grouped bar chart with spread bars (needs matplotlib): MB/s per workload and contender
    (bars from the slowest to the fastest round), or for the shape matrix the ratio per shape
    (bars over the interquartile range of the per-round ratios)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, dict[str, tuple[float, float, float]]] = {}
    if report.get("kind") == "shapes":
        groups = [row["shape"] for row in report["shapes"]]
        for row in report["shapes"]:
            for pair, cell in row["ratios"].items():
                mine, base = pair.split("/")
                label = f"{report['contenders'][base]} ÷ {report['contenders'][mine]}"
                series.setdefault(label, {})[row["shape"]] = (
                    cell["median"],
                    cell["q1"],
                    cell["q3"],
                )
        fig, ax = plt.subplots(figsize=(max(10, 1.1 * len(groups)), 6))
        _bars(ax, groups, series)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_ylabel("baseline time ÷ acpwire time (log scale; median, IQR)")
        ax.set_title(f"acpwire shape matrix, {report['rounds']} interleaved rounds")
        ax.set_xticklabels(groups, rotation=30, ha="right", fontsize="small")
        bottom = 0.3
    else:
        groups = list(dict.fromkeys(r["workload"] for r in report["results"]))
        for r in report["results"]:
            if not r["excluded"] and r["mb_per_s"]:
                series.setdefault(r["label"], {})[r["workload"]] = (
                    r["mb_per_s"],
                    r["mb_per_s_min"],
                    r["mb_per_s_max"],
                )
        fig, ax = plt.subplots(figsize=(10, 5))
        _bars(ax, groups, series)
        ax.set_ylabel("MB/s (log scale; median round, slowest to fastest)")
        ax.set_title(f"acpwire {report['acpwire']} session reduction, Python {report['python']}")
        ax.set_xticklabels(groups)
        bottom = 0.12
    ax.set_yscale("log")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
