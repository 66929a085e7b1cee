"""``sweep``'s view: the billing period, the ranking table (its title, columns and one row of cells per run shown),
the margins of the best run's targets, the runs' counts by status, and one line per run that did not finish,
read once from ``SweepOutput``; the CSV's rows and the JSON's runs are built here too.

Every read of a run record is in ``read_run`` (and the sweep's own functions it names), so a typed run record
changes one function here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from policy_engine.foundation.units import Unit, duration_text, figure_text, instance_hours_text
from policy_engine.reports.tables.sweep_runs import run_json
from policy_engine.reports.tables.target_tables import summary_line
from policy_engine.simulation.results.billable import period_text
from policy_engine.simulation.results.targets import from_json
from policy_engine.simulation.results.type_usage import SUMMARY_KEY
from policy_engine.simulation.results.window import WINDOW_KEY, window_legend
from policy_engine.sweep.cost_metrics import CLUSTER_COST_METRICS, cluster_figure, share_figure
from policy_engine.sweep.dataset import flat_row
from policy_engine.sweep.expressions import type_figure
from policy_engine.sweep.grammar import values_text, vary_text
from policy_engine.sweep.grid import candidate_key
from policy_engine.sweep.ranking import ranked
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.subjects import SweepOutput
from policy_engine.sweep.target_constraints import missed_targets, targets_summary

__all__ = ["FailedRun", "Run", "SweepOutput", "SweepView", "build", "csv_rows", "json_document", "read_run"]

#: Per instance type, ``summary.instance_types`` figures as ``METRIC(TYPE)`` columns of the CSV.
TYPE_COLUMNS = ("utilisation", "used_instance_hours", "idle_instance_hours", "borrowed_instance_hours",
                "lent_instance_hours")


@dataclass(frozen=True)
class Run:
    """What the sweep's formats read of one run record."""

    values: Mapping[str, Any]
    status: RunStatus
    summary: Mapping[str, Any]
    errors: Sequence[Mapping[str, Any]]  # its findings of severity ``error``
    error: str
    types: tuple[str, ...]  # the instance types of its summary
    targets: Sequence[Mapping[str, Any]]
    missed_targets: int
    targets_summary: str


def read_run(record: RunRecord) -> Run:
    """The one place the view reads a run record."""
    return Run(record.values, record.status, record.summary, record.errors(), record.error, tuple(record.types()),
               record.targets, missed_targets(record), targets_summary(record))


@dataclass(frozen=True)
class FailedRun:
    """A run that did not finish: it raised (``error``), or its topology has an error finding (``invalid``)."""

    raised: bool
    values: str
    message: str  # the error, or the first error finding (``RULE OBJECT: message (+N more)``)


@dataclass(frozen=True)
class SweepView:
    bill_period: str | None
    title: str
    axes: tuple[str, ...]
    heading: str  # the objective's column (never wrapped)
    columns: tuple[str, ...]  # after the axes and the objective
    rows: tuple[tuple[str, ...], ...]  # rank, the axes' values, the objective, then ``columns``
    best_targets: str | None  # the best run's targets, each with its margin
    counts: str  # ``N run(s): n error, n ok; results in DIR``
    infeasible: int  # ok runs that miss a target of the topology
    failed: tuple[FailedRun, ...]
    #: ``util TYPE: time-weighted over 0 to 52d 21h, the longest run`` (``sweep.common_window``); '' without runs
    window: str = ""


def _failed(run: Run) -> FailedRun:
    values = values_text(dict(run.values))
    if run.status is RunStatus.ERROR:
        return FailedRun(True, values, str(run.error))
    errors = run.errors
    first = errors[0] if errors else {"rule": "?", "object": "?", "message": "?"}
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return FailedRun(False, values, f"{first['rule']} {first['object']}: {first['message']}{more}")


