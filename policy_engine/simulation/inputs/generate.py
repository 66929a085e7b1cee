"""Synthetic workloads: Poisson arrivals (optionally in bursts), size/duration distributions, priority mix.

Seeded ``random.Random`` only, so the same arguments always write the same file. The heavy
shape of production GPU clusters: ``duration_distribution="lognormal"`` with a large
``duration_shape`` (or ``"pareto"``) for seconds-to-weeks durations, ``burst_mean`` for sweeps of
thousands of submissions to one share at once, and a size mix such as ``{1: 0.85, 2: 0.1, 8: 0.05}``.
"""

from __future__ import annotations

import bisect
import csv
import itertools
import json
import math
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from policy_engine.foundation.model import Topology, share_id
from policy_engine.foundation.output_files import open_output
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import build_pools
from policy_engine.simulation.core.jobs import CORE_FIELDS, JobSpec

DURATION_DISTRIBUTIONS = ("exponential", "lognormal", "pareto", "fixed")
#: ``duration_shape`` when none is given: lognormal sigma, Pareto alpha.
DEFAULT_SHAPE = {"lognormal": 1.0, "pareto": 1.5}


def parse_weights(text: str, what: str) -> dict[int, float]:
    """``"1:0.7,2:0.3"`` -> ``{1: 0.7, 2: 0.3}``; raises ``ValueError`` with a readable message."""
    weights: dict[int, float] = {}
    for part in text.split(","):
        value, sep, weight = part.strip().partition(":")
        try:
            key, share = int(value), float(weight) if sep else 1.0
        except ValueError:
            raise ValueError(f"{what}: {part.strip()!r} is not VALUE:WEIGHT (e.g. 1:0.7,2:0.3)") from None
        if share < 0 or not math.isfinite(share):
            raise ValueError(f"{what}: weight {weight!r} must be a finite number >= 0")
        weights[key] = share
    if not weights or sum(weights.values()) <= 0:
        raise ValueError(f"{what}: at least one weight must be positive")
    return weights


class ShareMix(StrEnum):
    """How a job's share and instance type are drawn when no workload profile says so."""

    #: P(share, instance type) proportional to the share's limit of that type: a big team submits more
    LIMIT = "limit"
    #: a share uniformly, then one of its instance types uniformly (before ``limit`` became the default)
    UNIFORM = "uniform"


@dataclass(frozen=True)
class GenerateOptions:
    """How a synthetic workload looks (``generate``'s options): one law for every share, drawn by ``share_mix``."""

    jobs: int
    arrival_rate: float  # jobs per hour over the whole topology (Poisson arrivals)
    sizes: Mapping[int, float] = field(default_factory=lambda: {1: 1.0})
    duration_mean: float = 3600.0
    duration_distribution: str = "exponential"
    priorities: Mapping[int, float] = field(default_factory=lambda: {1: 1.0})
    share_priorities: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    shares: Sequence[str] = ()
    seed: int = 0
    #: lognormal: sigma of the log (larger = heavier tail); pareto: alpha (> 1; smaller = heavier tail)
    duration_shape: float | None = None
    #: no duration above this many seconds (the drawn value is capped; ``None``: no cap)
    duration_max: float | None = None
    #: mean jobs per burst (geometric); a burst goes to one share and instance type, within ``burst_spread`` s
    burst_mean: float = 1.0
    burst_spread: float = 60.0
    share_mix: ShareMix = ShareMix.LIMIT

    def shape(self) -> float:
        if self.duration_shape is not None:
            return self.duration_shape
        return DEFAULT_SHAPE.get(self.duration_distribution, 1.0)


def share_priority_mixes(topology: Topology, items: Sequence[str]) -> tuple[dict[str, dict[int, float]], list[str]]:
    """``--share-priorities SHARE=MIX`` items as ``{QUEUE/SHARE: weights}``, and one problem line per bad item."""
    mixes: dict[str, dict[int, float]] = {}
    problems: list[str] = []
    for item in items:
        ref, sep, mix = item.partition("=")
        if not sep or not ref:
            problems.append(f"--share-priorities {item!r}: expected SHARE=MIX naming one quota share of the topology")
            continue
        match = topology.find_share(ref)
        if match.share_id is None:
            problems.append(f"--share-priorities {item!r}: {match.error}")
            continue
        try:
            mixes[match.share_id] = parse_weights(mix, f"--share-priorities {ref}")
        except ValueError as error:
            problems.append(str(error))
    return mixes, problems


