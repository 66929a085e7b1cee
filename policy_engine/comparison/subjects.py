"""What ``compare`` hands its renderers (``reports.compare_*``, in ``reports.registry``): the runs and their
before/after tables, built once here so that every format shows the same figures.

Each run's billable ledger is priced here once (``outputs.costs.cost_report``, as ``simulate`` and ``diff --scenario``
price it), with ``--prices`` (else in instance-hours): each share's cost is what it pays on each type over the billing
period, and the ``costs`` table holds each design's bill (on-demand, plan fees) and waste per instance type, with one
all-types row only when priced (instance-hours of different types are never added up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from policy_engine.analysis.checks import check_topology
from policy_engine.comparison.designs import Design
from policy_engine.comparison.runs import DesignRun
from policy_engine.foundation.findings import Finding, finding_to_dict
from policy_engine.foundation.units import Unit, duration_text
from policy_engine.inputs.prices import Prices
from policy_engine.simulation.results.billable import Period, period_text
from policy_engine.simulation.results.costs import INSTANCE_HOURS, Convention, CostReport, cost_report
from policy_engine.simulation.results.side_by_side import (
    INSTANCE_HOURS_LOST,
    JOBS,
    PREEMPTIONS,
    WAIT_P50,
    WAIT_P95,
    Figure,
    ShareComparison,
    ShareRow,
    TargetComparison,
    combine,
    combine_targets,
    compare_targets,
    cost_figure,
    from_metrics,
)
from policy_engine.simulation.results.spread import ONE_SAMPLE
from policy_engine.simulation.results.type_usage import SUMMARY_KEY
from policy_engine.simulation.results.window import WINDOW_KEY, common_window, window_legend
from policy_engine.simulation.results.worsening import by_worsening

ALL_SHARES = "all shares"
ALL_TYPES = "all types"
UTILISATION = Figure("utilisation", "utilisation", Unit.FRACTION, higher_is_better=True)
CAPACITY = Figure("capacity", "instances", Unit.COUNT, higher_is_better=True)
#: The run as a whole (``summary``): what the overall table shows (instance-hours lost are per type, below: an
#: instance-hour of one type is not worth one of another).
OVERALL_FIGURES = (JOBS, WAIT_P50, WAIT_P95, PREEMPTIONS)
#: Per instance type: utilisation, the fleet, and the work preemptions threw away.
TYPE_FIGURES = (UTILISATION, CAPACITY, INSTANCE_HOURS_LOST)
#: Each design's bill and waste (``CostReport``'s; the keys are its JSON ``bill`` and ``waste`` objects').
ON_DEMAND_COST = Figure("on_demand", "on-demand", Unit.COST)
PLAN_COST = Figure("plans", "plan fees", Unit.COST)
TOTAL_COST = Figure("total", "bill", Unit.COST)
PREEMPTED_COST = Figure("preempted_attempts", "waste: preempted attempts", Unit.COST)
PLAN_IDLE_COST = Figure("plan_idle", "waste: plan idle", Unit.COST)
COST_FIGURES = (ON_DEMAND_COST, PLAN_COST, TOTAL_COST, PREEMPTED_COST, PLAN_IDLE_COST)


@dataclass(frozen=True)
class CompareOutput:
    scenario: str
    jobs: int
    runs: tuple[DesignRun, ...]  # in design order; the first is the baseline of every difference
    #: the whole run, one row
    overall: ShareComparison
    #: per instance type: utilisation (instance-seconds used over capacity-seconds) and instances
    types: ShareComparison
    shares: ShareComparison
    targets: TargetComparison
    #: each design's bill (on-demand, plan fees) and waste: per instance type, and all types when priced
    costs: ShareComparison
    executor: str = ""
    #: what the shares' ``cost`` figure and the ``costs`` table are in: the prices' currency, else instance-hours
    cost_unit: str = INSTANCE_HOURS
    chargeback: Convention = Convention.USAGE
    #: ``--until``: where every run's clock stopped (``None``: when the workload was done)
    until: float | None = None
    #: what each bill covers (``--period``; default the whole workload)
    period: Period = field(default_factory=Period)
    #: each run's bill, in design order (its JSON is each run's ``costs``)
    reports: tuple[CostReport, ...] = ()
    #: each design's ``check`` errors (not suppressed), in design order: a design that fails is still run and
    #: compared, and every format says so beside it
    check_errors: tuple[tuple[Finding, ...], ...] = ()
    #: ``--samples N``: each figure is the median over N workload samples (1: the scenario's own jobs, as before)
    samples: int = 1
    #: ``--seed``: sample ``n`` (from 0) was drawn with ``seed + n``
    seed: int = 0
    #: each sample's jobs, in sample order (``runs``, the bills and ``--report`` are the first sample's)
    sample_jobs: tuple[int, ...] = ()
    #: the samples start from recorded jobs: sample 1 is them, samples 2..N resampled by day (seeds ``seed + n``)
    recorded: bool = False

    def samples_line(self) -> str:
        """With samples, what the tables are: ``across 5 samples (seeds 0-4, 9,950-10,120 jobs): ...``; else ''."""
        if self.samples <= 1:
            return ""
        jobs = (f"{min(self.sample_jobs):,}-{max(self.sample_jobs):,} jobs" if self.sample_jobs else "")
        from policy_engine.simulation.scenarios.samples import seeds_text

        return (f"across {self.samples} samples of the workload ({seeds_text(self.recorded, self.samples, self.seed)}, "
                f"{jobs}): every figure is the median with its p10-p90, every difference paired (the same sample "
                "under each design) and shown only when significant, the bill and instance-hours lost too; JSON's "
                "runs (each design's summary and whole cost report) and --report show sample 1")

    def page_sample_line(self) -> str:
        """With samples, what ``--report``'s page draws of which sample, for a line under its title; else ''."""
        if self.samples <= 1:
            return ""
        from policy_engine.simulation.scenarios.samples import sample_one

        return (f"This page: the tables are medians across {self.samples} samples with their p10-p90; the charts "
                f"over time and why jobs waited draw {sample_one(self.recorded, self.samples, self.seed)} alone.")

    @property
    def span(self) -> str:
        """How far each design ran, for a report's first line: ``from time 0`` or ``from time 0 to 7d 0h``."""
        span = "from time 0" + (f" to {duration_text(self.until)} (--until)" if self.until is not None else "")
        span += f", across {self.samples} samples" if self.samples > 1 else f", on {ONE_SAMPLE}"
        if self.priced or not self.period.whole:
            span += f"; bill for {period_text(self.period)}"
        return span

    @property
    def window(self) -> float:
        """The window the time-weighted figures are over (``comparison.runs.over_common_window``), of sample 1."""
        return common_window(run.summary.get(WINDOW_KEY, run.time) for run in self.runs)

    def window_text(self) -> str:
        """``utilisation, own utilisation and mean borrowed/lent: time-weighted over 0 to 52d 21h, the longest run``
        (with samples, each sample over its own longest run, sample 1's named)."""
        text = "utilisation, own utilisation and mean borrowed/lent: "
        ends = [run.time for run in self.runs]
        window = window_legend(self.window, ends)
        if len(set(ends)) > 1:
            window += (" (" + ", ".join(f"{run.label} ends at {duration_text(run.time)}" for run in self.runs)
                       + "; idle time after a run's end counts as idle)")
        if self.samples > 1:
            return text + f"time-weighted over one window per sample, from 0 to its longest run (sample 1: {window})"
        return text + window

    @property
    def priced(self) -> bool:
        return self.cost_unit != INSTANCE_HOURS

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(run.label for run in self.runs)

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(run.source for run in self.runs)

    def errors_of(self, run: int) -> tuple[Finding, ...]:
        return self.check_errors[run] if run < len(self.check_errors) else ()

    @property
    def marked_sources(self) -> tuple[str, ...]:
        """Each design's source, marked when the design fails ``check``: ``b.yaml; FAILS CHECK: 2 errors``."""
        return tuple(source + (f"; FAILS CHECK: {len(errors)} error(s)" if (errors := self.errors_of(run)) else "")
                     for run, source in enumerate(self.sources))

    def check_lines(self) -> list[str]:
        """One line per check error of each design, naming the design and the rule."""
        return [f"{self.runs[run].label} ({self.runs[run].source}) fails check: {finding.line()}"
                for run in range(len(self.runs)) for finding in self.errors_of(run)]

    def last_misses(self) -> int:
        """Target criteria the last design misses (what ``--fail-on-target`` fails on)."""
        return sum(1 for result in self.runs[-1].targets if not result.met)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario, "jobs": self.jobs, "baseline": self.runs[0].label,
            "cost_unit": self.cost_unit, "chargeback": self.chargeback.value,
            "runs": [{"label": run.label, "source": run.source, "time": run.time, "summary": run.summary,
                      "utilisation": run.utilisation, "capacity": run.capacity,
                      "targets": [result.to_json() for result in run.targets],
                      "costs": report.to_json() if report is not None else None,
                      "fails_check": bool(self.errors_of(index)),
                      "check_errors": [finding_to_dict(finding) for finding in self.errors_of(index)]}
                     for index, (run, report) in enumerate(zip(self.runs, self.reports or (None,) * len(self.runs),
                                                               strict=True))],
            "period": self.period.to_json(),
            WINDOW_KEY: self.window,
            "overall": self.overall.to_json()[0],
            "instance_types": self.types.to_json(),
            "shares": self.shares.to_json(),
            "targets": self.targets.to_json(),
            "costs": self.costs.to_json(),
            "samples": self.samples,
            **({"seed": self.seed, "sample_jobs": list(self.sample_jobs), "runs_sample": 1,
                "first_sample_recorded": self.recorded} if self.samples > 1 else {}),
        }


