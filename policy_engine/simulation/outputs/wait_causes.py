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

import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from policy_engine.simulation.causes import WAIT_CAUSES, Cause
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import Pool, ShareCapacity, build_pools
from policy_engine.simulation.core.jobs import CAPACITY_INSUFFICIENT, PREEMPTED, Status
from policy_engine.simulation.core.preemption import above_limit
from policy_engine.simulation.outputs.usage import LimitChange
from policy_engine.simulation.outputs.wait_orders import DEFAULT_ORDER, ORDERS, AttributionOrder
from policy_engine.simulation.time_limits import queue_actions

if TYPE_CHECKING:
    from policy_engine.model import Topology
    from policy_engine.simulation.outputs.results import JobRecord, SimulationResult

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


class _Wait:
    """One stretch of waiting of one job, and what held it while it was the head of its line."""

    __slots__ = ("end", "head", "head_since", "job", "key", "line", "requeued", "start", "stint")

    def __init__(self, job: int, line: ShareCapacity, start: float, end: float, requeued: bool,
                 key: tuple[int, float, int]):
        self.job, self.line, self.start, self.end, self.requeued, self.key = job, line, start, end, requeued, key
        #: seconds as the head, by cause: over the whole stretch, and since it last became the head
        self.head: dict[Cause, float] | None = None
        self.stint: dict[Cause, float] = {}
        self.head_since = start


def _stretches(index: int, record: JobRecord, line: ShareCapacity, now: float) -> list[_Wait]:
    """When the job was RUNNABLE: to its first attempt, between attempts, and after the last until it ended."""
    key = (-record.priority, record.submitted_at, index)
    out: list[_Wait] = []
    since, requeued = record.submitted_at, False
    on_capacity = False
    for attempt in record.attempts:
        if attempt.start > since:
            out.append(_Wait(index, line, since, attempt.start, requeued, key))
        if attempt.end is None:
            on_capacity = True
            break
        since, requeued = attempt.end, attempt.outcome == PREEMPTED
    if not on_capacity and record.status in (Status.RUNNABLE, Status.FAILED):
        end = now if record.finished_at is None else record.finished_at
        if end > since:
            out.append(_Wait(index, line, since, end, requeued, key))
    return out


def _recount(pool: Pool) -> None:
    """The pool's borrowed and lender-idle counters from its shares (after a limit change)."""
    pool.borrowed = sum(max(0, s.used - s.limit) for s in pool.shares if s.borrows)
    pool.lender_idle = sum(max(0, s.limit - s.used) for s in pool.shares if s.lends)


def _classify(share: ShareCapacity, needs: int) -> Cause:
    """What a head that is not misconfigured waits for, as ``reasons.waiting`` decides it."""
    pool = share.pool
    if share.used + needs <= share.limit:
        env = pool.env
        idle = env.capacity - env.used
        if share.lends:
            idle = min(idle, pool.free_lendable)
        reclaimable = sum(o.used - o.limit for o in above_limit(pool, share))
        return Cause.WAITING_FOR_RECLAIM if max(0, idle) + reclaimable >= needs else Cause.ENVIRONMENT_FULL
    if share.borrows and placement.under_ceiling(share, needs):
        return Cause.NOTHING_LENDABLE if pool.lender_idle < needs else Cause.LENDABLE_TAKEN
    return Cause.SHARE_AT_LIMIT


class _Head(NamedTuple):
    wait: _Wait
    cause: Cause
    needs: int
    lendable: int
    lender_idle: int
    environment_idle: int
    used: int


