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
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

from policy_engine.simulation.causes import WAIT_CAUSES, Cause
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import Pool, ShareCapacity, build_pools
from policy_engine.simulation.core.jobs import CAPACITY_INSUFFICIENT, PREEMPTED, Status
from policy_engine.simulation.core.preemption import above_limit
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


#: Statuses of a job off capacity at its end that waited until then (still waiting, or failed while waiting).
_WAITED_TO_THE_END = frozenset({Status.RUNNABLE.value, Status.FAILED.value})
#: read once per stretch: bound here (an enum member's attribute lookup costs a call)
_FAILED = Status.FAILED.value
_MISCONFIGURED, _REQUEUED, _BEHIND, _TIMED = (Cause.MISCONFIGURED, Cause.REQUEUED_AFTER_PREEMPTION, Cause.BEHIND_HEAD,
                                              Cause.TIME_LIMIT_ACTION_PENDING)


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
    if not on_capacity and record.status in _WAITED_TO_THE_END:
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


#: Kinds of the sweep's events, in the order they sort at one instant (all are applied before anything is read).
_USAGE, _LIMIT, _START, _END = range(4)
#: What a head's cause may depend on beyond its own share: the pool's lending counters, or the environment.
_POOL_CAUSES = frozenset({Cause.NOTHING_LENDABLE, Cause.LENDABLE_TAKEN})
_ENVIRONMENT_CAUSES = frozenset({Cause.ENVIRONMENT_FULL, Cause.WAITING_FOR_RECLAIM})


class _Level:
    """A counter's running integral over time (idle instances of an environment, lendable ones of a pool), so
    that a head's share of it over any stretch is a difference of two readings: O(1) whatever changed meanwhile."""

    __slots__ = ("integral", "since", "value")

    def __init__(self, value: float) -> None:
        self.integral, self.since, self.value = 0.0, 0.0, value

    def at(self, time: float) -> float:
        return self.integral + self.value * (time - self.since)

    def set(self, time: float, value: float) -> None:
        self.integral = self.at(time)
        self.since, self.value = time, value


class _Head:
    """A line's head and what it waits for since ``since`` (with the integrals as read then)."""

    __slots__ = ("cause", "environment_idle", "lendable", "lender_idle", "levels", "needs", "since", "used", "wait")

    def __init__(self, wait: _Wait, cause: Cause, needs: int, since: float, levels: tuple[_Level, _Level, _Level]):
        self.wait, self.cause, self.needs, self.since, self.used = wait, cause, needs, since, wait.line.used
        #: its pool's lendable and lender-idle instances, its environment's idle ones: the integrals, and as read
        self.levels = levels
        self.lendable, self.lender_idle, self.environment_idle = (
            levels[0].at(since), levels[1].at(since), levels[2].at(since))


