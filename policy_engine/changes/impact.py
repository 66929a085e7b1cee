"""``diff --scenario S --at T``: replay S on BASE, deploy HEAD at T, and measure what the change does.

Two runs of the same workload: BASE throughout (the baseline) and BASE until T, then HEAD applied
the way AWS applies an update (``simulation.topology_changes``). The difference is the change's
impact: jobs preempted because of it, waits per share, instance-hours lost.

How HEAD becomes updates at T: a share on both sides gets HEAD's capacity, strategy, borrow limit,
in-share preemption and state; an environment gets HEAD's capacity; a share only in HEAD exists
from the start with no capacity (RESERVE, DISABLED, so it changes nothing before T) and gets HEAD's
values at T; a share removed or replaced (renamed, moved) is DISABLED with no capacity at T, so its
running jobs become reclaim victims and its queued jobs never start (CloudFormation deletes it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from policy_engine.foundation.model import QuotaShare, ServiceEnvironment, Topology, share_id
from policy_engine.foundation.units import Unit, duration_text
from policy_engine.inputs.loading import LoadError
from policy_engine.inputs.prices import Prices
from policy_engine.inputs.renames import Renames
from policy_engine.simulation.causes import Cause, Reason, describe
from policy_engine.simulation.core.engine import Engine, PriorityUpdate
from policy_engine.simulation.core.jobs import ACTIVE, PREEMPTED, Job, Status, waits_of
from policy_engine.simulation.results.billable import Period
from policy_engine.simulation.results.costs import INSTANCE_HOURS, Convention, CostReport, run_costs
from policy_engine.simulation.results.metrics import ShareMetrics, percentile
from policy_engine.simulation.results.records import SimulationResult, build_result
from policy_engine.simulation.results.side_by_side import (
    INSTANCE_HOURS_LOST,
    JOBS,
    SHARE_FIGURES,
    WAIT_HOURS,
    Figure,
    ShareComparison,
    ShareRow,
    TargetComparison,
    combine,
    compare_targets,
    cost_figure,
)
from policy_engine.simulation.results.spread import median, spread
from policy_engine.simulation.results.targets import evaluate_targets, from_json
from policy_engine.simulation.results.window import WINDOW_KEY, common_window, widened_result
from policy_engine.simulation.results.worsening import by_worsening, most_harmed, worsenings
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate

_GONE: dict[str, Any] = {"capacity": {}, "strategy": "RESERVE", "borrow_limit": None, "state": "DISABLED"}


def _fields(share: QuotaShare) -> dict[str, Any]:
    """What an ``update_share`` sets to make a share what ``share`` says."""
    return {"capacity": dict(share.capacity), "strategy": share.strategy, "borrow_limit": share.borrow_limit,
            "in_share_preemption": share.in_share_preemption, "state": share.state}


@dataclass(frozen=True)
class Impact:
    scenario: str
    at: float
    #: Jobs preempted (at or after T) more often with the change than without.
    preempted: list[dict[str, Any]]
    #: Per share and instance type whose mean wait changes: jobs, mean wait without and with the change.
    waits: list[dict[str, Any]]
    instance_hours_lost_before: float
    instance_hours_lost_after: float
    #: Jobs that succeed without the change but not with it (preempted past their retries, submitted to a deleted
    #: share, ...; ``never_finish_reasons`` says why).
    never_finish: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Per share and instance type, without -> with the change: jobs, mean, p50 and p95 wait (seconds RUNNABLE:
    #: submission to placement plus every requeue to the next, to the end of the run if never placed), preemptions
    #: at or after T, own utilisation and instance-hours lost over the replay (``ShareMetrics``, as ``compare``
    #: shows them) and the cost. Every share with jobs, changed or not (a zero difference is a finding too).
    shares: list[dict[str, Any]] = field(default_factory=list)
    #: What the rows' ``cost_before``/``cost_after`` are in (a currency with --prices, else instance-hours)
    #: and the chargeback convention they follow.
    cost_unit: str = INSTANCE_HOURS
    chargeback: str = Convention.USAGE.value
    #: BASE's targets judged on the replay without the change, HEAD's on the replay with it (``TargetResult``
    #: JSON): ``{"before": [...], "after": [...]}``.
    targets: dict[str, Any] = field(default_factory=dict)
    #: Why the ``never_finish`` jobs do not succeed with the change, most jobs first: ``{status, cause, detail,
    #: deleted_share, reason, jobs}`` (``cause``: the ``simulation.causes.Cause`` that ended a FAILED job, else
    #: null for a job still waiting or running at the end of the replay; ``reason``: it in words).
    never_finish_reasons: list[dict[str, Any]] = field(default_factory=list)
    #: The bill of each replay (``outputs.costs.CostReport``'s JSON): ``{"before": {...}, "after": {...}}``.
    costs: dict[str, Any] = field(default_factory=dict)
    #: How many jobs the change preempts (at or after T) less often than without it: with ``preempted``, the net.
    preempted_less_often: int = 0
    #: ``--samples N``: each sample's ``shares`` rows, in sample order (``shares`` then holds their medians, and the
    #: job lists, notes, bills and targets are the first sample's); empty for one run of the scenario's own jobs
    sample_shares: tuple[list[dict[str, Any]], ...] = ()
    #: each sample's bills (``costs``), in sample order
    sample_costs: tuple[dict[str, Any], ...] = ()
    #: ``--seed``: sample ``n`` was drawn with ``seed + n``
    seed: int = 0
    #: the samples start from recorded jobs: sample 1 is them, samples 2..N resampled by day (seeds ``seed + n``)
    recorded: bool = False

    @property
    def samples(self) -> int:
        return len(self.sample_shares) or 1

    @property
    def instance_hours_lost(self) -> float:
        """Instance-hours of work lost to preemption because of the change (with minus without)."""
        difference = self.instance_hours_lost_after - self.instance_hours_lost_before
        return 0.0 if abs(difference) < 1e-9 else difference

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "at": self.at, "preempted": self.preempted, "waits": self.waits,
                "instance_hours_lost": round(self.instance_hours_lost, 6) + 0.0,  # never -0.0
                "instance_hours_lost_before": round(self.instance_hours_lost_before, 6),
                "instance_hours_lost_after": round(self.instance_hours_lost_after, 6),
                "never_finish": self.never_finish, "notes": self.notes, "shares": self.shares,
                "cost_unit": self.cost_unit, "chargeback": self.chargeback, "targets": self.targets,
                "never_finish_reasons": self.never_finish_reasons, "costs": self.costs,
                "preempted_more_often": len(self.preempted), "preempted_less_often": self.preempted_less_often,
                "most_harmed": (worst.to_json() if (worst := most_harmed(share_comparison(self))) else None),
                # every share the replay shows worse off, the most harmed first (``worsening.HARM``)
                "harmed": [found.to_json() for found in worsenings(share_comparison(self))],
                "bill_comparison": (found.to_json()[0] if (found := bill_comparison(self)) is not None else None),
                "instance_hours_lost_by_type": lost_comparison(self).to_json(),
                **self._samples_dict()}

    def _samples_dict(self) -> dict[str, Any]:
        """With samples: how many, the seed, what shows the first sample, and each per-share figure's paired
        difference with ``significant`` (``ShareComparison.to_json``)."""
        if self.samples <= 1:
            return {"samples": 1}
        return {"samples": self.samples, "seed": self.seed, "first_sample_recorded": self.recorded,
                "first_sample_shows": FIRST_SAMPLE_SHOWS,
                "share_comparison": share_comparison(self).to_json()}


#: With ``--samples``, what is read from the first sample only (named in every format): the job lists and the
#: whole cost reports (``bill_comparison`` has the bills' medians, spreads and paired difference).
FIRST_SAMPLE_SHOWS = ("preempted", "never_finish", "never_finish_reasons", "notes", "targets", "costs")

#: Each replay's bill (all types, priced) and its waste (preempted attempts and plan idle), as ``bill_comparison``
#: holds them.
BILL = Figure("total", "bill", Unit.COST)
WASTE = Figure("waste", "waste", Unit.COST)


def _bill_row(costs: dict[str, Any]) -> ShareRow | None:
    before, after = costs.get("before"), costs.get("after")
    if not before or not after or before.get("currency") is None:
        return None
    return ShareRow("all shares", "all types", tuple(
        {BILL.key: float(side["bill"]["total"]), WASTE.key: float(sum(side["waste"].values()))}
        for side in (before, after)))


def bill_comparison(impact: Impact) -> ShareComparison | None:
    """Both replays' bills and waste, one row; with samples the medians, spreads and paired differences
    (``combine``); ``None`` when unpriced (instance-hours of different types are never added up)."""
    per_sample = []
    for costs in impact.sample_costs or (impact.costs,):
        row = _bill_row(costs)
        if row is None:
            return None
        per_sample.append(ShareComparison(RUNS, (BILL, WASTE), (row,)))
    return combine(per_sample)


def _lost_rows(shares: Sequence[dict[str, Any]]) -> ShareComparison:
    totals: dict[str, tuple[float, float]] = {}
    for row in shares:
        before, after = totals.get(row["instance_type"], (0.0, 0.0))
        totals[row["instance_type"]] = (before + row.get("instance_hours_lost_before", 0.0),
                                        after + row.get("instance_hours_lost_after", 0.0))
    return ShareComparison(RUNS, (INSTANCE_HOURS_LOST,), tuple(
        ShareRow("all shares", kind, tuple({INSTANCE_HOURS_LOST.key: round(value, 6) + 0.0} for value in pair))
        for kind, pair in totals.items()))


def lost_comparison(impact: Impact) -> ShareComparison:
    """Per instance type (never added across types), the instance-hours lost to preemption without and with the
    change; with samples each type's medians, spreads and paired difference (``combine``)."""
    return combine([_lost_rows(shares) for shares in impact.sample_shares or (impact.shares,)])


