"""What the HTML report shows, computed in bulk with numpy: a million jobs become a few hundred bins.

Per share and instance type over time (mean own use, borrowed, lent, idle, waiting jobs and
preemptions per bin), wait-time quantiles per share, the worst-waiting jobs, and per-job
lanes only for a chosen share or time window. The usage step functions come from the
engine's ``UsageLog`` (one entry per change); each metric is integrated once and read at
the bin edges, so the cost is O(changes + shares x bins), never one drawing per job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from policy_engine.simulation.results import SimulationResult

#: Time bins of every chart over time.
BINS = 300
#: Rows of the worst-waiting table.
WORST_JOBS = 200
#: Jobs of a per-job timeline; more are counted and left out, and the page says how many.
MAX_LANES = 1000
METRICS = ("own", "borrowed", "lent", "idle")


@dataclass(frozen=True)
class Series:
    """Per-bin means of one share and instance type (``depth``: waiting jobs; ``preemptions``: a count per bin)."""

    share: str
    instance_type: str
    limit: int
    own: np.ndarray
    borrowed: np.ndarray
    lent: np.ndarray
    idle: np.ndarray
    depth: np.ndarray
    preemptions: np.ndarray


@dataclass(frozen=True)
class WaitStats:
    share: str
    jobs: int
    low: float
    p25: float
    p50: float
    p75: float
    p95: float
    high: float


@dataclass(frozen=True)
class Aggregates:
    edges: np.ndarray  # BINS + 1 bin edges, seconds
    series: list[Series]  # in the log's share order (pool by pool)
    waits: list[WaitStats]  # worst p95 first
    worst: list  # JobRecords, longest wait first


def edges_for(end: float, bins: int = BINS) -> np.ndarray:
    return np.linspace(0.0, end if end > 0 else 1.0, bins + 1)


def _means(knots: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Per-bin time-weighted means of step functions: ``values[k]`` (one column each) holds from ``knots[k]``.

    One cumulative integral per column, read at the bin edges: O(knots + bins), whatever the job count.
    """
    shape = (-1,) + (1,) * (values.ndim - 1)
    dt = np.diff(knots, append=max(edges[-1], knots[-1])).reshape(shape)
    cumulative = np.cumsum(values * dt, axis=0) - values * dt  # the integral up to each knot
    k = np.clip(np.searchsorted(knots, edges, side="right") - 1, 0, len(knots) - 1)
    at = cumulative[k] + values[k] * (edges - knots[k]).reshape(shape)
    return np.diff(at, axis=0) / np.diff(edges).reshape(shape)


def _usage(result: SimulationResult, edges: np.ndarray) -> dict[int, dict[str, np.ndarray]]:
    """``share number -> metric -> per-bin means`` from the usage log, one pool at a time (lending is per pool)."""
    log = result.usage
    shares = log.shares
    times = np.frombuffer(log.times, dtype=np.float64)
    who = np.frombuffer(log.who, dtype=np.int64)
    used = np.frombuffer(log.used, dtype=np.int64)
    pool_of = np.array([s.pool for s in shares], dtype=np.int64)
    members: dict[int, list[int]] = {}
    for number, s in enumerate(shares):
        members.setdefault(s.pool, []).append(number)
    order = np.argsort(pool_of[who], kind="stable") if len(who) else np.array([], dtype=np.int64)
    sorted_pools = pool_of[who][order]
    out: dict[int, dict[str, np.ndarray]] = {}
    for pool, numbers in members.items():
        lo, hi = np.searchsorted(sorted_pools, [pool, pool + 1])
        picked = order[lo:hi]
        local = np.full(len(shares), -1, dtype=np.int64)
        local[numbers] = np.arange(len(numbers))
        columns = local[who[picked]]
        count = len(picked) + 1
        # forward fill: row k holds every share's usage after the k-th change of the pool (row 0: all idle)
        filled = np.zeros((count, len(numbers)), dtype=np.int64)
        latest = np.zeros((count, len(numbers)), dtype=np.int64)
        rows = np.arange(1, count)
        filled[rows, columns] = used[picked]
        latest[rows, columns] = rows
        np.maximum.accumulate(latest, axis=0, out=latest)
        usage = np.take_along_axis(filled, latest, axis=0).astype(np.float64)
        knots = np.concatenate([[0.0], times[picked]])
        limits = np.array([shares[n].limit for n in numbers], dtype=np.float64)
        lends = np.array([shares[n].lends for n in numbers], dtype=bool)
        own = np.minimum(usage, limits)
        borrowed = np.maximum(usage - limits, 0.0)
        idle = np.maximum(limits - usage, 0.0)
        lender_idle = (idle * lends).sum(axis=1)
        ratio = np.divide(borrowed.sum(axis=1), lender_idle, out=np.zeros(count), where=lender_idle > 0)
        lent = idle * lends * np.minimum(ratio, 1.0)[:, None]
        stacked = np.stack([own, borrowed, lent, idle - lent], axis=-1)  # (changes, shares, metrics)
        means = _means(knots, stacked, edges)
        for column, number in enumerate(numbers):
            out[number] = {name: means[:, column, i] for i, name in enumerate(METRICS)}
    return out


