"""Workload samples for robust choices (``tune --workload-samples K``): day-blocks resampled with replacement.

A scenario's workload is cut into days (by submission time, from 0); a sample is as many days drawn
with replacement (seeded: ``seed + sample number``), each block shifted to its new day, its jobs
renamed ``NAME@DAY`` so a block drawn twice keeps unique names. This keeps the daily mix and burstiness
of real submissions (a block bootstrap) where independent draws of jobs would not. A scenario whose
workload is a profile (``workload: {profile: ...}``) draws its samples from the profile instead: sample
``n`` is the profile drawn with seed ``seed + n`` (``profile_samples``).

Each candidate is simulated once per sample; its record holds the mean of every figure (what
objectives and constraints read) and each sample's figures (``samples``) for the spread and the
per-sample wins.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import replace
from statistics import fmean
from typing import Any

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.results.targets import Criterion
from policy_engine.sweep.run_record import RunFigures, RunRecord

DAY = 86_400.0


def day_blocks(jobs: Sequence[JobSpec]) -> list[list[JobSpec]]:
    """The jobs of each day from 0 to the last submission (empty days included: quiet days are data too)."""
    if not jobs:
        return []
    days = max(1, math.floor(max(job.submit_at for job in jobs) / DAY) + 1)
    blocks: list[list[JobSpec]] = [[] for _ in range(days)]
    for job in jobs:
        blocks[min(days - 1, int(job.submit_at // DAY))].append(job)
    return blocks


def resample(jobs: Sequence[JobSpec], count: int, seed: int) -> list[tuple[JobSpec, ...]]:
    """``count`` workloads of the same number of days, day-blocks drawn with replacement."""
    blocks = day_blocks(jobs)
    samples = []
    for number in range(count):
        rng = random.Random(seed + number)
        drawn: list[JobSpec] = []
        for day in range(len(blocks)):
            source = rng.randrange(len(blocks))
            shift = (day - source) * DAY
            drawn += [job._replace(name=f"{job.name}@{day}", submit_at=job.submit_at + shift)
                      for job in blocks[source]]
        drawn.sort(key=lambda job: job.submit_at)
        samples.append(tuple(drawn))
    return samples


def profile_samples(scenario: Any, count: int, seed: int) -> list[tuple[JobSpec, ...]]:
    """``count`` workloads drawn from the scenario's profile (``ProfileWorkload``), seeds ``seed + n``, on the
    scenario's topology: every candidate runs on the same samples."""
    return [tuple(scenario.profile.jobs(scenario.topology, seed=seed + number)[0]) for number in range(count)]


def samples_for(scenario: Any, count: int, seed: int) -> tuple[tuple[JobSpec, ...], ...]:
    """The scenario's workload samples: seeds of its profile where it names one, else day-blocks resampled."""
    if getattr(scenario, "profile", None) is not None:
        return tuple(profile_samples(scenario, count, seed))
    return tuple(resample(scenario.jobs, count, seed))


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
