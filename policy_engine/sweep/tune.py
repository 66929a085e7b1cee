"""Search the varied fields for the best topology: optuna asks, the sweep's executor evaluates.

One objective: TPE; several: NSGA-II (a Pareto front). Constraints go to the sampler as optuna
trial constraints (a value <= 0 is satisfied); an invalid candidate violates the ``valid`` one.
Trials are asked in batches of a fixed size and told in ask order, so a seeded search is the same
whatever the number of workers. A candidate asked again is answered from the runs already made:
``budget`` counts distinct simulated candidates.
A run that failed is told as a failed trial.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from policy_engine.simulation.inputs.workload import Scenario
from policy_engine.sweep.evaluate import INVALID, OK, evaluate
from policy_engine.sweep.executor import Executor
from policy_engine.sweep.expressions import Constraint, Expression
from policy_engine.sweep.grammar import Axis, base_value
from policy_engine.sweep.grid import Candidate, candidate_key, grid_size
from policy_engine.sweep.runner import SweepInput, run_task

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


@dataclass
class TuneResult:
    runs: list[dict]  # distinct candidates, in the order they were evaluated
    current: dict  # the scenario's own topology, for the evidence
    chosen: dict | None  # the recommended run
    front: list[dict] = field(default_factory=list)  # feasible, non-dominated runs (sorted by the first objective)


def simulated(runs: dict[str, dict]) -> int:
    """Runs that cost a simulation (invalid candidates cost a check only)."""
    return sum(1 for record in runs.values() if record["status"] != INVALID)


def grid_index(axes: Sequence[Axis], values: dict) -> int:
    index = 0
    for axis in axes:
        index = index * len(axis.values) + axis.values.index(values[axis.path])
    return index


def feasible(record: dict, constraints: Sequence[Constraint]) -> bool:
    return record["status"] == OK and all(c.holds(record) for c in constraints)


def scores(record: dict, objectives: Sequence[Objective]) -> tuple[float, ...]:
    """Objective values, each turned so that smaller is better."""
    return tuple(-o.expression(record) if o.maximize else o.expression(record) for o in objectives)


def pareto_front(records: Sequence[dict], objectives: Sequence[Objective]) -> list[dict]:
    """Runs no other run beats on every objective, by the first objective (then grid order); equal points once."""
    scored = [(scores(r, objectives), r) for r in records]
    front, seen = [], set()
    for mine, record in sorted(scored, key=lambda pair: (pair[0], pair[1]["index"])):
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


def _tell(study: optuna.Study, trial: optuna.Trial, record: dict | None, objectives: Sequence[Objective],
          constraints: Sequence[Constraint]) -> None:
    """Invalid candidates are told as infeasible (the ``valid`` constraint) so the sampler learns to avoid them."""
    from optuna.trial import TrialState

    if record is None:  # asked after the budget was spent
        study.tell(trial, state=TrialState.PRUNED)
        return
    if record["status"] not in (OK, INVALID):
        study.tell(trial, state=TrialState.FAIL)
        return
    errors = sum(1 for finding in record["findings"] if finding["severity"] == "error")
    trial.set_constraint("valid", float(errors if record["status"] == INVALID else 0))
    for number, constraint in enumerate(constraints):
        trial.set_constraint(f"c{number}", constraint.violation(record) if record["status"] == OK else 1.0)
    if record["status"] == OK:
        study.tell(trial, [o.expression(record) for o in objectives])
    else:
        study.tell(trial, [-_WORST if o.maximize else _WORST for o in objectives])


#: The objective value told for an invalid candidate (it is infeasible, so samplers rank it last anyway).
_WORST = 1e30


def tune(scenario: Scenario, axes: Sequence[Axis], objectives: Sequence[Objective],
         constraints: Sequence[Constraint], budget: int, executor: Executor, seed: int = 0, batch_size: int = 8,
         pick: int = 1, progress: Callable[[int, int], None] | None = None) -> TuneResult:
    """Up to ``budget`` simulated candidates (invalid ones cost a check only and are not counted)."""
    import optuna

    optuna.logging.set_verbosity(logging.WARNING)
    size = grid_size(axes)
    study = optuna.create_study(directions=["maximize" if o.maximize else "minimize" for o in objectives],
                                sampler=_sampler(objectives, seed, budget))
    shared = executor.share(SweepInput(scenario, tuple(axes)))
    runs: dict[str, dict] = {}
    stale = 0
    current_values = {axis.path: base_value(axis, scenario.topology, scenario.settings) for axis in axes}
    try:
        current = evaluate(scenario, (), Candidate(-1, {}))  # the scenario exactly as it is
        current["values"] = current_values
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
            finished = {record["index"]: record for record in executor.map(run_task, shared, wanted.values())}
            for key, candidate in wanted.items():  # ask order, whatever the completion order
                runs[key] = finished[candidate.index]
            for trial, key in trials:
                _tell(study, trial, runs.get(key), objectives, constraints)
            if progress:
                progress(simulated(runs), budget)
    finally:
        executor.release(shared)
    ordered = list(runs.values())
    good = [record for record in ordered if feasible(record, constraints)]
    front = pareto_front(good, objectives) if good else []
    chosen = None
    if front:
        chosen = front[min(pick, len(front)) - 1] if len(objectives) > 1 else front[0]
    return TuneResult(ordered, current, chosen, front if len(objectives) > 1 else [])