def _median_rows(samples: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per share and instance type, each number the median over the samples (a sample without the row counts as
    zero), with its p10-p90 in ``spread``."""
    keyed = [{(row["share"], row["instance_type"]): row for row in rows} for rows in samples]
    order = sorted({key for rows in keyed for key in rows})
    out = []
    for key in order:
        found = [rows.get(key) for rows in keyed]
        first = next(row for row in found if row is not None)
        numbers = [name for name, value in first.items() if isinstance(value, (int, float))]
        spreads = {name: spread([float(row[name]) if row is not None else 0.0 for row in found]) for name in numbers}
        out.append({**first, **{name: found_spread.p50 for name, found_spread in spreads.items()},
                    "spread": {name: found_spread.to_json() for name, found_spread in spreads.items()}})
    return out


def combine_impacts(impacts: Sequence[Impact], seed: int, recorded: bool = False) -> Impact:
    """One impact over several workload samples: the per-share rows are medians (keeping each sample's rows for the
    spreads and the paired differences); what lists jobs is the first sample's (``FIRST_SAMPLE_SHOWS``)."""
    if len(impacts) == 1:
        return impacts[0]
    first = impacts[0]
    return replace(first, shares=_median_rows([impact.shares for impact in impacts]),
                   instance_hours_lost_before=median([impact.instance_hours_lost_before for impact in impacts]),
                   instance_hours_lost_after=median([impact.instance_hours_lost_after for impact in impacts]),
                   sample_shares=tuple(impact.shares for impact in impacts),
                   sample_costs=tuple(impact.costs for impact in impacts), seed=seed,
                   recorded=recorded)


def _check_against_base(scenario: Scenario, base: Topology) -> None:
    """The scenario's jobs and actions must name BASE's shares and environments (the scenario is replayed on it)."""
    nodes = {share_id(q, s): s for q, s in base.shares()}
    problems = []
    for job in scenario.jobs:
        share = nodes.get(job.share)
        if share is None:
            problems.append(f"{scenario.source}: jobs[{job.name}].share: BASE has no quota share {job.share} "
                            f"(the scenario is replayed on BASE)")
        elif job.instance_type not in share.capacity:
            problems.append(f"{scenario.source}: jobs[{job.name}].instance_type: {job.share} has no "
                            f"{job.instance_type} in BASE")
    for action in scenario.updates:
        if isinstance(action, ShareUpdate) and action.share not in nodes:
            problems.append(f"{scenario.source}: actions: update_share names {action.share}, which BASE lacks")
        if isinstance(action, EnvironmentUpdate) and base.environment(action.name) is None:
            problems.append(f"{scenario.source}: actions: update_environment names {action.name}, which BASE lacks")
    if problems:
        raise LoadError(problems[:50] + ([f"... and {len(problems) - 50} more"] if len(problems) > 50 else []))


def _union(base: Topology, head: Topology, renames: Renames, at: float,
           ) -> tuple[Topology, list[ShareUpdate | EnvironmentUpdate]]:
    """BASE plus HEAD's new shares and instance types at zero capacity, and the updates that make it HEAD at T."""
    head_shares = {share_id(q, s): s for q, s in head.shares()}
    matched: set[str] = set()
    changes: list[ShareUpdate | EnvironmentUpdate] = []
    queues = []
    for queue in base.job_queues:
        shares = []
        for share in queue.shares:
            node = share_id(queue, share)
            after = head_shares.get(node) if renames.share(node) == node else None
            if after is None:  # removed, or replaced (renamed, moved): CloudFormation deletes it
                shares.append(share)
                changes.append(ShareUpdate(at, node, dict(_GONE)))
                continue
            matched.add(node)
            capacity = dict(share.capacity) | {t: 0 for t in after.capacity if t not in share.capacity}
            shares.append(share.model_copy(update={"capacity": capacity}))
            changes.append(ShareUpdate(at, node, _fields(after)))
        new_queue = head.queue(renames.queue(queue.name))
        names = {s.name for s in shares}
        for added in (new_queue.shares if new_queue else ()):
            if share_id(new_queue or queue, added) in matched or added.name in names:
                continue
            shares.append(QuotaShare(name=added.name, capacity={t: 0 for t in added.capacity}, strategy="RESERVE",
                                     state="DISABLED"))
            changes.append(ShareUpdate(at, share_id(queue, added), _fields(added)))
        queues.append(queue.model_copy(update={"shares": tuple(shares)}))
    environments = []
    for environment in base.service_environments:
        head_environment = head.environment(renames.environment(environment.name))
        new_capacity = dict(head_environment.capacity) if head_environment else {}
        types = [t for queue in head.job_queues
                 if head_environment and queue.service_environment == head_environment.name
                 for s in queue.shares for t in s.capacity]
        capacity = dict(environment.capacity) | {t: 0 for t in [*new_capacity, *types] if t not in environment.capacity}
        environments.append(ServiceEnvironment(name=environment.name, capacity=capacity, state=environment.state,
                                               tags=dict(environment.tags)))
        changes.append(EnvironmentUpdate(at, environment.name, new_capacity))
    # training plans are bought, not deployed: the replay's jobs keep the plans they name (HEAD's when both have one)
    plans = {plan.name: plan for plan in (*base.training_plans, *head.training_plans)}
    union = Topology(service_environments=tuple(environments), job_queues=tuple(queues),
                     allow_oversubscription=True, training_plans=tuple(plans.values()))
    return union, changes


def _preempted_after(engine: Engine, at: float) -> dict[str, int]:
    return {job.spec.name: sum(1 for attempt in job.segments
                             if attempt.outcome == PREEMPTED and attempt.end is not None and attempt.end >= at)
            for job in engine.jobs}


def _waits(engine: Engine) -> dict[tuple[str, str], list[float]]:
    """Each share's jobs' waits (time RUNNABLE, ``jobs.runnable_seconds``), as ``simulate`` reports them."""
    waits: dict[tuple[str, str], list[float]] = {}
    jobs = list(engine.submitted_jobs())  # a job due after the scenario's ``until`` has not waited
    for job, wait in zip(jobs, waits_of(jobs, [job.status for job in jobs], engine.now), strict=True):
        waits.setdefault((job.spec.share, job.spec.instance_type), []).append(wait)
    return waits


def _share_metrics(result: SimulationResult) -> dict[tuple[str, str], ShareMetrics]:
    return {(m.share, m.instance_type): m for m in result.shares}


def _per_share(without: Engine, with_change: Engine, before: dict[str, int], after: dict[str, int],
               results: tuple[SimulationResult, SimulationResult],
               bills: tuple[CostReport, CostReport]) -> list[dict[str, Any]]:
    waits_before, waits_after = _waits(without), _waits(with_change)
    cost_before, cost_after = (bill.per_share_type() for bill in bills)
    metrics_before, metrics_after = (_share_metrics(result) for result in results)
    billed = {key for costs in (cost_before, cost_after) for key, value in costs.items() if abs(value) > 1e-9}
    preempted: dict[tuple[str, str], list[int]] = {}
    for job in with_change.jobs:
        counts = preempted.setdefault((job.spec.share, job.spec.instance_type), [0, 0])
        counts[0] += before.get(job.spec.name, 0)
        counts[1] += after.get(job.spec.name, 0)
    rows = []
    for key in sorted(set(waits_before) | set(waits_after) | billed):
        old, new = sorted(waits_before.get(key, [])), sorted(waits_after.get(key, []))
        rows.append({"share": key[0], "instance_type": key[1], "jobs": len(new) or len(old),
                     "mean_wait_before": sum(old) / len(old) if old else 0.0,
                     "mean_wait_after": sum(new) / len(new) if new else 0.0,
                     # the percentiles are ``compare``'s and ``simulate``'s (``ShareMetrics``), one definition
                     **{f"wait_{p}_{side}": float(getattr(metrics[key], f"wait_{p}")) if key in metrics
                        else percentile(values, q)
                        for side, metrics, values in (("before", metrics_before, old), ("after", metrics_after, new))
                        for p, q in (("p50", 0.50), ("p95", 0.95))},
                     "preemptions_before": preempted.get(key, [0, 0])[0],
                     "preemptions_after": preempted.get(key, [0, 0])[1],
                     **{f"{figure}_{side}": float(getattr(metrics[key], figure)) if key in metrics else 0.0
                        for side, metrics in (("before", metrics_before), ("after", metrics_after))
                        for figure in ("own_utilisation", "instance_hours_lost")},
                     "cost_before": round(cost_before.get(key, 0.0), 6) + 0.0,
                     "cost_after": round(cost_after.get(key, 0.0), 6) + 0.0})
    return rows


class Outcome(NamedTuple):
    """How a job that succeeds without the change ends with it: its status at the end of the replay, the cause
    that ended it (a FAILED job's ``end_reason``; None while it waits or runs), and whether its share is one the
    deploy deletes or replaces (renamed, moved)."""

    status: Status
    reason: Reason | None
    deleted_share: bool

    def text(self) -> str:
        """The outcome in words: ``causes.describe`` for the cause, what the deploy did to the share beside it."""
        if self.reason is not None:
            if self.reason.cause is Cause.REJECTED_BY_DISABLED_SHARE and self.deleted_share:
                return "rejected: submitted after the deploy to a share it deletes or replaces"
            words = describe(self.reason)
            return words + (" (its share is deleted or replaced by the deploy)" if self.deleted_share else "")
        if self.status in ACTIVE:
            return "still on capacity at the end of the replay"
        return ("never started: queued on a share the deploy deletes or replaces" if self.deleted_share
                else f"still waiting ({self.status}) at the end of the replay")


def _outcomes(jobs: list[Job], gone: set[str]) -> list[dict[str, Any]]:
    """``jobs`` (each succeeds only without the change) counted by outcome, most first."""
    counts = Counter(Outcome(job.status, job.end_reason if job.status is Status.FAILED else None,
                             job.spec.share in gone) for job in jobs)
    return [{"status": outcome.status.value, "cause": outcome.reason.cause.value if outcome.reason else None,
             "detail": outcome.reason.detail if outcome.reason else None, "deleted_share": outcome.deleted_share,
             "reason": outcome.text(), "jobs": count}
            for outcome, count in sorted(counts.items(), key=lambda item: (-item[1], item[0].text()))]


def replay(scenario: Scenario, base: Topology, head: Topology, renames: Renames, at: float,
           prices: Prices | None = None, convention: Convention = Convention.USAGE,
           period: Period | None = None) -> Impact:
    """Run ``scenario`` on ``base`` with and without ``head`` deployed at ``at``; ``LoadError`` on a mismatch.

    Each replay's bill over ``period`` is priced with ``prices`` (else instance-hours); a share's cost is what it
    pays on each instance type (``CostReport.per_share_type``)."""
    _check_against_base(scenario, base)
    union, changes = _union(base, head, renames, at)
    actions = list(scenario.updates)
    # a snapshot of a live queue (jobs already on capacity at time 0) starts both runs from the same state
    live = scenario.live or None
    # both runs stop where the scenario says (a month's ``until``), as ``compare`` and ``simulate`` stop: run past
    # it, the tail after the window (plan jobs waiting for later windows, cut at their ends) differed between the
    # runs and was charged to the change, on instance types it does not touch
    without = Engine(base, scenario.jobs, actions, scenario.settings, live)
    without.run(scenario.until)
    with_change = Engine(union, scenario.jobs, [*actions, *changes], scenario.settings, live)
    with_change.run(scenario.until)
    before, after = _preempted_after(without, at), _preempted_after(with_change, at)
    by_name = {job.spec.name: job for job in with_change.jobs}
    preempted: list[dict[str, Any]] = [
        {"name": name, "share": by_name[name].spec.share, "instance_type": by_name[name].spec.instance_type,
         "instances": by_name[name].spec.instances, "preemptions_before": before[name],
         "preemptions_after": count}
        for name, count in after.items() if count > before[name]
    ]
    # the worst first: the most extra preemptions times the instances each one throws away
    preempted.sort(key=lambda job: (-(job["preemptions_after"] - job["preemptions_before"]) * job["instances"],
                                    job["name"]))
    waits_before, waits_after = _waits(without), _waits(with_change)
    waits = []
    for key, values in waits_after.items():
        old = waits_before.get(key, [])
        mean_old = sum(old) / len(old) if old else 0.0
        mean_new = sum(values) / len(values)
        if abs(mean_new - mean_old) > 1e-9:
            waits.append({"share": key[0], "instance_type": key[1], "jobs": len(values),
                          "mean_wait_before": mean_old, "mean_wait_after": mean_new})
    succeeded = {job.spec.name for job in without.jobs if job.status is Status.SUCCEEDED}
    lost = [job for job in with_change.jobs if job.status is not Status.SUCCEEDED and job.spec.name in succeeded]
    never = [job.spec.name for job in lost]
    gone = {change.share for change in changes if isinstance(change, ShareUpdate) and change.changes == _GONE}
    outcomes = _outcomes(lost, gone)
    notes = []
    if scenario.until is not None and at > scenario.until:
        notes.append(f"HEAD is deployed at {at:g}s, after the scenario's end ({scenario.until:g}s): the runs are equal")
    if any(not isinstance(action, PriorityUpdate) for action in actions):
        notes.append("the scenario's own topology actions apply in both runs; at T, HEAD's updates apply after them")
    if never:
        notes.append(f"{len(never)} job(s) that succeed without the change do not with it: "
                     + "; ".join(f"{entry['reason']} ({entry['jobs']} job(s))" for entry in outcomes))
    results = _over_one_window(build_result(without), build_result(with_change))
    if without.now != with_change.now:
        notes.append(f"utilisation is time-weighted over 0 to {duration_text(results[0].summary[WINDOW_KEY])}, the "
                     f"longer replay (without the change it ends at {duration_text(without.now)}, with HEAD at "
                     f"{duration_text(with_change.now)}): idle time after a replay's end counts as idle")
    bills = (run_costs(results[0], base, prices, convention, period=period),
             run_costs(results[1], head, prices, convention, period=period))
    targets = {"before": [t.to_json() for t in evaluate_targets(base, results[0])] if base.targets else [],
               "after": [t.to_json() for t in evaluate_targets(head, results[1])] if head.targets else []}
    return Impact(scenario.source, at, preempted, waits,
                  sum(without.lost_instance_seconds.values()) / 3600,
                  sum(with_change.lost_instance_seconds.values()) / 3600, never, notes,
                  _per_share(without, with_change, before, after, results, bills),
                  prices.currency if prices else INSTANCE_HOURS, convention.value,
                  targets, outcomes, {"before": bills[0].to_json(), "after": bills[1].to_json()},
                  sum(1 for name, count in after.items() if count < before[name]))


def _over_one_window(without: SimulationResult, with_change: SimulationResult
                     ) -> tuple[SimulationResult, SimulationResult]:
    """Both replays with their time-weighted figures (own utilisation, per-type utilisation) over one window, from 0
    to the later end (``results.window``): a change that ends the replay sooner does not raise the utilisation of
    instance types it does not touch."""
    window = common_window((without.time, with_change.time))
    return widened_result(without, window), widened_result(with_change, window)


#: The two runs of a replay, as the before/after tables name them.
RUNS = ("without the change", "with HEAD")


def _comparison(shares: list[dict[str, Any]], unit: str) -> ShareComparison:
    figures = (*SHARE_FIGURES, cost_figure(unit))
    rows = tuple(ShareRow(row["share"], row["instance_type"], tuple(
        {JOBS.key: row["jobs"], **{f.key: row[f"{f.key}_{side}"] for f in figures[1:]},
         # the jobs' waits added up (jobs x mean wait), for the harm measure (``worsening``)
         WAIT_HOURS.key: row["jobs"] * row.get(f"mean_wait_{side}", 0.0) / 3600}
        for side in ("before", "after")))
        for row in shares)
    return ShareComparison(RUNS, figures, rows, measured=(WAIT_HOURS,))


def share_comparison(impact: Impact) -> ShareComparison:
    """The impact's per-share rows as a ``ShareComparison`` with ``compare``'s figures (``SHARE_FIGURES`` and the
    cost, its unit in the header), rendered by the cells ``compare`` renders its tables with: the most harmed
    share first (``worsening.by_worsening``). With samples, the medians with every sample's values (``combine``):
    each difference paired, sample by sample."""
    if impact.sample_shares:
        return by_worsening(combine([_comparison(shares, impact.cost_unit) for shares in impact.sample_shares]))
    return by_worsening(_comparison(impact.shares, impact.cost_unit))


def target_comparison(impact: Impact) -> TargetComparison:
    """BASE's and HEAD's targets on their runs, lined up by share and criterion."""
    targets = impact.targets
    return compare_targets(RUNS, [[from_json(entry) for entry in targets.get(side, [])]
                                  for side in ("before", "after")])
