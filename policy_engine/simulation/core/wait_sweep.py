"""The sweep over time of "why jobs waited" (``outputs.wait_causes``): compiled with the simulator's hot path.

It runs after a run, never during one, but a million-job run gives it millions of instants to look at,
each with a few dictionary and heap operations: interpreted, it took longer than the run itself. The
rules it applies are described in ``outputs.wait_causes`` (which builds its inputs and charges its
results) and docs/simulator.md, "Why jobs waited".
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Any

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import Pool, ShareCapacity


class Stretch:
    """One stretch of waiting of one job, and what held it while it was the head of its line."""

    __slots__ = ("end", "head", "head_since", "job", "line", "rank", "requeued", "start", "stint")

    def __init__(self, job: int, line: ShareCapacity, start: float, end: float, requeued: bool):
        self.job, self.line, self.start, self.end, self.requeued = job, line, start, end, requeued
        #: its place in its line's order among all stretches (priority, then submission, then workload order, then
        #: start): set before the sweep, so that a line's heap compares integers
        self.rank = -1
        #: seconds as the head, by cause: over the whole stretch, and since it last became the head
        self.head: dict[Cause, float] | None = None
        self.stint: dict[Cause, float] = {}
        self.head_since = start


def recount(pool: Pool) -> None:
    """The pool's borrowed and lender-idle counters from its shares (after a limit change)."""
    pool.borrowed = sum(max(0, s.used - s.limit) for s in pool.shares if s.borrows)
    pool.lender_idle = sum(max(0, s.limit - s.used) for s in pool.shares if s.lends)


def excess(pool: Pool) -> int:
    """Instances the pool's shares use above their own limits: what reclaim can take back (``above_limit``)."""
    return sum(max(0, s.used - s.limit) for s in pool.shares)


def classify(share: ShareCapacity, needs: int, above: int) -> Cause:
    """What a head that is not misconfigured waits for, as ``reasons.waiting`` decides it; ``above``: its pool's
    ``excess`` (a head within its limit is not above it, so that is what the other shares could give back)."""
    pool = share.pool
    if share.used + needs <= share.limit:
        env = pool.env
        idle = env.capacity - env.used
        if share.lends:
            idle = min(idle, pool.free_lendable)
        return Cause.WAITING_FOR_RECLAIM if max(0, idle) + above >= needs else Cause.ENVIRONMENT_FULL
    if share.borrows and placement.under_ceiling(share, needs):
        return Cause.NOTHING_LENDABLE if pool.lender_idle < needs else Cause.LENDABLE_TAKEN
    return Cause.SHARE_AT_LIMIT


#: Kinds of the sweep's events, in the order they sort at one instant (all are applied before anything is read).
USAGE, LIMIT, START, END = 0, 1, 2, 3
#: What a head's cause may depend on beyond its own share: the pool's lending counters, or the environment.
_POOL_CAUSES = frozenset({Cause.NOTHING_LENDABLE, Cause.LENDABLE_TAKEN})
_ENVIRONMENT_CAUSES = frozenset({Cause.ENVIRONMENT_FULL, Cause.WAITING_FOR_RECLAIM})


class Level:
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


class Head:
    """A line's head while it waits for one cause: the readings taken when last charged (``since``), and what
    its charges add up to. The sums are kept here, in unboxed floats once compiled, and added to the sweep's
    tables once, when the head stops being the head or its cause changes (``Sweep.retire``)."""

    __slots__ = ("b_environment_idle", "b_lendable", "b_lender_idle", "b_needs", "b_seconds", "b_used", "behind",
                 "cause", "environment_idle", "environment_level", "lendable", "lendable_level", "lender_idle",
                 "lender_idle_level", "needs", "s_environment_idle", "s_lendable", "s_lender_idle", "s_needs",
                 "s_used", "seconds", "since", "used", "wait")

    def __init__(self, wait: Stretch, cause: Cause, needs: int, since: float, lendable: Level, lender_idle: Level,
                 environment: Level):
        self.wait, self.cause, self.needs, self.since, self.used = wait, cause, needs, since, wait.line.used
        #: its pool's lendable and lender-idle instances, its environment's idle ones: the integrals, and as read
        self.lendable_level, self.lender_idle_level, self.environment_level = lendable, lender_idle, environment
        self.lendable, self.lender_idle, self.environment_idle = (
            lendable.at(since), lender_idle.at(since), environment.at(since))
        #: what ``context`` adds up (seconds, then each figure times seconds), one attribute each (a list would box
        #: every float), and the same times the jobs behind it (``b_``)
        self.seconds = self.s_needs = self.s_lendable = self.s_lender_idle = self.s_environment_idle = 0.0
        self.s_used = 0.0
        self.b_seconds = self.b_needs = self.b_lendable = self.b_lender_idle = self.b_environment_idle = 0.0
        self.b_used = 0.0
        #: waiting seconds of the jobs behind it
        self.behind = 0.0

    def sums(self) -> list[float]:
        """What ``context`` adds up, in its order."""
        return [self.seconds, self.s_needs, self.s_lendable, self.s_lender_idle, self.s_environment_idle,
                self.s_used]

    def blocked_sums(self) -> list[float]:
        return [self.b_seconds, self.b_needs, self.b_lendable, self.b_lender_idle, self.b_environment_idle,
                self.b_used]


