"""The report's two summary charts as PNG files, for e-mail and pull-request comments (matplotlib, no display).

Drawn from the same aggregates as the page (a few hundred bins, a box per share), so they cost
the same at a thousand or a million jobs. ``summary-cluster.png``: the whole cluster's own use,
borrowed, lent and idle instances over time, with the waiting jobs below. ``summary-waits.png``:
wait-time boxes (quartiles, whiskers at min and p95) of the shares that waited longest.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from policy_engine.reports.aggregates import METRICS, Aggregates, time_unit
from policy_engine.simulation.results import SimulationResult

OWN, BORROWED, IDLE = "#4c72b0", "#dd8452", "#d9d9d9"
#: The waits chart shows this many shares (worst p95 first); its title says how many there are.
MAX_WAIT_BOXES = 30
CLUSTER, WAITS = "summary-cluster.png", "summary-waits.png"


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)  # fixed margins: "tight" would draw everything twice
    return buffer.getvalue()


def cluster_png(aggregates: Aggregates, end: float) -> bytes:
    scale, unit = time_unit(end)
    edges = aggregates.edges / scale
    bins = len(edges) - 1
    stacks = [np.sum([getattr(s, m) for s in aggregates.series], axis=0) if aggregates.series else np.zeros(bins)
              for m in METRICS if m != "lent"]  # across the cluster, lent instances are the borrowed ones
    depth = np.sum([s.depth for s in aggregates.series], axis=0) if aggregates.series else np.zeros(bins)
    figure = Figure(figsize=(11, 5))
    figure.subplots_adjust(left=0.07, right=0.84, top=0.93, bottom=0.1, hspace=0.12)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3, 1.3])
    steps = [np.append(stack, stack[-1]) for stack in stacks]
    top.stackplot(edges, *steps, step="post", colors=[OWN, BORROWED, IDLE],
                  labels=["own use", "borrowed (lent by\nother shares)", "idle"])
    top.set_ylabel("instances (bin mean)")
    top.set_title("All shares and instance types over time")
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    bottom.stairs(depth, edges, fill=True, color="#8172b3")
    bottom.set_ylabel("waiting jobs")
    bottom.set_xlabel(f"simulated time ({unit})")
    bottom.set_xlim(edges[0], edges[-1])
    for axis in (top, bottom):
        axis.grid(axis="x", alpha=0.3)
    return _png(figure)


def _compact(value: float, _position: object = None) -> str:
    """1, 10, 100, 1k, 10k, 100k, 1M (seconds)."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def waits_png(aggregates: Aggregates) -> bytes:
    shown = aggregates.waits[:MAX_WAIT_BOXES]
    height = 1.2 + 0.28 * max(len(shown), 1)
    figure = Figure(figsize=(11, height))
    figure.subplots_adjust(left=0.3, right=0.97, top=1 - 0.45 / height, bottom=0.6 / height)
    axis = figure.subplots()
    if shown:  # one artist per kind (not per box): as fast for 30 shares as for 3
        rows = np.arange(len(shown))[::-1]
        low, p25, p50, p75, p95, high = (np.array([getattr(w, f) for w in shown])
                                         for f in ("low", "p25", "p50", "p75", "p95", "high"))
        axis.hlines(rows, low, p95, color="#555555", linewidth=1)
        axis.barh(rows, p75 - p25, left=p25, height=0.6, color=OWN, alpha=0.85)
        axis.vlines(p50, rows - 0.3, rows + 0.3, color="white", linewidth=2)
        axis.plot(high, rows, linestyle="", marker="o", markersize=3, color="#d62728")
        axis.set_yticks(rows, [f"{w.share} ({w.jobs:,})" for w in shown])
        axis.set_ylim(-0.7, len(shown) - 0.3)
        axis.set_xscale("symlog", linthresh=1.0)
        axis.set_xlim(left=0)
        axis.xaxis.set_major_formatter(FuncFormatter(_compact))  # plain text: mathtext 10^n is slow to lay out
    axis.set_xlabel("wait before first placement (s, log scale): box quartiles, white median, line min to p95, "
                    "dot max")
    more = len(aggregates.waits) - len(shown)
    axis.set_title("Waits per share (jobs)" + (f": the {len(shown)} longest p95 of {len(aggregates.waits)} shares"
                                                if more > 0 else ""))
    axis.grid(axis="x", alpha=0.3)
    return _png(figure)


def draw(result: SimulationResult, aggregates: Aggregates) -> list[tuple[str, bytes]]:
    """``(file name, PNG bytes)`` of each summary chart."""
    return [(CLUSTER, cluster_png(aggregates, result.time)), (WAITS, waits_png(aggregates))]