Sampler = Callable[[], int]


def _sampler(rng: random.Random, weights: Mapping[int, float]) -> Sampler:
    """Draw one of ``weights``' keys with probability proportional to its weight."""
    values = list(weights)
    cumulative = list(itertools.accumulate(weights[value] for value in values))
    total = cumulative[-1]

    def sample() -> int:
        return values[min(len(values) - 1, bisect.bisect_right(cumulative, rng.random() * total))]

    return sample


#: The most instances one job can ever get, per (``QUEUE/SHARE``, instance type).
Reach = Mapping[tuple[str, str], int]


def share_reach(topology: Topology) -> dict[tuple[str, str], int]:
    """``Reach`` by the simulator's own rule (``placement.reach``), from its capacity pools: no engine needed."""
    return {(s.share_id, s.instance_type): placement.reach(pool, s)
            for pool in build_pools(topology) for s in pool.shares}


def drawable(topology: Topology, profile: GenerateOptions,
             reach: Reach | None = None) -> tuple[list[tuple[str, tuple[str, ...]]], list[str]]:
    """The (share, instance types) jobs are drawn for, and one note per share and type whose sizes are narrowed.

    Sizes are drawn per share and instance type among those the share can ever reach: a
    larger job is misconfigured and would block its line forever. Pass ``reach`` when the
    caller already has it.
    """
    most = share_reach(topology) if reach is None else reach
    sizes = sorted(size for size, weight in profile.sizes.items() if weight > 0)
    enabled: list[tuple[str, tuple[str, ...]]] = []
    notes: list[str] = []
    for q, s in topology.shares():
        sid = share_id(q, s)
        if s.state != "ENABLED" or (profile.shares and sid not in profile.shares):
            continue
        types = []
        for instance_type in s.capacity:
            most_instances = most[(sid, instance_type)]
            kept = [size for size in sizes if size <= most_instances]
            if kept:
                types.append(instance_type)
            if len(kept) == len(sizes):
                continue
            drawn = f"only size(s) {','.join(map(str, kept))} are drawn for it" if kept else "no job is drawn for it"
            notes.append(f"{sid} {instance_type}: can reach at most {most_instances} instance(s); {drawn}")
        if types:
            enabled.append((sid, tuple(types)))
    return enabled, notes


def generate_jobs(topology: Topology, profile: GenerateOptions, reach: Reach | None = None) -> Iterator[JobSpec]:
    """Yield ``profile.jobs`` jobs in submission order, sizes within reach (see ``drawable``)."""
    rng = random.Random(profile.seed)
    most = share_reach(topology) if reach is None else reach
    positive = {size: weight for size, weight in profile.sizes.items() if weight > 0}
    enabled, _ = drawable(topology, profile, most)
    if not enabled:
        return
    samplers = {(sid, t): _sampler(rng, {size: w for size, w in positive.items() if size <= most[(sid, t)]})
                for sid, types in enabled for t in types}
    default_priority = _sampler(rng, profile.priorities)
    per_share = {sid: _sampler(rng, weights) for sid, weights in profile.share_priorities.items()}
    mean_gap = 3600.0 / profile.arrival_rate
    duration = _duration_sampler(rng, profile)
    pick = _share_picker(rng, topology, profile.share_mix, enabled)
    if profile.burst_mean > 1:
        yield from _bursts(rng, profile, pick, samplers, default_priority, per_share, mean_gap, duration)
        return
    time = 0.0
    for index in range(profile.jobs):
        time += rng.expovariate(1.0 / mean_gap)
        sid, instance_type = pick()
        seconds = duration()
        priority = per_share.get(sid, default_priority)()
        size = samplers[(sid, instance_type)]()
        yield JobSpec(f"job-{index:07d}", sid, instance_type, size, priority, round(time, 3), seconds)