def build(output: SweepOutput) -> SweepView:
    records, axes, objective, maximize, top = (output.records, output.axes, output.objective, output.maximize,
                                               output.top)
    period = None
    if output.costs is not None and (output.costs.priced or not output.costs.pricing.period.whole):
        period = period_text(output.costs.pricing.period)  # what every run's bill covers (--period)
    best = ranked(records, objective, maximize)
    shown = [(score, record, read_run(record)) for score, record in best[:top]]
    types = list(dict.fromkeys(t for _, _, run in shown for t in run.types))
    costs = output.costs if output.costs is not None and output.costs.priced else None  # money adds up across types
    # the run's bill and waste, unless the objective already is one of them
    cost_figures = [(name, label) for name, label in (("bill", "bill"), ("waste_cost", "waste"))
                    if objective.text != name]
    cost_columns = [f"{label} {costs.unit}" for _, label in cost_figures] if costs is not None else []
    rows = []
    for rank, (score, record, run) in enumerate(shown, start=1):
        summary = run.summary
        report = costs.report(record) if costs is not None else None
        priced = ([figure_text(cluster_figure(report, name), Unit.COST) for name, _ in cost_figures]
                  if report else ["-"] * len(cost_columns))
        rows.append((str(rank), *(vary_text(run.values[axis.path]) for axis in axes),
                     figure_text(score, objective.unit),
                     *(figure_text(type_figure("utilisation", t)(record), Unit.FRACTION) for t in types),
                     duration_text(summary["wait_p95"]), duration_text(summary["wait_max"]),
                     f"{summary['preemptions']:,}",
                     *(instance_hours_text(type_figure("instance_hours_lost", t)(record)) for t in types),
                     *priced, run.targets_summary))
    best_targets = None
    if shown and shown[0][2].targets:  # the margins of the run a reader would pick, not only a count
        best_targets = summary_line([from_json(dict(entry)) for entry in shown[0][2].targets])
    runs = [read_run(record) for record in records]
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.status] = counts.get(run.status, 0) + 1
    where = f"; results in {output.out_dir}" if output.out_dir else ""
    return SweepView(
        period, f"Best {min(top, len(best))} of {len(best)} run(s) by {'max' if maximize else 'min'} {objective.text}",
        tuple(axis.path for axis in axes), objective.heading,
        (*(f"util {t}" for t in types), "wait p95", "wait max", "preemptions", *(f"inst-h lost {t}" for t in types),
         *cost_columns, "targets"),
        tuple(rows), best_targets,
        f"{len(records):,} run(s): " + ", ".join(f"{n:,} {status}" for status, n in sorted(counts.items())) + where,
        sum(1 for run in runs if run.status is RunStatus.OK and run.missed_targets),
        tuple(_failed(run) for run in runs if run.status is not RunStatus.OK), _window(records))


def _window(records: Sequence[RunRecord]) -> str:
    """The window every run's utilisation is over, and how many runs ended sooner (their idle tail counted)."""
    windows = [record.summary[WINDOW_KEY] for record in records if record.summary and WINDOW_KEY in record.summary]
    if not windows:
        return ""
    window = max(windows)
    ends = [float((record.costs or {}).get("capacity", {}).get("span_seconds", window)) for record in records
            if record.summary and WINDOW_KEY in record.summary]
    sooner = sum(1 for end in ends if end < window)
    return ("util: " + window_legend(window, ends)
            + (f"; {sooner:,} run(s) ended sooner, idle after their end counted as idle" if sooner else ""))


# --- sweep --format csv, sweep --format json ------------------------------------------------------------------


def _type_columns(run: Run, types: list[str]) -> dict[str, Any]:
    by_type = run.summary.get(SUMMARY_KEY, {})
    return {f"{metric}({t})": by_type.get(t, {}).get(metric) for t in types for metric in TYPE_COLUMNS}


def _cost_columns(output: SweepOutput, record: RunRecord, shares: list[str]) -> dict[str, Any]:
    costs = output.costs
    if costs is None:
        return {}
    row: dict[str, Any] = {"cost_unit": costs.unit}
    if not costs.priced:
        return row
    report = costs.report(record)
    row.update({name: cluster_figure(report, name) for name in CLUSTER_COST_METRICS} if report else
               dict.fromkeys(CLUSTER_COST_METRICS))
    row.update({f"share({share}).bill": share_figure(report, share) if report else None for share in shares})
    return {key: round(value, 6) if isinstance(value, float) else value for key, value in row.items()}


def csv_rows(output: SweepOutput) -> list[dict[str, Any]]:
    """One row per run: the varied fields and the figures (``dataset.flat_row``), then per instance type its
    utilisation and instance-hours (``METRIC(TYPE)``), and what the run cost."""
    runs = [(record, read_run(record)) for record in output.records]
    types = list(dict.fromkeys(t for _, run in runs for t in run.types))
    shares = list(dict.fromkeys(share for share, _ in output.pairs))
    return [{**flat_row(record, candidate_key(dict(run.values)), output.axes, output.pairs),
             **_type_columns(run, types), **_cost_columns(output, record, shares)} for record, run in runs]


def json_document(output: SweepOutput) -> dict[str, Any]:
    """``{"runs": [...]}``, each run exactly ``RUN_KEYS`` (``reports.tables.sweep_runs``)."""
    return {"runs": [run_json(record, output.costs) for record in output.records]}
