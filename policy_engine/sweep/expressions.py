"""Objectives and constraints over a run's metrics, as ``tune`` and ``sweep`` read them.

An expression is one of:
  ``METRIC``             a cluster-wide figure of ``summary`` (wait_p95, preemptions, ...; cluster_utilisation
                         weighs every instance-hour the same, whatever its type; ``plan_idle_hours``: reserved
                         training plan instance-hours paid and not used)
  ``AGG(METRIC)``        max, min, sum or mean of a per-share figure over every share and instance type
  ``share(REF).METRIC``  one share's figure (REF is QUEUE/SHARE or a unique SHARE; the largest over its types)
  ``TMETRIC(TYPE)``       one instance type's figure of ``summary.instance_types`` (``utilisation(ml.g5.xlarge)``)
  ``share(REF).METRIC(TYPE)``  one share's figure on one instance type (``utilisation``: its ``own_utilisation``)
  ``bill``, ``on_demand_cost``, ``plan_cost``, ``waste_cost``, ``share(REF).bill``, ``AGG(bill)``: what AWS
                         bills, priced from the run's ledger (``cost_metrics``; ``cost``, ``used_cost``,
                         ``idle_cost`` and ``share(REF).cost`` priced capacity and are refused, naming these)
A constraint is ``EXPR <= BOUND`` (or ``<``, ``>=``, ``>``), or ``guarantees``: every declared guarantee
holds (``check`` proves them, so a refuted one makes a candidate invalid; in the simulation a
``never_preempted`` share lost no job to preemption). BOUND is a number in the figure's unit, or as people write
it: a duration for a wait (``20d``, ``12h``, ``90m``, ``3600s``), a percentage for a utilisation (``60%``).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from policy_engine.foundation.bounds import MAX_SECONDS
from policy_engine.foundation.model import Topology, share_id
from policy_engine.foundation.units import DURATION_UNITS, Unit, figure_text, points_text
from policy_engine.simulation.results.type_usage import SUMMARY_KEY
from policy_engine.sweep import cost_metrics
from policy_engine.sweep.cost_metrics import Pricing
from policy_engine.sweep.grammar import find_share
from policy_engine.sweep.run_record import RunFigures, RunRecord
from policy_engine.sweep.run_status import RunStatus

SUMMARY_METRICS = ("cluster_utilisation", "wait_p50", "wait_p95", "wait_max", "preemptions",
                   "instance_hours_lost", "jobs", "plan_idle_hours")
#: Summary figures a run has only when its topology has what they count (training plans).
OPTIONAL_SUMMARY_METRICS = ("plan_idle_hours",)
SHARE_METRICS = ("own_utilisation", "mean_own", "mean_borrowed", "mean_lent", "wait_p50", "wait_p95", "wait_max",
                 "preemptions", "instance_hours_lost", "jobs")
#: Figures of one instance type (``summary.instance_types[TYPE]``), read as ``METRIC(TYPE)``.
TYPE_METRICS = ("utilisation", "instances", "jobs", "capacity_instance_hours", "used_instance_hours",
                "idle_instance_hours", "borrowed_instance_hours", "lent_instance_hours", "preemptions",
                "instance_hours_lost")
#: ``share(REF).utilisation(TYPE)`` reads the share's own utilisation of that type.
_SHARE_ALIASES = {"utilisation": "own_utilisation"}
#: What each figure measures, so reports write it as a duration, a percentage, a count or instance-hours.
UNITS: dict[str, Unit] = {
    "cluster_utilisation": Unit.FRACTION, "own_utilisation": Unit.FRACTION, "utilisation": Unit.FRACTION,
    "wait_p50": Unit.SECONDS, "wait_p95": Unit.SECONDS, "wait_max": Unit.SECONDS,
    "preemptions": Unit.COUNT, "jobs": Unit.COUNT, "instances": Unit.COUNT,
    "mean_own": Unit.INSTANCES, "mean_borrowed": Unit.INSTANCES, "mean_lent": Unit.INSTANCES,
    "instance_hours_lost": Unit.INSTANCE_HOURS, "capacity_instance_hours": Unit.INSTANCE_HOURS,
    "used_instance_hours": Unit.INSTANCE_HOURS, "idle_instance_hours": Unit.INSTANCE_HOURS,
    "borrowed_instance_hours": Unit.INSTANCE_HOURS, "lent_instance_hours": Unit.INSTANCE_HOURS,
    "plan_idle_hours": Unit.INSTANCE_HOURS,
}
AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "max": lambda values: max(values, default=0.0),
    "min": lambda values: min(values, default=0.0),
    "sum": lambda values: float(sum(values)),
    "mean": lambda values: sum(values) / len(values) if values else 0.0,
}
_AGGREGATE = re.compile(r"(\w+)\(\s*([\w.]+)\s*\)")
_SHARE = re.compile(r"share\(\s*([^()\s]+)\s*\)\.(\w+)")
_SHARE_TYPE = re.compile(r"share\(\s*([^()\s]+)\s*\)\.(\w+)\(\s*([^()\s]+)\s*\)")
_TYPE = re.compile(r"(\w+)\(\s*([^()\s]+)\s*\)")
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_CONSTRAINT = re.compile(rf"(.+?)\s*(<=|>=|<|>)\s*({_NUMBER})\s*([{''.join(DURATION_UNITS)}%]?)")


class ExpressionError(ValueError):
    """An objective or constraint that cannot be read; the message names it."""


def _suggest(name: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (known: {', '.join(known)})" + (f"; did you mean {close[0]!r}?" if close else "")


@dataclass(frozen=True)
class Expression:
    """A number computed from one ok run's figures (``summary`` and ``shares`` as simulate's JSON has them)."""

    text: str
    compute: Callable[[RunFigures], float]
    #: What the number measures (how reports write it); JSON keeps the number itself.
    unit: Unit = Unit.NUMBER
    #: The unit as a header or an axis names it when the unit alone does not say (a cost's currency).
    unit_label: str = ""
    #: The metrics it reads, as parsed (``wait_p95``; ``bill`` for ``share(X).bill`` and ``max(bill)`` too).
    metrics: frozenset[str] = frozenset()

    @property
    def reads_bill(self) -> bool:
        """Whether it prices a run's ledger (then the command says the unit)."""
        return not self.metrics.isdisjoint(cost_metrics.CLUSTER_COST_METRICS)

    def __call__(self, record: RunFigures) -> float:
        return float(self.compute(record))

    @property
    def unit_name(self) -> str:
        return self.unit_label or self.unit.value

    @property
    def heading(self) -> str:
        """The text as a column heads it: with the currency of a cost (its unit alone says nothing)."""
        return self.text + (f" ({self.unit_name})" if self.unit_label else "")