def attribute(result: SimulationResult, topology: Topology, order: AttributionOrder | str = DEFAULT_ORDER
              ) -> WaitCauses:
    """Charge every waiting second of ``result`` (run on ``topology`` with ``usage_log=True``) to one cause."""
    if result.usage is None:
        raise ValueError("the simulation was run without SimulationSettings(usage_log=True)")
    policy = ORDERS[order] if isinstance(order, str) else order
    pools = build_pools(topology)
    lines = {(s.share_id, s.instance_type): s for pool in pools for s in pool.shares}
    now = result.time
    records = list(result.jobs)
    waits: list[_Wait] = []
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
    events: list[tuple[float, int, object, int]] = []
    events.extend(zip(log.times, [0] * len(log), map(numbered.__getitem__, log.who), log.used, strict=True))
    events.extend((c.time, 1, c, 0) for c in log.limit_changes)
    events.extend((w.start, 2, w, 0) for w in waits)
    events.extend((w.end, 3, w, 0) for w in waits)
    events.sort(key=lambda e: (e[0], e[1]))
    heaps: dict[ShareCapacity, list[tuple[tuple[int, float, int], float, _Wait]]] = defaultdict(list)
    active: dict[_Wait, None] = {}
    count: defaultdict[ShareCapacity, int] = defaultdict(int)
    heads: dict[ShareCapacity, _Head] = {}
    behind: defaultdict[ShareCapacity, defaultdict[Cause, float]] = defaultdict(lambda: defaultdict(float))
    blocked: defaultdict[_Wait, float] = defaultdict(float)
    #: per head that blocked its line, per cause: the pool's state while it blocked (``context``'s sums)
    blocking: defaultdict[_Wait, dict[Cause, list[float]]] = defaultdict(dict)
    context: defaultdict[ShareCapacity, defaultdict[Cause, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0] * 6))
    last = 0.0
    position, total = 0, len(events)
    while position < total:
        time = events[position][0]
        span = time - last
        if span > 0:
            for line, head in heads.items():
                wait = head.wait
                assert wait.head is not None
                wait.head[head.cause] = wait.head.get(head.cause, 0.0) + span
                wait.stint[head.cause] = wait.stint.get(head.cause, 0.0) + span
                others = count[line] - 1
                if others:
                    behind[line][head.cause] += others * span
                    blocked[wait] += others * span
                    _add(blocking[wait].setdefault(head.cause, [0.0] * 6), head, others * span)
                _add(context[line][head.cause], head, span)
        touched_lines: dict[ShareCapacity, None] = {}
        touched_envs: dict[int, None] = {}
        while position < total and events[position][0] == time:
            _, kind, subject, value = events[position]
            position += 1
            if kind == 0:
                assert isinstance(subject, ShareCapacity)
                subject.pool.adjust(subject, value - subject.used)
                touched_envs[id(subject.pool.env)] = None
            elif kind == 1:
                assert isinstance(subject, LimitChange)
                line = numbered[subject.number]
                line.limit, line.lends = subject.limit, subject.lends
                _recount(line.pool)
                touched_envs[id(line.pool.env)] = None
            elif kind == 2:
                assert isinstance(subject, _Wait)
                active[subject] = None
                count[subject.line] += 1
                heapq.heappush(heaps[subject.line], (subject.key, subject.start, subject))
                touched_lines[subject.line] = None
            else:
                assert isinstance(subject, _Wait)
                if subject in active:
                    del active[subject]
                    count[subject.line] -= 1
                    touched_lines[subject.line] = None
        new_heads: dict[ShareCapacity, None] = {}
        for line in touched_lines:
            heap = heaps[line]
            while heap and heap[0][2] not in active:
                heapq.heappop(heap)
            if not heap:
                heads.pop(line, None)
            elif line not in heads or heads[line].wait is not heap[0][2]:
                wait = heap[0][2]
                if wait.head is None:
                    wait.head = {}
                wait.stint = {}
                wait.head_since = time
                heads[line] = _head(wait, wait.job in misconfigured, records[wait.job].instances)
                new_heads[line] = None
        if touched_envs:
            for line, head in heads.items():
                if id(line.pool.env) in touched_envs and line not in new_heads:
                    heads[line] = _head(head.wait, head.wait.job in misconfigured, head.needs)
        last = time
    return _charge(result, topology, policy, pools, records, waits, misconfigured, behind, blocked, blocking,
                   context, preempted)


def _add(sums: list[float], head: _Head, weight: float) -> None:
    sums[0] += weight
    sums[1] += head.needs * weight
    sums[2] += head.lendable * weight
    sums[3] += head.lender_idle * weight
    sums[4] += head.environment_idle * weight
    sums[5] += head.used * weight


def _head(wait: _Wait, misconfigured: bool, needs: int) -> _Head:
    line = wait.line
    pool = line.pool
    env = pool.env
    cause = Cause.MISCONFIGURED if misconfigured else _classify(line, needs)
    return _Head(wait, cause, needs, max(0, pool.free_lendable), pool.lender_idle, max(0, env.capacity - env.used),
                 line.used)


