"""``simulate``'s view: the run's headline (jobs by status, preemptions, waits, instance-hours lost per type, the
utilisation phrase), the jobs' rows, one row per share and instance type, the per-type rows, observed against
simulated per share, and the billing period, read once from ``SimulateOutput`` for every format.

The sections several commands show (the training plans and their account, why jobs waited, the bill, the targets)
are drawn by the shared ``reports.tables`` modules, which read the run's own values: the view hands them over
(``plans``, ``plan_account`` with its ``topology``, ``waits``, ``costs``, ``targets``). The JSON document streams
job by job from the result (``JsonDocument``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TextIO

from policy_engine.foundation.units import duration_text, instance_hours_text, percent_text
from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.reports.tables.jobs_table import JobRow, job_rows
from policy_engine.reports.tables.type_tables import all_types_text, type_rows, utilisation_phrase
from policy_engine.simulation.results.calibration import ShareCalibration
from policy_engine.simulation.results.records import SimulationResult
from policy_engine.simulation.results.type_usage import SUMMARY_KEY, from_summary, weighted_utilisation

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.inputs.prices import Prices
    from policy_engine.simulation.plan_windows import PlanReport
    from policy_engine.simulation.results.costs import CostReport
    from policy_engine.simulation.results.plan_account import PlanAccount
    from policy_engine.simulation.results.sampled_types import SampledTypeUsage
    from policy_engine.simulation.results.targets import TargetResult
    from policy_engine.simulation.results.wait_causes import WaitCauses

__all__ = ["JOB_TABLE_LIMIT", "SPREAD_HEAD", "CalibrationRow", "JsonDocument", "RunView", "ShareCalibration",
           "ShareRow", "SimulateOutput", "SimulateView", "SimulationResult", "bill_spread_line", "build",
           "calibration_rows", "json_document", "run_view", "sampled_type_rows", "shares_title", "spread_rows",
           "spread_title", "types_title"]

#: ``--samples N``: the spread table's columns after the share and type (``spread_rows``).
SPREAD_HEAD = ("share", "type", "jobs", "own util", "mean borrowed (inst)", "mean lent (inst)", "wait p50",
               "wait p95", "wait max", "preemptions", "inst-h lost")
_SPREAD_TEXT: tuple[tuple[str, Callable[[float], str]], ...] = (
    ("jobs", lambda v: f"{v:,.0f}"), ("own_utilisation", lambda v: f"{v:.1%}"),
    ("mean_borrowed", lambda v: f"{v:.2f}"), ("mean_lent", lambda v: f"{v:.2f}"), ("wait_p50", duration_text),
    ("wait_p95", duration_text), ("wait_max", duration_text), ("preemptions", lambda v: f"{v:,.0f}"),
    ("instance_hours_lost", lambda v: f"{v:.2f}"))


def bill_spread_line(output: SimulateOutput) -> str | None:
    """With ``--samples N`` and prices: the bill and the waste across the samples, each a median (p10-p90), the
    cost tables being sample 1's; ``None`` otherwise."""
    from policy_engine.foundation.units import money_text
    from policy_engine.reports.tables.share_comparison import spread_cell

    found, report = output.bill_spread, output.costs
    if found is None or report is None:
        return None
    return (f"The bill across {output.samples} samples: {spread_cell(money_text, found['total'])} {report.currency} "
            f"(on-demand {spread_cell(money_text, found['on_demand'])}, plan fees "
            f"{spread_cell(money_text, found['plans'])}); waste {spread_cell(money_text, found['waste'])}; the cost "
            "tables below are sample 1's")


def spread_title(output: SimulateOutput) -> str:
    return f"Shares across {output.samples} samples: median (p10-p90)"


def shares_title(output: SimulateOutput) -> str:
    """The share table's title: over the run, or (``--samples N``) the medians across the samples."""
    if output.samples > 1:
        return (f"Shares across {output.samples} samples: medians (time-weighted over each run; the p10-p90 "
                "in the spread table)")
    return f"Shares (time-weighted over the run), {output.shares_label()}"


