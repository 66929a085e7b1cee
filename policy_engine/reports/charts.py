"""The simulation charts as PNG bytes, drawn with matplotlib (``Figure`` objects: no pyplot, no display).

``timeline_png``: one lane per job; own-capacity stays solid blue, borrowed stays hatched
orange, preemptions a red ✕, waiting a thin grey line. ``utilisation_png``: stacked areas
per share and instance type (own use, borrowed, lent, idle) with the share's limit dashed.
What they show comes from ``chart_data``; this module only draws it.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from policy_engine.reports.chart_data import Lane, UtilisationSeries
from policy_engine.reports.safe_text import mathtext

OWN, BORROWED, LENT, IDLE = "#4c72b0", "#dd8452", "#55a868", "#d9d9d9"
PREEMPTION, FAILED, WAITING = "#d62728", "#000000", "#9e9e9e"
#: A timeline taller than this many lanes is unreadable; the title says how many were left out.
MAX_LANES = 60


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")  # Agg canvas: PNG without a display
    return buffer.getvalue()


def _time_unit(end: float) -> tuple[float, str]:
    """The unit that reads best for the span: hours, minutes or seconds."""
    if end >= 3 * 3600:
        return 3600.0, "hours"
    return (60.0, "minutes") if end >= 180 else (1.0, "seconds")


def _time_axis(axis, end: float, unit: tuple[float, str]) -> None:
    axis.set_xlim(0, max(end / unit[0], 1e-9))
    axis.set_xlabel(f"simulated time ({unit[1]})")


def timeline_png(share: str, lanes: list[Lane], end: float) -> bytes:
    """One share's jobs over time."""
    shown = lanes[:MAX_LANES]
    unit = _time_unit(end)
    scale = unit[0]
    height = 1.4 + 0.32 * len(shown)
    figure = Figure(figsize=(10, height))
    axis = figure.subplots()
    bars: dict[bool, tuple[list, list, list]] = {False: ([], [], []), True: ([], [], [])}  # borrowed? -> y, x, w
    waits: tuple[list, list, list] = ([], [], [])
    marks: dict[str, tuple[list, list]] = {"preempted": ([], []), "failed": ([], [])}
    for row, lane in enumerate(shown):
        y = len(shown) - 1 - row
        starts = [segment.start for segment in lane.segments]
        ends = [lane.submitted_at] + [segment.end for segment in lane.segments]
        if lane.status == "RUNNABLE":  # still waiting at the report time
            starts.append(end)
        for wait_from, wait_to in zip(ends, starts, strict=False):
            if wait_to > wait_from:
                for column, value in zip(waits, (y, wait_from / scale, wait_to / scale), strict=True):
                    column.append(value)
        for segment in lane.segments:
            ys, xs, widths = bars[segment.borrowed]
            ys.append(y)
            xs.append(segment.start / scale)
            widths.append(max(segment.end - segment.start, end * 0.002) / scale)
            kind = "preempted" if segment.outcome == "preempted" else (
                "failed" if segment.outcome in ("failed", "terminated") else None)
            if kind:
                marks[kind][0].append(segment.end / scale)
                marks[kind][1].append(y)
    # one artist per kind, not per segment: a 60-lane chart draws in a fraction of a second
    axis.hlines(*waits, color=WAITING, linewidth=1.5)
    for borrowed, (ys, xs, widths) in bars.items():
        axis.barh(ys, widths, left=xs, height=0.7, color=BORROWED if borrowed else OWN,
                  hatch="///" if borrowed else None, edgecolor="white", linewidth=0.5)
    axis.plot(*marks["preempted"], linestyle="", marker="X", color=PREEMPTION, markersize=11, markeredgecolor="white")
    axis.plot(*marks["failed"], linestyle="", marker="x", color=FAILED, markersize=9)
    labels = [f"{mathtext(lane.job)} (p{lane.priority}, {lane.instances}×)" for lane in reversed(shown)]
    axis.set_yticks(range(len(shown)), labels)
    axis.set_ylim(-0.8, len(shown) - 0.2)
    _time_axis(axis, end, unit)
    left_out = len(lanes) - len(shown)
    more = f" (first {len(shown)} of {len(lanes)} jobs)" if left_out else ""
    axis.set_title(f"{mathtext(share)}: jobs over time{more}")
    axis.grid(axis="x", alpha=0.3)
    handles = [Patch(facecolor=OWN, label="on own capacity"),
               Patch(facecolor=BORROWED, hatch="///", edgecolor="white", label="on borrowed capacity"),
               Line2D([], [], color=WAITING, linewidth=1.5, label="waiting"),
               Line2D([], [], marker="X", color=PREEMPTION, linestyle="", markersize=9, label="preempted"),
               Line2D([], [], marker="x", color=FAILED, linestyle="", markersize=8, label="failed / terminated")]
    axis.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    return _png(figure)


def utilisation_png(series: UtilisationSeries, end: float) -> bytes:
    """Instances of one type a share used (own, borrowed), lent out, or left idle, over time."""
    figure = Figure(figsize=(10, 2.8))
    axis = figure.subplots()
    unit = _time_unit(end)
    times = [t / unit[0] for t in series.times]
    axis.stackplot(times, series.own, series.borrowed, series.lent, series.idle, step="post",
                   colors=[OWN, BORROWED, LENT, IDLE], labels=["own use", "borrowed", "lent to others", "idle"])
    axis.axhline(series.limit, color="black", linestyle="--", linewidth=1, label=f"own limit ({series.limit})")
    top = max((o + b + lent + i for o, b, lent, i in zip(series.own, series.borrowed, series.lent, series.idle,
                                                          strict=True)), default=series.limit)
    axis.set_ylim(0, max(top, series.limit) * 1.15 + 0.1)
    axis.yaxis.get_major_locator().set_params(integer=True)
    axis.set_ylabel("instances")
    _time_axis(axis, end, unit)
    axis.set_title(f"{mathtext(series.share)}: {mathtext(series.instance_type)} over time")
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    return _png(figure)
