"""Search the varied fields for the best topology: optuna asks, the sweep's executor evaluates.

A recommendation must beat the current topology (the scenario's own, on the same workload) by a
margin (``min_gain``, relative to its first objective; absolute when that is 0) and, with workload
samples, on more than half of them: otherwise the answer is to keep the current topology. With no
feasible candidate, the nearest one is named with what it misses by. Assumptions (settings,
workload) are never searched: every candidate is evaluated under each (``--assume``) afterwards.

One objective: TPE; several: NSGA-II (a Pareto front). Constraints go to the sampler as optuna
trial constraints (a value <= 0 is satisfied); an invalid candidate violates the ``valid`` one.
Trials are asked in batches of a fixed size and told in ask order, so a seeded search is the same
whatever the number of workers. A candidate asked again is answered from the runs already made:
``budget`` counts distinct simulated candidates.
A run that failed is told as a failed trial.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from policy_engine.foundation.units import figure_text
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.results.billable import Period
from policy_engine.simulation.results.side_by_side import (
    INSTANCE_HOURS_LOST,
    JOBS,
    PREEMPTIONS,
    WAIT_P50,
    WAIT_P95,
    ShareComparison,
    ShareRow,
)
from policy_engine.simulation.results.worsening import by_worsening
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.sweep.common_window import over_common_window
from policy_engine.sweep.evaluate import evaluate
from policy_engine.sweep.executor import Executor
from policy_engine.sweep.expressions import Constraint, Expression
from policy_engine.sweep.grammar import Axis, base_value
from policy_engine.sweep.grid import Candidate, candidate_key, expand, grid_size
from policy_engine.sweep.guarantee_policy import GuaranteePolicy
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.runner import SweepInput, run_task
from policy_engine.sweep.samples import samples_for

if TYPE_CHECKING:
    import optuna

#: How many asks in a row may bring nothing new before the search stops (the space is exhausted in practice).
MAX_STALE_BATCHES = 25


@dataclass(frozen=True)
class Objective:
    expression: Expression
    maximize: bool

    @property
    def label(self) -> str:
        return f"{'max' if self.maximize else 'min'} {self.expression.text}"

    @property
    def heading(self) -> str:
        """The label as a table or an axis heads it: with the currency of a cost (its unit alone says nothing)."""
        return f"{'max' if self.maximize else 'min'} {self.expression.heading}"


#: ``--min-gain``'s default: a recommendation beats the current topology by 5 % of its first objective.
DEFAULT_MIN_GAIN = 0.05
#: When the current value of the first objective is 0 a relative gain means nothing: this absolute one instead.
ABSOLUTE_GAIN_AT_ZERO = 1.0


@dataclass(frozen=True)
class SensitivityRow:
    """``--assume``: one combination of assumed values, and the runs under it of the current topology, the
    recommended candidate (``None``: none, or it failed) and the best candidate under it (``None``: none feasible)."""

    assumption: dict[str, Any]
    current: RunRecord
    recommended: RunRecord | None
    best: RunRecord | None


@dataclass
class TuneResult:
    runs: list[RunRecord]  # distinct candidates, in the order they were evaluated
    current: RunRecord  # the scenario's own topology, for the evidence
    chosen: RunRecord | None  # the recommended run (None: nothing feasible, or keep the current topology)
    #: feasible, non-dominated runs (sorted by the first objective)
    front: list[RunRecord] = field(default_factory=list)
    #: The best feasible candidate, recommended or not (shown when the answer is to keep the current topology).
    best: RunRecord | None = None
    #: Why the best candidate is not recommended (below the margin, or it wins on too few samples); else "".
    keep_reason: str = ""
    #: The best candidate's gain on the first objective over the current topology (relative, or absolute at 0).
    gain: float | None = None
    relative_gain: bool = True
    min_gain: float = DEFAULT_MIN_GAIN
    #: With workload samples: on how many the best candidate beats the current topology (first objective).
    wins: int | None = None
    samples: int = 0
    #: With no feasible candidate: the nearest one and, per constraint, by how much it misses.
    nearest: RunRecord | None = None
    misses: list[tuple[str, float]] = field(default_factory=list)
    #: With no feasible candidate: each constraint no candidate meets, with the candidate that comes closest to
    #: it and its shortfall (``never_met``).
    unmet: list[tuple[str, RunRecord, float]] = field(default_factory=list)
    #: ``--assume``: per assumption (its values), the current topology's, the recommendation's and the best
    #: candidate's run under it.
    sensitivity: list[SensitivityRow] = field(default_factory=list)


def simulated(runs: dict[str, RunRecord]) -> int:
    """Runs that cost a simulation (invalid candidates cost a check only)."""
    return sum(1 for record in runs.values() if record.status != RunStatus.INVALID)


def grid_index(axes: Sequence[Axis], values: dict[str, Any]) -> int:
    index = 0
    for axis in axes:
        index = index * len(axis.values) + axis.values.index(values[axis.path])
    return index


def feasible(record: RunRecord, constraints: Sequence[Constraint]) -> bool:
    return record.status == RunStatus.OK and all(c.holds(record) for c in constraints)


def scores(record: RunRecord, objectives: Sequence[Objective]) -> tuple[float, ...]:
    """Objective values, each turned so that smaller is better."""
    return tuple(-o.expression(record) if o.maximize else o.expression(record) for o in objectives)


def changes(record: RunRecord, current: RunRecord | None) -> int:
    """How many varied fields ``record`` sets to another value than the current topology has."""
    if current is None:
        return 0
    return sum(1 for path, value in record.values.items() if current.values.get(path) != value)


def pareto_front(records: Sequence[RunRecord], objectives: Sequence[Objective],
                 current: RunRecord | None = None) -> list[RunRecord]:
    """Runs no other run beats on every objective, by the first objective; equal points once, kept as the
    candidate that changes the fewest fields of ``current`` (then grid order): a knob that makes no difference
    to the objectives is never recommended to another team."""
    scored = [(scores(r, objectives), r) for r in records]
    front, seen = [], set()
    for mine, record in sorted(scored, key=lambda pair: (pair[0], changes(pair[1], current), pair[1].index)):
        if mine in seen:
            continue
        if any(all(o <= m for o, m in zip(other, mine, strict=True)) and other != mine for other, _ in scored):
            continue
        seen.add(mine)
        front.append(record)
    return front


def _sampler(objectives: Sequence[Objective], seed: int, budget: int) -> optuna.samplers.BaseSampler:
    import optuna

    if len(objectives) == 1:
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=min(10, max(2, budget // 4)))
    return optuna.samplers.NSGAIISampler(seed=seed, population_size=max(4, min(50, budget // 4)))


def _tell(study: optuna.Study, trial: optuna.Trial, record: RunRecord | None, objectives: Sequence[Objective],
          constraints: Sequence[Constraint]) -> None:
    """Invalid candidates are told as infeasible (the ``valid`` constraint) so the sampler learns to avoid them."""
    from optuna.trial import TrialState

    if record is None:  # asked after the budget was spent
        study.tell(trial, state=TrialState.PRUNED)
        return
    if record.status not in (RunStatus.OK, RunStatus.INVALID):
        study.tell(trial, state=TrialState.FAIL)
        return
    errors = len(record.errors())
    trial.set_constraint("valid", float(errors if record.status == RunStatus.INVALID else 0))
    for number, constraint in enumerate(constraints):
        trial.set_constraint(f"c{number}", constraint.violation(record) if record.status == RunStatus.OK else 1.0)
    if record.status == RunStatus.OK:
        study.tell(trial, [o.expression(record) for o in objectives])
    else:
        study.tell(trial, [-_WORST if o.maximize else _WORST for o in objectives])


#: The objective value told for an invalid candidate (it is infeasible, so samplers rank it last anyway).
_WORST = 1e30


def gain_over(current: RunRecord, best: RunRecord, objective: Objective) -> tuple[float, bool]:
    """How much ``best`` improves the objective over ``current``: relative to the current value, or absolute
    (``relative`` False) when the current value is 0."""
    now, then = objective.expression(current), objective.expression(best)
    better = then - now if objective.maximize else now - then
    if now == 0:
        return better, False
    return better / abs(now), True


def sample_wins(current: RunRecord, best: RunRecord, objective: Objective) -> int:
    """On how many workload samples ``best`` is strictly better than ``current`` on the objective."""
    wins = 0
    for mine, theirs in zip(best.samples, current.samples, strict=True):
        ours, now = objective.expression(mine), objective.expression(theirs)
        wins += ours > now if objective.maximize else ours < now
    return wins


def nearest_miss(records: Sequence[RunRecord], constraints: Sequence[Constraint]) -> tuple[RunRecord | None,
                                                                                         list[tuple[str, float]]]:
    """The ok run closest to meeting every constraint (the sum of its misses, each relative to its bound) and
    by how much it misses each one it misses."""
    def misses(record: RunRecord) -> list[tuple[Constraint, float]]:
        return [(c, c.violation(record)) for c in constraints if not c.holds(record)]

    def distance(record: RunRecord) -> float:
        return sum(amount / max(1.0, abs(c.bound or 0.0)) for c, amount in misses(record))

    ok = [record for record in records if record.status == RunStatus.OK]
    if not ok:
        return None, []
    nearest = min(ok, key=lambda record: (distance(record), record.index))
    return nearest, [(c.text, amount) for c, amount in misses(nearest)]


def never_met(records: Sequence[RunRecord], constraints: Sequence[Constraint],
              ) -> list[tuple[str, RunRecord, float]]:
    """Each constraint no ok run meets: ``(its text, the run closest to it, that run's shortfall)``."""
    ok = [record for record in records if record.status == RunStatus.OK]
    found = []
    for constraint in constraints:
        if not ok or any(constraint.holds(record) for record in ok):
            continue
        closest = min(ok, key=lambda record: (constraint.violation(record), record.index))
        found.append((constraint.text, closest, constraint.violation(closest)))
    return found


def first_rule(record: RunRecord) -> str:
    """Why a candidate is invalid: the rule of its first unsuppressed check error (``check``'s order)."""
    errors = [f for f in record.errors() if not f.get("suppressed")]
    return str(errors[0]["rule"]) if errors else "check"


def invalid_reasons(records: Sequence[RunRecord]) -> Counter[str]:
    """The invalid candidates counted by their first rule, most first."""
    return Counter(first_rule(record) for record in records if record.status == RunStatus.INVALID)


def decide(result: TuneResult, objectives: Sequence[Objective], constraints: Sequence[Constraint],
           min_gain: float) -> TuneResult:
    """Recommend the best candidate only when it beats the current topology by the margin (and, with workload
    samples, on more than half of them); otherwise keep the current topology, the best shown."""
    best = result.chosen
    result.best, result.min_gain = best, min_gain
    if best is None:
        result.nearest, result.misses = nearest_miss(result.runs, constraints)
        result.unmet = never_met(result.runs, constraints)
        return result
    current = result.current
    first = objectives[0]
    if result.samples:
        result.wins = sample_wins(current, best, first) if current.status == RunStatus.OK else result.samples
    if not feasible(current, constraints):
        return result  # the current topology misses a constraint (or is invalid): any feasible candidate is better
    result.gain, result.relative_gain = gain_over(current, best, first)
    needed = min_gain if result.relative_gain else ABSOLUTE_GAIN_AT_ZERO
    if result.gain < needed or (result.gain <= 0):
        shown = f"{result.gain:.1%}" if result.relative_gain else figure_text(result.gain, first.expression.unit)
        wanted = f"the margin {min_gain:.1%} (--min-gain)" if result.relative_gain else \
            f"the absolute margin {figure_text(ABSOLUTE_GAIN_AT_ZERO, first.expression.unit)} (the current value is 0)"
        result.keep_reason = f"the best candidate improves {first.label} by {shown}, less than {wanted}"
    if not result.keep_reason and result.wins is not None and result.wins * 2 <= result.samples:
        result.keep_reason = (f"the best candidate beats the current topology on {result.wins} of "
                              f"{result.samples} workload samples, not on more than half")
    if result.keep_reason:
        result.chosen = None
    return result


def _sensitivity(scenario: Scenario, axes: Sequence[Axis], assumptions: Sequence[Axis], result: TuneResult,
                 executor: Executor, guarantees: GuaranteePolicy, workloads: tuple[tuple[JobSpec, ...], ...],
                 objectives: Sequence[Objective], constraints: Sequence[Constraint],
                 period: Period) -> list[SensitivityRow]:
    """Every ok candidate and the current topology under each combination of assumptions."""
    combos = list(expand(assumptions))
    candidates = [record for record in result.runs if record.status == RunStatus.OK]
    shared = executor.share(SweepInput(scenario, (*axes, *assumptions), guarantees, workloads, period))
    current_values = dict(result.current.values)
    tasks = []
    try:
        for number, combo in enumerate(combos):
            base = number * (len(candidates) + 1)
            tasks.append(Candidate(base, {**current_values, **combo.values}))
            tasks += [Candidate(base + 1 + i, {**record.values, **combo.values})
                      for i, record in enumerate(candidates)]
        done = {record.index: record for record in executor.map(run_task, shared, tasks)}
    finally:
        executor.release(shared)
    rows = []
    for number, combo in enumerate(combos):
        base = number * (len(candidates) + 1)
        runs = [done[base + 1 + i] for i in range(len(candidates))]
        good = [r for r in runs if feasible(r, constraints)]
        best = min(good, key=lambda r: (scores(r, objectives[:1]), r.index)) if good else None
        chosen = result.chosen or result.best
        mine = next((r for r, record in zip(runs, candidates, strict=True) if record is chosen), None)
        rows.append(SensitivityRow(combo.values, done[base], mine, best))
    return rows


def tune(scenario: Scenario, axes: Sequence[Axis], objectives: Sequence[Objective],
         constraints: Sequence[Constraint], budget: int, executor: Executor, seed: int = 0, batch_size: int = 8,
         pick: int = 1, progress: Callable[[int, int], None] | None = None, *,
         guarantees: GuaranteePolicy = GuaranteePolicy.KEEP, workload_samples: int = 0,
         assumptions: Sequence[Axis] = (), min_gain: float = DEFAULT_MIN_GAIN,
         period: Period | None = None) -> TuneResult:
    """Up to ``budget`` simulated candidates (invalid ones cost a check only and are not counted), then the
    decision against the current topology (``decide``) and, with ``assumptions``, the sensitivity table."""
    import optuna

    optuna.logging.set_verbosity(logging.WARNING)
    size = grid_size(axes)
    study = optuna.create_study(directions=["maximize" if o.maximize else "minimize" for o in objectives],
                                sampler=_sampler(objectives, seed, budget))
    workloads = samples_for(scenario, workload_samples, seed) if workload_samples else ()
    period = period or Period()
    shared = executor.share(SweepInput(scenario, tuple(axes), guarantees, workloads, period))
    runs: dict[str, RunRecord] = {}
    stale = 0
    current_values = {axis.path: base_value(axis, scenario.topology, scenario.settings) for axis in axes}
    try:
        # the scenario exactly as it is (its declared guarantees untouched), on the same workloads
        current = replace(evaluate(scenario, (), Candidate(-1, {}), GuaranteePolicy.KEEP, workloads, period),
                          values=current_values)
        if progress:
            progress(0, budget)
        while simulated(runs) < budget and len(runs) < size and stale < MAX_STALE_BATCHES:
            trials: list[tuple[optuna.Trial, str]] = []
            wanted: dict[str, Candidate] = {}
            room = budget - simulated(runs)
            for _ in range(batch_size):
                trial = study.ask()
                values = {axis.path: trial.suggest_categorical(axis.path, list(axis.values)) for axis in axes}
                key = candidate_key(values)
                trials.append((trial, key))
                if key not in runs and key not in wanted and len(wanted) < room:
                    wanted[key] = Candidate(grid_index(axes, values), values)
            stale = 0 if wanted else stale + 1
            finished = {record.index: record for record in executor.map(run_task, shared, wanted.values())}
            for key, candidate in wanted.items():  # ask order, whatever the completion order
                runs[key] = finished[candidate.index]
            for trial, key in trials:
                _tell(study, trial, runs.get(key), objectives, constraints)
            if progress:
                progress(simulated(runs), budget)
    finally:
        executor.release(shared)
    # the decision reads every run over one window, the current topology's included (``common_window``); the
    # sampler was told each run's figures over its own end as it went
    current, *ordered = over_common_window([current, *runs.values()])
    good = [record for record in ordered if feasible(record, constraints)]
    front = pareto_front(good, objectives, current) if good else []
    chosen = None
    if front:
        chosen = front[min(pick, len(front)) - 1] if len(objectives) > 1 else front[0]
    result = decide(TuneResult(ordered, current, chosen, front if len(objectives) > 1 else [],
                               samples=workload_samples), objectives, constraints, min_gain)
    if assumptions:
        result.sensitivity = _sensitivity(scenario, axes, assumptions, result, executor, guarantees, workloads,
                                          objectives, constraints, period)
    return result


#: What the evidence shows per share and type: how the team fares (``worsening.HARM_FIGURES``) and its jobs.
EVIDENCE_FIGURES = (JOBS, WAIT_P50, WAIT_P95, PREEMPTIONS, INSTANCE_HOURS_LOST)


def share_evidence(current: RunRecord, other: RunRecord | None) -> ShareComparison:
    """Per share and instance type, the current topology's run against ``other`` (the recommended, best or nearest
    candidate), the most harmed share first: the evidence is per share, not only totals."""
    def values(record: RunRecord | None) -> dict[tuple[str, str], dict[str, float]]:
        if record is None or record.status != RunStatus.OK:
            return {}
        return {(row["share"], row["instance_type"]): {f.key: float(row.get(f.key, 0.0)) for f in EVIDENCE_FIGURES}
                for row in record.shares}

    before, after = values(current), values(other)
    keys = list(dict.fromkeys([*before, *after]))
    rows = tuple(ShareRow(share, kind, (before.get((share, kind)), after.get((share, kind)))) for share, kind in keys)
    return by_worsening(ShareComparison(("current", "candidate"), EVIDENCE_FIGURES, rows))