class _Sweep:
    """The pass over time; a head is charged and looked at again only where something it depends on changed:
    its own share's usage or line, its pool's lending counters (a head that would borrow), its environment's
    idle instances (a head within its limit), a limit of its pool."""

    def __init__(self, pools: list[Pool], misconfigured: dict[int, str], records: list[JobRecord]):
        self.misconfigured, self.records = misconfigured, records
        self.heaps: defaultdict[ShareCapacity, list[tuple[tuple[int, float, int], float, _Wait]]] = \
            defaultdict(list)
        self.active: dict[_Wait, None] = {}
        self.count: defaultdict[ShareCapacity, int] = defaultdict(int)
        self.heads: dict[ShareCapacity, _Head] = {}
        #: heads whose cause reads their pool's lending counters; heads within their limit (by environment)
        self.pool_heads: defaultdict[int, dict[ShareCapacity, None]] = defaultdict(dict)
        self.environment_heads: defaultdict[int, dict[ShareCapacity, None]] = defaultdict(dict)
        envs = {id(pool.env): pool.env for pool in pools}
        self.idle = {key: _Level(max(0, env.capacity - env.used)) for key, env in envs.items()}
        self.lendable = {id(pool): _Level(max(0, pool.free_lendable)) for pool in pools}
        self.lender_idle = {id(pool): _Level(pool.lender_idle) for pool in pools}
        self.behind: defaultdict[ShareCapacity, defaultdict[Cause, float]] = defaultdict(lambda: defaultdict(float))
        self.blocked: defaultdict[_Wait, float] = defaultdict(float)
        #: per head that blocked its line, per cause: the pool's state while it blocked (``context``'s sums)
        self.blocking: defaultdict[_Wait, dict[Cause, list[float]]] = defaultdict(dict)
        self.context: defaultdict[ShareCapacity, defaultdict[Cause, list[float]]] = defaultdict(
            lambda: defaultdict(lambda: [0.0] * 6))

    def _levels(self, line: ShareCapacity) -> tuple[_Level, _Level, _Level]:
        pool = id(line.pool)
        return self.lendable[pool], self.lender_idle[pool], self.idle[id(line.pool.env)]

    def flush(self, line: ShareCapacity, time: float) -> None:
        """Charge the line's head from its ``since`` to ``time`` (nothing its cause depends on changed meanwhile)."""
        head = self.heads.get(line)
        if head is None:
            return
        span = time - head.since
        if span <= 0:
            return
        wait, cause = head.wait, head.cause
        seconds = wait.head
        assert seconds is not None
        seconds[cause] = seconds.get(cause, 0.0) + span
        wait.stint[cause] = wait.stint.get(cause, 0.0) + span
        level = head.levels[0]
        lendable = level.integral + level.value * (time - level.since)
        level = head.levels[1]
        lender_idle = level.integral + level.value * (time - level.since)
        level = head.levels[2]
        idle = level.integral + level.value * (time - level.since)
        sums = (span, head.needs * span, lendable - head.lendable, lender_idle - head.lender_idle,
                idle - head.environment_idle, head.used * span)
        total = self.context[line][cause]
        for position in range(6):
            total[position] += sums[position]
        others = self.count[line] - 1
        if others:
            self.behind[line][cause] += others * span
            self.blocked[wait] += others * span
            total = self.blocking[wait].setdefault(cause, [0.0] * 6)
            for position in range(6):
                total[position] += sums[position] * others
        head.since = time
        head.lendable, head.lender_idle, head.environment_idle = lendable, lender_idle, idle

    def place(self, line: ShareCapacity, wait: _Wait, time: float) -> None:
        """``wait`` is the head of ``line`` from ``time`` on: classified against the state now."""
        self.forget(line)
        index = wait.job
        needs = self.records[index].instances
        cause = Cause.MISCONFIGURED if index in self.misconfigured else _classify(line, needs)
        self.heads[line] = _Head(wait, cause, needs, time, self._levels(line))
        if cause in _POOL_CAUSES:
            self.pool_heads[id(line.pool)][line] = None
        elif cause in _ENVIRONMENT_CAUSES:
            self.environment_heads[id(line.pool.env)][line] = None

    def forget(self, line: ShareCapacity) -> None:
        if self.heads.pop(line, None) is not None:
            self.pool_heads[id(line.pool)].pop(line, None)
            self.environment_heads[id(line.pool.env)].pop(line, None)

    def levels_changed(self, pool: Pool, time: float) -> None:
        """After a change of ``pool``'s counters, the integrals carry on from the new values."""
        self.lendable[id(pool)].set(time, max(0, pool.free_lendable))
        self.lender_idle[id(pool)].set(time, pool.lender_idle)
        env = pool.env
        self.idle[id(env)].set(time, max(0, env.capacity - env.used))

    def instant(self, time: float, usage: list[tuple[ShareCapacity, int]], limits: list[ShareCapacity],
                starts: list[_Wait], ends: list[_Wait]) -> None:
        """One instant: the heads concerned charged up to it, the changes applied, those heads looked at again."""
        again: dict[ShareCapacity, None] = {}  # heads whose cause may change
        for share, _ in usage:
            again[share] = None
            again.update(self.pool_heads[id(share.pool)])
            again.update(self.environment_heads[id(share.pool.env)])
        for share in limits:
            again.update(dict.fromkeys(share.pool.shares))
        lines = dict.fromkeys(w.line for w in (*starts, *ends))
        for line in (*again, *lines):
            self.flush(line, time)
        for share, used in usage:
            share.pool.adjust(share, used - share.used)
            self.levels_changed(share.pool, time)
        for share in limits:
            _recount(share.pool)
            self.levels_changed(share.pool, time)
        active, count, heaps = self.active, self.count, self.heaps
        for wait in starts:
            active[wait] = None
            count[wait.line] += 1
            heapq.heappush(heaps[wait.line], (wait.key, wait.start, wait))
        for wait in ends:
            if wait in active:
                del active[wait]
                count[wait.line] -= 1
        for line in lines:
            heap = heaps[line]
            while heap and heap[0][2] not in active:
                heapq.heappop(heap)
            if not heap:
                self.forget(line)
                again.pop(line, None)
            elif line not in self.heads or self.heads[line].wait is not heap[0][2]:
                wait = heap[0][2]
                if wait.head is None:
                    wait.head = {}
                wait.stint = {}
                wait.head_since = time
                self.place(line, wait, time)
                again.pop(line, None)
        for line in again:
            head = self.heads.get(line)
            if head is not None:
                self.place(line, head.wait, time)


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
    # (time, kind, position in its list): tuples of numbers sort natively
    events: list[tuple[float, int, int]] = list(zip(log.times, repeat(_USAGE), range(len(log))))
    events.extend((c.time, _LIMIT, n) for n, c in enumerate(log.limit_changes))
    events.extend((w.start, _START, n) for n, w in enumerate(waits))
    events.extend((w.end, _END, n) for n, w in enumerate(waits))
    events.sort()
    who, used_after, changes = log.who, log.used, log.limit_changes
    sweep = _Sweep(pools, misconfigured, records)
    instant = sweep.instant
    position, total = 0, len(events)
    while position < total:
        time = events[position][0]
        usage: list[tuple[ShareCapacity, int]] = []
        limits: list[ShareCapacity] = []
        starts: list[_Wait] = []
        ends: list[_Wait] = []
        while position < total and (event := events[position])[0] == time:
            position += 1
            kind, number = event[1], event[2]
            if kind == _USAGE:
                usage.append((numbered[who[number]], used_after[number]))
            elif kind == _LIMIT:
                change = changes[number]
                share = numbered[change.number]
                share.limit, share.lends = change.limit, change.lends  # counters recounted in ``instant``
                limits.append(share)
            elif kind == _START:
                starts.append(waits[number])
            else:
                ends.append(waits[number])
        instant(time, usage, limits, starts, ends)
    return _charge(result, topology, policy, pools, records, waits, misconfigured, sweep.behind, sweep.blocked,
                   sweep.blocking, sweep.context, preempted)


def _timer_ended(wait: _Wait, record: JobRecord, misconfigured: str,
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
            flags.add(_MISCONFIGURED)
        if wait.requeued:
            flags.add(_REQUEUED)
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
            pieces.append((_BEHIND, rest, False))
        line = wait.line
        totals[line] += length
        waited[line].add(index)
        job = per_job.setdefault(index, {})
        for cause, seconds, timed in pieces:
            if seconds <= 0:
                continue
            holding = flags | {cause, _TIMED} if timed else flags | {cause}
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