def _share_picker(rng: random.Random, topology: Topology, mix: ShareMix,
                  enabled: list[tuple[str, tuple[str, ...]]]) -> Callable[[], tuple[str, str]]:
    """Draws ``(QUEUE/SHARE, instance type)`` for one job (or burst) by ``mix``."""
    if mix is ShareMix.UNIFORM:
        def uniform() -> tuple[str, str]:
            sid, types = enabled[rng.randrange(len(enabled))]
            return sid, types[rng.randrange(len(types))]

        return uniform
    limits = {share_id(q, s): s.capacity for q, s in topology.shares()}
    pairs = [(sid, t) for sid, types in enabled for t in types]
    cumulative = list(itertools.accumulate(limits[sid][t] for sid, t in pairs))

    def by_limit() -> tuple[str, str]:
        return pairs[min(len(pairs) - 1, bisect.bisect_right(cumulative, rng.random() * cumulative[-1]))]

    return by_limit


def _duration_sampler(rng: random.Random, profile: GenerateOptions) -> Callable[[], float]:
    """Seconds of work of one job (at least 1, at most ``duration_max``), rounded to 0.1 s."""
    mean, kind, shape, cap = profile.duration_mean, profile.duration_distribution, profile.shape(), profile.duration_max
    if kind == "lognormal":
        mu = math.log(mean) - shape * shape / 2 if mean > 0 else 0.0

        def draw() -> float:
            return rng.lognormvariate(mu, shape)
    elif kind == "pareto":
        scale = mean * (shape - 1) / shape  # the minimum of a Pareto law with this mean

        def draw() -> float:
            return scale * rng.paretovariate(shape)
    elif kind == "fixed":
        def draw() -> float:
            return mean
    else:
        def draw() -> float:
            return rng.expovariate(1.0 / mean) if mean > 0 else 0.0

    def sample() -> float:
        value = draw()
        if cap is not None and value > cap:
            value = cap
        return round(max(value, 1.0), 1)

    return sample


def _bursts(rng: random.Random, profile: GenerateOptions, pick: Callable[[], tuple[str, str]],
            samplers: Mapping[tuple[str, str], Sampler], default_priority: Sampler, per_share: Mapping[str, Sampler],
            mean_gap: float, duration: Callable[[], float]) -> Iterator[JobSpec]:
    """Bursts (Poisson, ``burst_mean`` times rarer than jobs) of a geometric number of jobs to one share."""
    keep = 1.0 - 1.0 / profile.burst_mean  # geometric law with this mean: continue with probability keep
    time = 0.0
    index = 0
    while index < profile.jobs:
        time += rng.expovariate(1.0 / (mean_gap * profile.burst_mean))
        sid, instance_type = pick()
        count = 1
        while rng.random() < keep and index + count < profile.jobs:
            count += 1
        offsets = sorted(rng.uniform(0, profile.burst_spread) for _ in range(count))
        priority = per_share.get(sid, default_priority)
        size = samplers[(sid, instance_type)]
        for offset in offsets:
            yield JobSpec(f"job-{index:07d}", sid, instance_type, size(), priority(), round(time + offset, 3),
                          duration())
            index += 1
        time += offsets[-1]


def write_jobs(path: Path, jobs: Iterable[JobSpec]) -> int:
    """Write jobs as CSV or JSON Lines (by suffix) with the scenario's column names; return the count."""
    columns = CORE_FIELDS
    count = 0
    with open_output(path, newline="", buffering=-1) as handle:  # a device or FIFO in place, never replaced
        if path.suffix.lower() == ".csv":
            writer = csv.writer(handle)
            writer.writerow(columns)
            for job in jobs:
                writer.writerow([getattr(job, column) for column in columns])
                count += 1
        else:
            for job in jobs:
                handle.write(json.dumps({column: getattr(job, column) for column in columns}, allow_nan=False) + "\n")
                count += 1
    return count