def _depth_and_preemptions(result: SimulationResult, number_of: dict, edges: np.ndarray, count: int):
    """Waiting jobs (mean per bin) and preemptions (per bin) of every share number, from the job records."""
    times: list[float] = []
    who: list[int] = []
    deltas: list[int] = []
    preempted_at: list[float] = []
    preempted_who: list[int] = []
    for record in result.jobs:
        number = number_of.get((record.share, record.instance_type))
        if number is None:
            continue
        waiting_since = record.submitted_at
        for attempt in record.attempts:
            times += (waiting_since, attempt.start)
            who += (number, number)
            deltas += (1, -1)
            waiting_since = attempt.end
            if attempt.outcome == "preempted":
                preempted_at.append(attempt.end)
                preempted_who.append(number)
        if record.status == "RUNNABLE":  # still waiting at the report time
            times.append(waiting_since)
            who.append(number)
            deltas.append(1)
        elif record.status == "FAILED" and record.finished_at is not None and record.finished_at > waiting_since:
            # left the line without running (again): terminated by a time limit while waiting
            times += (waiting_since, record.finished_at)
            who += (number, number)
            deltas += (1, -1)
    bins = len(edges) - 1
    depth = np.zeros((count, bins))
    if times:
        t = np.array(times)
        w = np.array(who, dtype=np.int64)
        d = np.array(deltas, dtype=np.float64)
        order = np.lexsort((t, w))
        t, w, d = t[order], w[order], d[order]
        bounds = np.searchsorted(w, np.arange(count + 1))
        for number in range(count):
            lo, hi = bounds[number], bounds[number + 1]
            if lo == hi:
                continue
            knots = np.concatenate([[0.0], t[lo:hi]])
            values = np.concatenate([[0.0], np.cumsum(d[lo:hi])])
            depth[number] = _means(knots, values, edges)
    preemptions = np.zeros((count, bins))
    if preempted_at:
        index = np.clip(np.searchsorted(edges, np.array(preempted_at), side="right") - 1, 0, bins - 1)
        np.add.at(preemptions, (np.array(preempted_who, dtype=np.int64), index), 1)
    return depth, preemptions


def _waits(result: SimulationResult) -> list[WaitStats]:
    by_share: dict[str, list[float]] = {}
    for record in result.jobs:
        by_share.setdefault(record.share, []).append(record.wait_seconds)
    stats = []
    for share, waits in by_share.items():
        values = np.asarray(waits)
        low, p25, p50, p75, p95, high = np.percentile(values, [0, 25, 50, 75, 95, 100], method="inverted_cdf")
        stats.append(WaitStats(share, len(waits), float(low), float(p25), float(p50), float(p75), float(p95),
                               float(high)))
    stats.sort(key=lambda s: (-s.p95, -s.high, s.share))
    return stats


def worst_waiting(result: SimulationResult, count: int = WORST_JOBS) -> list:
    """The ``count`` jobs that waited longest (ties in workload order)."""
    if not result.jobs:
        return []
    waits = np.fromiter((record.wait_seconds for record in result.jobs), dtype=np.float64, count=len(result.jobs))
    return [result.jobs[i] for i in np.argsort(-waits, kind="stable")[:count].tolist()]


def aggregate(result: SimulationResult, bins: int = BINS) -> Aggregates:
    """Everything the report's charts and tables need (the run must have ``usage_log=True``)."""
    if result.usage is None:
        raise ValueError("the simulation was run without SimulationSettings(usage_log=True)")
    edges = edges_for(result.time, bins)
    shares = result.usage.shares
    number_of = {(s.share, s.instance_type): n for n, s in enumerate(shares)}
    usage = _usage(result, edges)
    depth, preemptions = _depth_and_preemptions(result, number_of, edges, len(shares))
    series = [Series(s.share, s.instance_type, s.limit, *(usage[n][m] for m in METRICS), depth[n], preemptions[n])
              for n, s in enumerate(shares)]
    return Aggregates(edges, series, _waits(result), worst_waiting(result))


@dataclass(frozen=True)
class Lanes:
    """Per-job rows of a chosen share and/or window: ``rows`` (job, start, end, state) and what was left out."""

    rows: list[dict]
    jobs: int  # jobs shown
    matched: int  # jobs that matched the choice


def lanes(result: SimulationResult, share: str | None, window: tuple[float, float] | None,
          limit: int = MAX_LANES) -> Lanes:
    """One lane per job of ``share`` (all when ``None``) alive during ``window`` (the whole run when ``None``)."""
    start, end = window if window is not None else (0.0, result.time)
    rows: list[dict] = []
    shown = matched = 0
    for record in result.jobs:
        if share is not None and record.share != share:
            continue
        finished = record.finished_at if record.finished_at is not None else result.time
        if record.submitted_at > end or finished < start:
            continue
        matched += 1
        if shown >= limit:
            continue
        shown += 1
        waiting_since = record.submitted_at
        label = f"{record.name} ({record.share}, p{record.priority}, {record.instances}x)"
        for attempt in record.attempts:
            if attempt.start > waiting_since:
                rows.append({"job": label, "order": shown, "start": waiting_since, "end": attempt.start,
                             "state": "waiting", "outcome": "", "reason": ""})
            stop = result.time if attempt.end is None else attempt.end
            rows.append({"job": label, "order": shown, "start": attempt.start, "end": stop,
                         "state": "borrowed" if attempt.borrowed else "own", "outcome": attempt.outcome,
                         "reason": ""})
            waiting_since = stop
        if record.status in ("RUNNABLE", "FAILED") and (record.finished_at or result.time) > waiting_since:
            rows.append({"job": label, "order": shown, "start": waiting_since,
                         "end": record.finished_at if record.finished_at is not None else result.time,
                         "state": "waiting", "outcome": record.status, "reason": record.reason})
    return Lanes(rows, shown, matched)
