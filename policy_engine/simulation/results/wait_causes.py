"""Why jobs waited: every waiting second of a finished run charged to one cause, per share and per job.

Worked out after the run, from the usage log and the job records, never on the scheduler's hot path
(docs/simulator.md, "Why jobs waited"). A job waits from its submission to its first placement, and
again from every preempted or failed attempt to the next one (or to its end, or the report time). One
sweep over time replays the usage log through fresh pools (``core.capacity.build_pools``: the engine's
own counters, so "idle", "lendable" and "borrowed" mean what they mean to the scheduler), keeps every
line's waiting jobs in line order (priority, then submission), and asks of each head what
``reasons.waiting`` asks: within its limit (then the environment is full, or a reclaim is under way),
able to borrow (nothing lendable, or lendable capacity taken by earlier borrowers), or at its limit.
Every other waiting job of the line is behind its head. Beside that state, a job may be misconfigured,
requeued after a preemption, or waiting for the time-limit action that ended it; an ``AttributionOrder``
(``wait_orders``) picks the one cause each second is charged to.

Not followed (documented): an environment's capacity changed mid-run (the topology's is used), a
borrow ceiling changed by ``update_share`` (limits and strategies are followed), priorities changed while
a job waited (its final priority orders its line), and in-share preemption held up by protected victims
(a head at its limit counts as at its limit).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from policy_engine.simulation.causes import WAIT_CAUSES, Cause
from policy_engine.simulation.core import placement, wait_sweep
from policy_engine.simulation.core.capacity import build_pools
from policy_engine.simulation.core.jobs import CAPACITY_INSUFFICIENT
from policy_engine.simulation.results.records import job_timelines
from policy_engine.simulation.results.wait_orders import DEFAULT_ORDER, ORDERS, AttributionOrder
from policy_engine.simulation.time_limits import queue_actions

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.results.records import SimulationResult

#: How close a head's stint must come to an action's ``maxTimeSeconds`` to be the one that action ended
#: (relative; the two are the same sum of floats taken in another order).
_TIMER_TOLERANCE = 1e-9


class CauseContext(NamedTuple):
    """What the pool looked like while a share's heads waited for one cause (time-weighted means)."""

    head_seconds: float  # seconds a head of the share waited for this cause
    needs: float  # instances the head needed
    lendable: float  # lendable idle instances not borrowed (``Pool.free_lendable``)
    lender_idle: float  # idle owned capacity of the lenders, borrowed or not
    environment_idle: float  # idle instances of the environment
    used: float  # instances the share used


class Blocker(NamedTuple):
    """The head that held most of a line's behind-head seconds, and what it waited for meanwhile."""

    name: str
    instances: int
    seconds: float  # waiting seconds of the jobs behind it, while it was the head
    cause: Cause  # what it waited for most of the time it blocked the line
    context: CauseContext  # the pool meanwhile (while it blocked for ``cause``)


def _context(sums: list[float]) -> CauseContext:
    """Time-weighted means from the sums the sweep keeps (``sums[0]`` is the time)."""
    span = sums[0]
    return CauseContext(span, *(value / span for value in sums[1:]))


@dataclass(frozen=True)
class ShareWaits:
    """One share's waiting seconds on one instance type, by cause (``sum(by_cause) == wait_seconds``)."""

    share: str
    instance_type: str
    strategy: str
    limit: int
    ceiling: int | None
    jobs_waited: int
    wait_seconds: float
    by_cause: dict[Cause, float]
    #: seconds of the jobs behind a head, by what that head waited for meanwhile
    behind_by_head_cause: dict[Cause, float] = field(default_factory=dict)
    blocker: Blocker | None = None
    #: per head cause, the pool's state while it held
    context: dict[Cause, CauseContext] = field(default_factory=dict)
    #: per cause, the jobs that had a waiting second charged to it
    jobs_by_cause: dict[Cause, int] = field(default_factory=dict)
    #: attempts of the share preempted (reclaim takes borrowed ones, in-share preemption own ones)
    preempted_borrowed: int = 0
    preempted_own: int = 0
    misconfigured_jobs: int = 0
    largest_misconfigured: int = 0
    time_limited_jobs: int = 0

    def to_json(self) -> dict:
        """Seconds as numbers, causes by their enum values, every waiting cause present (0 when none)."""
        return {"share": self.share, "instance_type": self.instance_type, "jobs_waited": self.jobs_waited,
                "wait_seconds": self.wait_seconds,
                "by_cause": {cause.value: self.by_cause.get(cause, 0.0) for cause in WAIT_CAUSES},
                "jobs_by_cause": {cause.value: self.jobs_by_cause.get(cause, 0) for cause in WAIT_CAUSES}}


