"""Workload samples: the one way every command draws N workloads of a scenario (``--samples N``).

A scenario whose workload is a profile (``workload: {profile: ...}``) draws its samples from the profile: sample
``n`` (from 0) is the profile drawn with seed ``seed + n``. A recorded job file's sample 1 (``n`` 0) is
the recorded workload itself, so the jobs, ``--events``, ``--report`` and the bill describe the month that happened;
samples 2..N are resampled by whole days: the workload is cut into days (by submission time, from 0); a sample is as
many days drawn with replacement (seeded: ``seed + n``, ``n`` from 1), each block shifted to its new day and its jobs
renamed ``NAME@DAY`` (``DAY``: the day of the sample it was moved to, from 0), so a block drawn twice keeps unique
names. All shares' jobs of a day move together, so the contention between teams is kept (a block bootstrap), where
independent draws of jobs would lose it. Jobs on a training plan keep their day, unrenamed, in every sample:
a plan's window is fixed in time, so its jobs are not moved to another day.

``simulate``, ``compare``, ``diff --scenario`` and ``tune`` all draw through ``samples_for`` (docs/simulator.md,
"Workload samples").
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.settings import JobTermination, PriorityUpdate

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
    """``count`` workloads of the same number of days, day-blocks drawn with replacement; plan jobs stay put."""
    fixed = [job for job in jobs if job.training_plan is not None]
    blocks = day_blocks([job for job in jobs if job.training_plan is None])
    samples = []
    for number in range(count):
        rng = random.Random(seed + number)
        drawn: list[JobSpec] = list(fixed)
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
    scenario's topology: every design or candidate runs on the same samples."""
    return [tuple(scenario.profile.jobs(scenario.topology, seed=seed + number)[0]) for number in range(count)]


def sample_for(scenario: Any, number: int, seed: int) -> tuple[JobSpec, ...]:
    """Sample ``number`` (from 0) alone, as ``samples_for`` draws it: what a worker draws for its own task."""
    if getattr(scenario, "profile", None) is not None:
        return tuple(scenario.profile.jobs(scenario.topology, seed=seed + number)[0])
    if number == 0:  # a recorded workload's first sample is what was recorded, never a synthetic month
        return tuple(scenario.jobs)
    return resample(scenario.jobs, 1, seed + number)[0]


def samples_for(scenario: Any, count: int, seed: int) -> tuple[tuple[JobSpec, ...], ...]:
    """The scenario's workload samples: seeds of its profile where it names one, else the recorded jobs (sample 1)
    and day-blocks resampled (samples 2..N, seeds ``seed + 1`` ..)."""
    if getattr(scenario, "profile", None) is not None:
        return tuple(profile_samples(scenario, count, seed))
    if count <= 0:
        return ()
    return (tuple(scenario.jobs), *(resample(scenario.jobs, 1, seed + number)[0] for number in range(1, count)))


def recorded(scenario: Any) -> bool:
    """Whether the scenario's samples start from recorded jobs (sample 1 is them, unresampled), not a profile."""
    return getattr(scenario, "profile", None) is None


def sample_one(recorded_jobs: bool, count: int, seed: int) -> str:
    """What the first of ``count`` samples is, for a title: ``sample 1 of 5 (the recorded jobs)``, ``... (seed 7)``."""
    return f"sample 1 of {count} ({'the recorded jobs' if recorded_jobs else f'seed {seed}'})"


def seeds_text(recorded_jobs: bool, count: int, seed: int) -> str:
    """Which workloads the samples are, in words: ``seeds 7-11`` of a profile; ``sample 1 the recorded jobs, then
    seeds 1-4 resampled by day`` of a job file."""
    if not recorded_jobs:
        return f"seed {seed}" if count == 1 else f"seeds {seed}-{seed + count - 1}"
    if count <= 1:
        return "the recorded jobs"
    resampled = f"seed {seed + 1}" if count == 2 else f"seeds {seed + 1}-{seed + count - 1}"
    return f"sample 1 the recorded jobs, then {resampled} resampled by day"


def default_seed(scenario: Any) -> int:
    """``--seed``'s default: the profile's own seed (so sample 1 is the scenario's workload), else 0."""
    profile = getattr(scenario, "profile", None)
    return int(profile.seed) if profile is not None else 0


def sample_problems(scenario: Any, option: str = "--samples") -> list[str]:
    """What stops a scenario from being sampled, one line each: a resampled workload renames its jobs, so an
    action naming a job would apply to nothing; a scenario without jobs has nothing to resample."""
    named = sum(1 for action in scenario.updates if isinstance(action, (PriorityUpdate, JobTermination)))
    problems = []
    if named:
        problems.append(f"{option}: {scenario.source}: {named} action(s) change a named job's priority or end it; "
                        f"a resampled workload renames its jobs, so they would apply to nothing (leave out "
                        f"{option}, or the actions)")
    if not scenario.jobs:
        problems.append(f"{option}: {scenario.source}: the scenario has no jobs to resample")
    if scenario.live:
        problems.append(f"{option}: {scenario.source}: {len(scenario.live)} job(s) are already on capacity at "
                        f"time 0 (a snapshot); a resampled workload renames its jobs, so they would be lost (leave "
                        f"out {option})")
    return problems
