"""Time-weighted figures of runs that are compared, measured over one window: ``[0, the latest end]``.

A run's utilisation, own utilisation and mean borrowed/lent instances are time-weighted over ``[0, its
end]``. Two runs that end at different times would then differ although they used the same capacity in
the same way (a change to one instance type ending the run sooner raises every other type's utilisation).
Where runs are compared (``compare``, ``diff --scenario``, ``sweep``, ``tune``, ``explain``'s replays), each
is measured over the comparison's window instead, as ``simulate --until`` measures past a run's end: idle
time after the end counts as idle. Nothing runs after a run's end, so the figures are recomputed from the
run's capacity ledger (``CapacityHours``: instance-seconds used, limits and capacity integrated to its end)
after the run, without simulating again: used, borrowed and lent seconds stay, while the limit and capacity
seconds grow by the limit or capacity in force at the end times the extra time. The ledger itself (what
costs are priced from) is left as the run's: what a run costs is not a time-weighted figure.

The window is a choice (AWS documents none): ``common_window`` is the one place that says it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.units import duration_text
from policy_engine.simulation.results import type_usage
from policy_engine.simulation.results.capacity_hours import HOUR, CapacityHours
from policy_engine.simulation.results.metrics import ShareMetrics
from policy_engine.simulation.results.targets import Criterion, TargetResult, from_json

if TYPE_CHECKING:
    from policy_engine.simulation.results.records import SimulationResult

#: The key ``summary`` gains when its time-weighted figures are measured over a comparison's window (seconds).
WINDOW_KEY = "window_seconds"


def common_window(ends: Iterable[float]) -> float:
    """The window every compared run is measured over: from 0 to the latest end among them."""
    return max((float(end) for end in ends), default=0.0)


def window_legend(window: float, ends: Iterable[float]) -> str:
    """What the outputs say of the window: ``time-weighted over 0 to 52d 21h, the longest run``."""
    ends = list(ends)
    which = "every run's end" if ends and all(end == window for end in ends) else "the longest run"
    return f"time-weighted over 0 to {duration_text(window)}, {which}"


def _extra(hours: CapacityHours, window: float) -> float:
    if window < hours.span:
        raise ValueError(f"a window of {window:g}s is shorter than the run it measures ({hours.span:g}s)")
    return window - hours.span


def widened_shares(shares: Sequence[ShareMetrics], hours: CapacityHours, window: float) -> list[ShareMetrics]:
    """Each share's own utilisation and mean own, borrowed and lent instances over ``[0, window]``."""
    extra = _extra(hours, window)
    if not extra:
        return list(shares)
    ledger = {(row.share, row.instance_type): row for row in hours.shares}
    out = []
    for metrics in shares:
        row = ledger[(metrics.share, metrics.instance_type)]
        limit_seconds = row.limit * HOUR + metrics.limit * extra
        own = row.own * HOUR
        out.append(replace(
            metrics,
            own_utilisation=round(own / limit_seconds, 6) if limit_seconds > 0 else 0.0,
            mean_own=round(own / window, 6),
            mean_borrowed=round(row.borrowed * HOUR / window, 6),
            mean_lent=round(row.lent * HOUR / window, 6)))
    return out


def _type_seconds(hours: CapacityHours, instances: Mapping[str, int],
                  window: float) -> dict[str, type_usage.TypeSeconds]:
    """Each instance type's instance-seconds over ``[0, window]`` (``type_usage.engine_seconds``, widened)."""
    extra = _extra(hours, window)
    out: dict[str, type_usage.TypeSeconds] = {}
    for instance_type, count in instances.items():
        capacity = sum(env.capacity for env in hours.environments if env.instance_type == instance_type) * HOUR
        mine = [row for row in hours.shares if row.instance_type == instance_type]
        borrowed = sum(row.borrowed for row in mine) * HOUR
        out[instance_type] = type_usage.TypeSeconds(
            count, capacity + count * extra, sum(row.own for row in mine) * HOUR + borrowed, borrowed,
            sum(row.lent for row in mine) * HOUR)
    return out


def type_utilisation(hours: CapacityHours, instances: Mapping[str, int], window: float) -> dict[str, float]:
    """Per instance type: instance-seconds the pools used over capacity-seconds, over ``[0, window]``
    (``comparison.runs.type_utilisation``, widened); ``instances``: each type's instances at the end."""
    extra = _extra(hours, window)
    out = {}
    for instance_type, count in instances.items():
        envs = [env for env in hours.environments if env.instance_type == instance_type]
        seconds = sum(env.capacity for env in envs) * HOUR + count * extra
        out[instance_type] = round(sum(env.used for env in envs) * HOUR / seconds, 6) if seconds > 0 else 0.0
    return out


def widened_summary(summary: Mapping[str, Any], shares: Sequence[ShareMetrics], hours: CapacityHours,
                    window: float) -> JsonObject:
    """``summary`` with its time-weighted figures over ``[0, window]`` (``cluster_utilisation`` and each instance
    type's utilisation, capacity and idle instance-hours) and ``window_seconds``; ``shares``: the run's metrics."""
    extra = _extra(hours, window)
    out: JsonObject = copy.deepcopy(dict(summary))
    out[WINDOW_KEY] = window
    if not extra:
        return out
    by_type = summary.get(type_usage.SUMMARY_KEY, {})
    instances = {name: int(figures["instances"]) for name, figures in by_type.items()}
    if by_type:
        usage = type_usage.type_usage(window, _type_seconds(hours, instances, window), shares)
        out[type_usage.SUMMARY_KEY] = type_usage.summary_json({name: usage[name] for name in by_type})
    capacity = sum(env.capacity for env in hours.environments) * HOUR + sum(instances.values()) * extra
    used = sum(env.used for env in hours.environments) * HOUR
    if "cluster_utilisation" in out:
        out["cluster_utilisation"] = round(used / capacity, 6) if capacity > 0 else 0.0
    return out


def widened_targets(targets: Sequence[TargetResult], shares: Sequence[ShareMetrics]) -> list[TargetResult]:
    """``targets`` with each ``min_utilisation`` criterion judged on ``shares`` (widened); the waits and
    preemptions criteria are not time-weighted and stay."""
    used = {(m.share, m.instance_type): m.own_utilisation for m in shares}
    return [replace(t, actual=used.get((t.share, t.instance_type or ""), t.actual))
            if t.criterion is Criterion.MIN_UTILISATION else t for t in targets]


def widened_result(result: SimulationResult, window: float) -> SimulationResult:
    """``result`` with its shares' and summary's time-weighted figures over ``[0, window]``; its jobs, waits,
    preemptions, ledger and end (``time``) are the run's own."""
    if result.hours is None:
        raise ValueError("a result without its capacity ledger cannot be measured over a longer window")
    shares = widened_shares(result.shares, result.hours, window)
    return replace(result, shares=shares, summary=widened_summary(result.summary, shares, result.hours, window))


def widened_json(summary: Mapping[str, Any], shares: Sequence[Mapping[str, Any]], targets: Sequence[Mapping[str, Any]],
                 hours: CapacityHours, window: float) -> tuple[JsonObject, list[JsonObject], list[JsonObject]]:
    """``widened_summary``, ``widened_shares`` and ``widened_targets`` of a run kept as JSON (a sweep's record)."""
    metrics = widened_shares([ShareMetrics(**row) for row in shares], hours, window)
    judged = widened_targets([from_json(dict(row)) for row in targets], metrics)
    return (widened_summary(summary, metrics, hours, window), [m.to_json() for m in metrics],
            [t.to_json() for t in judged])