def run_costs(run: DesignRun, design: Design, prices: Prices | None, convention: Convention) -> CostReport:
    """The run's billable ledger priced (instance-hours without ``prices``), as ``simulate`` prices its run."""
    if run.hours is None or run.billable is None:
        raise ValueError(f"the run of {run.label} has no billable ledger")
    return cost_report(run.billable, run.hours, design.topology, prices, convention)


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {key: round(value, 6) + 0.0 for key, value in values.items()}


def _bill_figures(report: CostReport, instance_type: str | None) -> dict[str, float] | None:
    """One run's bill and waste on one type (all types: ``None``), keyed as ``COST_FIGURES``; without prices the
    instance-hours (on-demand, on plans, their sum, work lost to preemption, plan hours idle or cut)."""
    if instance_type is None:
        bill, waste = report.bill, report.waste
        return _rounded({ON_DEMAND_COST.key: bill.on_demand, PLAN_COST.key: bill.plans, TOTAL_COST.key: bill.total,
                         PREEMPTED_COST.key: waste.preempted_attempts, PLAN_IDLE_COST.key: waste.plan_idle})
    row = report.by_type().get(instance_type)
    if row is None:
        return None
    amounts, waste, hours = row
    if report.priced:
        return _rounded({ON_DEMAND_COST.key: amounts.on_demand, PLAN_COST.key: amounts.plans,
                         TOTAL_COST.key: amounts.total, PREEMPTED_COST.key: waste.preempted_attempts,
                         PLAN_IDLE_COST.key: waste.plan_idle})
    idle = sum(p.hours.idle + sum(p.hours.cut.values()) for p in report.plans if p.hours.instance_type == instance_type)
    return _rounded({ON_DEMAND_COST.key: hours["on_demand"], PLAN_COST.key: hours["plans"],
                     TOTAL_COST.key: hours["on_demand"] + hours["plans"], PREEMPTED_COST.key: hours["preempted"],
                     PLAN_IDLE_COST.key: idle})


