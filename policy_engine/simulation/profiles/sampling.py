"""Draw a seeded workload from a resolved profile, one share at a time, vectorised with numpy.

Arrivals are a Poisson process per share whose rate follows the daily and weekly cycles hour by
hour (time 0 is a Monday 00:00 in the profile's time zone; clock changes are ignored); with
``bursts`` it is the bursts that arrive so, each a geometric number of jobs of one instance type.
The same profile, topology, days and seed always give the same jobs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from policy_engine.foundation.model import Topology
from policy_engine.foundation.output_files import open_binary_output, open_output
from policy_engine.simulation.core.jobs import CORE_FIELDS, JobSpec
from policy_engine.simulation.profiles.loading import ResolvedProfile
from policy_engine.simulation.profiles.plan_timing import PlanClock, default_origin, plan_clocks
from policy_engine.simulation.profiles.spec import (
    DAYS_PER_WEEK,
    HOURS_PER_DAY,
    MAX_SECONDS,
    Empirical,
    Exponential,
    LogNormal,
    Night,
    Pareto,
    PlanTiming,
    PlanUse,
    RunTime,
    ShareProfile,
)

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0


@dataclass
class Columns:
    """A workload as columns (one numpy array per job field), in submission order."""

    share: np.ndarray  # object: QUEUE/SHARE
    instance_type: np.ndarray  # object
    instances: np.ndarray  # int64
    priority: np.ndarray  # int64
    submit_at: np.ndarray  # float64, seconds
    duration: np.ndarray  # float64, seconds
    preemption_retries: np.ndarray  # float64, NaN = unlimited
    failures: np.ndarray  # int64 (0 or 1)
    fail_after: np.ndarray  # float64, NaN = none
    notes: list[str] = field(default_factory=list)
    #: object: the training plan's name, or None; ``None`` for a workload without plan jobs
    training_plan: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.submit_at.shape[0])

    def names(self) -> list[str]:
        return [f"job-{index:07d}" for index in range(len(self))]

    def name_array(self) -> Any:
        """``names()`` as a pyarrow string array, built in pyarrow (a million f-strings cost most of a second)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        digits = pc.utf8_lpad(pc.cast(pa.array(np.arange(len(self), dtype=np.int64)), pa.string()), 7, "0")
        return pc.binary_join_element_wise("job-", digits, "")

    def jobs(self) -> Iterator[JobSpec]:
        """The jobs as the simulator's ``JobSpec`` (for a scenario that names a profile)."""
        retries, after, plans = self.preemption_retries, self.fail_after, self.training_plan
        for index, name in enumerate(self.names()):
            failures = int(self.failures[index])
            yield JobSpec(name, str(self.share[index]), str(self.instance_type[index]), int(self.instances[index]),
                          int(self.priority[index]), float(self.submit_at[index]), float(self.duration[index]),
                          None if math.isnan(retries[index]) else int(retries[index]), None, 1, failures,
                          None if math.isnan(after[index]) else float(after[index]),
                          None if plans is None else plans[index])


