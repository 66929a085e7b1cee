"""A topology's targets as ``sweep`` and ``tune`` constraints: a candidate that misses one is infeasible.

One ``Constraint`` per criterion of each target, named ``target training/vision wait p95 <= 1h 00m``; its
violation is the shortfall (``-margin``, in the criterion's unit: seconds, preemptions, a fraction), read from
the run record's ``targets`` (judged on the candidate's own topology, which carries the targets through every
``--vary``). A utilisation target without an instance type is judged per type: the worst type counts.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.model import Topology
from policy_engine.foundation.units import Unit, duration_text, points_text
from policy_engine.simulation.results.targets import Criterion
from policy_engine.sweep.expressions import Constraint, Expression
from policy_engine.sweep.run_record import RunFigures, RunRecord
from policy_engine.sweep.run_status import RunStatus

#: The violation of a run that was not simulated (invalid or failed): it meets no target.
UNJUDGED = 1.0


def _shown(criterion: Criterion) -> Callable[[float], str]:
    if criterion.unit is Unit.SECONDS:
        return duration_text
    if criterion.unit is Unit.FRACTION:
        return points_text
    return lambda amount: f"{amount:g}"


def _goal(criterion: Criterion, goal: float) -> str:
    if criterion.unit is Unit.SECONDS:
        return duration_text(goal)
    return f"{goal:.0%}" if criterion.unit is Unit.FRACTION else f"{goal:g}"


def _judged(record: RunRecord, index: int, criterion: Criterion) -> list[JsonObject]:
    return [entry for entry in record.targets
            if entry["target"] == index and entry["criterion"] == criterion.value]


def _violation(index: int, criterion: Criterion) -> Callable[[RunRecord], float]:
    def violation(record: RunRecord) -> float:
        if record.status != RunStatus.OK:
            return UNJUDGED
        return max((-float(entry["margin"]) for entry in _judged(record, index, criterion)), default=0.0)

    return violation


def _actual(index: int, criterion: Criterion) -> Callable[[RunRecord], float]:
    """The figure of the worst-placed judgement (the instance type that counts)."""
    def actual(record: RunRecord) -> float:
        judged = _judged(record, index, criterion)
        worst = min(judged, key=lambda entry: float(entry["margin"]), default=None)
        return float(worst["actual"]) if worst is not None else float("nan")

    return actual


def target_constraints(topology: Topology) -> list[Constraint]:
    """Every criterion of every target of ``topology``, in declaration order."""
    out = []
    for index, target in enumerate(topology.targets):
        share = topology.find_share(target.share).share_id or target.share
        subject = share + (f" {target.instance_type}" if target.instance_type else "")
        for criterion in Criterion:
            goal = getattr(target, criterion.value)
            if goal is None:
                continue
            operator = ">=" if criterion.at_least else "<="
            out.append(Constraint(f"target {subject} {criterion.label} {operator} {_goal(criterion, float(goal))}",
                                  _violation(index, criterion), float(goal), criterion.unit, _shown(criterion),
                                  _actual(index, criterion)))
    return out


class TargetUse(StrEnum):
    """What ``tune --targets`` makes of the topology's targets: ``constraints`` (default: a candidate that misses
    one is infeasible), ``objectives`` (the criteria missed, minimized beside the other objectives) or
    ``ignore`` (reported, never searched on)."""

    CONSTRAINTS = "constraints"
    OBJECTIVES = "objectives"
    IGNORE = "ignore"


def missed_targets(record: RunFigures) -> int:
    """How many target criteria an ok run misses (0 for a run without targets)."""
    return sum(1 for entry in record.targets if not entry["met"])


def targets_summary(record: RunRecord) -> str:
    """``all met``, ``2 of 5 missed``, or ``-`` for a run that judged none (no targets, or not simulated)."""
    judged = len(record.targets)
    if record.status != RunStatus.OK or not judged:
        return "-"
    missed = missed_targets(record)
    return "all met" if not missed else f"{missed} of {judged} missed"


#: ``tune --targets objectives``: the target criteria a candidate misses, as an objective to minimize.
TARGETS_MISSED = Expression("targets_missed", lambda record: float(missed_targets(record)), Unit.COUNT)
