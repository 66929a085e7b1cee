"""``sweep --report DIR`` and ``tune --report DIR``: one self-contained HTML page plus a PNG per chart.

Self-contained like the simulation report (inline CSS, charts as ``data:`` URIs, a
Content-Security-Policy that forbids fetching or running anything), and static: a chart per
varied field (the per-share figure against the value, one line per share, each point the mean
over the runs with that value), a heatmap of the objective for the first two fields, the table
of runs; for ``tune``, the evidence and the Pareto front.
"""

from __future__ import annotations

import base64
import io
import math
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from policy_engine.foundation.output_files import OutputFolder
from policy_engine.foundation.units import Unit, duration_axis, duration_text, figure_text
from policy_engine.sweep.expressions import SHARE_METRICS, UNITS, Expression, record_types, type_figure
from policy_engine.sweep.grammar import Axis, values_text, vary_text
from policy_engine.sweep.ranking import ranked
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.target_constraints import targets_summary

if TYPE_CHECKING:
    from policy_engine.sweep.cost_metrics import RunCosts
    from policy_engine.sweep.expressions import Constraint
    from policy_engine.sweep.tune import Objective

#: The page lists at most this many runs.
MAX_RUN_ROWS = 500
PAGE = "index.html"

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1200px;
       color: #222; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
