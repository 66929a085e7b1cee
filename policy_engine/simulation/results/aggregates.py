"""What the HTML report shows, computed in bulk with numpy: a million jobs become a few hundred bins.

Per share and instance type over time (mean own use, borrowed, lent, idle, waiting jobs and
preemptions per bin), wait-time quantiles per share, the worst-waiting jobs, and per-job
lanes only for a chosen share or time window. The usage step functions come from the
engine's ``UsageLog`` (one entry per change); each metric is integrated once and read at
the bin edges, so the cost is O(changes + shares x bins), never one drawing per job.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np

from policy_engine.simulation.core.jobs import ACTIVE, PREEMPTED, Status
from policy_engine.simulation.core.jobs import attempts as all_attempts
from policy_engine.simulation.results.records import JobRecord, SimulationResult, job_timelines, job_waits
from policy_engine.simulation.usage import UsageLog

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
    #: ``(time, limit)`` of each later change of the own limit (``update_share``), in time order.
    later_limits: tuple[tuple[float, int], ...] = ()


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
    worst: list[JobRecord]  # longest wait first


def time_unit(end: float) -> tuple[float, str]:
    """The unit that reads best for a span of ``end`` seconds: days, hours, minutes or seconds."""
    for seconds, name in ((86400.0, "days"), (3600.0, "hours"), (60.0, "minutes")):
        if end >= 3 * seconds:
            return seconds, name
    return 1.0, "seconds"


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


def _entries(log: UsageLog) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every log entry as ``(times, who, used, limit, lends)``, each with the own limit in force at its time.

    A limit change (``update_share``) adds an entry at its time with the share's use then, so each
    share's step functions change exactly when its limit does. Without changes the log is read as is.
    """
    times, who, used = log.columns()
    who, used = who.astype(np.int64), used.astype(np.float64)
    limits = np.array([s.limit for s in log.shares], dtype=np.float64)
    lends = np.array([s.lends for s in log.shares], dtype=bool)
    if not log.limit_changes:
        return times, who, used, limits[who], lends[who]
    changes = sorted(log.limit_changes, key=lambda c: (c.number, c.time))  # stable: same instant, last one wins
    by_share = np.argsort(who, kind="stable")
    bounds = np.searchsorted(who[by_share], np.arange(len(log.shares) + 1))
    extra_t, extra_who, extra_used = [], [], []
    for change in changes:
        picked = by_share[bounds[change.number]:bounds[change.number + 1]]
        last = int(np.searchsorted(times[picked], change.time, side="right")) - 1
        extra_t.append(change.time)
        extra_who.append(change.number)
        extra_used.append(float(used[picked[last]]) if last >= 0 else 0.0)
    times = np.concatenate([times, extra_t])
    who = np.concatenate([who, np.array(extra_who, dtype=np.int64)])
    used = np.concatenate([used, extra_used])
    late = np.concatenate([np.zeros(len(log.times), dtype=bool), np.ones(len(changes), dtype=bool)])
    order = np.lexsort((late, times))  # chronological; at one instant the change's entry comes last
    times, who, used = times[order], who[order], used[order]
    limit, lend = limits[who], lends[who]
    for number in sorted({c.number for c in changes}):
        mine = [c for c in changes if c.number == number]
        at = np.flatnonzero(who == number)
        k = np.searchsorted(np.array([c.time for c in mine]), times[at], side="right") - 1
        now = k >= 0
        limit[at[now]] = np.array([c.limit for c in mine], dtype=np.float64)[k[now]]
        lend[at[now]] = np.array([c.lends for c in mine], dtype=bool)[k[now]]
    return times, who, used, limit, lend


