"""The report's two summary charts as PNG files, for e-mail and pull-request comments.

Drawn from the same aggregates as the page (a few hundred bins, a box per share), so they cost
the same at a thousand or a million jobs. ``summary-cluster.png``: per instance type (never added
across types), all shares' own use, borrowed and idle instances over time, with the waiting jobs
below. ``summary-waits.png``: wait-time boxes (quartiles, a line from min to p95, a dot at max) of
the shares that waited longest.

Drawn with Pillow's primitives (polygons, lines, text): two static charts need no plotting
library, and Pillow imports and draws both in tens of milliseconds where matplotlib took most of
a second, which alone was most of what ``--report`` added to a 20,000-job run.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from policy_engine.foundation.units import duration_text
from policy_engine.simulation.results.aggregates import (
    Aggregates,
    Series,
    WaitStats,
    held_for_plan,
    split_held,
    time_unit,
)
from policy_engine.simulation.results.records import SimulationResult

OWN, BORROWED, IDLE, DEPTH = "#4c72b0", "#dd8452", "#d9d9d9", "#8172b3"
#: quota a SCHEDULED plan job holds while it waits for its plan's window (``aggregates.held_for_plan``)
HELD = "#c5b0d5"
GRID, AXIS, TEXT = "#e6e6e6", "#444444", "#222222"
#: The waits chart shows this many shares (worst p95 first); its title says how many there are.
MAX_WAIT_BOXES = 30
CLUSTER, WAITS = "summary-cluster.png", "summary-waits.png"
WIDTH = 1100
#: The waits chart's ticks: 1 s, 10 s, 1 min, 10 min, 1 h, 10 h, 1 d, 10 d, 100 d.
DURATION_TICKS = (0.0, 1.0, 10.0, 60.0, 600.0, 3600.0, 36000.0, 86400.0, 864000.0, 8640000.0)


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in scalable font: no font file to find on the machine."""
    return ImageFont.load_default(size=size)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``high`` (steps of 1, 2 or 5 times a power of ten)."""
    if not high > 0:
        return [0.0, 1.0]
    raw = high / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(power * m for m in (1, 2, 5, 10) if power * m >= raw)
    return [step * i for i in range(math.ceil(high / step - 1e-9) + 1)]


def _label(value: float) -> str:
    """1, 2.5, 10, 1k, 10k, 1M: short tick labels."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


class _Plot:
    """A plot area: data x in [x_low, x_high], y in [0, y_high], mapped to a pixel box."""

    def __init__(self, draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], x_high: float, y_high: float):
        self.draw, self.box = draw, box
        self.x_high, self.y_high = x_high or 1.0, y_high or 1.0

    def x(self, values: np.ndarray) -> np.ndarray:
        left, _, right, _ = self.box
        return left + values / self.x_high * (right - left)

    def y(self, values: np.ndarray) -> np.ndarray:
        _, top, _, bottom = self.box
        return bottom - values / self.y_high * (bottom - top)

    def steps(self, edges: np.ndarray, lower: np.ndarray, upper: np.ndarray, color: str) -> None:
        """The band between two step functions (one value per bin) as one polygon."""
        xs = np.repeat(self.x(edges), 2)[1:-1]
        top = np.repeat(self.y(upper), 2)
        bottom = np.repeat(self.y(lower), 2)
        points = np.concatenate([np.stack([xs, top], axis=1), np.stack([xs, bottom], axis=1)[::-1]])
        self.draw.polygon([tuple(p) for p in points.tolist()], fill=color)

    def y_axis(self, ticks: Sequence[float], title: str) -> None:
        left, top, right, bottom = self.box
        font = _font(12)
        for value, pixel in zip(ticks, self.y(np.array(ticks, dtype=float)).tolist(), strict=True):
            self.draw.line([(left, pixel), (right, pixel)], fill=GRID)
            self.draw.text((left - 6, pixel), _label(value), fill=TEXT, font=font, anchor="rm")
        self.draw.line([(left, top), (left, bottom), (right, bottom)], fill=AXIS)
        self.draw.text((left, top - 4), title, fill=TEXT, font=font, anchor="ld")

    def x_axis(self, ticks: Sequence[float], positions: Sequence[float], title: str,
               label: Callable[[float], str] | None = None) -> None:
        _, _, _, bottom = self.box
        font = _font(12)
        for value, pixel in zip(ticks, positions, strict=True):
            self.draw.line([(pixel, bottom), (pixel, bottom + 4)], fill=AXIS)
            self.draw.text((pixel, bottom + 6), (label or _label)(value), fill=TEXT, font=font, anchor="ma")
        left, _, right, _ = self.box
        self.draw.text(((left + right) / 2, bottom + 24), title, fill=TEXT, font=font, anchor="ma")


