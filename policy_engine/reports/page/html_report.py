"""``simulate --report DIR``: one self-contained, interactive HTML page plus summary PNGs beside it.

The page is built from aggregates (``reports.aggregates``), not from one drawing per job, so
it stays a few MB and opens in about a second at a million jobs: usage per share and instance
type over time (own, borrowed, lent, idle; waiting jobs; preemptions), one chart per instance type
(types are never added together: their instance-hours are worth different amounts) and one for any
share picked from a list, wait-time distributions per share on a log scale, and the
worst-waiting jobs with their reasons in a sortable, filterable table. Per-job timelines are
drawn only for a chosen share or time window (``--report-share``, ``--report-window``), or for
a small run. Charts are Vega-Lite specs rendered in the browser by the inlined Vega libraries
(``reports.kit.vega``); zoom with the mouse wheel or drag, hover for the figures. The
Content-Security-Policy allows inline scripts and ``data:`` images only, never ``unsafe-eval``
nor any fetch. ``summary-*.png`` are the two summary charts as images, for e-mail and
pull-request comments.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from policy_engine.foundation.limits import PLAN_TERMINATION_LEAD_SECONDS as cutoff
from policy_engine.foundation.model import Topology
from policy_engine.foundation.output_files import write_files
from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit import vega
from policy_engine.reports.kit.safe_text import visible
from policy_engine.reports.page import report_script, summary_png
from policy_engine.reports.tables import cost_html, why_waited
from policy_engine.reports.tables.cost_tables import period_text
from policy_engine.reports.tables.type_tables import all_types_text, type_row
from policy_engine.simulation.causes import WAIT_CAUSES, Cause, describe_wait_cause
from policy_engine.simulation.results import aggregates as agg
from policy_engine.simulation.results.costs import CostReport
from policy_engine.simulation.results.records import JobRecord, SimulationResult
from policy_engine.simulation.results.targets import TargetResult
from policy_engine.simulation.results.type_usage import from_summary
from policy_engine.simulation.results.wait_causes import WaitCauses

if TYPE_CHECKING:
    from policy_engine.inputs.prices import Prices
    from policy_engine.simulation.results.plan_account import PlanAccount

PAGE = "index.html"
#: Without --report-share / --report-window, runs of at most this many jobs still get per-job timelines.
SMALL_RUN = 500

_CSP = "default-src 'none'; script-src 'unsafe-inline'; img-src data:; style-src 'unsafe-inline'"
Cells = Sequence[object]


class Duration(float):
    """A table cell holding seconds: shown as ``3h 05m``, sorted by its seconds (``data-value``)."""


def _cell(value: object, numeric: bool) -> str:
    if isinstance(value, Duration):
        return f'<td class="num" data-value="{float(value)!r}">{escape(duration_text(value))}</td>'
    return f'<td class="num">{escape(str(value))}</td>' if numeric else f"<td>{escape(str(value))}</td>"


def _table(header: tuple[str, ...], rows: Iterable[Cells], numeric: AbstractSet[int] = frozenset(),
           row_class: Callable[[Cells], str] | None = None, attrs: str = "") -> str:
    head = "".join(f"<th{' data-num' if i in numeric else ''}>{escape(h)}</th>" for i, h in enumerate(header))
    body = []
    for row in rows:
        cls = f' class="{row_class(row)}"' if row_class and row_class(row) else ""
        cells = "".join(_cell(v, i in numeric) for i, v in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _numbers(values: np.ndarray) -> list[float]:
    """Compact JSON numbers: 3 decimals, integers without a fraction (converted in bulk, not number by number)."""
    rounded = np.round(values.astype(np.float64), 3)
    whole = rounded == np.trunc(rounded)
    if whole.all():
        return rounded.astype(np.int64).tolist()
    mixed = rounded.astype(object)
    mixed[whole] = rounded[whole].astype(np.int64).astype(object)
    return mixed.tolist()


def _series_json(label: str, usage: list[np.ndarray], depth: np.ndarray, preemptions: np.ndarray) -> dict[str, Any]:
    return {"label": label, "usage": [_numbers(u) for u in usage], "depth": _numbers(depth),
            "preemptions": _numbers(preemptions)}


def _label(series: agg.Series, scale: float, unit: str) -> str:
    """``QUEUE/SHARE: TYPE (own limit 3)``; after ``update_share`` changes, every limit and when it began."""
    limits = [f"own limit {series.limit}"] + [f"{limit} from {time / scale:g} {unit}" for time, limit in
                                              series.later_limits]
    return f"{series.share}: {series.instance_type} ({', '.join(limits)})"


def page_data(result: SimulationResult, aggregates: agg.Aggregates, lanes: agg.Lanes | None,
              lanes_title: str) -> dict[str, Any]:
    """The JSON the page's script draws from (times in the page's unit)."""
    scale, unit = agg.time_unit(result.time)
    series = aggregates.series
    instances = {figures.instance_type: figures.instances for figures in from_summary(result.summary)}
    held = agg.held_for_plan(result, aggregates.edges)
    split = [agg.split_held(s.own, s.borrowed, held.get((s.share, s.instance_type))) for s in series]
    data: dict[str, Any] = {
        "unit": unit,
        "edges": _numbers(aggregates.edges / scale),
        "types": [type_series(aggregates, instance_type, instances.get(instance_type), split)
                  for instance_type in dict.fromkeys(s.instance_type for s in series)],
        "series": [_series_json(_label(s, scale, unit), [own, borrowed, s.lent, s.idle, held_part], s.depth,
                                s.preemptions) for s, (own, borrowed, held_part) in zip(series, split, strict=True)],
        "waits": [_wait_json(w) for w in aggregates.waits],
        "lanes": None,
        "plan_windows": [],
    }
    if result.plans is not None:
        from policy_engine.reports.tables.plan_tables import window_rows

        data["plan_windows"] = [{"label": f"{row.plan} [{row.window}]", "instances": row.instances,
                                 "instance_type": row.instance_type,
                                 "start": round(row.start / scale, 6), "end": round(row.end / scale, 6),
                                 "cutoff": round(max(row.start, row.end - cutoff) / scale, 6)}
                                for row in window_rows(result.plans)]
    if lanes is not None and lanes.rows:
        rows = [dict(row, start=round(row["start"] / scale, 6), end=round(row["end"] / scale, 6))
                for row in lanes.rows]
        data["lanes"] = {"title": lanes_title, "rows": rows}
    return data


def _wait_json(w: agg.WaitStats) -> dict[str, Any]:
    """A share's wait quantiles in seconds (the chart's scale) and as people read them (its tooltips)."""
    figures = {"min": w.low, "p25": w.p25, "p50": w.p50, "p75": w.p75, "p95": w.p95, "max": w.high}
    return {"share": w.share, "jobs": w.jobs, **figures,
            **{f"{key}_text": duration_text(value) for key, value in figures.items()}}


def type_series(aggregates: agg.Aggregates, instance_type: str, instances: int | None,
                split: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None) -> dict[str, Any]:
    """Every share's use of one instance type, added bin by bin (never across types); ``split``: per series, own
    use and borrowed less the quota held for a plan, and that (``aggregates.split_held``)."""
    if split is None:
        split = [(s.own, s.borrowed, np.zeros(len(s.own))) for s in aggregates.series]
    chosen = [(s, parts) for s, parts in zip(aggregates.series, split, strict=True) if s.instance_type == instance_type]
    mine = [s for s, _ in chosen]
    sums = [np.sum([getattr(s, m) for s in mine], axis=0) for m in agg.METRICS]
    sums[0] = np.sum([parts[0] for _, parts in chosen], axis=0)
    sums[1] = np.sum([parts[1] for _, parts in chosen], axis=0)
    sums.append(np.sum([parts[2] for _, parts in chosen], axis=0))
    sums[2] = np.zeros(len(aggregates.edges) - 1)  # within a type every lent instance is some share's borrowed one
    size = f"{instances:,} instances, " if instances is not None else ""
    return {**_series_json(f"{instance_type}: all shares ({size}lent instances are the borrowed ones)", sums,
                           np.sum([s.depth for s in mine], axis=0), np.sum([s.preemptions for s in mine], axis=0)),
            "instance_type": instance_type}


def _rates(costs: CostReport | None) -> Mapping[str, float] | None:
    """The rates per instance-hour of ``--prices``, which weight the one all-types utilisation (none without)."""
    return costs.prices.per_instance_hour if costs is not None and costs.prices is not None else None


def _summary_rows(result: SimulationResult, statuses: str, prices: Mapping[str, float] | None = None) -> list[Cells]:
    """The run, then one row per instance type: utilisation and instance-hours only per type, never summed (the
    all-types utilisation only weighted by ``prices``, per instance-hour of each type)."""
    summary = result.summary
    weighted = all_types_text(summary, prices)
    rows: list[Cells] = [("all types", "-", f"{summary['jobs']:,}", statuses, f"{summary['preemptions']:,}",
                          "-",  # instance-hours lost: per type below, never added across types
                          weighted if weighted == "-" else f"{weighted} (price-weighted)",
                          "-", "-", "-", "-",
                          Duration(summary["wait_p50"]), Duration(summary["wait_p95"]),
                          Duration(summary["wait_max"]))]
    for figures in from_summary(summary):
        name, instances, jobs, utilisation, used, idle, borrowed, lent, preemptions, lost = type_row(figures)
        rows.append((name, instances, jobs, "-", preemptions, lost, utilisation, used, idle, borrowed, lent,
                     "-", "-", "-"))
    return rows


SUMMARY_HEADERS = ("instance type", "instances", "jobs", "by status", "preemptions", "instance-hours lost",
                   "utilisation", "used (inst-h)", "idle (inst-h)", "borrowed (inst-h)", "lent (inst-h)",
                   "wait p50", "wait p95", "wait max")


def _lanes_choice(result: SimulationResult, share: str | None,
                  window: tuple[float, float] | None) -> tuple[agg.Lanes | None, str, str]:
    """Which per-job timeline to draw, its title, and a note for the page (``None``: none drawn)."""
    if share is None and window is None and len(result.jobs) > SMALL_RUN:
        return None, "", (f"Per-job timelines are drawn for a chosen share or time window: "
                          f"<code>--report-share QUEUE/SHARE</code>, <code>--report-window FROM:TO</code> "
                          f"(seconds); this run has {len(result.jobs):,} jobs.")
    lanes = agg.lanes(result, share, window)
    what = [f"share {share}" if share else "all shares"]
    if window:
        what.append(f"alive between {duration_text(window[0])} and {duration_text(window[1])}")
    title = f"Jobs of {', '.join(what)}: one lane per job"
    note = ""
    if lanes.matched > lanes.jobs:
        note = (f"The timeline shows the first {lanes.jobs:,} of the {lanes.matched:,} matching jobs (workload "
                "order); narrow <code>--report-window</code> to see the others.")
        title += f" (first {lanes.jobs:,} of {lanes.matched:,})"
    elif not lanes.matched:
        note = "No job matches the chosen share and window."
    return lanes, title, note


def _targets_section(targets: Sequence[TargetResult]) -> list[str]:
    """The topology's targets, met or missed with the margin (nothing when it declares none)."""
    if not targets:
        return []
    from policy_engine.reports.tables.target_tables import html_table, summary_line

    return ["<h2>Targets</h2>", "<style>#targets tr.missed td { background: #fde8e8; }</style>",
            f'<p class="muted">{escape(summary_line(targets))}</p>', html_table(targets)]