def instance_types(topology: Topology) -> tuple[str, ...]:
    """Every instance type the topology names (environments' capacity and shares' limits), in order."""
    names = [t for env in topology.service_environments for t in env.capacity]
    names += [t for _, share in topology.shares() for t in share.capacity]
    return tuple(dict.fromkeys(names))


def _instance_type(text: str, name: str, topology: Topology) -> str:
    known = instance_types(topology)
    if name not in known:
        raise ExpressionError(f"{text!r}: {name!r} is not an instance type of the topology" + _suggest(name, known))
    return name


def _share(text: str, ref: str, topology: Topology) -> str:
    found = find_share(topology, ref)
    if found.share_id is None:
        every = [share_id(q, s) for q, s in topology.shares()]
        problem = "is ambiguous; write QUEUE/SHARE" if found.candidates else "is not a quota share of the topology"
        raise ExpressionError(f"{text!r}: {ref!r} {problem}" + _suggest(ref, tuple(every)))
    return found.share_id


def type_figure(metric: str, instance_type: str) -> Callable[[RunFigures], float]:
    """One instance type's figure of a run record (0 for a type the run has no capacity of: it used nothing)."""
    def figure(record: RunFigures) -> float:
        value: float = record.summary.get(SUMMARY_KEY, {}).get(instance_type, {}).get(metric, 0.0)
        return value

    return figure


def record_types(record: RunFigures | None) -> list[str]:
    """The instance types a run record has figures for, in its order (none for a failed run)."""
    return record.types() if record is not None else []


