"""Capacity per instance type, never summed across types: an ``ml.p4d.24xlarge`` hour is not an ``ml.g5.12xlarge`` one.

Utilisation, idle, borrowed and lent capacity of each instance type over the run, read after the run
from the engine's integrals (the pools' and shares' instance-seconds, kept anyway), so the event loop
does no extra work. ``summary["instance_types"]`` holds them keyed by type (``--format json``); the
only all-types figure is ``weighted_utilisation``, weighted by what an instance-hour of each type is
worth to the caller (prices, when given), never by instance count alone. ``cluster_utilisation`` stays
in the summary for compatibility: it is weighted by instances (every instance-hour counts the same).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from policy_engine.simulation.view import EngineView

#: The key of ``summary`` that holds the figures per instance type.
SUMMARY_KEY = "instance_types"


class TypeSeconds(NamedTuple):
    """Instance-seconds of one instance type over the run (one environment's, or a sum of environments')."""

    instances: int  # at the report time
    capacity: float  # instances x time, after topology changes
    used: float  # own and borrowed use of every share
    borrowed: float  # use above the shares' own limits
    lent: float  # idle own capacity of lenders used by borrowers


class ShareFigures(Protocol):
    """What ``type_usage`` reads of a share's metrics (``metrics.ShareMetrics`` is one; metrics calls this module)."""

    @property
    def instance_type(self) -> str: ...

    @property
    def jobs(self) -> int: ...

    @property
    def preemptions(self) -> int: ...

    @property
    def instance_hours_lost(self) -> float: ...


def _add(into: dict[str, TypeSeconds], instance_type: str, seconds: TypeSeconds) -> None:
    before = into.get(instance_type)
    into[instance_type] = seconds if before is None else TypeSeconds(
        before.instances + seconds.instances, before.capacity + seconds.capacity, before.used + seconds.used,
        before.borrowed + seconds.borrowed, before.lent + seconds.lent)


@dataclass(frozen=True)
class TypeUsage:
    """What one instance type did over the run; instance-hours, and utilisation as a fraction of its capacity."""

    instance_type: str
    instances: int
    jobs: int
    utilisation: float  # used / capacity instance-hours
    capacity_instance_hours: float
    used_instance_hours: float
    idle_instance_hours: float  # capacity no share used: reserved and left idle, or owned by no share
    borrowed_instance_hours: float
    lent_instance_hours: float
    preemptions: int
    instance_hours_lost: float

    def to_json(self) -> dict[str, float]:
        """The object under ``summary.instance_types[TYPE]`` (docs/simulator.md)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "instance_type"}


def engine_seconds(engine: EngineView) -> dict[str, TypeSeconds]:
    """Each instance type's instance-seconds at the engine's clock, in the order the pools first name the types."""
    span = engine.now or 0.0
    out: dict[str, TypeSeconds] = {}
    counted: set[int] = set()
    for pool in engine.pools:
        env = pool.env
        instances, capacity = 0, 0.0
        if id(env) not in counted:  # an environment's instances of a type are shared by its queues' pools
            counted.add(id(env))
            instances, capacity = env.capacity, env.capacity * span + engine.capacity_corrections.get(env, 0.0)
        borrowed = sum(share.borrowed_int for share in pool.shares)
        used = sum(share.own_int for share in pool.shares) + borrowed
        lent = sum(share.lent_int for share in pool.shares)
        _add(out, pool.instance_type, TypeSeconds(instances, capacity, used, borrowed, lent))
    return out


def summed(parts: Iterable[Mapping[str, TypeSeconds]]) -> dict[str, TypeSeconds]:
    """The figures of runs over disjoint parts of a topology (``--workers``), added type by type."""
    out: dict[str, TypeSeconds] = {}
    for part in parts:
        for instance_type, seconds in part.items():
            _add(out, instance_type, seconds)
    return out


def type_usage(span: float, seconds: Mapping[str, TypeSeconds],
               shares: Sequence[ShareFigures]) -> dict[str, TypeUsage]:
    """One ``TypeUsage`` per instance type, in the order the share metrics name them (the shares table's);
    jobs and preemptions from the share metrics."""
    out = {}
    for instance_type in dict.fromkeys([*(m.instance_type for m in shares if m.instance_type in seconds), *seconds]):
        s = seconds[instance_type]
        mine = [m for m in shares if m.instance_type == instance_type]
        out[instance_type] = TypeUsage(
            instance_type=instance_type,
            instances=s.instances,
            jobs=sum(m.jobs for m in mine),
            utilisation=round(s.used / s.capacity, 6) if s.capacity > 0 and span else 0.0,
            capacity_instance_hours=round(s.capacity / 3600, 6),
            used_instance_hours=round(s.used / 3600, 6),
            idle_instance_hours=round(max(s.capacity - s.used, 0.0) / 3600, 6),
            borrowed_instance_hours=round(s.borrowed / 3600, 6),
            lent_instance_hours=round(s.lent / 3600, 6),
            preemptions=sum(m.preemptions for m in mine),
            instance_hours_lost=round(sum(m.instance_hours_lost for m in mine), 6),
        )
    return out


def summary_json(usage: Mapping[str, TypeUsage]) -> dict[str, dict[str, float]]:
    """``summary["instance_types"]``: the figures keyed by instance type."""
    return {instance_type: figures.to_json() for instance_type, figures in usage.items()}


def from_summary(summary: Mapping[str, Any]) -> list[TypeUsage]:
    """The per-type figures of a run's ``summary`` (a result's, or a sweep record's JSON), in their order."""
    return [TypeUsage(instance_type=name, **figures) for name, figures in summary.get(SUMMARY_KEY, {}).items()]


def weighted_utilisation(usage: Iterable[TypeUsage], weights: Mapping[str, float]) -> float | None:
    """The one all-types utilisation: used over capacity, each type's instance-hours weighted by ``weights``.

    ``weights`` is what an instance-hour of each type is worth (``--prices``' per-instance-hour rates);
    ``None`` when a type has no weight, since summing instance-hours of different types means nothing, and when
    the capacity is worth nothing at those rates (every type at 0 per instance-hour: no share of a cost of 0).
    """
    used = capacity = unweighted = 0.0
    for figures in usage:
        weight = weights.get(figures.instance_type)
        if weight is None:
            return None
        used += weight * figures.used_instance_hours
        capacity += weight * figures.capacity_instance_hours
        unweighted += figures.capacity_instance_hours
    if capacity > 0:
        return used / capacity
    return None if unweighted > 0 else 0.0