class Sweep:
    """The pass over time; a head is charged and looked at again only where something it depends on changed:
    its own share's usage or line, its pool's lending counters (a head that would borrow), its environment's
    idle instances (a head within its limit), a limit of its pool."""

    def __init__(self, pools: list[Pool], misconfigured: dict[int, str], instances: list[int]):
        #: per job record (by index): misconfigured (its reason), and the instances it needs
        self.misconfigured, self.instances = misconfigured, instances
        #: per line, the ranks of its waiting stretches (a heap: the head's first), and the stretch of each rank
        self.heaps: defaultdict[ShareCapacity, list[int]] = defaultdict(list)
        self.by_rank: list[Stretch] = []
        self.active: dict[Stretch, None] = {}
        self.count: defaultdict[ShareCapacity, int] = defaultdict(int)
        self.heads: dict[ShareCapacity, Head] = {}
        #: heads whose cause reads their pool's lending counters; heads within their limit (by environment)
        self.pool_heads: defaultdict[int, dict[ShareCapacity, None]] = defaultdict(dict)
        self.environment_heads: defaultdict[int, dict[ShareCapacity, None]] = defaultdict(dict)
        envs = {id(pool.env): pool.env for pool in pools}
        self.idle = {key: Level(max(0, env.capacity - env.used)) for key, env in envs.items()}
        self.lendable = {id(pool): Level(max(0, pool.free_lendable)) for pool in pools}
        self.lender_idle = {id(pool): Level(pool.lender_idle) for pool in pools}
        #: per pool, its ``excess``, kept as usage and limits change (one share's part at a time)
        self.excess = {id(pool): excess(pool) for pool in pools}
        self.behind: defaultdict[ShareCapacity, defaultdict[Cause, float]] = defaultdict(lambda: defaultdict(float))
        #: per waiting stretch that blocked its line so far: the seconds of the jobs behind it, in the order they
        #: first blocked, and per cause the pool's state meanwhile (``context``'s sums); let go when it ends
        self.blocked: dict[Stretch, float] = {}
        self.first_blocked: dict[Stretch, int] = {}
        self.blocking: dict[Stretch, dict[Cause, list[float]]] = {}
        self._blocked_count = 0
        #: per line, the stretch that held most behind-head seconds (the earliest to block among equals):
        #: ``(seconds, first-blocked order, stretch, its blocking sums)``
        self.blockers: dict[ShareCapacity, tuple[float, int, Stretch, dict[Cause, list[float]]]] = {}
        self.context: defaultdict[ShareCapacity, defaultdict[Cause, list[float]]] = defaultdict(
            lambda: defaultdict(lambda: [0.0] * 6))

    def flush(self, line: ShareCapacity, time: float) -> None:
        """Charge the line's head from its ``since`` to ``time`` (nothing its cause depends on changed meanwhile)."""
        head = self.heads.get(line)
        if head is None:
            return
        span = time - head.since
        if span <= 0:
            return
        level = head.lendable_level
        lendable = level.integral + level.value * (time - level.since)
        level = head.lender_idle_level
        lender_idle = level.integral + level.value * (time - level.since)
        level = head.environment_level
        idle = level.integral + level.value * (time - level.since)
        needs_span, lendable_span = head.needs * span, lendable - head.lendable
        lender_idle_span, idle_span, used_span = lender_idle - head.lender_idle, idle - head.environment_idle, \
            head.used * span
        head.seconds += span
        head.s_needs += needs_span
        head.s_lendable += lendable_span
        head.s_lender_idle += lender_idle_span
        head.s_environment_idle += idle_span
        head.s_used += used_span
        others = self.count[line] - 1
        if others:
            head.behind += others * span
            head.b_seconds += span * others
            head.b_needs += needs_span * others
            head.b_lendable += lendable_span * others
            head.b_lender_idle += lender_idle_span * others
            head.b_environment_idle += idle_span * others
            head.b_used += used_span * others
        head.since = time
        head.lendable, head.lender_idle, head.environment_idle = lendable, lender_idle, idle

    def retire(self, line: ShareCapacity, head: Head) -> None:
        """Add what ``head`` was charged (it is no longer the head, or waits for another cause from now)."""
        seconds = head.seconds
        if seconds <= 0:
            return
        sums = head.sums()
        wait, cause = head.wait, head.cause
        charged = wait.head
        assert charged is not None
        charged[cause] = charged.get(cause, 0.0) + seconds
        wait.stint[cause] = wait.stint.get(cause, 0.0) + seconds
        total = self.context[line][cause]
        for position in range(6):
            total[position] += sums[position]
        if head.behind > 0:
            self.behind[line][cause] += head.behind
            so_far = self.blocked.get(wait)
            if so_far is None:
                self.first_blocked[wait] = self._blocked_count
                self._blocked_count += 1
                self.blocking[wait] = {}
                so_far = 0.0
            self.blocked[wait] = so_far + head.behind
            total = self.blocking[wait].setdefault(cause, [0.0] * 6)
            blocked = head.blocked_sums()
            for position in range(6):
                total[position] += blocked[position]

    def ended(self, wait: Stretch) -> None:
        """``wait`` is over (its head retired): whether it blocked its line most is known; its sums are let go."""
        seconds = self.blocked.pop(wait, None)
        if seconds is None:
            return
        order = self.first_blocked.pop(wait)
        sums = self.blocking.pop(wait)
        best = self.blockers.get(wait.line)
        if best is None or seconds > best[0] or (seconds == best[0] and order < best[1]):
            self.blockers[wait.line] = (seconds, order, wait, sums)

    def cause_of(self, line: ShareCapacity, wait: Stretch) -> Cause:
        """What ``wait``, the head of ``line``, waits for in the state now."""
        index = wait.job
        if index in self.misconfigured:
            return Cause.MISCONFIGURED
        return classify(line, self.instances[index], self.excess[id(line.pool)])

    def place(self, line: ShareCapacity, wait: Stretch, time: float, cause: Cause) -> None:
        """``wait`` is the head of ``line`` from ``time`` on, waiting for ``cause``."""
        self.forget(line)
        pool = line.pool
        key = id(pool)
        self.heads[line] = Head(wait, cause, self.instances[wait.job], time, self.lendable[key],
                                self.lender_idle[key], self.idle[id(pool.env)])
        if cause in _POOL_CAUSES:
            self.pool_heads[key][line] = None
        elif cause in _ENVIRONMENT_CAUSES:
            self.environment_heads[id(pool.env)][line] = None

    def forget(self, line: ShareCapacity) -> None:
        head = self.heads.pop(line, None)
        if head is not None:
            self.retire(line, head)
            self.pool_heads[id(line.pool)].pop(line, None)
            self.environment_heads[id(line.pool.env)].pop(line, None)

    def finish(self) -> None:
        """Retire the heads still waiting and end their stretches (every stretch has ended by the report time, so
        normally none)."""
        for line in list(self.heads):
            self.forget(line)
        for wait in list(self.blocked):
            self.ended(wait)

    def levels_changed(self, pool: Pool, time: float) -> None:
        """After a change of ``pool``'s counters, the integrals carry on from the new values."""
        self.lendable[id(pool)].set(time, max(0, pool.free_lendable))
        self.lender_idle[id(pool)].set(time, pool.lender_idle)
        env = pool.env
        self.idle[id(env)].set(time, max(0, env.capacity - env.used))

    def instant(self, time: float, usage: list[tuple[ShareCapacity, int]], limits: list[ShareCapacity],
                starts: list[Stretch], ends: list[Stretch]) -> None:
        """One instant: the heads whose own share or line changes charged up to it, the changes applied, then the
        heads whose cause may have changed looked at again (and charged up to now first, where it did)."""
        own: dict[ShareCapacity, None] = {}  # its share's use or its line changes: charged now, whatever follows
        lines: dict[ShareCapacity, None] = {}  # its line changes: its head may change
        again: dict[ShareCapacity, None] = {}  # its pool or environment changes: its head's cause may change
        for share, _ in usage:
            own[share] = None
            again.update(self.pool_heads[id(share.pool)])
            again.update(self.environment_heads[id(share.pool.env)])
        for share in limits:
            again.update(dict.fromkeys(share.pool.shares))
        for wait in starts:
            lines[wait.line] = None
        for wait in ends:
            lines[wait.line] = None
        own.update(lines)
        for line in own:
            self.flush(line, time)
        above = self.excess
        for share, used in usage:
            limit = share.limit
            above[id(share.pool)] += max(0, used - limit) - max(0, share.used - limit)
            share.pool.adjust(share, used - share.used)
            self.levels_changed(share.pool, time)
        for share in limits:
            recount(share.pool)
            above[id(share.pool)] = excess(share.pool)
            self.levels_changed(share.pool, time)
        active, count, heaps, heads = self.active, self.count, self.heaps, self.heads
        for wait in starts:
            active[wait] = None
            count[wait.line] += 1
            heapq.heappush(heaps[wait.line], wait.rank)
        for wait in ends:
            if wait in active:
                del active[wait]
                count[wait.line] -= 1
        by_rank = self.by_rank
        for line in lines:
            heap = heaps[line]
            while heap and by_rank[heap[0]] not in active:
                heapq.heappop(heap)
            if not heap:
                self.forget(line)
                own.pop(line, None)
                again.pop(line, None)
            elif line not in heads or heads[line].wait is not by_rank[heap[0]]:
                wait = by_rank[heap[0]]
                if wait.head is None:
                    wait.head = {}
                wait.stint = {}
                wait.head_since = time
                self.place(line, wait, time, self.cause_of(line, wait))
                own.pop(line, None)
                again.pop(line, None)
        for line in own:  # charged up to now: a new head where its cause changed, else its share's use as now
            head = heads.get(line)
            if head is not None:
                again.pop(line, None)
                cause = self.cause_of(line, head.wait)
                if cause is head.cause:
                    head.used = line.used
                else:
                    self.place(line, head.wait, time, cause)
        for line in again:  # nothing of its own changed: charged and replaced only if its cause changed
            head = heads.get(line)
            if head is not None:
                cause = self.cause_of(line, head.wait)
                if cause is not head.cause:
                    self.flush(line, time)
                    self.place(line, head.wait, time, cause)
        for wait in ends:
            self.ended(wait)


def run(sweep: Sweep, times: list[float], kinds: list[int], numbers: list[int], numbered: list[ShareCapacity],
        who: list[int], used_after: list[int], changes: list[Any], waits: list[Stretch]) -> None:
    """The events in order (``times``, ``kinds``, ``numbers``: sorted by time, then kind, then number; a number
    is a position in the usage log, in ``changes`` or in ``waits``), one ``Sweep.instant`` per instant."""
    instant = sweep.instant
    position, total = 0, len(times)
    while position < total:
        time = times[position]
        usage: list[tuple[ShareCapacity, int]] = []
        limits: list[ShareCapacity] = []
        starts: list[Stretch] = []
        ends: list[Stretch] = []
        while position < total and times[position] == time:
            kind, number = kinds[position], numbers[position]
            position += 1
            if kind == USAGE:
                usage.append((numbered[who[number]], used_after[number]))
            elif kind == LIMIT:
                change = changes[number]
                share = numbered[change.number]
                share.limit, share.lends = change.limit, change.lends  # counters recounted in ``instant``
                limits.append(share)
            elif kind == START:
                starts.append(waits[number])
            else:
                ends.append(waits[number])
        instant(time, usage, limits, starts, ends)
    sweep.finish()