def parse_expression(text: str, topology: Topology, pricing: Pricing | None = None) -> Expression:
    """``pricing``: how ``bill``, ``waste_cost`` and ``share(X).bill`` are priced (default: instance-hours)."""
    source = text.strip()
    pricing = pricing or Pricing()
    if (refusal := cost_metrics.retired(source)) is not None:
        raise ExpressionError(f"{text!r}: {refusal}")
    if source in cost_metrics.CLUSTER_COST_METRICS:
        return Expression(source, cost_metrics.cluster_metric(source, topology, pricing), Unit.COST, pricing.unit,
                          frozenset({source}))
    if source in OPTIONAL_SUMMARY_METRICS:  # only in a run that has what it counts: 0 in the others
        return Expression(source, lambda record: record.summary.get(source, 0.0), UNITS[source],
                          metrics=frozenset({source}))
    if source in SUMMARY_METRICS:
        return Expression(source, lambda record: record.summary[source], UNITS[source], metrics=frozenset({source}))
    match = _SHARE_TYPE.fullmatch(source)
    if match:
        ref, metric, type_name = match.groups()
        metric = _SHARE_ALIASES.get(metric, metric)
        if metric not in SHARE_METRICS:
            known = (*_SHARE_ALIASES, *SHARE_METRICS)
            raise ExpressionError(f"{text!r}: {metric!r} is not a per-share metric" + _suggest(metric, known))
        name, instance_type = _share(text, ref, topology), _instance_type(text, type_name, topology)

        def share_on_type(record: RunFigures) -> float:
            return next((entry[metric] for entry in record.shares
                         if entry["share"] == name and entry["instance_type"] == instance_type), 0.0)

        return Expression(source, share_on_type, UNITS[metric], metrics=frozenset({metric}))
    match = _SHARE.fullmatch(source)
    if match:
        ref, metric = match.groups()
        if metric not in SHARE_METRICS and metric != cost_metrics.SHARE_COST_METRIC:
            raise ExpressionError(f"{text!r}: {metric!r} is not a per-share metric" + _suggest(metric, SHARE_METRICS))
        name = _share(text, ref, topology)
        if metric == cost_metrics.SHARE_COST_METRIC:
            return Expression(source, cost_metrics.share_metric(name, topology, pricing), Unit.COST, pricing.unit,
                              frozenset({metric}))

        def one_share(record: RunFigures) -> float:
            return max((entry[metric] for entry in record.shares if entry["share"] == name), default=0.0)

        return Expression(source, one_share, UNITS[metric], metrics=frozenset({metric}))
    match = _TYPE.fullmatch(source)
    if match and match.group(1) in TYPE_METRICS:
        metric, type_name = match.groups()
        return Expression(source, type_figure(metric, _instance_type(text, type_name, topology)), UNITS[metric],
                          metrics=frozenset({metric}))
    match = _AGGREGATE.fullmatch(source)
    if match:
        aggregate, metric = match.groups()
        if aggregate not in AGGREGATES:
            raise ExpressionError(f"{text!r}: unknown aggregate {aggregate!r}" + _suggest(aggregate,
                                                                                         tuple(AGGREGATES)))
        if metric not in SHARE_METRICS and metric != cost_metrics.SHARE_COST_METRIC:
            raise ExpressionError(f"{text!r}: {metric!r} is not a per-share metric" + _suggest(metric, SHARE_METRICS))
        function = AGGREGATES[aggregate]
        if metric == cost_metrics.SHARE_COST_METRIC:
            bills = cost_metrics.every_share(topology, pricing)
            return Expression(source, lambda record: function(bills(record)), Unit.COST, pricing.unit,
                              frozenset({metric}))
        return Expression(source, lambda record: function([entry[metric] for entry in record.shares]),
                          UNITS[metric], metrics=frozenset({metric}))
    raise ExpressionError(f"{text!r}: expected METRIC, AGG(METRIC), METRIC(TYPE), share(QUEUE/SHARE).METRIC or "
                          "share(QUEUE/SHARE).METRIC(TYPE)"
                          + _suggest(source, SUMMARY_METRICS + cost_metrics.CLUSTER_COST_METRICS))


@dataclass(frozen=True)
class Constraint:
    """``violation(record) <= 0`` when the run satisfies it (optuna's convention for constraints)."""

    text: str
    violation: Callable[[RunRecord], float]
    #: The number compared against (``None`` for ``guarantees``): what a miss is measured relative to.
    bound: float | None = None
    #: What the constrained figure measures (how a miss is written).
    unit: Unit = Unit.NUMBER
    #: How a miss reads (a target's shortfall as a duration, a percentage); ``None``: as ``unit`` reads.
    shown: Callable[[float], str] | None = None
    #: The figure compared against the bound in an ok run (``None``: the constraint has no one figure).
    measure: Callable[[RunRecord], float] | None = None
    #: The metrics the constraint reads, as parsed (``Expression.metrics``; none for ``guarantees`` or a target).
    metrics: frozenset[str] = frozenset()

    @property
    def reads_bill(self) -> bool:
        """Whether it prices a run's ledger (then the command says the unit)."""
        return not self.metrics.isdisjoint(cost_metrics.CLUSTER_COST_METRICS)

    def holds(self, record: RunRecord) -> bool:
        return self.violation(record) <= 0

    def margin_text(self, amount: float) -> str:
        """A margin or a shortfall as people read it (a duration; points of a percentage, ...)."""
        return self.shown(amount) if self.shown is not None else figure_text(amount, self.unit)

    def verdict(self, record: RunRecord) -> str:
        """The figure and how it stands against the bound, for an ok run: ``8d 3h: holds, 1d 21h to spare``."""
        violation = self.violation(record)
        figure = f"{figure_text(self.measure(record), self.unit)}: " if self.measure is not None else ""
        if violation <= 0:
            spare = f", {self.margin_text(-violation)} to spare" if self.measure is not None and violation < 0 else ""
            return f"{figure}holds{spare}"
        return f"{figure}violated by {self.margin_text(violation)}"


