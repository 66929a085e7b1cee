"""Summary metrics from the engine's integrals and the job records.

Utilisation is time-weighted from time 0 to the report time. Waits are each job's time RUNNABLE
(``JobRecord.wait_seconds``): submission to placement, plus every requeue to the next placement, to
its end (terminated, rejected) or the report time (still waiting) if never placed again.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, NamedTuple

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.results import type_usage

if TYPE_CHECKING:
    from policy_engine.simulation.core.capacity import ShareCapacity
    from policy_engine.simulation.view import EngineView


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list; 0 for an empty one."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q * len(sorted_values)))
    return float(sorted_values[rank - 1])


@dataclass(frozen=True)
class ShareMetrics:
    """What one share experienced on one instance type."""

    share: str
    instance_type: str
    strategy: str
    limit: int
    in_use: int
    jobs: int
    own_utilisation: float  # own-capacity instance-seconds used / (limit x time)
    mean_own: float  # time-weighted mean instances used within the own limit
    mean_borrowed: float  # ... above the own limit
    mean_lent: float  # ... of idle own capacity used by borrowers
    wait_p50: float
    wait_p95: float
    wait_max: float
    preemptions: int
    instance_hours_lost: float
    #: the share's jobs' waits added up, in hours (jobs x mean wait): what the harm measure weighs
    #: (``worsening.WaitAndWorkLost``)
    wait_hours: float = 0.0

    def to_json(self) -> JsonObject:
        return asdict(self)


def share_metrics(engine: EngineView, waits: dict[ShareCapacity, list[float]]) -> list[ShareMetrics]:
    """One ``ShareMetrics`` per (share, instance type), in topology order."""
    span = engine.now or 0.0
    out = []
    for (sid, instance_type), share in engine.shares.items():
        values = sorted(waits.get(share, ()))
        # limit x time, over a limit that topology changes may have moved (``topology_changes.limit_seconds``)
        limit_seconds = share.limit * span + engine.capacity_corrections.get(share, 0.0)
        out.append(
            ShareMetrics(
                share=sid,
                instance_type=instance_type,
                strategy=share.model.strategy,
                limit=share.limit,
                in_use=share.used,
                jobs=len(values),
                own_utilisation=round(share.own_int / limit_seconds, 6) if limit_seconds > 0 and span else 0.0,
                mean_own=round(share.own_int / span, 6) if span else 0.0,
                mean_borrowed=round(share.borrowed_int / span, 6) if span else 0.0,
                mean_lent=round(share.lent_int / span, 6) if span else 0.0,
                wait_p50=percentile(values, 0.50),
                wait_p95=percentile(values, 0.95),
                wait_max=float(values[-1]) if values else 0.0,
                preemptions=engine.preemptions[share],
                instance_hours_lost=round(engine.lost_instance_seconds[share] / 3600, 6),
                wait_hours=round(sum(values) / 3600, 6),
            )
        )
    return out


class EnvironmentSpan(NamedTuple):
    """One environment's instances of one type over the run: what cluster utilisation divides by."""

    capacity: int  # at the report time
    correction: float  # capacity-seconds to add to ``capacity x time`` after topology changes


def summary(engine: EngineView, statuses: Sequence[str], waits: Iterable[float],
            shares: list[ShareMetrics]) -> JsonObject:
    """Cluster-wide figures of one engine at its clock (``cluster_summary`` of its pools)."""
    environments = {id(pool.env): pool.env for pool in engine.pools}
    spans = [EnvironmentSpan(env.capacity, engine.capacity_corrections.get(env, 0.0))
             for env in environments.values()]
    cluster = cluster_summary(engine.now, spans, [pool.used_int for pool in engine.pools], statuses, waits, shares)
    cluster[type_usage.SUMMARY_KEY] = type_usage.summary_json(
        type_usage.type_usage(engine.now, type_usage.engine_seconds(engine), shares))
    return cluster


def cluster_summary(now: float, environments: Iterable[EnvironmentSpan], used_seconds: Iterable[float],
                    statuses: Sequence[str], waits: Iterable[float], shares: Sequence[ShareMetrics]) -> JsonObject:
    """Cluster-wide figures: job counts by status, preemptions, utilisation (``used_seconds``: per pool).

    ``statuses`` and ``waits``: one per job record, in the same order (columns, not records: a million
    records are not built just to be counted).
    """
    span = now or 0.0
    counts = {str(status): count for status, count in Counter(statuses).items()}  # a Status counts as its value
    capacity_seconds = sum(env.capacity * span + env.correction for env in environments)
    used = sum(used_seconds)
    waits = sorted(waits)
    return {
        "jobs": len(statuses),
        "by_status": dict(sorted(counts.items())),
        "preemptions": sum(s.preemptions for s in shares),
        "instance_hours_lost": round(sum(s.instance_hours_lost for s in shares), 6),
        "cluster_utilisation": round(used / capacity_seconds, 6) if capacity_seconds > 0 and span else 0.0,
        "wait_p50": percentile(waits, 0.50),
        "wait_p95": percentile(waits, 0.95),
        "wait_max": float(waits[-1]) if waits else 0.0,
    }