.muted { color: #666; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.6rem; text-align: left; }
th { background: #f4f6f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; max-width: 100%; } td.num.brk { white-space: normal; } .nb { white-space: nowrap; }
figure { margin: 0.8rem 0 1.4rem; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #666; font-size: 0.85rem; }
"""


@dataclass(frozen=True)
class Chart:
    """One drawn chart: its file name in the report directory, caption and PNG bytes."""

    file: str
    caption: str
    png: bytes

    def img(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        return (f'<figure><img src="data:image/png;base64,{data}" alt="{escape(self.caption)}">'
                f"<figcaption>{escape(self.caption)} ({escape(self.file)})</figcaption></figure>")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


def html_table(header: Sequence[str], rows: Iterable[Sequence[object]], numeric: AbstractSet[int] = frozenset()) -> str:
    """A table that fits the page: figures whole, headers wrapped at spaces (a long axis path after its dots too,
    ``reports.kit.breaks``)."""
    from policy_engine.reports.kit.breaks import html_figure, html_header

    head = "".join(f"<th>{html_header(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="num brk">{html_figure(v)}</td>' if i in numeric else f"<td>{escape(str(v))}</td>"
                         for i, v in enumerate(row)) + "</tr>"
        for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()



def share_metric_of(objective: Expression) -> str:
    """The per-share figure the field charts show: the objective's own one, else wait p95."""
    for metric in SHARE_METRICS:
        if objective.text.endswith((f"({metric})", f".{metric}")):
            return metric
    return "wait_p95"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


#: Ticks as people write numbers: 800,000, not 800000 or 8e5.
_THOUSANDS = FuncFormatter(lambda value, _: f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.6g}")


@dataclass(frozen=True)
class Scale:
    """How a chart draws a figure: ``value / divisor`` against an axis named ``name`` (days, %, USD, ...)."""

    divisor: float
    name: str

    def __call__(self, value: float) -> float:
        return value / self.divisor


def scale_of(values: Iterable[float], unit: Unit, unit_name: str = "") -> Scale:
    """Durations in days, hours or minutes (whichever the largest value spans), fractions as percentages."""
    if unit is Unit.SECONDS:
        finite = [v for v in values if math.isfinite(v)]
        return Scale(*duration_axis(max(finite, default=0.0)))
    if unit is Unit.FRACTION:
        return Scale(0.01, "%")
    return Scale(1.0, unit_name or unit.value)


#: Panels per row of a field chart's small multiples.
PANEL_COLUMNS = 3


def wrapped(text: str, width: int = 36) -> str:
    """A long label (an axis path, a title) over several lines, broken at spaces and after ``/`` and ``.`` (never
    inside a word), so it stays within its chart instead of running into another label."""
    pieces = re.findall(r"[^ /.]*[ /.]?", text)
    lines, line = [], ""
    for piece in (p for p in pieces if p):
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
    return "\n".join([*lines, line.rstrip()]) if line.strip() else "\n".join(lines)


def field_chart(records: Sequence[RunRecord], axis: Axis, metric: str) -> Chart:
    """``field_figure`` as a PNG."""
    name = metric.replace("_", " ")
    return Chart(f"field-{_slug(axis.path)}.png", f"{name} per share against {axis.path}",
                 _png(field_figure(records, axis, metric)))


def field_figure(records: Sequence[RunRecord], axis: Axis, metric: str) -> Figure:
    """Small multiples: one panel per share, each on its own scale, of the mean of ``metric`` (worst instance
    type) over the ok runs with each value. On one shared axis a team waiting 20 days would flatten every other
    team's line to zero; a log axis could not show the many waits of 0 s (docs/sweep.md)."""
    ok = [r for r in records if r.status == RunStatus.OK]
    shares = list(dict.fromkeys(entry["share"] for r in ok for entry in r.shares))
    positions = list(range(len(axis.values)))  # values in the order written (-1 = unlimited is not a number here)
    lines = {}
    for share in shares:
        ys = []
        for value in axis.values:
            per_run = [max(e[metric] for e in r.shares if e["share"] == share)
                       for r in ok if r.values[axis.path] == value and any(e["share"] == share for e in r.shares)]
            ys.append(_mean(per_run))
        lines[share] = ys
    columns = max(1, min(PANEL_COLUMNS, len(shares)))
    rows = max(1, math.ceil(len(shares) / columns))
    figure = Figure(figsize=(3.3 * columns, 1.25 + 1.9 * rows), layout="constrained")
    panels = figure.subplots(rows, columns, sharex=True, squeeze=False).flatten()
    name = metric.replace("_", " ")
    for panel, (share, ys) in zip(panels, lines.items(), strict=False):
        scale = scale_of(ys, UNITS[metric])
        panel.plot(positions, [scale(y) for y in ys], marker="o", color="#1f77b4")
        panel.set_title(wrapped(f"{share} ({scale.name})", 40), fontsize=8)
        panel.yaxis.set_major_formatter(_THOUSANDS)
        panel.tick_params(labelsize=7)
        panel.grid(alpha=0.3)
        if all(not math.isnan(y) and y == 0 for y in ys):
            panel.set_ylim(-0.05, 1)  # never waited: a flat line at 0, not one centred on a meaningless range
    for panel in panels[len(lines):]:
        panel.set_visible(False)
    for panel in panels:
        panel.set_xticks(positions, [vary_text(v) for v in axis.values])
    figure.supxlabel(wrapped(axis.path, 60), fontsize=9)
    figure.supylabel(name, fontsize=9)
    figure.suptitle(wrapped(f"{name} per share against {axis.path} (mean over the other fields; each share on its "
                            "own scale)", 90), fontsize=9)
    return figure


def heatmap_chart(records: Sequence[RunRecord], first: Axis, second: Axis, objective: Expression) -> Chart:
    """``heatmap_figure`` as a PNG."""
    return Chart(f"heatmap-{_slug(first.path)}-{_slug(second.path)}.png",
                 f"{objective.text} by {first.path} and {second.path}",
                 _png(heatmap_figure(records, first, second, objective)))


def heatmap_figure(records: Sequence[RunRecord], first: Axis, second: Axis, objective: Expression) -> Figure:
    """The objective (mean over the other fields) for every pair of values; blank where no run was ok."""
    grid = []
    for a in first.values:
        row = []
        for b in second.values:
            scores = [objective(r) for r in records if r.status == RunStatus.OK and r.values[first.path] == a
                      and r.values[second.path] == b]
            row.append(_mean(scores))
        grid.append(row)
    figure = Figure(figsize=(max(5.0, 2.4 + 0.9 * len(second.values)), max(3.0, 1.6 + 0.5 * len(first.values))),
                    layout="constrained")  # labels laid out around the cells, never over each other or the title
    plot = figure.add_subplot()
    scale = scale_of((value for row in grid for value in row), objective.unit, objective.unit_name)
    image = plot.imshow([[scale(value) for value in row] for row in grid], aspect="auto", cmap="viridis_r")
    plot.set_xticks(range(len(second.values)), [vary_text(v) for v in second.values], fontsize=8)
    plot.set_yticks(range(len(first.values)), [vary_text(v) for v in first.values], fontsize=8)
    plot.set_xlabel(wrapped(second.path))
    plot.set_ylabel(wrapped(first.path, 24), fontsize=8)
    finite = [value for row in grid for value in row if not math.isnan(value)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            dark = not math.isnan(value) and high > low and (value - low) / (high - low) > 0.5  # viridis_r: dark
            plot.text(j, i, "no ok run" if math.isnan(value) else figure_text(value, objective.unit), ha="center",
                      va="center", fontsize=7, color="white" if dark else "black")
    bar = figure.colorbar(image, ax=plot, label=wrapped(f"{objective.text} ({scale.name})", 30))
    bar.formatter = _THOUSANDS
    bar.update_ticks()
    figure.suptitle(wrapped(f"{objective.text} by {first.path} and {second.path}", 60), fontsize=9)
    return figure


def pareto_chart(points: Sequence[tuple[float, float, bool, bool]], objectives: tuple[Objective, Objective]) -> Chart:
    """Every evaluated run's first two objectives (``x, y, on the front, meets every constraint``); the Pareto
    front highlighted, and a run that violates a constraint marked so (it may look better but cannot be chosen)."""
    figure = Figure(figsize=(6, 4))
    plot = figure.add_subplot()
    x_scale, y_scale = (scale_of((point[i] for point in points), o.expression.unit, o.expression.unit_name)
                        for i, o in enumerate(objectives))
    scaled = [(x_scale(x), y_scale(y), on, ok) for x, y, on, ok in points]
    others = [(x, y) for x, y, front, ok in scaled if not front and ok]
    violating = [(x, y) for x, y, _, ok in scaled if not ok]
    front = sorted((x, y) for x, y, on, _ in scaled if on)
    if others:
        plot.scatter([x for x, _ in others], [y for _, y in others], color="#9e9e9e", s=14, label="evaluated")
    if violating:
        plot.scatter([x for x, _ in violating], [y for _, y in violating], color="#9e9e9e", marker="x", s=18,
                     label="violates a constraint")
    if front:
        plot.plot(*zip(*front, strict=True), color="#d62728", marker="o", label="Pareto front")
    names = tuple(o.label for o in objectives)
    plot.set_xlabel(f"{names[0]} ({x_scale.name})")
    plot.set_ylabel(f"{names[1]} ({y_scale.name})")
    for axis in (plot.xaxis, plot.yaxis):
        axis.set_major_formatter(_THOUSANDS)
    plot.grid(alpha=0.3)
    plot.legend(fontsize=8)
    return Chart("pareto.png", f"Pareto front: {names[0]} against {names[1]}", _png(figure))


def _page(title: str, source: str, body: list[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}{escape(': ' + source) if source else ''}</title>",
        f"<style>{_CSS}</style></head><body>", f"<h1>{escape(title)} report</h1>", *body, "</body></html>"])


def _constraints_cell(record: RunRecord, constraints: Sequence[Constraint]) -> str:
    """``all hold``, or the constraints the run violates (the reason an ok run that looks better was not chosen)."""
    if record.status != RunStatus.OK:
        return "-"
    broken = [c.text for c in constraints if not c.holds(record)]
    return "all hold" if not broken else "violates " + "; ".join(broken)


def runs_table(records: Sequence[RunRecord], axes: Sequence[Axis], objective: Expression,
               costs: RunCosts | None = None, constraints: Sequence[Constraint] | None = None) -> str:
    """The runs, best-first order kept as given: the varied values, the objective, utilisation per type, the
    waits, the targets met, and with ``costs`` what each run cost and left idle."""
    rows = []
    costs = costs if costs is not None and costs.priced else None  # instance-hours of different types never add up
    shown = records[:MAX_RUN_ROWS]
    types = list(dict.fromkeys(t for record in shown if record.status == RunStatus.OK for t in record_types(record)))
    for record in shown:
        ok = record.status == RunStatus.OK
        summary = record.summary
        priced = costs.report(record) if costs is not None and ok else None
        rows.append((*(vary_text(record.values[a.path]) for a in axes), record.status,
                     figure_text(objective(record), objective.unit) if ok else "", targets_summary(record),
                     *((_constraints_cell(record, constraints),) if constraints is not None else ()),
                     *(figure_text(type_figure("utilisation", t)(record), Unit.FRACTION) if ok else "" for t in types),
                     duration_text(summary["wait_p95"]) if ok else "", summary["preemptions"] if ok else "",
                     *((figure_text(priced.bill.total, Unit.COST) if priced else "",
                        figure_text(priced.waste.total, Unit.COST) if priced else "") if costs is not None else ()),
                     "" if ok else record.error or "; ".join(f"{f['rule']} {f['object']}" for f in record.errors())))
    width = len(axes)
    cost_columns = (f"bill ({costs.unit})", f"waste ({costs.unit})") if costs is not None else ()
    # the verdicts (status, objective, targets) first, so a narrow window still shows them
    verdicts = ("targets", *(("constraints",) if constraints is not None else ()))
    first = width + 2 + len(verdicts)
    return html_table((*(a.path for a in axes), "status", objective.heading, *verdicts,
                       *(f"utilisation {t}" for t in types), "wait p95", "preemptions", *cost_columns, "why not run"),
                      rows,
                      numeric={width + 1, *range(first, first + 2 + len(types) + len(cost_columns))})


def _best_targets(record: RunRecord, axes: Sequence[Axis]) -> list[str]:
    """The first run's targets, each with its margin (the runs table only counts them)."""
    from policy_engine.reports.tables import target_tables
    from policy_engine.simulation.results.targets import from_json

    results = [from_json(entry) for entry in record.targets]
    values = values_text({a.path: record.values[a.path] for a in axes})
    return [f"<h2>Targets of the first run</h2><p class=\"muted\">{escape(values)}: "
            f"{escape(target_tables.summary_line(results))}</p>", target_tables.html_table(results)]


def _write(directory: Path, charts: list[Chart], html: str) -> Path:
    """The page and its charts, following no symlink (``output_files.OutputFolder``)."""
    with OutputFolder(directory) as folder:
        for chart in charts:
            folder.write_bytes(chart.file, chart.png)
        return folder.write_text(PAGE, html)


def write_sweep_report(records: Sequence[RunRecord], axes: Sequence[Axis], objective: Expression, directory: Path,
                       source: str = "", costs: RunCosts | None = None, maximize: bool = False) -> Path:
    """Write ``index.html`` and the charts' PNG files; return the page's path. The runs table is ranked as the
    text summary is: ok runs best first (those missing a target last among them), then the others."""
    metric = share_metric_of(objective)
    charts = [field_chart(records, axis, metric) for axis in axes]
    if len(axes) >= 2:
        charts.append(heatmap_chart(records, axes[0], axes[1], objective))
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    body = [f'<p class="muted">{escape(source)} · {len(records)} run(s): '
            f"{escape(', '.join(f'{n} {s}' for s, n in sorted(counts.items())))}</p>",
            "<h2>Fields</h2>", *(chart.img() for chart in charts if chart.file.startswith("field-"))]
    heatmaps = [chart for chart in charts if chart.file.startswith("heatmap-")]
    if heatmaps:
        body += ["<h2>Heatmap</h2>", *(chart.img() for chart in heatmaps)]
    body += ["<h2>Runs</h2>"]
    if len(records) > MAX_RUN_ROWS:
        body.append(f'<p class="muted">The first {MAX_RUN_ROWS} of {len(records)} runs.</p>')
    best = [record for _, record in ranked(list(records), objective, maximize)]
    body.append(runs_table([*best, *(r for r in records if r.status != RunStatus.OK)], axes, objective, costs))
    if best and best[0].targets:
        body += _best_targets(best[0], axes)
    return _write(directory, charts, _page("batch-quota sweep", source, body))


def write_tune_report(evidence_html: str, front_html: str, charts: list[Chart], records: Sequence[RunRecord],
                      axes: Sequence[Axis], objective: Expression, directory: Path, source: str = "",
                      costs: RunCosts | None = None, decision: Sequence[str] = (),
                      constraints: Sequence[Constraint] = ()) -> Path:
    """``decision``: the answer in sentences (what is recommended and why, or the nearest miss), above the
    evidence; each run's row says which ``constraints`` it violates."""
    body = [f'<p class="muted">{escape(source)} · {len(records)} run(s)</p>', "<h2>Recommendation</h2>",
            *(f'<p class="decision">{escape(line)}</p>' for line in decision), evidence_html]
    if front_html:
        body += ["<h2>Pareto front</h2>", front_html]
    body += [chart.img() for chart in charts]
    body += ["<h2>Runs</h2>", runs_table(records, axes, objective, costs, constraints)]
    return _write(directory, charts, _page("batch-quota tune", source, body))