def cost_totals(labels: Sequence[str], reports: Sequence[CostReport]) -> ShareComparison:
    """Per instance type each run's bill and waste (``None`` where a run has no such type); then, only when priced,
    the all-types row (instance-hours of different types are not added up)."""
    types = list(dict.fromkeys(t for report in reports for t in report.by_type()))
    rows = [ShareRow(ALL_SHARES, t, tuple(_bill_figures(report, t) for report in reports)) for t in types]
    if reports and all(report.priced for report in reports):
        rows.append(ShareRow(ALL_SHARES, ALL_TYPES, tuple(_bill_figures(report, None) for report in reports)))
    return ShareComparison(tuple(labels), COST_FIGURES, tuple(rows))


def with_costs(shares: ShareComparison, costs: Sequence[dict[tuple[str, str], float]], figure: Figure
               ) -> ShareComparison:
    """``shares`` with one more figure, each run's cost of the row's share (by its name in that run)."""
    rows = []
    for row in shares.rows:
        values = []
        for run, found in enumerate(row.values):
            name = row.names[run] if row.names else row.share
            values.append(None if found is None else
                          {**found, figure.key: round(costs[run].get((name, row.instance_type), 0.0), 6) + 0.0})
        rows.append(replace(row, values=tuple(values)))
    return replace(shares, figures=(*shares.figures, figure), rows=tuple(rows))


