"""Workload samples for robust choices (``tune --samples K``, alias ``--workload-samples``): drawn by the one
resampler every command uses (``simulation.scenarios.samples``: seeds of a profile, else whole days of the
recorded workload resampled with replacement, plan jobs keeping their day).

Each candidate is simulated once per sample; its record holds the mean of every figure (what
objectives and constraints read) and each sample's figures (``samples``) for the spread and the
per-sample wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from statistics import fmean
from typing import Any

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.results.targets import Criterion
from policy_engine.simulation.scenarios.samples import DAY, day_blocks, profile_samples, resample, samples_for
from policy_engine.sweep.run_record import RunFigures, RunRecord

__all__ = ["DAY", "day_blocks", "mean_record", "mean_targets", "profile_samples", "resample", "samples_for"]


def _mean_of(values: list[Any]) -> Any:
    if values and all(isinstance(v, dict) for v in values):  # figures keyed by instance type: each key's mean
        return {key: _mean_of([v.get(key) for v in values]) for key in values[0]}
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return fmean(numbers) if len(numbers) == len(values) and numbers else values[0]


def mean_record(records: Sequence[RunRecord]) -> RunRecord:
    """One run record whose ``summary`` and ``shares`` hold the mean over ``records`` (ok runs of one candidate);
    the samples' own ``summary``, ``shares`` and bill ledgers are kept in ``samples`` (the record's own
    ``costs`` is set by the caller to the samples' mean ledger, ``costs.mean_ledgers``)."""
    first = records[0]
    summary = {key: _mean_of([r.summary.get(key) for r in records]) for key in first.summary}
    by_key: dict[tuple[str, str], list[JsonObject]] = {}
    for record in records:
        for entry in record.shares:
            by_key.setdefault((entry["share"], entry["instance_type"]), []).append(entry)
    shares = tuple({key: _mean_of([e.get(key) for e in entries]) for key in entries[0]} for entries in by_key.values())
    return replace(first, summary=summary, shares=shares, targets=tuple(mean_targets(records)),
                   samples=tuple(RunFigures(summary=r.summary, shares=r.shares, costs=r.costs) for r in records))


def mean_targets(records: Sequence[RunRecord]) -> list[JsonObject]:
    """Each target criterion judged on the mean of its figure over the samples (``targets`` of each record)."""
    by_key: dict[tuple[object, ...], list[JsonObject]] = {}
    for record in records:
        for entry in record.targets:
            by_key.setdefault((entry["target"], entry["criterion"], entry["instance_type"]), []).append(entry)
    out = []
    for entries in by_key.values():
        first = entries[0]
        actual = fmean(entry["actual"] for entry in entries)
        margin = actual - first["goal"] if Criterion(first["criterion"]).at_least else first["goal"] - actual
        out.append({**first, "actual": actual, "jobs": round(fmean(e["jobs"] for e in entries), 6),
                    "margin": margin, "met": margin >= 0})
    return out