def hourly_multipliers(share: ShareProfile, hours: int) -> np.ndarray:
    """The rate multiplier of each hour from time 0 (a Monday 00:00): daily x weekly cycle, each of mean 1."""
    daily = np.asarray(share.daily_cycle or (1.0,) * HOURS_PER_DAY, dtype=float)
    weekly = np.asarray(share.weekly_cycle or (1.0,) * DAYS_PER_WEEK, dtype=float)
    daily = daily / daily.mean()
    weekly = weekly / weekly.mean()
    index = np.arange(hours)
    return daily[index % HOURS_PER_DAY] * weekly[(index // HOURS_PER_DAY) % DAYS_PER_WEEK]


def draw_run_times(rng: np.random.Generator, run_time: RunTime, count: int) -> np.ndarray:
    """``count`` run times (seconds, at least 1, at most ``maximum``, to 0.1 s) from the law."""
    law = run_time.law
    if isinstance(law, Exponential):
        values = rng.exponential(law.mean, count)
    elif isinstance(law, LogNormal):
        values = rng.lognormal(math.log(law.median), law.sigma, count)
    elif isinstance(law, Pareto):
        values = law.minimum * (1.0 + rng.pareto(law.alpha, count))
    else:
        assert isinstance(law, Empirical)
        qs = np.fromiter(run_time.quantiles.keys(), float)
        logs = np.log(np.fromiter(run_time.quantiles.values(), float))
        values = np.exp(np.interp(rng.random(count), qs, logs))
    np.minimum(values, run_time.maximum if run_time.maximum is not None else MAX_SECONDS, out=values)
    return np.round(np.maximum(values, 1.0), 1)


def _choice(rng: np.random.Generator, weights: Mapping[Any, float], count: int) -> np.ndarray:
    keys = list(weights)
    p = np.fromiter((weights[k] for k in keys), float)
    picked = rng.choice(len(keys), size=count, p=p / p.sum())
    return np.asarray(keys, dtype=object if isinstance(keys[0], str) else np.int64)[picked]


def draw_share(rng: np.random.Generator, share_id: str, share: ShareProfile, types: Mapping[str, float],
               reach: Mapping[tuple[str, str], int], days: float, scale: float = 1.0,
               plans: Mapping[str, PlanClock] | None = None, night: Night | None = None) -> tuple[Columns, list[str]]:
    """One share's jobs over ``days`` (unsorted beyond time), and a note per size no job of it can reach.

    With ``training_plans`` in the share's profile, that part of its jobs then runs on each plan (``plans``: the
    topology's plans on the profile's clock), re-timed, re-sized and re-drawn by ``draw_plan_jobs``."""
    notes: list[str] = []
    horizon = days * SECONDS_PER_DAY
    hours = max(1, math.ceil(days * HOURS_PER_DAY))
    expected = share.jobs_per_day * scale / HOURS_PER_DAY * hourly_multipliers(share, hours)
    sizes_by_type: dict[str, dict[int, float]] = {}
    for instance_type in types:
        most = reach.get((share_id, instance_type), 0)
        kept = {size: w for size, w in share.sizes.items() if w > 0 and size <= most}
        dropped = sorted(size for size, w in share.sizes.items() if w > 0 and size > most)
        if dropped:
            drawn = f"only size(s) {','.join(map(str, sorted(kept)))} are drawn" if kept else "no job is drawn"
            notes.append(f"{share_id} {instance_type}: can reach at most {most} instance(s), so size(s) "
                         f"{','.join(map(str, dropped))} of its profile can never run; {drawn} for it")
        if kept:
            sizes_by_type[instance_type] = kept
    usable = {t: w for t, w in types.items() if t in sizes_by_type and w > 0}
    if not usable or share.jobs_per_day * scale <= 0:
        return _empty(), notes
    hour_index = np.arange(hours)
    if share.bursts is not None and share.bursts.mean_jobs > 1:
        per_burst = share.bursts.mean_jobs
        bursts: np.ndarray = np.asarray(rng.poisson(expected / per_burst))
        starts = (np.repeat(hour_index, bursts) + rng.random(int(bursts.sum()))) * SECONDS_PER_HOUR
        counts: np.ndarray = np.asarray(rng.geometric(1.0 / per_burst, starts.shape[0]))
        burst_types = _choice(rng, usable, starts.shape[0])
        times = np.repeat(starts, counts) + rng.random(int(counts.sum())) * share.bursts.spread
        kinds = np.repeat(burst_types, counts)
    else:
        arrivals: np.ndarray = np.asarray(rng.poisson(expected))
        times = (np.repeat(hour_index, arrivals) + rng.random(int(arrivals.sum()))) * SECONDS_PER_HOUR
        kinds = _choice(rng, usable, times.shape[0])
    keep = times < horizon
    times, kinds = np.round(times[keep], 3), kinds[keep]
    count = times.shape[0]
    instances = np.empty(count, dtype=np.int64)
    for t, sizes in sizes_by_type.items():
        mask: np.ndarray = np.asarray(kinds == t)
        if mask.any():
            instances[mask] = _choice(rng, sizes, int(mask.sum()))
    duration = draw_run_times(rng, share.run_time, count)
    priority = _choice(rng, share.priorities, count)
    failures = np.zeros(count, dtype=np.int64)
    fail_after = np.full(count, np.nan)
    if share.early_failures is not None and share.early_failures.fraction > 0:
        failing: np.ndarray = np.asarray(rng.random(count) < share.early_failures.fraction)
        failures[failing] = 1
        fail_after[failing] = np.round(duration[failing] * share.early_failures.after, 1)
    retries = np.full(count, np.nan if share.preemption_retries is None else float(share.preemption_retries))
    shares = np.full(count, share_id, dtype=object)
    columns = Columns(shares, kinds.astype(object), instances, priority, times, duration, retries, failures,
                      fail_after)
    if share.training_plans:
        columns = _on_plans(rng, columns, share_id, share, reach, days * SECONDS_PER_DAY, plans or {},
                            night or Night(), notes)
    return columns, notes


def _on_plans(rng: np.random.Generator, columns: Columns, share_id: str, share: ShareProfile,
              reach: Mapping[tuple[str, str], int], horizon: float, plans: Mapping[str, PlanClock], night: Night,
              notes: list[str]) -> Columns:
    """Each job goes to a plan with the plan's ``fraction`` (or stays off plans); a plan job is drawn anew by
    ``draw_plan_jobs``, and one no window can take within the horizon is not drawn (a note counts them)."""
    assert share.training_plans is not None
    count = len(columns)
    uses = list(share.training_plans.items())
    edges = np.cumsum([use.fraction for _, use in uses])
    which = np.searchsorted(edges, rng.random(count), side="right")  # len(uses): no plan
    keep = np.ones(count, dtype=bool)
    plan_of = np.full(count, None, dtype=object)
    for position, (name, use) in enumerate(uses):
        rows = np.flatnonzero(which == position)
        if rows.size == 0:
            continue
        plan = plans[name]
        most = reach.get((share_id, plan.instance_type), 0)
        drawn = draw_plan_jobs(rng, use, plan, int(rows.size), horizon, night, most, share.sizes, share.run_time)
        if drawn.dropped:
            notes.append(f"{share_id} {name}: {drawn.dropped} of {rows.size} plan job(s) not drawn: no window of the "
                         f"plan can take them within the {horizon / SECONDS_PER_DAY:g} day(s) (their timing, lead or "
                         f"size; {most} instance(s) reachable)")
        placed, lost = rows[drawn.kept], rows[~drawn.kept]
        keep[lost] = False
        columns.instance_type[placed] = plan.instance_type
        columns.instances[placed] = drawn.sizes
        columns.submit_at[placed] = drawn.times
        columns.duration[placed] = drawn.durations
        failing = placed[columns.failures[placed] > 0]
        if failing.size and share.early_failures is not None:
            columns.fail_after[failing] = np.round(columns.duration[failing] * share.early_failures.after, 1)
        plan_of[placed] = name
    columns.training_plan = plan_of
    if keep.all():
        return columns
    return _columns({name: getattr(columns, name)[keep] for name in _FIELDS}, plan_of[keep])


@dataclass
class PlanDraw:
    """Plan jobs drawn for one share and plan: which were kept (a window could take them), and the kept jobs'
    times, sizes and run times."""

    kept: np.ndarray
    times: np.ndarray
    sizes: np.ndarray
    durations: np.ndarray

    @property
    def dropped(self) -> int:
        return int(self.kept.shape[0] - self.kept.sum())


def draw_plan_jobs(rng: np.random.Generator, use: PlanUse, plan: PlanClock, count: int, horizon: float,
                   night: Night, most: int, share_sizes: Mapping[int, float], share_run_time: RunTime) -> PlanDraw:
    """``count`` jobs on ``plan``: a timing each (``use.timing``), a window where that timing can submit within
    ``[0, horizon)`` and a size of ``use.sizes`` (else the share's) fits (at most the window's instances and
    ``most``, what the share can reach), chosen in proportion to the window's startable instance-hours; then the
    submission time (uniform in the window or its night, or its start minus a drawn lead) and a run time."""
    weights = use.timing_weights()
    kinds = list(weights)
    picked = rng.choice(len(kinds), size=count, p=np.fromiter(weights.values(), float))
    leads = np.zeros(count)
    before = np.flatnonzero(np.asarray([kinds[k] is PlanTiming.BEFORE_WINDOW for k in picked], dtype=bool))
    if before.size:
        assert use.lead is not None  # PlanUse requires it for a before_window weight
        leads[before] = draw_run_times(rng, use.lead, int(before.size))
    sizes = {s: w for s, w in (use.sizes or share_sizes).items() if w > 0}
    windows = plan.windows
    low = np.zeros((count, len(windows)))
    high = np.zeros((count, len(windows)))
    for column, window in enumerate(windows):
        night_low, night_high = window.night(night)
        for code, kind in enumerate(kinds):
            rows = picked == code
            if kind is PlanTiming.INSIDE_WINDOW:
                low[rows, column], high[rows, column] = window.start, window.cutoff
            elif kind is PlanTiming.NIGHT_BEFORE:
                low[rows, column], high[rows, column] = night_low, night_high
            else:
                at = window.start - leads[rows]
                low[rows, column], high[rows, column] = at, at + 1e-9
    low_in, high_in = np.maximum(low, 0.0), np.minimum(high, horizon)
    room = np.asarray([w.instances * (w.cutoff - w.start) if any(s <= min(w.instances, most) for s in sizes) else 0.0
                       for w in windows])
    weight = np.where(high_in > low_in, room[None, :], 0.0) if windows else np.zeros((count, 0))
    total = weight.sum(axis=1) if windows else np.zeros(count)
    kept = total > 0
    chosen = np.zeros(count, dtype=np.int64)
    if kept.any():
        cumulative = np.cumsum(weight[kept], axis=1) / total[kept][:, None]
        chosen[kept] = (rng.random(int(kept.sum()))[:, None] >= cumulative).sum(axis=1)
    index = np.flatnonzero(kept)
    rows = chosen[index]
    start, end = low_in[index, rows], high_in[index, rows]
    is_before = np.isin(index, before)
    times = np.where(is_before, low[index, rows], start + rng.random(index.size) * (end - start))
    drawn = np.empty(index.size, dtype=np.int64)
    for column, window in enumerate(windows):
        mask = rows == column
        if mask.any():
            fitting = {s: w for s, w in sizes.items() if s <= min(window.instances, most)}
            keys = list(fitting)
            p = np.fromiter(fitting.values(), float)
            drawn[mask] = np.asarray(keys, dtype=np.int64)[rng.choice(len(keys), size=int(mask.sum()), p=p / p.sum())]
    durations = draw_run_times(rng, use.run_time or share_run_time, index.size)
    return PlanDraw(kept, np.round(times, 3), drawn, durations)


def _empty() -> Columns:
    nothing = np.empty(0)
    return Columns(np.empty(0, dtype=object), np.empty(0, dtype=object), np.empty(0, dtype=np.int64),
                   np.empty(0, dtype=np.int64), nothing, nothing, nothing, np.empty(0, dtype=np.int64), nothing)


def expected_jobs(profile: ResolvedProfile, days: float, scales: Mapping[str, float] | None = None) -> float:
    """How many jobs the profile submits over ``days`` on average (to refuse a workload too large to draw)."""
    return sum(share.jobs_per_day * (scales or {}).get(sid, 1.0) for sid, share in profile.shares.items()) * days


def draw_workload(topology: Topology, profile: ResolvedProfile, days: float, seed: int,
                  reach: Mapping[tuple[str, str], int], scales: Mapping[str, float] | None = None,
                  start: datetime | None = None) -> Columns:
    """Every share of the profile over ``days``, merged in submission order; ``notes`` says what was narrowed.

    Each share draws from its own stream (seeded by the seed and the share's position), so scaling one
    team leaves the others' jobs as they were. ``start`` is the instant second 0 stands for, what plan windows
    written as dates count from (``plan_timing.default_origin`` when ``None``).
    """
    plans = None
    if any(share.training_plans for share in profile.shares.values()):
        origin = start if start is not None else default_origin(topology, profile.timezone)
        plans = plan_clocks(topology, origin)
    parts: list[Columns] = []
    notes: list[str] = []
    for position, (share_id, share) in enumerate(sorted(profile.shares.items())):
        rng = np.random.default_rng([seed, position])
        scale = (scales or {}).get(share_id, 1.0)
        part, said = draw_share(rng, share_id, share, profile.instance_weights(topology, share_id), reach, days,
                                scale, plans, profile.night)
        parts.append(part)
        notes += said
    merged = _concatenate(parts)
    merged.notes = notes
    return merged


#: The per-job arrays of ``Columns`` but its training plans (``None`` without plan jobs).
_FIELDS = ("share", "instance_type", "instances", "priority", "submit_at", "duration", "preemption_retries",
           "failures", "fail_after")


def _concatenate(parts: Sequence[Columns]) -> Columns:
    if not parts:
        return _empty()
    joined = {name: np.concatenate([getattr(p, name) for p in parts]) for name in _FIELDS}
    order = np.argsort(joined["submit_at"], kind="stable")
    plans = None
    if any(p.training_plan is not None for p in parts):
        plans = np.concatenate([p.training_plan if p.training_plan is not None else np.full(len(p), None, dtype=object)
                                for p in parts])[order]
    return _columns({name: joined[name][order] for name in _FIELDS}, plans)


def _columns(arrays: Mapping[str, np.ndarray], plans: np.ndarray | None) -> Columns:
    """``Columns`` from its per-job arrays (``_FIELDS``) and its plans."""
    a = arrays
    return Columns(a["share"], a["instance_type"], a["instances"], a["priority"], a["submit_at"], a["duration"],
                   a["preemption_retries"], a["failures"], a["fail_after"], training_plan=plans)


def write_columns(path: Path, columns: Columns) -> int:
    """Write the workload as CSV (pyarrow, fast) or JSON Lines, with only the optional columns it uses."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    data: dict[str, pa.Array] = {
        "name": columns.name_array(),
        "share": pa.array(columns.share.tolist(), pa.string()),
        "instance_type": pa.array(columns.instance_type.tolist(), pa.string()),
        "instances": pa.array(columns.instances),
        "priority": pa.array(columns.priority),
        "submit_at": pa.array(columns.submit_at),
        "duration": pa.array(columns.duration),
    }
    assert tuple(data) == CORE_FIELDS, "a job file's core columns follow JobSpec"
    if not np.isnan(columns.preemption_retries).all():
        data["preemption_retries"] = pa.array(columns.preemption_retries, mask=np.isnan(columns.preemption_retries),
                                              type=pa.float64()).cast(pa.int64())
    if columns.failures.any():
        data["failures"] = pa.array(columns.failures)
        data["fail_after"] = pa.array(columns.fail_after, mask=np.isnan(columns.fail_after))
    if columns.training_plan is not None and any(p is not None for p in columns.training_plan.tolist()):
        data["training_plan"] = pa.array(columns.training_plan.tolist(), pa.string())
    table = pa.table(data)
    if path.suffix.lower() == ".csv":
        with open_binary_output(path) as handle:  # the header as the job files' reader and people write it: unquoted
            handle.write((",".join(table.column_names) + "\n").encode())
            pacsv.write_csv(table, handle, pacsv.WriteOptions(include_header=False, quoting_style="needed"))
    else:
        import json

        with open_output(path, buffering=-1) as handle:  # a device or FIFO in place, never replaced or waited on
            for row in table.to_pylist():
                handle.write(json.dumps({k: v for k, v in row.items() if v is not None}, allow_nan=False) + "\n")
    return len(columns)