def never_preempted_shares(topology: Topology) -> list[str]:
    """Shares a guarantee promises are never preempted."""
    names = []
    for guarantee in topology.guarantees:
        found = find_share(topology, guarantee.share)
        if guarantee.never_preempted and found.share_id is not None:
            names.append(found.share_id)
    return names


def _guarantees(topology: Topology) -> Callable[[RunRecord], float]:
    protected = set(never_preempted_shares(topology))

    def violation(record: RunRecord) -> float:
        if record.status != RunStatus.OK:
            return 1.0  # a refuted guarantee is a check error: such a candidate is invalid
        return float(sum(entry["preemptions"] for entry in record.shares if entry["share"] in protected))

    return violation


def _bound(text: str, number: str, suffix: str, unit: Unit) -> float:
    """The bound in the figure's own unit: ``20d`` for a wait, ``60%`` for a utilisation, else the number."""
    value = float(number)
    if not math.isfinite(value):
        raise ExpressionError(f"{text!r}: the bound must be a finite number")
    if suffix == "%":
        if unit is not Unit.FRACTION:
            raise ExpressionError(f"{text!r}: a percentage bounds a utilisation; this figure is {unit.noun}")
        value /= 100
    elif suffix:
        if unit is not Unit.SECONDS:
            raise ExpressionError(f"{text!r}: a duration ({number}{suffix}) bounds a wait; this figure is "
                                  f"{unit.noun}")
        value *= DURATION_UNITS[suffix]
    if unit is Unit.SECONDS and abs(value) > MAX_SECONDS:  # no run lasts past the bound every time has
        raise ExpressionError(f"{text!r}: a duration is at most {MAX_SECONDS:,} s (bounds.MAX_SECONDS), got "
                              f"{number}{suffix}")
    if unit is Unit.FRACTION and not 0 <= value <= 1:  # 50 meant as 50 % would never be met: say so, not run it
        hint = f"; did you mean {number}%?" if not suffix and 1 < value <= 100 else ""
        raise ExpressionError(f"{text!r}: a utilisation is between 0 and 1 (0% and 100%), got "
                              f"{number}{suffix}{hint}")
    return value


def parse_constraint(text: str, topology: Topology, pricing: Pricing | None = None) -> Constraint:
    source = text.strip()
    if source == "guarantees":
        return Constraint(source, _guarantees(topology), unit=Unit.COUNT,
                          shown=lambda count: f"{count:,.0f} preemption(s) of never-preempted shares")
    match = _CONSTRAINT.fullmatch(source)
    if not match:
        raise ExpressionError(f"{text!r}: expected EXPR <= BOUND (or <, >=, >; BOUND a number, a duration such as "
                              "12h or a percentage such as 60%) or 'guarantees'")
    expression = parse_expression(match.group(1), topology, pricing)
    operator = match.group(2)
    bound = _bound(text, match.group(3), match.group(4), expression.unit)
    strict = 1e-9 * max(1.0, abs(bound))
    functions: dict[str, Callable[[float], float]] = {
        "<=": lambda value: value - bound,
        "<": lambda value: value - bound + strict,
        ">=": lambda value: bound - value,
        ">": lambda value: bound - value + strict,
    }
    difference = functions[operator]
    shown: Callable[[float], str] | None = None
    if expression.unit is Unit.FRACTION:  # a margin of a utilisation is in points, not a percentage of one
        shown = points_text
    elif expression.unit is Unit.COST:  # a cost's margin says its currency (or instance-hours)
        def shown(amount: float) -> str:
            return f"{figure_text(amount, Unit.COST)} {expression.unit_name}"
    return Constraint(source, lambda record: difference(expression(record)), bound, expression.unit, shown,
                      measure=expression, metrics=expression.metrics)


def objective_value(expression: Expression, record: RunRecord) -> float | None:
    """The objective of an ok run; ``None`` for an invalid or failed one."""
    return expression(record) if record.status == RunStatus.OK else None
