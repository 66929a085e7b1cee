"""Objectives and constraints over a run's metrics, as ``tune`` and ``sweep`` read them.

An expression is one of:
  ``METRIC``             a cluster-wide figure of ``summary`` (cluster_utilisation, wait_p95, preemptions, ...;
                         ``plan_idle_hours``: reserved training plan instance-hours paid and not used)
  ``AGG(METRIC)``        max, min, sum or mean of a per-share figure over every share and instance type
  ``share(REF).METRIC``  one share's figure (REF is QUEUE/SHARE or a unique SHARE; the largest over its types)
A constraint is ``EXPR <= NUMBER`` (or ``<``, ``>=``, ``>``), or ``guarantees``: every declared guarantee
holds (``check`` proves them, so a refuted one makes a candidate invalid; in the simulation a
``never_preempted`` share lost no job to preemption).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from policy_engine.model import Topology, share_id
from policy_engine.sweep.grammar import find_share

SUMMARY_METRICS = ("cluster_utilisation", "wait_p50", "wait_p95", "wait_max", "preemptions",
                   "instance_hours_lost", "jobs", "plan_idle_hours")
#: Summary figures a run has only when its topology has what they count (training plans).
OPTIONAL_SUMMARY_METRICS = ("plan_idle_hours",)
SHARE_METRICS = ("own_utilisation", "mean_own", "mean_borrowed", "mean_lent", "wait_p50", "wait_p95", "wait_max",
                 "preemptions", "instance_hours_lost", "jobs")
AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "max": lambda values: max(values, default=0.0),
    "min": lambda values: min(values, default=0.0),
    "sum": lambda values: float(sum(values)),
    "mean": lambda values: sum(values) / len(values) if values else 0.0,
}
_AGGREGATE = re.compile(r"(\w+)\(\s*([\w.]+)\s*\)")
_SHARE = re.compile(r"share\(\s*([^()\s]+)\s*\)\.(\w+)")
_CONSTRAINT = re.compile(r"(.+?)\s*(<=|>=|<|>)\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)")


class ExpressionError(ValueError):
    """An objective or constraint that cannot be read; the message names it."""


def _suggest(name: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (known: {', '.join(known)})" + (f"; did you mean {close[0]!r}?" if close else "")


@dataclass(frozen=True)
class Expression:
    """A number computed from one ok run record (``summary`` and ``shares`` as simulate's JSON has them)."""

    text: str
    compute: Callable[[dict], float]

    def __call__(self, record: dict) -> float:
        return float(self.compute(record))


def parse_expression(text: str, topology: Topology) -> Expression:
    source = text.strip()
    if source in OPTIONAL_SUMMARY_METRICS:  # only in a run that has what it counts: 0 in the others
        return Expression(source, lambda record: record["summary"].get(source, 0.0))
    if source in SUMMARY_METRICS:
        return Expression(source, lambda record: record["summary"][source])
    match = _SHARE.fullmatch(source)
    if match:
        ref, metric = match.groups()
        if metric not in SHARE_METRICS:
            raise ExpressionError(f"{text!r}: {metric!r} is not a per-share metric" + _suggest(metric, SHARE_METRICS))
        found = find_share(topology, ref)
        if found.share_id is None:
            every = [share_id(q, s) for q, s in topology.shares()]
            problem = "is ambiguous; write QUEUE/SHARE" if found.candidates else "is not a quota share of the topology"
            raise ExpressionError(f"{text!r}: {ref!r} {problem}" + _suggest(ref, tuple(every)))
        name = found.share_id

        def one_share(record: dict) -> float:
            return max((entry[metric] for entry in record["shares"] if entry["share"] == name), default=0.0)

        return Expression(source, one_share)
    match = _AGGREGATE.fullmatch(source)
    if match:
        aggregate, metric = match.groups()
        if aggregate not in AGGREGATES:
            raise ExpressionError(f"{text!r}: unknown aggregate {aggregate!r}" + _suggest(aggregate,
                                                                                         tuple(AGGREGATES)))
        if metric not in SHARE_METRICS:
            raise ExpressionError(f"{text!r}: {metric!r} is not a per-share metric" + _suggest(metric, SHARE_METRICS))
        function = AGGREGATES[aggregate]
        return Expression(source, lambda record: function([entry[metric] for entry in record["shares"]]))
    raise ExpressionError(f"{text!r}: expected METRIC, AGG(METRIC) or share(QUEUE/SHARE).METRIC"
                          + _suggest(source, SUMMARY_METRICS))


@dataclass(frozen=True)
class Constraint:
    """``violation(record) <= 0`` when the run satisfies it (optuna's convention for constraints)."""

    text: str
    violation: Callable[[dict], float]
    #: The number compared against (``None`` for ``guarantees``): what a miss is measured relative to.
    bound: float | None = None
    #: How a miss reads (a target's shortfall as a duration, a percentage); ``None``: the plain number.
    shown: Callable[[float], str] | None = None

    def holds(self, record: dict) -> bool:
        return self.violation(record) <= 0


def never_preempted_shares(topology: Topology) -> list[str]:
    """Shares a guarantee promises are never preempted."""
    names = []
    for guarantee in topology.guarantees:
        found = find_share(topology, guarantee.share)
        if guarantee.never_preempted and found.share_id is not None:
            names.append(found.share_id)
    return names


def _guarantees(topology: Topology) -> Callable[[dict], float]:
    protected = set(never_preempted_shares(topology))

    def violation(record: dict) -> float:
        if record.get("status") != "ok":
            return 1.0  # a refuted guarantee is a check error: such a candidate is invalid
        return float(sum(entry["preemptions"] for entry in record["shares"] if entry["share"] in protected))

    return violation


def parse_constraint(text: str, topology: Topology) -> Constraint:
    source = text.strip()
    if source == "guarantees":
        return Constraint(source, _guarantees(topology))
    match = _CONSTRAINT.fullmatch(source)
    if not match:
        raise ExpressionError(f"{text!r}: expected EXPR <= NUMBER (or <, >=, >) or 'guarantees'")
    expression = parse_expression(match.group(1), topology)
    operator, bound = match.group(2), float(match.group(3))
    if not math.isfinite(bound):
        raise ExpressionError(f"{text!r}: the bound must be a finite number")
    strict = 1e-9 * max(1.0, abs(bound))
    functions: dict[str, Callable[[float], float]] = {
        "<=": lambda value: value - bound,
        "<": lambda value: value - bound + strict,
        ">=": lambda value: bound - value,
        ">": lambda value: bound - value + strict,
    }
    difference = functions[operator]
    return Constraint(source, lambda record: difference(expression(record)), bound)


def objective_value(expression: Expression, record: dict[str, Any]) -> float | None:
    """The objective of an ok run; ``None`` for an invalid or failed one."""
    return expression(record) if record.get("status") == "ok" else None