def _timer_ended(wait: _Wait, record: JobRecord, misconfigured: str,
                 actions: dict[str, dict[str, float]]) -> bool:
    """Whether a ``jobStateTimeLimitActions`` timer ended this stretch: the job failed as it ended, the head of its
    line for exactly the action's ``maxTimeSeconds`` (a timer starts when a job becomes the head)."""
    if record.status != Status.FAILED or record.finished_at != wait.end or wait.head is None:
        return False
    limit = actions.get(wait.line.queue.name, {}).get(misconfigured or CAPACITY_INSUFFICIENT)
    if limit is None:
        return False
    return abs((wait.end - wait.head_since) - limit) <= _TIMER_TOLERANCE * max(1.0, limit)


def _charge(result: SimulationResult, topology: Topology, policy: AttributionOrder, pools: list[Pool],
            records: list[JobRecord], waits: list[_Wait], misconfigured: dict[int, str],
            behind: Mapping[ShareCapacity, Mapping[Cause, float]], blocked: Mapping[_Wait, float],
            blocking: Mapping[_Wait, Mapping[Cause, list[float]]],
            context: Mapping[ShareCapacity, Mapping[Cause, list[float]]], preempted: Mapping[ShareCapacity, list[int]]
            ) -> WaitCauses:
    """Each stretch's pieces (behind its head; as the head, per cause) charged by the policy, per share and job."""
    actions = {queue: {reason: float(action.max_time_seconds) for reason, action in by_reason.items()}
               for queue, by_reason in queue_actions(topology).items()}
    chosen: dict[frozenset[Cause], Cause] = {}
    by_share: defaultdict[ShareCapacity, defaultdict[Cause, float]] = defaultdict(lambda: defaultdict(float))
    totals: defaultdict[ShareCapacity, float] = defaultdict(float)
    waited: defaultdict[ShareCapacity, set[int]] = defaultdict(set)
    per_job: dict[int, dict[Cause, float]] = {}
    time_limited: defaultdict[ShareCapacity, set[int]] = defaultdict(set)
    for wait in waits:
        index = wait.job
        length = wait.end - wait.start
        flags: set[Cause] = set()
        if index in misconfigured:
            flags.add(Cause.MISCONFIGURED)
        if wait.requeued:
            flags.add(Cause.REQUEUED_AFTER_PREEMPTION)
        head = wait.head or {}
        timer = _timer_ended(wait, records[index], misconfigured.get(index, ""), actions)
        if timer:
            time_limited[wait.line].add(index)
        # as the head: the last stint ended by a time-limit action (its timer ran all of it), the rest
        pieces = [(cause, seconds - (wait.stint.get(cause, 0.0) if timer else 0.0), False)
                  for cause, seconds in head.items()]
        if timer:
            pieces += [(cause, seconds, True) for cause, seconds in wait.stint.items()]
        rest = length - sum(head.values())
        if rest > 0:
            pieces.append((Cause.BEHIND_HEAD, rest, False))
        line = wait.line
        totals[line] += length
        waited[line].add(index)
        job = per_job.setdefault(index, {})
        for cause, seconds, timed in pieces:
            if seconds <= 0:
                continue
            holding = flags | {cause, Cause.TIME_LIMIT_ACTION_PENDING} if timed else flags | {cause}
            key = frozenset(holding)
            charged = chosen.get(key)
            if charged is None:
                charged = chosen[key] = policy.choose(key)
            by_share[line][charged] += seconds
            job[charged] = job.get(charged, 0.0) + seconds
    rank = {cause: position for position, cause in enumerate(policy.order)}
    job_causes: list[Cause | None] = [None] * len(records)
    for index, charged_seconds in per_job.items():
        if charged_seconds:
            job_causes[index] = min(charged_seconds, key=lambda c: (-charged_seconds[c], rank[c]))
    blockers: dict[ShareCapacity, Blocker] = {}
    for wait, seconds in blocked.items():
        best = blockers.get(wait.line)
        if best is None or seconds > best.seconds:
            record = records[wait.job]
            cause, sums = max(blocking[wait].items(), key=lambda item: item[1][0])
            blockers[wait.line] = Blocker(record.name, record.instances, seconds, cause, _context(sums))
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