@dataclass(frozen=True)
class WaitCauses:
    """The attribution of a run: per share (topology order) and, per job record, the cause it waited longest for."""

    order: str
    shares: list[ShareWaits]
    #: in ``result.jobs`` order; ``None`` for a job that never waited
    job_causes: Sequence[Cause | None]

    def share(self, share: str, instance_type: str | None = None) -> list[ShareWaits]:
        return [s for s in self.shares if s.share == share and instance_type in (None, s.instance_type)]

    def to_json(self) -> dict:
        return {"attribution": self.order, "shares": [s.to_json() for s in self.shares]}


#: the charged causes numbered as ``WAIT_CAUSES`` lists them, and the sweep's head causes among them
_NUMBER = {cause: number for number, cause in enumerate(WAIT_CAUSES)}
_HEAD_NUMBER = np.array([_NUMBER[cause] for cause in wait_sweep.HEAD_CAUSES], dtype=np.int64)
_BEHIND = _NUMBER[Cause.BEHIND_HEAD]


def attribute(result: SimulationResult, topology: Topology, order: AttributionOrder | str = DEFAULT_ORDER
              ) -> WaitCauses:
    """Charge every waiting second of ``result`` (run on ``topology`` with ``usage_log=True``) to one cause."""
    if result.usage is None:
        raise ValueError("the simulation was run without SimulationSettings(usage_log=True)")
    policy = ORDERS[order] if isinstance(order, str) else order
    pools = build_pools(topology)
    sweep = wait_sweep.Sweep(pools)
    line_of = {(line.share.share_id, line.share.instance_type): line.number for line in sweep.lines}
    waits = wait_sweep.read_waits(job_timelines(result.jobs), line_of, len(sweep.lines), result.time)
    job = np.array(waits.job, dtype=np.int64)
    line = np.array(waits.line, dtype=np.int64)
    needs = np.array(waits.needs, dtype=np.int64)
    # misconfigured: asked once per line and size among the jobs that waited
    misconfigured: dict[int, str] = {}
    first = _firsts(job)  # each job's first stretch (a job's stretches are together)
    if len(job):
        sizes = int(needs.max()) + 1
        pairs, inverse = np.unique(line[first] * sizes + needs[first], return_inverse=True)
        reasons = [placement.misconfiguration(sweep.lines[number].share.pool, sweep.lines[number].share, size)
                   for number, size in zip((pairs // sizes).tolist(), (pairs % sizes).tolist(), strict=True)]
        for position in np.flatnonzero(np.array([bool(reason) for reason in reasons])[inverse.ravel()]).tolist():
            misconfigured[int(job[first[position]])] = reasons[int(inverse.ravel()[position])]
    bad = np.zeros(len(job), dtype=bool)  # per stretch
    if misconfigured:
        bad = np.isin(job, np.fromiter(misconfigured, dtype=np.int64))
    # --- one sweep over time: usage changes, limit changes, stretches starting and ending ------------------------
    log = result.usage
    logged_line = np.array([line_of[(s.share, s.instance_type)] for s in log.shares], dtype=np.int64)
    start = np.array(waits.start, dtype=np.float64)
    end = np.array(waits.end, dtype=np.float64)
    # a line's order (priority, then submission, then workload order; a job's own stretches by their start) as one
    # rank per stretch, so that the sweep's heaps compare integers (the stretches are in workload order, a job's by
    # their start: the sort, stable, keeps that order among equals)
    by_rank = np.lexsort((np.array(waits.submitted, dtype=np.float64), -np.array(waits.priority, dtype=np.int64)))
    rank = np.empty(len(job), dtype=np.int64)
    rank[by_rank] = np.arange(len(job))
    sweep.add_stretches(waits.line, waits.start, waits.end, waits.needs, bad.tolist(), rank.tolist())
    times = np.frombuffer(log.times, dtype=np.float64) if len(log) else np.empty(0)
    who = logged_line[np.frombuffer(log.who, dtype=np.int64)] if len(log) else np.empty(0, dtype=np.int64)
    used = np.frombuffer(log.used, dtype=np.int64) if len(log) else np.empty(0, dtype=np.int64)
    if len(times) and np.any(times[1:] < times[:-1]):  # logs of runs in parallel, merged: one after the other
        chronological = np.argsort(times, kind="stable")
        times, who, used = times[chronological], who[chronological], used[chronological]
    changes = sorted(((c.time, int(logged_line[c.number]), c.limit, c.lends) for c in log.limit_changes),
                     key=lambda change: change[0])
    wait_sweep.run(sweep, times.tolist(), who.tolist(), used.tolist(), changes,
                   np.argsort(start, kind="stable").tolist(), np.argsort(end, kind="stable").tolist())
    return _charge(result, topology, policy, sweep, waits, job, first, line, start, end, bad, misconfigured)


def _timer_ended(wait: wait_sweep.Stretch, end: float, queue: str, misconfigured: str,
                 actions: dict[str, dict[str, float]]) -> bool:
    """Whether a ``jobStateTimeLimitActions`` timer ended this stretch (its job failed as it ended): the head of its
    line for exactly the action's ``maxTimeSeconds`` (a timer starts when a job becomes the head)."""
    if wait.stint < 0:
        return False
    limit = actions.get(queue, {}).get(misconfigured or CAPACITY_INSUFFICIENT)
    if limit is None:
        return False
    return abs((end - wait.head_since) - limit) <= _TIMER_TOLERANCE * max(1.0, limit)


def _firsts(job: np.ndarray) -> np.ndarray:
    """The position of each job's first stretch (a job's stretches are together, jobs in record order)."""
    return np.flatnonzero(np.concatenate(([True], job[1:] != job[:-1]))) if len(job) else job


def _choose(policy: AttributionOrder, bad: np.ndarray, requeued: np.ndarray, held: np.ndarray,
            timed: np.ndarray) -> np.ndarray:
    """Per piece, the cause charged (a ``WAIT_CAUSES`` number) by what held: misconfigured, requeued, the line's cause
    (a ``WAIT_CAUSES`` number), a time-limit action pending. The policy is asked once per combination that occurs."""
    combination = ((bad.astype(np.int64) * 2 + requeued) * len(WAIT_CAUSES) + held) * 2 + timed
    table = np.zeros(2 * 2 * len(WAIT_CAUSES) * 2, dtype=np.int64)  # a few dozen combinations: a table, not a sort
    for key in np.flatnonzero(np.bincount(combination, minlength=len(table))).tolist():
        holding = {WAIT_CAUSES[key // 2 % len(WAIT_CAUSES)]}
        if key // (2 * len(WAIT_CAUSES)) // 2:
            holding.add(Cause.MISCONFIGURED)
        if key // (2 * len(WAIT_CAUSES)) % 2:
            holding.add(Cause.REQUEUED_AFTER_PREEMPTION)
        if key % 2:
            holding.add(Cause.TIME_LIMIT_ACTION_PENDING)
        table[key] = _NUMBER[policy.choose(frozenset(holding))]
    return table[combination]


def _longest(policy: AttributionOrder, jobs: int, waited: np.ndarray, piece_job: np.ndarray, charged: np.ndarray,
             seconds: np.ndarray) -> list[Cause | None]:
    """Per job record, the cause it waited longest for (the first in the policy's order among equals; ``None``:
    it never waited). ``waited``: the records that waited, in order; per piece, which of them it is
    (``piece_job``), its cause (a ``WAIT_CAUSES`` number) and seconds."""
    causes = len(WAIT_CAUSES)
    # the waiting causes in the policy's order (an order may rank more causes; it ranks every one it charges)
    ranked = sorted(WAIT_CAUSES, key=lambda cause: policy.order.index(cause) if cause in policy.order else causes)
    rank = np.array([ranked.index(cause) for cause in WAIT_CAUSES], dtype=np.int64)
    per_job = np.bincount(piece_job * causes + rank[charged], weights=seconds,
                          minlength=len(waited) * causes).reshape(len(waited), causes)
    charged_any = np.bincount(piece_job, minlength=len(waited)) > 0
    longest = np.where(charged_any, per_job.argmax(axis=1), causes)
    out = np.full(jobs, None, dtype=object)
    out[waited] = np.array([*ranked, None], dtype=object)[longest]
    return out.tolist()


def _charge(result: SimulationResult, topology: Topology, policy: AttributionOrder, sweep: wait_sweep.Sweep,
            waits: wait_sweep.Waiting, job: np.ndarray, first: np.ndarray, line: np.ndarray, start: np.ndarray,
            end: np.ndarray, bad: np.ndarray, misconfigured: dict[int, str]) -> WaitCauses:
    """Each stretch's pieces (behind its head; as the head, per cause) charged by the policy, per share and job."""
    lines, causes = len(sweep.lines), len(WAIT_CAUSES)
    stretch_count = len(job)
    # a stretch ended by a time-limit action: its last stint as the head (the timer ran all of it) is charged to it
    actions = {queue: {reason: float(action.max_time_seconds) for reason, action in by_reason.items()}
               for queue, by_reason in queue_actions(topology).items()}
    timer = np.zeros(stretch_count, dtype=bool)
    if actions:
        for number in np.flatnonzero(np.array(waits.failed, dtype=bool)).tolist():
            wait, index = sweep.stretches[number], waits.job[number]
            timer[number] = _timer_ended(wait, waits.end[number], wait.line.share.queue.name,
                                         misconfigured.get(index, ""), actions)
    last_stint = np.array([wait.stint for wait in sweep.stretches], dtype=np.int64)
    piece = np.array(sweep.piece_stretch, dtype=np.int64)
    seconds = np.array(sweep.piece_seconds, dtype=np.float64)
    timed = timer[piece] & (np.array(sweep.piece_stint, dtype=np.int64) == last_stint[piece])
    # behind its head: the rest of each stretch
    rest = (end - start) - np.bincount(piece, weights=seconds, minlength=stretch_count)
    behind = np.flatnonzero(rest > 0)
    piece = np.concatenate((piece, behind))
    seconds = np.concatenate((seconds, rest[behind]))
    held = np.concatenate((_HEAD_NUMBER[np.array(sweep.piece_cause, dtype=np.int64)],
                           np.full(len(behind), _BEHIND, dtype=np.int64)))
    timed = np.concatenate((timed, np.zeros(len(behind), dtype=bool)))
    requeued = np.array(waits.requeued, dtype=bool)
    charged = _choose(policy, bad[piece], requeued[piece], held, timed)
    by_share = np.bincount(line[piece] * causes + charged, weights=seconds, minlength=lines * causes
                           ).reshape(lines, causes)
    totals = np.bincount(line, weights=end - start, minlength=lines)
    # the waiting jobs numbered in order, per stretch (a job's stretches share its line: a job counts once)
    numbered = np.cumsum(np.concatenate(([False], job[1:] != job[:-1]))) if stretch_count else job
    job_causes = _longest(policy, len(result.jobs), job[first], numbered[piece], charged, seconds)
    jobs_waited = np.bincount(line[first], minlength=lines)
    # per line and cause, the jobs charged any of it (each pair of a job and a cause once)
    held_by = np.zeros(len(first) * causes, dtype=bool)
    held_by[numbered[piece] * causes + charged] = True
    pairs = np.flatnonzero(held_by)
    jobs_by_cause = np.bincount(line[first[pairs // causes]] * causes + pairs % causes, minlength=lines * causes
                                ).reshape(lines, causes)
    time_limited = np.bincount(line[first[np.unique(numbered[timer])]], minlength=lines)
    sizes: dict[int, list[int]] = defaultdict(list)
    for position in first[bad[first]].tolist():
        sizes[waits.line[position]].append(waits.needs[position])
    shares = []
    for item, charged_seconds, total, count, limited, counts in zip(
            sweep.lines, by_share.tolist(), totals.tolist(), jobs_waited.tolist(), time_limited.tolist(),
            jobs_by_cause.tolist(), strict=True):
        share = item.share
        blocker = None
        if item.blocker is not None:
            number, sums = max(item.blocker_sums.items(), key=lambda entry: entry[1].seconds)
            blocker = Blocker(result.jobs[waits.job[item.blocker.number]].name, item.blocker.needs,
                              item.blocker_seconds, wait_sweep.HEAD_CAUSES[number], _context(sums.figures()))
        context = {wait_sweep.HEAD_CAUSES[number]: _context(item.context[number].figures())
                   for number in item.context_order}
        shares.append(ShareWaits(
            share=share.share_id, instance_type=share.instance_type, strategy=share.model.strategy,
            limit=share.model.capacity.get(share.instance_type, 0), ceiling=share.model.ceiling(share.instance_type),
            jobs_waited=count, wait_seconds=total,
            by_cause={cause: value for cause, value in zip(WAIT_CAUSES, charged_seconds, strict=True) if value > 0},
            jobs_by_cause={cause: value for cause, value, seconds in zip(WAIT_CAUSES, counts, charged_seconds,
                                                                         strict=True) if seconds > 0},
            behind_by_head_cause={wait_sweep.HEAD_CAUSES[number]: item.behind[number]
                                  for number in item.behind_order},
            blocker=blocker, context=context, preempted_borrowed=waits.preempted[2 * item.number],
            preempted_own=waits.preempted[2 * item.number + 1],
            misconfigured_jobs=len(sizes[item.number]), largest_misconfigured=max(sizes[item.number], default=0),
            time_limited_jobs=limited))
    return WaitCauses(policy.name, shares, job_causes)