def _usage(log: UsageLog, edges: np.ndarray) -> dict[int, dict[str, np.ndarray]]:
    """``share number -> metric -> per-bin means`` from the usage log, in O(changes log changes + shares x bins).

    Own use, borrowed and idle of a share change only at its own log entries, under the own limit
    in force then. Lending is attributed as the engine does (``capacity.Pool``): a lender's idle
    instances times the pool's borrowed / lender-idle ratio, integrated through that ratio's
    running integral, so no changes x shares matrix is ever built.
    """
    shares = log.shares
    times, who, used, limit, lends = _entries(log)
    start_limits = np.array([s.limit for s in shares], dtype=np.float64)
    start_lends = np.array([s.lends for s in shares], dtype=bool)
    pool_of = np.array([s.pool for s in shares], dtype=np.int64)
    end = max(edges[-1], times[-1] if len(times) else 0.0)
    borrowed_now = np.maximum(used - limit, 0)
    idle_now = np.maximum(limit - used, 0) * lends
    # each entry's share as it was before the entry: the share's previous entry, or idle at its starting limit
    by_share = np.argsort(who, kind="stable")
    grouped = who[by_share]
    first = np.ones(len(grouped), dtype=bool)
    first[1:] = grouped[1:] != grouped[:-1]
    borrowed_before = np.empty_like(used)
    idle_before = np.empty_like(used)
    borrowed_before[by_share] = np.where(first, 0.0, np.roll(borrowed_now[by_share], 1))
    idle_before[by_share] = np.where(first, (start_limits * start_lends)[grouped], np.roll(idle_now[by_share], 1))
    borrowed_delta = borrowed_now - borrowed_before
    idle_delta = idle_now - idle_before
    # per pool: the running integral R of borrowed / lender-idle, as a piecewise-linear function of time
    ratio_integral: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    by_pool = np.argsort(pool_of[who], kind="stable")
    pools_sorted = pool_of[who][by_pool]
    for pool in np.unique(pool_of):
        lo, hi = np.searchsorted(pools_sorted, [pool, pool + 1])
        picked = by_pool[lo:hi]
        knots = np.concatenate([[0.0], times[picked], [end]])
        borrowed = np.concatenate([[0.0], np.cumsum(borrowed_delta[picked])])
        starting_idle = (start_limits * start_lends)[pool_of == pool].sum()
        lender_idle = starting_idle + np.concatenate([[0.0], np.cumsum(idle_delta[picked])])
        ratio = np.divide(borrowed, lender_idle, out=np.zeros_like(borrowed), where=lender_idle > 0)
        ratio_integral[int(pool)] = (knots, np.concatenate([[0.0], np.cumsum(ratio * np.diff(knots))]))
    out: dict[int, dict[str, np.ndarray]] = {}
    bounds = np.searchsorted(grouped, np.arange(len(shares) + 1))
    for number, share in enumerate(shares):
        picked = by_share[bounds[number]:bounds[number + 1]]
        knots = np.concatenate([[0.0], times[picked]])
        usage = np.concatenate([[0.0], used[picked]])
        in_force = np.concatenate([[share.limit], limit[picked]])
        lending = np.concatenate([[share.lends], lends[picked]])
        own = np.minimum(usage, in_force)
        idle = in_force - own
        means = _means(knots, np.stack([own, np.maximum(usage - in_force, 0), idle], axis=1), edges)
        lent = np.zeros(len(edges) - 1)
        if lending.any():
            lendable = idle * lending
            pool_knots, pool_integral = ratio_integral[share.pool]
            at_knots = np.interp(knots, pool_knots, pool_integral)
            at_edges = np.interp(edges, pool_knots, pool_integral)
            lent_knots = np.concatenate([[0.0], np.cumsum(lendable[:-1] * np.diff(at_knots))])
            k = np.clip(np.searchsorted(knots, edges, side="right") - 1, 0, len(knots) - 1)
            lent_edges = lent_knots[k] + lendable[k] * (at_edges - at_knots[k])
            lent = np.diff(lent_edges) / np.diff(edges)
        out[number] = {"own": means[:, 0], "borrowed": means[:, 1], "lent": lent, "idle": means[:, 2] - lent}
    return out