def types_title(output: SimulateOutput) -> str:
    """The instance-type table's title: over the run, or (``--samples N``) medians with their p10-p90."""
    if output.samples > 1:
        return (f"Instance types across {output.samples} samples: median (p10-p90) (never summed across types; "
                "instance-hours over each run)")
    return "Instance types (never summed across types; instance-hours over the run)"


def sampled_type_rows(types: Sequence[SampledTypeUsage]) -> tuple[tuple[str, ...], ...]:
    """``TYPE_HEADERS`` rows of the per-type medians across the samples, each cell ``median (p10-p90)``."""
    from policy_engine.reports.tables.share_comparison import spread_cell

    def count(value: float) -> str:
        return f"{value:,.0f}"

    texts: tuple[tuple[str, Callable[[float], str]], ...] = (
        ("instances", count), ("jobs", count), ("utilisation", percent_text),
        ("used_instance_hours", instance_hours_text), ("idle_instance_hours", instance_hours_text),
        ("borrowed_instance_hours", instance_hours_text), ("lent_instance_hours", instance_hours_text),
        ("preemptions", count), ("instance_hours_lost", instance_hours_text))
    return tuple((usage.instance_type, *(spread_cell(text, usage.spread[name]) for name, text in texts))
                 for usage in types)


def spread_rows(output: SimulateOutput) -> list[tuple[str, ...]]:
    """With ``--samples N``: per share and type, each figure as ``median (p10-p90)``; empty without samples."""
    from policy_engine.reports.tables.share_comparison import spread_cell
    from policy_engine.simulation.results.sampled_shares import SampledShareMetrics

    return [(m.share, m.instance_type, *(spread_cell(text, m.spread[key]) for key, text in _SPREAD_TEXT))
            for m in output.result.shares if isinstance(m, SampledShareMetrics)]

#: Above this many jobs the text report shows shares and the summary only.
JOB_TABLE_LIMIT = 200


@dataclass(frozen=True)
class ShareRow:
    """One share on one instance type over the run: figures as numbers, waits as text."""

    share: str
    instance_type: str
    strategy: str
    limit: int
    jobs: int
    own_utilisation: float
    mean_borrowed: float
    mean_lent: float
    wait_p50: str
    wait_p95: str
    wait_max: str
    preemptions: int
    instance_hours_lost: float
    instance_hours_lost_text: str  # as ``instance_hours_text`` writes it


@dataclass(frozen=True)
class CalibrationRow:
    """Observed against simulated for one share (waits to the first start, as text)."""

    share: str
    jobs: int
    observed_first_start_wait_p50: str
    simulated_first_start_wait_p50: str
    observed_first_start_wait_p95: str
    simulated_first_start_wait_p95: str
    observed_first_start_wait_mean: str
    simulated_first_start_wait_mean: str
    observed_preemptions: int
    simulated_preemptions: int
    agreeing: int
    observed_jobs: int


@dataclass(frozen=True)
class RunView:
    """The run's own figures: what ``simulate`` and the reports built on a run show of it."""

    time: str  # the simulated time, as text
    jobs: int
    by_status: Mapping[str, int]
    preemptions: int
    wait_p50: str
    wait_p95: str
    wait_max: str
    #: ``ml.p4d.24xlarge 192.91, ml.g5.12xlarge 922.45``: per type, never one total
    lost_by_type: str
    #: each type's utilisation side by side (and, priced, the price-weighted figure of all types)
    utilisation: str
    #: the all-types utilisation weighted by the prices (``-`` without a price for every type)
    weighted_utilisation: str
    job_rows: tuple[JobRow, ...] | None  # ``None``: more than ``JOB_TABLE_LIMIT`` jobs
    shares: tuple[ShareRow, ...]
    types: tuple[tuple[str, ...], ...]  # ``reports.tables.type_tables.TYPE_HEADERS`` rows
    plans: PlanReport | None