def _type_summary(run: DesignRun, instance_type: str) -> dict[str, Any]:
    """The run's ``summary.instance_types`` entry of one type (as ``simulate --format json`` has it)."""
    return run.summary.get(SUMMARY_KEY, {}).get(instance_type, {})


def build(scenario: str, jobs: int, runs: Sequence[DesignRun], designs: Sequence[Design],
          executor: str = "", prices: Prices | None = None, convention: Convention = Convention.USAGE,
          period: Period | None = None, check_errors: tuple[tuple[Finding, ...], ...] | None = None
          ) -> CompareOutput:
    """The before/after tables of ``runs``; ``check_errors``: each design's, when already known (else checked)."""
    labels = tuple(run.label for run in runs)
    names = [design.shares for design in designs]
    overall = ShareComparison(labels, OVERALL_FIGURES, (ShareRow(ALL_SHARES, ALL_TYPES, tuple(
        {f.key: float(run.summary[f.key]) for f in OVERALL_FIGURES} for run in runs)),))
    types = list(dict.fromkeys(t for run in runs for t in run.utilisation))
    per_type = ShareComparison(labels, TYPE_FIGURES, tuple(
        ShareRow(ALL_SHARES, t, tuple({UTILISATION.key: run.utilisation[t], CAPACITY.key: float(run.capacity[t]),
                                       INSTANCE_HOURS_LOST.key: float(_type_summary(run, t).get(
                                           INSTANCE_HOURS_LOST.key, 0.0))}
                                      if t in run.utilisation else None for run in runs)) for t in types))
    unit = prices.currency if prices is not None else INSTANCE_HOURS
    reports = [run_costs(run, design, prices, convention) for run, design in zip(runs, designs, strict=True)]
    # the most harmed share first, wherever a change is judged
    shares = by_worsening(with_costs(from_metrics(labels, [run.shares for run in runs], names),
                                     [report.per_share_type() for report in reports], cost_figure(unit)))
    return CompareOutput(scenario, jobs, tuple(runs), overall, per_type, shares,
                         compare_targets(labels, [run.targets for run in runs], names), cost_totals(labels, reports),
                         executor, unit, convention, period=period or Period(), reports=tuple(reports),
                         check_errors=check_errors if check_errors is not None else _checked(designs))


def _checked(designs: Sequence[Design]) -> tuple[tuple[Finding, ...], ...]:
    return tuple(tuple(check_topology(design.topology).errors) for design in designs)


def build_sampled(scenario: str, runs: Sequence[DesignRun], designs: Sequence[Design], executor: str = "",
                  prices: Prices | None = None, convention: Convention = Convention.USAGE,
                  period: Period | None = None, seed: int = 0, recorded: bool = False) -> CompareOutput:
    """``build`` per workload sample (``DesignRun.sample``), combined: each before/after table's values are the
    medians across the samples, keeping every sample's values for the spread and the paired differences; the
    targets are judged on the medians; ``runs`` and the bills are the first sample's."""
    by_sample: dict[int, list[DesignRun]] = {}
    for run in sorted(runs, key=lambda run: (run.sample, run.index)):
        by_sample.setdefault(run.sample, []).append(run)
    checked = _checked(designs)  # once: the designs are the same in every sample
    outputs = [build(scenario, sample[0].jobs, sample, designs, executor, prices, convention, period, checked)
               for sample in by_sample.values()]
    if len(outputs) == 1:
        return outputs[0]
    first = outputs[0]
    return replace(first, overall=combine([output.overall for output in outputs]),
                   types=combine([output.types for output in outputs]),
                   shares=by_worsening(combine([output.shares for output in outputs])),
                   costs=combine([output.costs for output in outputs]),
                   targets=combine_targets([output.targets for output in outputs]),
                   samples=len(outputs), seed=seed, sample_jobs=tuple(output.jobs for output in outputs),
                   recorded=recorded)
