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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from policy_engine.simulation.causes import WAIT_CAUSES, Cause
from policy_engine.simulation.core import placement, wait_sweep
from policy_engine.simulation.core.capacity import Pool, ShareCapacity, build_pools
from policy_engine.simulation.core.jobs import CAPACITY_INSUFFICIENT, PREEMPTED, Status
from policy_engine.simulation.core.wait_sweep import END, LIMIT, START, USAGE, Stretch, Sweep
from policy_engine.simulation.outputs.results import job_timelines
from policy_engine.simulation.outputs.wait_orders import DEFAULT_ORDER, ORDERS, AttributionOrder
from policy_engine.simulation.time_limits import queue_actions

if TYPE_CHECKING:
    from policy_engine.model import Topology
    from policy_engine.simulation.outputs.results import SimulationResult, Timeline

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
                "by_cause": {cause.value: self.by_cause.get(cause, 0.0) for cause in WAIT_CAUSES}}


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


#: Statuses of a job off capacity at its end that waited until then (still waiting, or failed while waiting).
_WAITED_TO_THE_END = frozenset({Status.RUNNABLE.value, Status.FAILED.value})
#: read once per stretch: bound here (an enum member's attribute lookup costs a call)
_FAILED = Status.FAILED.value
_MISCONFIGURED, _REQUEUED, _BEHIND, _TIMED = (Cause.MISCONFIGURED, Cause.REQUEUED_AFTER_PREEMPTION, Cause.BEHIND_HEAD,
                                              Cause.TIME_LIMIT_ACTION_PENDING)


def _stretches(index: int, record: Timeline, line: ShareCapacity, now: float) -> list[Stretch]:
    """When the job was RUNNABLE: to its first attempt, between attempts, and after the last until it ended."""
    out: list[Stretch] = []
    since, requeued = record.submitted_at, False
    on_capacity = False
    for attempt in record.attempts:
        if attempt.start > since:
            out.append(Stretch(index, line, since, attempt.start, requeued))
        if attempt.end is None:
            on_capacity = True
            break
        since, requeued = attempt.end, attempt.outcome == PREEMPTED
    if not on_capacity and record.status in _WAITED_TO_THE_END:
        end = now if record.finished_at is None else record.finished_at
        if end > since:
            out.append(Stretch(index, line, since, end, requeued))
    return out


def attribute(result: SimulationResult, topology: Topology, order: AttributionOrder | str = DEFAULT_ORDER
              ) -> WaitCauses:
    """Charge every waiting second of ``result`` (run on ``topology`` with ``usage_log=True``) to one cause."""
    if result.usage is None:
        raise ValueError("the simulation was run without SimulationSettings(usage_log=True)")
    policy = ORDERS[order] if isinstance(order, str) else order
    pools = build_pools(topology)
    lines = {(s.share_id, s.instance_type): s for pool in pools for s in pool.shares}
    now = result.time
    records = list(job_timelines(result.jobs))
    waits: list[Stretch] = []
    misconfigured: dict[int, str] = {}
    cache: dict[tuple[ShareCapacity, int], str] = {}
    preempted: defaultdict[ShareCapacity, list[int]] = defaultdict(lambda: [0, 0])
    for index, record in enumerate(records):
        line = lines[(record.share, record.instance_type)]
        stretches = _stretches(index, record, line, now)
        waits.extend(stretches)
        for attempt in record.attempts:
            if attempt.outcome == PREEMPTED:
                preempted[line][0 if attempt.borrowed else 1] += 1
        if stretches:
            key = (line, record.instances)
            if key not in cache:
                cache[key] = placement.misconfiguration(line.pool, line, record.instances)
            if cache[key]:
                misconfigured[index] = cache[key]
    # --- one sweep over time: usage changes, limit changes, stretches starting and ending ------------------------
    log = result.usage
    numbered = [lines[(s.share, s.instance_type)] for s in log.shares]
    # the events by time, then kind, then position in their list (as tuples of those would sort), by numpy
    usage_count, change_count, wait_count = len(log), len(log.limit_changes), len(waits)
    times = np.concatenate((np.frombuffer(log.times, dtype=np.float64) if usage_count else np.empty(0),
                            np.array([c.time for c in log.limit_changes], dtype=np.float64),
                            np.array([w.start for w in waits], dtype=np.float64),
                            np.array([w.end for w in waits], dtype=np.float64)))
    kinds = np.repeat(np.array([USAGE, LIMIT, START, END], dtype=np.int64),
                      [usage_count, change_count, wait_count, wait_count])
    numbers = np.concatenate((np.arange(usage_count), np.arange(change_count), np.arange(wait_count),
                              np.arange(wait_count)))
    ordered = np.lexsort((numbers, kinds, times))
    sweep = Sweep(pools, misconfigured, [record.instances for record in records])
    # a line's order (priority, then submission, then workload order; a job's own stretches by their start) as one
    # rank per stretch, so that the sweep's heaps compare integers
    jobs = np.array([w.job for w in waits], dtype=np.int64)
    by_rank = np.lexsort((times[usage_count + change_count:usage_count + change_count + wait_count], jobs,
                          np.array([records[i].submitted_at for i in jobs.tolist()], dtype=np.float64),
                          -np.array([records[i].priority for i in jobs.tolist()], dtype=np.int64)))
    sweep.by_rank = [waits[i] for i in by_rank.tolist()]
    for rank, wait in enumerate(sweep.by_rank):
        wait.rank = rank
    wait_sweep.run(sweep, times[ordered].tolist(), kinds[ordered].tolist(), numbers[ordered].tolist(), numbered,
                   log.who.tolist(), log.used.tolist(), list(log.limit_changes), waits)
    return _charge(result, topology, policy, pools, records, waits, misconfigured, sweep.behind, sweep.blockers,
                   sweep.context, preempted)