@dataclass(frozen=True)
class SimulateView:
    source: str
    run: RunView
    #: what every figure below the bill is read over (``--period``); ``None`` without ``--prices``/``--costs``
    bill_period: str | None
    calibration: tuple[CalibrationRow, ...] | None
    deploy_note: str
    waits: WaitCauses | None
    costs: CostReport | None
    targets: tuple[TargetResult, ...]
    #: the run's training plans accounted for (idle causes per window, plan hazards); ``None`` without plans
    plan_account: PlanAccount | None
    #: the topology the run was on (the plan account's sentences name its shares' limits)
    topology: Topology | None
    #: ``--samples N``: what every table of the first sample alone is titled with (``sample 1 of 5 (seed 0)``);
    #: '' without samples
    sample_one: str = ""
    shares_title: str = "Shares (time-weighted over the run)"
    types_title: str = "Instance types (never summed across types; instance-hours over the run)"


@dataclass(frozen=True)
class JsonDocument:
    """``simulate --format json``: what follows the summary (``extra``) and the per-job columns added (``fields``),
    streamed job by job by ``write(stream, extra, fields)``."""

    extra: dict[str, Any] | None
    fields: dict[str, Sequence[object]] | None
    write: Callable[[TextIO, dict[str, Any] | None, dict[str, Sequence[object]] | None], None]


def _lost_by_type(summary: Mapping[str, Any]) -> str:
    """The work preemptions threw away, per type (an hour of one type is not worth one of another, so never one
    total)."""
    by_type = summary.get(SUMMARY_KEY, {})
    return ", ".join(f"{t} {instance_hours_text(figures.get('instance_hours_lost', 0.0))}"
                     for t, figures in by_type.items()) or instance_hours_text(summary["instance_hours_lost"])


def run_view(result: SimulationResult, rates: Mapping[str, float] | None = None, *, jobs: bool = True) -> RunView:
    """A run's figures; ``rates``: the prices per instance-hour (the utilisation then weighs each type's); ``jobs``:
    whether the jobs' rows are wanted (at most ``JOB_TABLE_LIMIT`` of them)."""
    summary = result.summary
    shares = tuple(ShareRow(s.share, s.instance_type, s.strategy, s.limit, s.jobs, s.own_utilisation,
                            s.mean_borrowed, s.mean_lent, duration_text(s.wait_p50), duration_text(s.wait_p95),
                            duration_text(s.wait_max), s.preemptions, s.instance_hours_lost,
                            instance_hours_text(s.instance_hours_lost)) for s in result.shares)
    return RunView(duration_text(result.time), summary["jobs"], summary["by_status"], summary["preemptions"],
                   duration_text(summary["wait_p50"]), duration_text(summary["wait_p95"]),
                   duration_text(summary["wait_max"]), _lost_by_type(summary), utilisation_phrase(summary, rates),
                   all_types_text(summary, rates) if rates is not None else "-",
                   job_rows(result) if jobs and len(result.jobs) <= JOB_TABLE_LIMIT else None, shares,
                   tuple(type_rows(summary)), result.plans)


def calibration_rows(rows: Sequence[ShareCalibration]) -> tuple[CalibrationRow, ...]:
    return tuple(CalibrationRow(c.share, c.jobs, duration_text(c.observed_first_start_wait_p50),
                                duration_text(c.simulated_first_start_wait_p50),
                                duration_text(c.observed_first_start_wait_p95),
                                duration_text(c.simulated_first_start_wait_p95),
                                duration_text(c.observed_first_start_wait_mean),
                                duration_text(c.simulated_first_start_wait_mean), c.observed_preemptions,
                                c.simulated_preemptions, c.agreeing, c.observed_jobs) for c in rows)