def render_page(result: SimulationResult, topology: Topology, source: str = "", share: str | None = None,
                window: tuple[float, float] | None = None, aggregates: agg.Aggregates | None = None,
                pngs: tuple[str, ...] = (), costs: CostReport | None = None,
                waits: WaitCauses | None = None, targets: Sequence[TargetResult] = (),
                plan_account: PlanAccount | None = None, sample: str = "") -> str:
    """The HTML page (a string): tables in HTML, charts drawn by the inlined Vega from the embedded data.
    ``sample`` (``simulate --samples N``): which sample the page draws, said under the title."""
    aggregates = aggregates or agg.aggregate(result)
    summary = result.summary
    lanes, lanes_title, lanes_note = _lanes_choice(result, share, window)
    embedded = page_data(result, aggregates, lanes, lanes_title)
    embedded["causes"] = why_waited.chart_data(waits) if waits is not None else None
    data = json.dumps(embedded, separators=(",", ":"))
    statuses = ", ".join(f"{status} {count:,}" for status, count in summary["by_status"].items()) or "none"
    charts = "".join(f'<div id="chart-type-{i}" class="chart chart-type"></div>'
                     for i, _ in enumerate(dict.fromkeys(s.instance_type for s in aggregates.series)))
    options = "".join(f'<option value="{i}">{escape(s.share)} · {escape(s.instance_type)}</option>'
                      for i, s in enumerate(aggregates.series))
    worst = aggregates.worst
    parts = [
        "<!DOCTYPE html>", '<html lang="en" data-rendered="false"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>batch-quota simulation{escape(': ' + source) if source else ''}</title>",
        f"<style>{report_script.STYLE}</style></head><body>",
        "<h1>batch-quota simulation report</h1>",
        f'<p class="muted">{escape(source) + " · " if source else ""}simulated time {duration_text(result.time)} · '
        f"{summary['jobs']:,} job(s)"
        + (f' · <a href="#costs">bill</a> for {escape(period_text(costs.period))}' if costs is not None else "")
        + "</p>",
        *([f'<p class="sample-one">This page shows {escape(sample)} alone: every figure, table and chart is that '
           "one run's, not a median (the medians across the samples, with their p10-p90, are in simulate's text, "
           "markdown and JSON output).</p>"] if sample else []),
        '<p id="render-error" class="error" hidden></p>',
        "<h2>Summary</h2>",
        '<p class="muted">Utilisation and instance-hours are given per instance type and never added across '
        "types (an hour of one type is not worth an hour of another).</p>",
        _table(SUMMARY_HEADERS, _summary_rows(result, statuses, _rates(costs)),
               numeric={1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, attrs=' id="summary"'),
        *_targets_section(targets),
        "<h2>Over time</h2>",
        '<p class="muted">Mean instances per time bin (own use, borrowed above the own limit, own capacity lent to '
        "others, idle), mean waiting jobs and preemptions per bin. Drag or scroll on a chart to zoom and pan "
        "(double-click resets); hover for the figures.</p>",
        charts,
        f'<p><label for="share-picker">Share and instance type: </label><select id="share-picker">{options}</select>'
        "</p>",
        '<div id="chart-share" class="chart"></div>',
        "<h2>Waits</h2>",
        '<div id="chart-waits" class="chart"></div>',
        *_why_waited_section(waits),
        f"<h2>Longest waits</h2><p class=\"muted\">The {len(worst):,} jobs that waited longest: their time "
        "RUNNABLE, from submission to placement plus each requeue (after a preemption, a failed attempt or a "
        "capacity retry) to the next placement, up to the report time if never placed; with the reason each one "
        "waited or ended (for a job that ended, the cause it waited longest for). Click a header to sort; "
        'type to filter (every word must match). <input id="worst-filter" type="search" placeholder="filter" '
        f'aria-label="filter the table">{_cause_filter(result, worst, waits)} '
        f'<span id="worst-count">{len(worst)} of {len(worst)} rows</span></p>',
        _worst_table(result, worst, waits),
        "<h2>Jobs over time</h2>",
    ]
    if lanes_note:
        parts.append(f'<p class="muted">{lanes_note}</p>')
    if lanes is not None and lanes.rows:
        parts.append('<div id="chart-lanes" class="chart"></div>')
    parts += [
        "<h2>Shares</h2>",
        '<p class="muted">Time-weighted over the run: own use as a share of the own limit; mean instances borrowed '
        "above the limit and lent to other shares.</p>",
        _table(("share", "instance type", "strategy", "limit (instances)", "jobs", "own use",
                "mean borrowed (instances)", "mean lent (instances)", "wait p50", "wait p95", "preemptions",
                "instance-hours lost"),
               [(m.share, m.instance_type, m.strategy, m.limit, m.jobs, f"{m.own_utilisation:.1%}",
                 f"{m.mean_borrowed:.2f}", f"{m.mean_lent:.2f}", Duration(m.wait_p50),
                 Duration(m.wait_p95), m.preemptions,
                 f"{m.instance_hours_lost:.2f}") for m in result.shares], numeric=set(range(3, 12)),
               attrs=' id="shares"'),
    ]
    if result.plans is not None:
        parts += _plan_section(result)  # hours only: the plans' fees are in the bill (the cost section)
        if plan_account is not None:
            parts += _plan_account_section(topology, plan_account)
    if costs is not None:
        parts += cost_html.section(costs)
    if pngs:
        parts.append(f'<p class="muted">The summary charts are also beside this page as images: '
                     f"{escape(', '.join(pngs))}.</p>")
    safe = data.replace("</", "<\\/")  # no "</script>" inside the data block
    parts.append(f'<script type="application/json" id="report-data">{safe}</script>')
    parts += [f"<script>{script}</script>" for script in vega.scripts()]
    parts.append(f"<script>{report_script.SCRIPT}</script>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _plan_section(result: SimulationResult, prices: Prices | None = None) -> list[str]:
    """The training plans: each window's reserved instance-hours (and their cost, when priced), each share's use
    of them, the quota held."""
    from policy_engine.reports.tables import plan_tables as plans

    assert result.plans is not None
    priced = "" if prices is None else (f" The {escape(prices.currency)} columns price them at the plan's type's "
                                        f"rate from {escape(prices.source)}; the idle one is reserved capacity "
                                        "paid for and never used.")
    parts = ["<h2>Training plans</h2>",
             '<p class="muted">Reserved instance-hours per window (drawn in purple behind the usage charts): paid '
             "whether used or not; cut: attempts SageMaker terminated from 30 minutes before a window's end, and "
             f"the work they lost since their last checkpoint.{priced}</p>",
             _table(plans.window_header(prices), map(plans.window_cells, plans.window_rows(result.plans, prices)),
                    numeric={1, 3, *range(5, len(plans.window_header(prices)))}, attrs=' id="plan-windows"')]
    shares = plans.share_rows(result.plans, prices)
    if shares:
        parts.append(_table(plans.share_header(prices), map(plans.share_cells, shares),
                            numeric={1, *range(3, len(plans.share_header(prices)))}, attrs=' id="plan-shares"'))
    held = plans.held_rows(result.plans)
    if held:
        parts.append('<p class="muted">Quota held by SCHEDULED plan jobs while they waited for an instance of '
                     "their plan (dispatched before their window, or while it was full): other jobs of the share "
                     "could not use it.</p>")
        parts.append(_table(plans.HELD_HEADER, map(plans.held_cells, held), numeric={2}, attrs=' id="plan-held"'))
    return parts


#: each idle cause's colour in the window bars (used is the plan windows' purple)
_CAUSE_COLOURS = ("#7f7f7f", "#d9d9d9", "#d62728", "#ff7f0e", "#bcbd22", "#17becf")


def _window_bar(paid: float, used: float, by_cause: Sequence[float], labels: Sequence[str]) -> str:
    """One window's paid instance-hours as a bar: used, then each idle cause, widths in proportion."""
    if paid <= 0:
        return ""
    segments = [("used", used, "#9467bd"), *zip(labels, by_cause, _CAUSE_COLOURS, strict=True)]
    spans = "".join(f'<span title="{escape(label)}: {value / 3600:,.2f} inst-h" style="display:inline-block;'
                    f'height:14px;width:{100 * value / paid:.3f}%;background:{colour}"></span>'
                    for label, value, colour in segments if value > 0)
    return f'<div class="plan-bar" style="width:420px;border:1px solid #999;line-height:0">{spans}</div>'


def _plan_account_section(topology: Topology, plans: PlanAccount) -> list[str]:
    """Each window's use and idle causes (a bar and a table), the jobs that waited, the hazards' cost, the notes."""
    from policy_engine.reports.tables import plan_account_tables as account

    labels = list(account.CAUSE_HEADINGS.values())
    legend = " ".join(f'<span style="display:inline-block;width:10px;height:10px;background:{colour}"></span> '
                      f"{escape(label)}" for label, colour in zip(["used", *labels], ["#9467bd", *_CAUSE_COLOURS],
                                                                      strict=True))
    rows = []
    for row in account.idle_rows(plans):
        causes = [row.by_cause.get(cause, 0.0) for cause in account.CAUSE_HEADINGS]
        bar = _window_bar(row.paid, row.paid - row.idle, causes, labels)
        rows.append(f"<tr><td>{escape(row.plan)} [{row.window}]</td><td>{bar}</td></tr>")
    parts = ["<h3>Why the plans were idle</h3>",
             f'<p class="muted">Each window\'s paid instance-hours: used, then idle by cause (attribution '
             f"{escape(plans.order)}, docs/training_plans.md). {legend}</p>",
             f'<table id="plan-idle-bars"><tbody>{"".join(rows)}</tbody></table>',
             _table(account.IDLE_HEADER, map(account.idle_cells, account.idle_rows(plans)),
                    numeric=set(range(1, 4 + len(labels))), attrs=' id="plan-idle"')]
    preemption = account.preemption_cells(plans)
    if preemption:
        parts += ['<p class="muted">Reserved instance-hours lost to preemption of plan jobs (work since their last '
                  "checkpoint, on instances already paid for).</p>",
                  _table(account.PREEMPTION_HEADER, preemption, numeric={2, 3, 4, 5}, attrs=' id="plan-preempted"')]
    held = account.held_cells(plans)
    if held:
        parts += ['<p class="muted">Quota held by SCHEDULED plan jobs before their window, and the share\'s jobs '
                  "that waited meanwhile.</p>",
                  _table(account.HELD_HEADER, held, numeric={2, 3, 4, 5, 6}, attrs=' id="plan-held-waits"')]
    parts.append('<ul id="plan-notes">' + "".join(f"<li>{escape(sentence)}</li>"
                                                  for sentence in account.notes(topology, plans)) + "</ul>")
    return parts


def write_report(result: SimulationResult, topology: Topology, directory: Path, source: str = "",
                 share: str | None = None, window: tuple[float, float] | None = None,
                 costs: CostReport | None = None, waits: WaitCauses | None = None,
                 targets: Sequence[TargetResult] = (), plan_account: PlanAccount | None = None,
                 sample: str = "") -> list[Path]:
    """Write ``index.html`` and the summary PNGs into ``directory`` (created); return the paths written.
    ``sample``: which workload sample the page draws (``simulate --samples N``), said under its title.

    Symlinks are never followed: neither ``directory`` itself nor a file in it, so a link someone
    else planted there cannot redirect the report over another file (``OutputError``, an ``OSError``, instead).
    """
    aggregates = agg.aggregate(result)
    files = dict(summary_png.draw(result, aggregates))
    page = render_page(result, topology, source, share, window, aggregates, tuple(files), costs, waits, targets,
                       plan_account, sample)
    files[PAGE] = page.encode("utf-8")
    write_files(directory, files)  # follows no symlink: output_files.OutputFolder
    return [directory / PAGE, *(directory / name for name in files if name != PAGE)]




def _why_waited_section(waits: WaitCauses | None) -> list[str]:
    """The stacked chart of each share's waiting time by cause, and the same figures as a table."""
    if waits is None:
        return []
    body = [why_waited.row_cells(r) for r in why_waited.rows(waits)]
    if not body:
        return ["<h2>Why jobs waited</h2>", '<p class="muted">No job waited.</p>']
    return ["<h2>Why jobs waited</h2>",
            f'<p class="muted">{escape(why_waited.caption(waits).capitalize())}: one bar per share and instance '
            "type (its waiting hours in all beside its name), split by cause as a share of its own waiting hours; "
            "hover for the figures.</p>",
            '<div id="chart-causes" class="chart"></div>',
            _table(why_waited.HEADER, body, numeric={3, 4, 5}, attrs=' id="causes"')]


def _worst_causes(result: SimulationResult, worst: Sequence[JobRecord], waits: WaitCauses | None) -> list[Cause | None]:
    """The cause each of the longest waits' jobs waited longest for (``None``: never waited, or not worked out)."""
    if waits is None:
        return [None] * len(worst)
    return [waits.job_causes[i] for i in agg.worst_indices(result, len(worst))]


def _cause_filter(result: SimulationResult, worst: Sequence[JobRecord], waits: WaitCauses | None) -> str:
    """The longest-waits table's cause picker, offering the causes its rows have (they keep it in ``data-cause``)."""
    if waits is None:
        return ""
    counts = Counter(_worst_causes(result, worst, waits))
    options = "".join(f'<option value="{cause.value}">{escape(describe_wait_cause(cause))} ({counts[cause]:,})'
                      "</option>" for cause in WAIT_CAUSES if counts[cause])
    return (' <label for="worst-cause">waited longest for </label><select id="worst-cause">'
            f'<option value="">any cause</option>{options}</select>')


def _worst_table(result: SimulationResult, worst: Sequence[JobRecord], waits: WaitCauses | None) -> str:
    """The longest waits, each row with the cause its job waited longest for (the reason of a job that ended)."""
    causes = _worst_causes(result, worst, waits)
    rows = []
    for job, cause in zip(worst, causes, strict=True):
        words = describe_wait_cause(cause) if cause is not None else ""
        reason = job.reason or (f"waited longest: {words}" if words else "")
        cells = [job.name, job.share, job.instance_type, job.instances, job.priority, job.status, job.preemptions,
                 Duration(job.wait_seconds), reason]
        tds = "".join(_cell(v, i in {3, 4, 6, 7}) for i, v in enumerate(cells))
        preempted = ' class="preempted"' if job.preemptions else ""
        rows.append(f'<tr{preempted} data-cause="{cause.value if cause is not None else ""}">{tds}</tr>')
    header = ("job", "share", "type", "instances", "priority", "status", "preemptions", "wait", "reason")
    head = "".join(f"<th{' data-num' if i in {3, 4, 6, 7} else ''}>{escape(h)}</th>" for i, h in enumerate(header))
    return (f'<table id="worst" class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table>")


def escape(text: object) -> str:
    """Text shown literally in the page: HTML escaped, control characters written as ``\\x1b``."""
    return html.escape(visible(text))