@dataclass(frozen=True)
class _Scan:
    """What one pass over the job records found: entries into and exits from each share's line, preemptions, waits."""

    enter: np.ndarray
    enter_who: np.ndarray
    leave: np.ndarray
    leave_who: np.ndarray
    preempted: np.ndarray
    preempted_who: np.ndarray
    waits: np.ndarray
    wait_share: np.ndarray  # index into ``shares``
    shares: list[str]


def _scan(result: SimulationResult, number_of: dict[tuple[str, str], int]) -> _Scan:
    """One pass over the job records: when each job entered and left its line, preemptions, waits per share."""
    # typed arrays, not lists: a million entries are 8 bytes each, not a pointer plus an int object
    enter, enter_who, leave, leave_who = array("d"), array("q"), array("d"), array("q")
    preempted, preempted_who, waits, wait_share = array("d"), array("q"), array("d"), array("q")
    add_enter, add_enter_who, add_leave, add_leave_who = enter.append, enter_who.append, leave.append, leave_who.append
    add_wait, add_wait_share = waits.append, wait_share.append
    share_index: dict[str, int] = {}
    lookup, index_of = number_of.get, share_index.setdefault
    # from each job's timeline (what its record's attempts are built from), without building the record
    for (spec, _, status, finished, ended, attempt_start, borrowed), wait in zip(
            job_timelines(result.jobs), job_waits(result.jobs).tolist(), strict=True):
        share = spec.share
        number = lookup((share, spec.instance_type))
        add_wait(wait)
        add_wait_share(index_of(share, len(share_index)))
        if number is None:
            continue
        submitted = spec.submit_at
        add_enter(submitted)
        add_enter_who(number)
        # the common job: one wait, one stay on capacity (its last attempt, succeeded or running; or one that
        # ended, not preempted, and it is not waiting again)
        last_is_on = status is Status.SUCCEEDED or status in ACTIVE  # ``attempts`` adds that last one to ``ended``
        if not ended and last_is_on:
            add_leave(attempt_start)
            add_leave_who(number)
            continue
        if len(ended) == 1 and not last_is_on and status is not Status.RUNNABLE and ended[0].outcome != PREEMPTED:
            add_leave(ended[0][0])
            add_leave_who(number)
            continue
        attempts = all_attempts(ended, status, attempt_start, finished, borrowed)
        waiting_since: float | None = submitted
        for index, (start, end, outcome, *_) in enumerate(attempts):
            add_leave(start)
            add_leave_who(number)
            if outcome == "preempted" and end is not None:
                preempted.append(end)
                preempted_who.append(number)
            if end is not None and (index + 1 < len(attempts) or status == "RUNNABLE"):
                add_enter(end)  # back in the line: preempted, or a failed attempt to be retried
                add_enter_who(number)
            waiting_since = end
        if status == "FAILED" and finished is not None and waiting_since is not None:
            if not attempts:  # rejected on submission, or terminated by a time limit before it ever ran
                add_leave(finished)
                add_leave_who(number)
            elif finished > waiting_since:  # back in the line, then terminated by a time limit
                add_enter(waiting_since)
                add_enter_who(number)
                add_leave(finished)
                add_leave_who(number)
    return _Scan(_floats(enter), _ints(enter_who), _floats(leave), _ints(leave_who), _floats(preempted),
                 _ints(preempted_who), _floats(waits), _ints(wait_share), list(share_index))


def _floats(values: array[float]) -> np.ndarray:
    return np.frombuffer(values, dtype=np.float64)


def _ints(values: array[int]) -> np.ndarray:
    return np.frombuffer(values, dtype=np.int64)