def cluster_png(aggregates: Aggregates, end: float, held: dict[tuple[str, str], np.ndarray] | None = None) -> bytes:
    """Per instance type (never added across types): own use, held for a plan (``held``: per share and type, the
    mean instances SCHEDULED plan jobs held per bin), borrowed and idle instances over time (stacked), waiting
    jobs below; one panel per type, one above the other."""
    scale, unit = time_unit(end)
    edges = aggregates.edges / scale
    types = list(dict.fromkeys(s.instance_type for s in aggregates.series)) or [""]
    image = Image.new("RGB", (WIDTH, 40 + PANEL * len(types)), "white")
    draw = ImageDraw.Draw(image)
    draw.text((WIDTH // 2, 10), "All shares over time, per instance type", fill=TEXT, font=_font(15), anchor="ma")
    for index, instance_type in enumerate(types):
        _type_panel(draw, 40 + PANEL * index, [s for s in aggregates.series if s.instance_type == instance_type],
                    edges, unit, instance_type, held or {})
    return _png(image)


#: Pixels of one instance type's panel in ``summary-cluster.png``.
PANEL = 470


def _type_panel(draw: ImageDraw.ImageDraw, y0: int, series: list[Series], edges: np.ndarray, unit: str,
                instance_type: str, held: dict[tuple[str, str], np.ndarray]) -> None:
    bins = len(edges) - 1

    def total(metric: str) -> np.ndarray:
        """Summed in a fixed share order and rounded: a run split over workers draws the very same pixels."""
        ordered = sorted(series, key=lambda s: (s.share, s.instance_type))
        return np.round(np.sum([getattr(s, metric) for s in ordered], axis=0), 6) if series else np.zeros(bins)

    # within one type, lent instances are the borrowed ones: own + held for plan + borrowed + idle
    own, borrowed, idle = total("own"), total("borrowed"), total("idle")
    kept = np.zeros(bins)
    if held and series:
        parts = [split_held(s.own, s.borrowed, held.get((s.share, s.instance_type)))
                 for s in sorted(series, key=lambda s: (s.share, s.instance_type))]
        own, borrowed, kept = (np.round(np.sum([part[k] for part in parts], axis=0), 6) for k in range(3))
    depth = total("depth")
    draw.text((WIDTH // 2, y0 + 4), instance_type or "no instance type", fill=TEXT, font=_font(14), anchor="ma")
    stacked = np.cumsum([own, kept, borrowed, idle], axis=0)
    top_ticks = nice_ticks(float(stacked[-1].max(initial=0)))
    top = _Plot(draw, (80, y0 + 30, 900, y0 + 260), float(edges[-1]), top_ticks[-1])
    lower = np.zeros(bins)
    for upper, color in zip(stacked, (OWN, HELD, BORROWED, IDLE), strict=True):
        top.steps(edges, lower, upper, color)
        lower = upper
    top.y_axis(top_ticks, "instances (bin mean)")
    depth_ticks = nice_ticks(float(depth.max(initial=0)), 2)
    bottom = _Plot(draw, (80, y0 + 300, 900, y0 + 390), float(edges[-1]), depth_ticks[-1])
    bottom.steps(edges, np.zeros(bins), depth, DEPTH)
    bottom.y_axis(depth_ticks, "waiting jobs (bin mean)")
    x_ticks = nice_ticks(float(edges[-1]), 8)
    x_ticks = [t for t in x_ticks if t <= edges[-1] + 1e-9]
    bottom.x_axis(x_ticks, bottom.x(np.array(x_ticks, dtype=float)).tolist(), f"simulated time ({unit})")
    font = _font(12)
    legend = [(OWN, "own use"), *([(HELD, "held for plan")] if kept.any() else []),
              (BORROWED, "borrowed (lent by others)"), (IDLE, "idle")]
    for row, (color, text) in enumerate(legend):
        y = y0 + 35 + 22 * row
        draw.rectangle([915, y, 929, y + 12], fill=color)
        draw.text((936, y + 6), text, fill=TEXT, font=font, anchor="lm")


def _log_scale(high: float, left: int, right: int) -> Callable[[np.ndarray], np.ndarray]:
    """Seconds to pixels on a log scale that starts at 0 (log10(1 + s))."""
    span = math.log10(1 + high) or 1.0
    return lambda values: left + np.log10(1 + np.maximum(values, 0)) / span * (right - left)


def waits_png(aggregates: Aggregates) -> bytes:
    """One row per share (worst p95 first): a line from min to p95, the quartile box, the median, the max."""
    shown: list[WaitStats] = aggregates.waits[:MAX_WAIT_BOXES]
    row_height, top = 22, 50
    height = top + row_height * max(len(shown), 1) + 60
    image = Image.new("RGB", (WIDTH, height), "white")
    draw = ImageDraw.Draw(image)
    more = len(aggregates.waits) - len(shown)
    title = "Waits per share (jobs)" + (f": the {len(shown)} longest p95 of {len(aggregates.waits)} shares"
                                        if more > 0 else "")
    draw.text((WIDTH // 2, 10), title, fill=TEXT, font=_font(15), anchor="ma")
    left, right, bottom = 330, WIDTH - 30, top + row_height * max(len(shown), 1)
    high = max((w.high for w in shown), default=1.0)
    scale = _log_scale(high, left, right)
    ticks = [t for t in DURATION_TICKS if t <= max(high, 1.0)]
    positions = scale(np.array(ticks)).tolist()
    for pixel in positions:
        draw.line([(pixel, top), (pixel, bottom)], fill=GRID)
    font = _font(12)
    for row, wait in enumerate(shown):
        y = top + row_height * row + row_height / 2
        low, p25, p50, p75, p95, most = scale(np.array([wait.low, wait.p25, wait.p50, wait.p75, wait.p95,
                                                        wait.high])).tolist()
        draw.line([(low, y), (p95, y)], fill="#555555", width=1)
        draw.rectangle([p25, y - 6, max(p75, p25 + 1), y + 6], fill=OWN)
        draw.line([(p50, y - 6), (p50, y + 6)], fill="white", width=2)
        draw.ellipse([most - 3, y - 3, most + 3, y + 3], fill="#d62728")
        draw.text((left - 8, y), f"{wait.share} ({wait.jobs:,})", fill=TEXT, font=font, anchor="rm")
    draw.line([(left, top), (left, bottom), (right, bottom)], fill=AXIS)
    plot = _Plot(draw, (left, top, right, bottom), 1.0, 1.0)
    plot.x_axis(ticks, positions, "wait, time RUNNABLE (log scale): box quartiles, white median, "
                                  "line min to p95, dot max", label=duration_text)
    return _png(image)


def draw(result: SimulationResult, aggregates: Aggregates) -> list[tuple[str, bytes]]:
    """``(file name, PNG bytes)`` of each summary chart."""
    held = held_for_plan(result, aggregates.edges)
    return [(CLUSTER, cluster_png(aggregates, result.time, held)), (WAITS, waits_png(aggregates))]