def _rates(prices: Prices | None) -> Mapping[str, float] | None:
    return prices.per_instance_hour if prices is not None else None


def build(output: SimulateOutput, *, jobs: bool = True) -> SimulateView:
    """The view of a finished simulation; ``jobs``: whether a format shows the jobs' rows."""
    costs = output.costs
    period = None
    if costs is not None:  # the billing period first: every figure below the bill is read over it
        from policy_engine.reports.tables.cost_tables import period_text

        period = period_text(costs.period)
    run = run_view(output.result, _rates(costs.prices if costs else None), jobs=jobs)
    if output.sample_types:  # the per-type table reads the same samples as the shares' medians
        run = replace(run, types=sampled_type_rows(output.sample_types))
    return SimulateView(output.source, run, period,
                        calibration_rows(output.calibration) if output.calibration is not None else None,
                        output.deploy_note(), output.waits, costs, tuple(output.targets), output.plan_account,
                        output.topology, output.sample_one(), shares_title(output), types_title(output))


def json_document(output: SimulateOutput) -> JsonDocument:
    """``observed_vs_simulated`` follows the summary when the workload carried observed jobs."""
    calibration = output.calibration
    extra: dict[str, Any] = {}
    if calibration is not None:
        extra["observed_vs_simulated"] = [row.to_json() for row in calibration]
    if output.result.plans is not None:
        from policy_engine.reports.tables.plan_tables import to_json

        extra["training_plans"] = to_json(output.result.plans)  # hours: the plans' fees are in ``costs.plans``
        if output.plan_account is not None:
            from policy_engine.reports.tables.plan_account_tables import add_to_json

            add_to_json(extra["training_plans"], output.plan_account)
    if output.waits is not None:
        extra["wait_causes"] = output.waits.to_json()
    if output.named_at_deploy:
        extra["named_at_deploy"] = list(output.named_at_deploy)
    if output.costs is not None:
        extra["costs"] = output.costs.to_json()
        if output.bill_spread is not None:  # each bill and waste figure across the samples (the rest: sample 1's)
            extra["costs"]["spread"] = {key: found.to_json() for key, found in output.bill_spread.items()}
        if output.costs.prices is not None:
            # ``summary.cluster_utilisation`` counts every instance-hour the same; this one what each costs
            weighted = weighted_utilisation(from_summary(output.result.summary), output.costs.prices.per_instance_hour)
            # null when the capacity is worth nothing at the rates given (every type at 0 per instance-hour)
            extra["costs"]["price_weighted_utilisation"] = None if weighted is None else round(weighted, 6)
    if output.targets:
        extra["targets"] = [result.to_json() for result in output.targets]
    extra["samples"] = {"count": 1}  # one workload: figures without a spread (``--samples N`` gives one)
    if output.samples > 1:
        extra["samples"] = {"count": output.samples, "seed": output.seed, "jobs": list(output.sample_jobs),
                            "first_sample_recorded": output.recorded,
                            "instance_types": [usage.to_json() for usage in output.sample_types],
                            "shares": "median of each figure across the samples, its p10-p90-p50 in spread",
                            "first_sample_shows": ["jobs", "summary", "events", "report", "costs", "targets",
                                                   "wait_causes", "training_plans"]}
    fields: dict[str, Sequence[object]] = {}
    if output.waits is not None:  # per job, the cause it waited longest for (null: it never waited)
        fields["wait_cause"] = [None if cause is None else cause.value for cause in output.waits.job_causes]
    if output.plan_account is not None:  # per job, SCHEDULED seconds waiting for its plan's window (null: no plan)
        fields["plan_hold_seconds"] = output.plan_account.plan_hold
    if output.result.plans is not None:  # per job, its requeues after 2 days pending for its plan (docs/simulator.md)
        fields["capacity_retries"] = [record.capacity_retries for record in output.result.jobs]
    return JsonDocument(extra or None, fields or None, output.result.write_json)