def _depth_and_preemptions(scan: _Scan, edges: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Waiting jobs (mean per bin) and preemptions (per bin) of every share number, without sorting the events.

    A job that enters the line at ``t`` in bin ``k`` adds ``edges[k + 1] - t`` waiting seconds to bin
    ``k`` and a whole bin to every later one (leaving subtracts the same): two ``bincount``s and a
    cumulative sum per share give every bin's waiting-seconds, O(events + shares x bins).
    """
    bins = len(edges) - 1
    width = np.diff(edges)
    t = np.concatenate([scan.enter, scan.leave])
    w = np.concatenate([scan.enter_who, scan.leave_who])
    d = np.concatenate([np.ones(len(scan.enter)), -np.ones(len(scan.leave))])
    inside = t < edges[-1]
    t, w, d = t[inside], w[inside], d[inside]
    k = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1)
    flat = w * bins + k
    entered = np.bincount(flat, weights=d, minlength=count * bins).reshape(count, bins)
    partial = np.bincount(flat, weights=d * (edges[k + 1] - t), minlength=count * bins).reshape(count, bins)
    earlier = np.cumsum(entered, axis=1) - entered  # in the line since an earlier bin: the whole bin
    depth = (partial + earlier * width) / width
    preemptions = np.zeros((count, bins))
    if len(scan.preempted):
        index = np.clip(np.searchsorted(edges, scan.preempted, side="right") - 1, 0, bins - 1)
        np.add.at(preemptions, (scan.preempted_who, index), 1)
    return depth, preemptions


def _waits(scan: _Scan) -> list[WaitStats]:
    stats = []
    order = np.argsort(scan.wait_share, kind="stable")
    grouped = scan.wait_share[order]
    bounds = np.searchsorted(grouped, np.arange(len(scan.shares) + 1))
    for index, share in enumerate(scan.shares):
        values = scan.waits[order[bounds[index]:bounds[index + 1]]]
        low, p25, p50, p75, p95, high = np.percentile(values, [0, 25, 50, 75, 95, 100], method="inverted_cdf")
        stats.append(WaitStats(share, len(values), float(low), float(p25), float(p50), float(p75), float(p95),
                               float(high)))
    stats.sort(key=lambda s: (-s.p95, -s.high, s.share))
    return stats


def worst_waiting(result: SimulationResult, count: int = WORST_JOBS,
                  waits: np.ndarray | None = None) -> list[JobRecord]:
    """The ``count`` jobs that waited longest (ties in workload order); ``waits``: their waits, when known."""
    return [result.jobs[i] for i in worst_indices(result, count, waits)]


def worst_indices(result: SimulationResult, count: int = WORST_JOBS, waits: np.ndarray | None = None) -> list[int]:
    """Where in ``result.jobs`` the ``count`` jobs that waited longest are (``worst_waiting``'s order)."""
    if not result.jobs:
        return []
    if waits is None:
        waits = job_waits(result.jobs)
    return np.argsort(-waits, kind="stable")[:count].tolist()


def aggregate(result: SimulationResult, bins: int = BINS) -> Aggregates:
    """Everything the report's charts and tables need (the run must have ``usage_log=True``)."""
    if result.usage is None:
        raise ValueError("the simulation was run without SimulationSettings(usage_log=True)")
    edges = edges_for(result.time, bins)
    shares = result.usage.shares
    number_of = {(s.share, s.instance_type): n for n, s in enumerate(shares)}
    usage = _usage(result.usage, edges)
    scan = _scan(result, number_of)
    depth, preemptions = _depth_and_preemptions(scan, edges, len(shares))
    later: dict[int, list[tuple[float, int]]] = {}
    for change in sorted(result.usage.limit_changes, key=lambda c: c.time):
        steps = later.setdefault(change.number, [])
        if change.limit != (steps[-1][1] if steps else shares[change.number].limit):
            steps.append((change.time, change.limit))
    series = [Series(s.share, s.instance_type, s.limit, usage[n]["own"], usage[n]["borrowed"], usage[n]["lent"],
                     usage[n]["idle"], depth[n], preemptions[n], tuple(later.get(n, ()))) for n, s in enumerate(shares)]
    return Aggregates(edges, series, _waits(scan), worst_waiting(result, waits=scan.waits))


@dataclass(frozen=True)
class Lanes:
    """Per-job rows of a chosen share and/or window: ``rows`` (job, start, end, state) and what was left out."""

    rows: list[dict[str, Any]]
    jobs: int  # jobs shown
    matched: int  # jobs that matched the choice


def lanes(result: SimulationResult, share: str | None, window: tuple[float, float] | None,
          limit: int = MAX_LANES) -> Lanes:
    """One lane per job of ``share`` (all when ``None``) alive during ``window`` (the whole run when ``None``)."""
    start, end = window if window is not None else (0.0, result.time)
    rows: list[dict[str, Any]] = []
    shown = matched = 0
    # a plan job's SCHEDULED wait for an instance of its plan, from its placement: held for plan, not own use
    holds: dict[tuple[str, float], float] = {}
    for plan in result.plans.plans if result.plans is not None else ():
        for hold in plan.holds:
            holds[(hold.job, hold.start)] = hold.end
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
            placed = attempt.start
            held_until = holds.get((record.name, placed)) if holds else None
            if held_until is not None and held_until > placed:
                rows.append({"job": label, "order": shown, "start": placed, "end": held_until,
                             "state": "held for plan", "outcome": "", "reason": ""})
                placed = held_until
            if stop > placed or placed == attempt.start:
                rows.append({"job": label, "order": shown, "start": placed, "end": stop,
                             "state": "borrowed" if attempt.borrowed else "own", "outcome": attempt.outcome,
                             "reason": ""})
            waiting_since = stop
        if record.status in ("RUNNABLE", "FAILED") and (record.finished_at or result.time) > waiting_since:
            rows.append({"job": label, "order": shown, "start": waiting_since,
                         "end": record.finished_at if record.finished_at is not None else result.time,
                         "state": "waiting", "outcome": record.status, "reason": record.reason})
    return Lanes(rows, shown, matched)


def held_for_plan(result: SimulationResult, edges: np.ndarray) -> dict[tuple[str, str], np.ndarray]:
    """Per share and instance type, the mean instances per bin its SCHEDULED plan jobs held while they waited for
    an instance of their plan (``plan_windows.Hold``): quota held, not own use."""
    if result.plans is None:
        return {}
    out: dict[tuple[str, str], np.ndarray] = {}
    for plan in result.plans.plans:
        by_share: dict[str, list[tuple[float, float, int]]] = {}
        for hold in plan.holds:
            if hold.end > hold.start:
                by_share.setdefault(hold.share, []).append((hold.start, hold.end, hold.instances))
        for share, holds in by_share.items():
            times = np.array([t for start, end, _ in holds for t in (start, end)], dtype=np.float64)
            deltas = np.array([d for _, _, n in holds for d in (n, -n)], dtype=np.float64)
            order = np.argsort(times, kind="stable")
            times, deltas = times[order], deltas[order]
            level = np.cumsum(deltas)  # instances held after each change
            # the integral of the held instances at each change: a piecewise-linear function of time
            integral = np.concatenate(([0.0], np.cumsum(level[:-1] * np.diff(times))))
            at_edges = np.interp(edges, times, integral, left=0.0, right=float(integral[-1]))
            widths = np.diff(edges)
            key = (share, plan.instance_type)
            held = np.divide(np.diff(at_edges), widths, out=np.zeros(len(widths)), where=widths > 0)
            out[key] = out.get(key, np.zeros(len(widths))) + held
    return out


def split_held(own: np.ndarray, borrowed: np.ndarray, held: np.ndarray | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Own use and borrowed less the quota held for a plan (taken from own use first), and the held part."""
    if held is None:
        return own, borrowed, np.zeros(len(own))
    from_own = np.minimum(own, held)
    from_borrowed = np.minimum(borrowed, held - from_own)
    return own - from_own, borrowed - from_borrowed, from_own + from_borrowed