def _timer_ended(wait: Stretch, record: Timeline, misconfigured: str,
                 actions: dict[str, dict[str, float]]) -> bool:
    """Whether a ``jobStateTimeLimitActions`` timer ended this stretch: the job failed as it ended, the head of its
    line for exactly the action's ``maxTimeSeconds`` (a timer starts when a job becomes the head)."""
    if record.status != _FAILED or record.finished_at != wait.end or wait.head is None:
        return False
    limit = actions.get(wait.line.queue.name, {}).get(misconfigured or CAPACITY_INSUFFICIENT)
    if limit is None:
        return False
    return abs((wait.end - wait.head_since) - limit) <= _TIMER_TOLERANCE * max(1.0, limit)


def _charge(result: SimulationResult, topology: Topology, policy: AttributionOrder, pools: list[Pool],
            records: list[Timeline], waits: list[Stretch], misconfigured: dict[int, str],
            behind: Mapping[ShareCapacity, Mapping[Cause, float]],
            most_blocking: Mapping[ShareCapacity, tuple[float, int, Stretch, dict[Cause, list[float]]]],
            context: Mapping[ShareCapacity, Mapping[Cause, list[float]]], preempted: Mapping[ShareCapacity, list[int]]
            ) -> WaitCauses:
    """Each stretch's pieces (behind its head; as the head, per cause) charged by the policy, per share and job."""
    actions = {queue: {reason: float(action.max_time_seconds) for reason, action in by_reason.items()}
               for queue, by_reason in queue_actions(topology).items()}
    #: the cause charged, by what held: (misconfigured, requeued, the line's cause, a time-limit action pending)
    chosen: dict[tuple[bool, bool, Cause, bool], Cause] = {}

    def choose(misconfigured: bool, requeued: bool, cause: Cause, timed: bool) -> Cause:
        holding = {cause}
        if misconfigured:
            holding.add(_MISCONFIGURED)
        if requeued:
            holding.add(_REQUEUED)
        if timed:
            holding.add(_TIMED)
        charged = chosen[(misconfigured, requeued, cause, timed)] = policy.choose(frozenset(holding))
        return charged

    by_share: defaultdict[ShareCapacity, defaultdict[Cause, float]] = defaultdict(lambda: defaultdict(float))
    totals: defaultdict[ShareCapacity, float] = defaultdict(float)
    waited: defaultdict[ShareCapacity, set[int]] = defaultdict(set)
    per_job: dict[int, dict[Cause, float]] = {}
    time_limited: defaultdict[ShareCapacity, set[int]] = defaultdict(set)
    empty: dict[Cause, float] = {}
    for wait in waits:
        index = wait.job
        length = wait.end - wait.start
        bad = index in misconfigured
        requeued = wait.requeued
        head = wait.head or empty
        line = wait.line
        timer = _timer_ended(wait, records[index], misconfigured.get(index, ""), actions)
        if timer:
            time_limited[line].add(index)
        totals[line] += length
        waited[line].add(index)
        job = per_job.get(index)
        if job is None:
            job = per_job[index] = {}
        share = by_share[line]
        # as the head: the last stint ended by a time-limit action (its timer ran all of it), the rest; then behind
        stint = wait.stint
        for cause, seconds in head.items():
            if timer:
                seconds -= stint.get(cause, 0.0)
            if seconds > 0:
                charged = chosen.get((bad, requeued, cause, False)) or choose(bad, requeued, cause, False)
                share[charged] += seconds
                job[charged] = job.get(charged, 0.0) + seconds
        if timer:
            for cause, seconds in stint.items():
                if seconds > 0:
                    charged = chosen.get((bad, requeued, cause, True)) or choose(bad, requeued, cause, True)
                    share[charged] += seconds
                    job[charged] = job.get(charged, 0.0) + seconds
        rest = length - sum(head.values())
        if rest > 0:
            charged = chosen.get((bad, requeued, _BEHIND, False)) or choose(bad, requeued, _BEHIND, False)
            share[charged] += rest
            job[charged] = job.get(charged, 0.0) + rest
    rank = {cause: position for position, cause in enumerate(policy.order)}
    job_causes: list[Cause | None] = [None] * len(records)
    for index, charged_seconds in per_job.items():
        if charged_seconds:
            job_causes[index] = min(charged_seconds, key=lambda c: (-charged_seconds[c], rank[c]))
    blockers: dict[ShareCapacity, Blocker] = {}
    for line, (seconds, _, wait, blocking) in most_blocking.items():
        cause, sums = max(blocking.items(), key=lambda item: item[1][0])
        blockers[line] = Blocker(result.jobs[wait.job].name, records[wait.job].instances, seconds, cause,
                                 _context(sums))
    shares = []
    for pool in pools:
        for line in pool.shares:
            sizes = [records[i].instances for i in waited[line] if i in misconfigured]
            shares.append(ShareWaits(
                share=line.share_id, instance_type=line.instance_type, strategy=line.model.strategy,
                limit=line.model.capacity.get(line.instance_type, 0), ceiling=line.model.ceiling(line.instance_type),
                jobs_waited=len(waited[line]), wait_seconds=totals[line],
                by_cause={c: s for c, s in by_share[line].items() if s > 0},
                behind_by_head_cause=dict(behind.get(line, {})), blocker=blockers.get(line),
                context={c: _context(v) for c, v in context.get(line, {}).items() if v[0] > 0},
                preempted_borrowed=preempted[line][0] if line in preempted else 0,
                preempted_own=preempted[line][1] if line in preempted else 0,
                misconfigured_jobs=len(sizes), largest_misconfigured=max(sizes, default=0),
                time_limited_jobs=len(time_limited[line])))
    return WaitCauses(policy.name, shares, job_causes)
