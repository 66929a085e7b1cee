"""The sweep over time of "why jobs waited" (``results.wait_causes``): compiled with the simulator's hot path.

It runs after a run, never during one, but a million-job run gives it millions of instants to look at,
each with a few counter and heap operations: interpreted, it took longer than the run itself. The
rules it applies are described in ``results.wait_causes`` (which builds its inputs and charges its
results) and docs/simulator.md, "Why jobs waited".

Its state is kept on objects, not in dictionaries keyed by them: a line (one share on one instance type)
carries its heap of waiting stretches and its head's running sums, a stretch whether it waits now. What
it finds goes out as flat lists, one entry per piece of a head's wait (``Sweep.piece_stretch`` and the other
``piece_`` lists), that ``wait_causes`` charges with numpy.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from typing import Any, Final

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import EnvironmentType, Pool, ShareCapacity
from policy_engine.simulation.core.jobs import ACTIVE, PREEMPTED, Status

#: What a line's head waits for, numbered for the sweep's flat tables (``HEAD_CAUSES[number]``).
HEAD_CAUSES: Final = (Cause.MISCONFIGURED, Cause.WAITING_FOR_RECLAIM, Cause.ENVIRONMENT_FULL, Cause.NOTHING_LENDABLE,
                      Cause.LENDABLE_TAKEN, Cause.SHARE_AT_LIMIT)
MISCONFIGURED: Final = 0
WAITING_FOR_RECLAIM: Final = 1
ENVIRONMENT_FULL: Final = 2
NOTHING_LENDABLE: Final = 3
LENDABLE_TAKEN: Final = 4
SHARE_AT_LIMIT: Final = 5

#: A job's status as read from its record or the engine (a ``Status``, equal to its value)
_SUCCEEDED: Final = Status.SUCCEEDED.value
_RUNNABLE: Final = Status.RUNNABLE.value
_FAILED: Final = Status.FAILED.value


class Waiting:
    """The waiting stretches of a run, one entry per stretch in each list (a job's in order, jobs in record
    order): when a job was RUNNABLE, to its first attempt, between attempts, and after the last until it ended."""

    def __init__(self, lines: int) -> None:
        self.job: list[int] = []
        self.line: list[int] = []
        self.start: list[float] = []
        self.end: list[float] = []
        #: it follows a preempted attempt
        self.requeued: list[bool] = []
        #: its job's instances, priority (as the run ended) and submission
        self.needs: list[int] = []
        self.priority: list[int] = []
        self.submitted: list[float] = []
        #: it ended as its job failed (a time-limit action may have ended it)
        self.failed: list[bool] = []
        #: per line number: its attempts preempted while borrowed (``2 * line``) and own ones (``2 * line + 1``)
        self.preempted = [0] * (2 * lines)

    def add(self, job: int, line: int, start: float, end: float, requeued: bool, spec: Any, priority: int,
            failed: bool) -> None:
        self.job.append(job)
        self.line.append(line)
        self.start.append(start)
        self.end.append(end)
        self.requeued.append(requeued)
        self.needs.append(spec.instances)
        self.priority.append(priority)
        self.submitted.append(spec.submit_at)
        self.failed.append(failed)


def read_waits(timelines: Iterable[tuple[Any, Any, Any, Any, Any, Any, Any]], line_of: dict[tuple[str, str], int],
               lines: int, now: float) -> Waiting:
    """The stretches of every job's timeline (``results.records.Timeline``); ``line_of``: line numbers by (share,
    instance type); ``now``: the report time (a job still waiting waits until then)."""
    out = Waiting(lines)
    preempted = out.preempted
    index = -1
    for spec, priority, status, finished_at, ended, attempt_start, _ in timelines:
        index += 1
        line = line_of[(spec.share, spec.instance_type)]
        since: float = spec.submit_at
        requeued = False
        for attempt in ended:
            start: float = attempt.start
            if start > since:
                out.add(index, line, since, start, requeued, spec, priority, False)
            since = attempt.end
            requeued = attempt.outcome == PREEMPTED
            if requeued:
                preempted[2 * line + (0 if attempt.borrowed else 1)] += 1
        if status == _SUCCEEDED or status in ACTIVE:
            last: float = attempt_start
            if last > since:
                out.add(index, line, since, last, requeued, spec, priority, False)
        elif status in (_RUNNABLE, _FAILED):
            end: float = now if finished_at is None else finished_at
            if end > since:
                failed = status == _FAILED and finished_at is not None
                out.add(index, line, since, end, requeued, spec, priority, failed)
    return out


def recount(pool: Pool) -> None:
    """The pool's borrowed and lender-idle counters from its shares (after a limit change)."""
    pool.borrowed = sum(max(0, s.used - s.limit) for s in pool.shares if s.borrows)
    pool.lender_idle = sum(max(0, s.limit - s.used) for s in pool.shares if s.lends)


def excess(pool: Pool) -> int:
    """Instances the pool's shares use above their own limits: what reclaim can take back (``above_limit``)."""
    return sum(max(0, s.used - s.limit) for s in pool.shares)


def classify(share: ShareCapacity, needs: int, above: int) -> int:
    """What a head that is not misconfigured waits for (a ``HEAD_CAUSES`` number), as ``reasons.waiting`` decides
    it; ``above``: its pool's ``excess`` (a head within its limit is not above it, so that is what the other shares
    could give back)."""
    pool = share.pool
    if share.used + needs <= share.limit:
        env = pool.env
        idle = env.capacity - env.used
        if share.lends:
            idle = min(idle, pool.free_lendable)
        return WAITING_FOR_RECLAIM if max(0, idle) + above >= needs else ENVIRONMENT_FULL
    if share.borrows and placement.under_ceiling(share, needs):
        return NOTHING_LENDABLE if pool.lender_idle < needs else LENDABLE_TAKEN
    return SHARE_AT_LIMIT


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


class Sums:
    """What the pool looked like while heads waited for one cause, as sums: the seconds, and each figure times the
    seconds (``context`` divides them). Unboxed floats once compiled: added to at every charge, never allocated."""

    __slots__ = ("environment_idle", "lendable", "lender_idle", "needs", "seconds", "used")

    def __init__(self) -> None:
        self.seconds = self.needs = self.lendable = self.lender_idle = self.environment_idle = self.used = 0.0

    def figures(self) -> list[float]:
        """The sums in ``CauseContext``'s order: seconds, needs, lendable, lender idle, environment idle, used."""
        return [self.seconds, self.needs, self.lendable, self.lender_idle, self.environment_idle, self.used]


class Stretch:
    """One stretch of waiting of one job, as the sweep follows it."""

    __slots__ = ("active", "bad", "blocked", "blocking", "end", "first_blocked", "head_since", "line", "needs",
                 "number", "rank", "start", "stint")

    def __init__(self, number: int, line: Line, start: float, end: float, needs: int, bad: bool, rank: int) -> None:
        #: its position among the stretches, its line, when it starts and ends, the instances it needs, misconfigured
        self.number, self.line, self.start, self.end, self.needs, self.bad = number, line, start, end, needs, bad
        #: its place in its line's order among all stretches (priority, then submission, then workload order, then
        #: start), so that a line's heap compares integers
        self.rank = rank
        self.active = False
        #: numbered each time it becomes its line's head (-1: never was), and since when it is
        self.stint = -1
        self.head_since = 0.0
        #: the waiting seconds of the jobs behind it so far, when it first blocked its line, and per head cause
        #: the pool's state meanwhile (``Sums`` times the jobs behind); let go when it ends
        self.blocked = 0.0
        self.first_blocked = -1
        self.blocking: dict[int, Sums] | None = None


class Region:
    """A pool's lending counters or an environment's idle instances, and the lines whose head's cause reads them
    (in the order they came to, so that the sweep looks at them in a stable order)."""

    __slots__ = ("excess", "free", "heads", "lender_idle")

    def __init__(self, free: float, lender_idle: float, excess: int) -> None:
        #: ``free``: for a pool, its lendable idle instances not borrowed (``Pool.free_lendable``); for an
        #: environment, its idle instances. ``lender_idle``: a pool's lenders' idle instances (unused for an
        #: environment)
        self.free, self.lender_idle = Level(free), Level(lender_idle)
        #: for a pool: its shares' ``excess``, kept as usage and limits change (one share's part at a time)
        self.excess = excess
        self.heads: dict[Line, None] = {}


class Line:
    """One share on one instance type: its waiting stretches (a heap of ranks, the head's first), its head and
    the head's running sums since last charged, and what its heads were charged, per cause."""

    def __init__(self, number: int, share: ShareCapacity, pool: Region, environment: Region,
                 pool_lines: list[Line]):
        self.number, self.share, self.pool, self.environment = number, share, pool, environment
        #: the lines of its pool (a limit change there may change any of their heads' causes)
        self.pool_lines = pool_lines
        self.heap: list[int] = []
        self.count = 0  # stretches waiting now
        #: the instant it was last listed for (see ``Sweep.instant``), per list; -1 once taken off
        self.own_mark = self.line_mark = self.again_mark = -1
        self.head: Stretch | None = None
        self.cause = -1
        self.needs, self.used, self.since = 0, 0, 0.0
        #: the head's pool and environment integrals as read when last charged
        self.pool_free_read = self.lender_idle_read = self.environment_free_read = 0.0
        #: what ``context`` adds up for the head (seconds, then each figure times seconds, ``s_``), the same times
        #: the jobs behind it (``b_``), and the waiting seconds of the jobs behind it
        self.seconds = self.s_needs = self.s_lendable = self.s_lender_idle = self.s_idle = self.s_used = 0.0
        self.b_seconds = self.b_needs = self.b_lendable = self.b_lender_idle = self.b_idle = self.b_used = 0.0
        self.behind_now = 0.0
        #: per head cause: the seconds behind a head waiting for it, and the pool meanwhile; the causes in the
        #: order each was first charged
        self.behind = [0.0] * len(HEAD_CAUSES)
        self.behind_order: list[int] = []
        self.context = [Sums() for _ in HEAD_CAUSES]
        self.context_order: list[int] = []
        #: the stretch that held most behind-head seconds (the earliest to block among equals), with its figures
        self.blocker: Stretch | None = None
        self.blocker_seconds = 0.0
        self.blocker_order = -1
        self.blocker_sums: dict[int, Sums] = {}


class Sweep:
    """The pass over time; a head is charged and looked at again only where something it depends on changed:
    its own share's usage or line, its pool's lending counters (a head that would borrow), its environment's
    idle instances (a head within its limit), a limit of its pool."""

    def __init__(self, pools: list[Pool]) -> None:
        self.lines: list[Line] = []
        environments: dict[int, Region] = {}
        for pool in pools:
            env: EnvironmentType = pool.env
            if id(env) not in environments:
                environments[id(env)] = Region(max(0, env.capacity - env.used), 0.0, 0)
            region = Region(max(0, pool.free_lendable), pool.lender_idle, excess(pool))
            lines: list[Line] = []
            for share in pool.shares:
                lines.append(Line(len(self.lines), share, region, environments[id(env)], lines))
                self.lines.append(lines[-1])
        self.stretches: list[Stretch] = []
        #: the stretch of each rank
        self.by_rank: list[Stretch] = []
        self.stints = 0
        self.blocked_count = 0
        self.epoch = 0
        #: every piece a head was charged, in the order charged: its stretch's number, its ``HEAD_CAUSES`` number,
        #: its seconds and the stint it belongs to
        self.piece_stretch: list[int] = []
        self.piece_cause: list[int] = []
        self.piece_seconds: list[float] = []
        self.piece_stint: list[int] = []
        # one instant's events and the lines it lists (reused, so that an instant allocates nothing)
        self.usage_lines: list[Line] = []
        self.usage_used: list[int] = []
        self.limits: list[Line] = []
        self.starts: list[Stretch] = []
        self.ends: list[Stretch] = []
        self.own: list[Line] = []
        self.changed: list[Line] = []
        self.again: list[Line] = []

    def add_stretches(self, lines: list[int], starts: list[float], ends: list[float], needs: list[int],
                      bad: list[bool], ranks: list[int]) -> None:
        """The stretches to follow (by position: line number, start, end, instances needed, misconfigured, rank)."""
        stretches, all_lines = self.stretches, self.lines
        for number in range(len(lines)):
            stretches.append(Stretch(number, all_lines[lines[number]], starts[number], ends[number], needs[number],
                                     bad[number], ranks[number]))
        by_rank: list[Stretch | None] = [None] * len(stretches)
        for wait in stretches:
            by_rank[wait.rank] = wait
        self.by_rank = [wait for wait in by_rank if wait is not None]

    def flush(self, line: Line, time: float) -> None:
        """Charge the line's head from its ``since`` to ``time`` (nothing its cause depends on changed meanwhile)."""
        if line.head is None:
            return
        span = time - line.since
        if span <= 0:
            return
        level = line.pool.free
        lendable = level.integral + level.value * (time - level.since)
        level = line.pool.lender_idle
        lender_idle = level.integral + level.value * (time - level.since)
        level = line.environment.free
        idle = level.integral + level.value * (time - level.since)
        needs_span, lendable_span = line.needs * span, lendable - line.pool_free_read
        lender_idle_span, idle_span = lender_idle - line.lender_idle_read, idle - line.environment_free_read
        used_span = line.used * span
        line.seconds += span
        line.s_needs += needs_span
        line.s_lendable += lendable_span
        line.s_lender_idle += lender_idle_span
        line.s_idle += idle_span
        line.s_used += used_span
        others = line.count - 1
        if others:
            line.behind_now += others * span
            line.b_seconds += span * others
            line.b_needs += needs_span * others
            line.b_lendable += lendable_span * others
            line.b_lender_idle += lender_idle_span * others
            line.b_idle += idle_span * others
            line.b_used += used_span * others
        line.since = time
        line.pool_free_read, line.lender_idle_read, line.environment_free_read = lendable, lender_idle, idle

    def retire(self, line: Line) -> None:
        """Add what the line's head was charged (it is no longer the head, or waits for another cause from now)."""
        wait = line.head
        seconds = line.seconds
        if wait is None or seconds <= 0:
            return
        cause = line.cause
        self.piece_stretch.append(wait.number)
        self.piece_cause.append(cause)
        self.piece_seconds.append(seconds)
        self.piece_stint.append(wait.stint)
        context = line.context[cause]
        if context.seconds == 0.0:
            line.context_order.append(cause)
        context.seconds += seconds
        context.needs += line.s_needs
        context.lendable += line.s_lendable
        context.lender_idle += line.s_lender_idle
        context.environment_idle += line.s_idle
        context.used += line.s_used
        behind = line.behind_now
        if behind > 0:
            if line.behind[cause] == 0.0:
                line.behind_order.append(cause)
            line.behind[cause] += behind
            blocking = wait.blocking
            if blocking is None:
                wait.first_blocked = self.blocked_count
                self.blocked_count += 1
                blocking = wait.blocking = {}
            wait.blocked += behind
            total = blocking.get(cause)
            if total is None:
                total = blocking[cause] = Sums()
            total.seconds += line.b_seconds
            total.needs += line.b_needs
            total.lendable += line.b_lendable
            total.lender_idle += line.b_lender_idle
            total.environment_idle += line.b_idle
            total.used += line.b_used

    def ended(self, wait: Stretch) -> None:
        """``wait`` is over (its head retired): whether it blocked its line most is known; its sums are let go."""
        sums = wait.blocking
        if sums is None:
            return
        wait.blocking = None
        line = wait.line
        seconds, order = wait.blocked, wait.first_blocked
        if line.blocker is None or seconds > line.blocker_seconds or (
                seconds == line.blocker_seconds and order < line.blocker_order):
            line.blocker, line.blocker_seconds, line.blocker_order, line.blocker_sums = wait, seconds, order, sums

    def cause_of(self, line: Line, wait: Stretch) -> int:
        """What ``wait``, the head of ``line``, waits for in the state now."""
        if wait.bad:
            return MISCONFIGURED
        return classify(line.share, wait.needs, line.pool.excess)

    def place(self, line: Line, wait: Stretch, time: float, cause: int) -> None:
        """``wait`` is the head of ``line`` from ``time`` on, waiting for ``cause``."""
        self.forget(line)
        line.head, line.cause, line.needs, line.since, line.used = wait, cause, wait.needs, time, line.share.used
        line.pool_free_read = line.pool.free.at(time)
        line.lender_idle_read = line.pool.lender_idle.at(time)
        line.environment_free_read = line.environment.free.at(time)
        line.seconds = line.s_needs = line.s_lendable = line.s_lender_idle = line.s_idle = line.s_used = 0.0
        line.b_seconds = line.b_needs = line.b_lendable = line.b_lender_idle = line.b_idle = line.b_used = 0.0
        line.behind_now = 0.0
        if cause in (NOTHING_LENDABLE, LENDABLE_TAKEN):
            line.pool.heads[line] = None
        elif cause in (ENVIRONMENT_FULL, WAITING_FOR_RECLAIM):
            line.environment.heads[line] = None

    def forget(self, line: Line) -> None:
        if line.head is not None:
            self.retire(line)
            line.pool.heads.pop(line, None)
            line.environment.heads.pop(line, None)
            line.head = None

    def finish(self) -> None:
        """Retire the heads still waiting and end their stretches (every stretch has ended by the report time, so
        normally none)."""
        for line in self.lines:
            self.forget(line)
        blocking = sorted((wait for wait in self.stretches if wait.blocking is not None),
                          key=lambda wait: wait.first_blocked)
        for wait in blocking:
            self.ended(wait)

    def levels_changed(self, line: Line, time: float) -> None:
        """After a change of the counters of ``line``'s pool, the integrals carry on from the new values."""
        pool = line.share.pool
        line.pool.free.set(time, max(0, pool.free_lendable))
        line.pool.lender_idle.set(time, pool.lender_idle)
        env = pool.env
        line.environment.free.set(time, max(0, env.capacity - env.used))

    def instant(self, time: float) -> None:
        """One instant (its events in ``usage_lines``/``usage_used``, ``limits``, ``starts`` and ``ends``): the heads
        whose own share or line changes charged up to it, the changes applied, then the heads whose cause may have
        changed looked at again (and charged up to now first, where it did)."""
        epoch = self.epoch = self.epoch + 1
        own, changed, again = self.own, self.changed, self.again
        own.clear()  # its share's use or its line changes: charged now, whatever follows
        changed.clear()  # its line changes: its head may change
        again.clear()  # its pool or environment changes: its head's cause may change
        for line in self.usage_lines:
            if line.own_mark != epoch:
                line.own_mark = epoch
                own.append(line)
            for other in line.pool.heads:
                if other.again_mark != epoch:
                    other.again_mark = epoch
                    again.append(other)
            for other in line.environment.heads:
                if other.again_mark != epoch:
                    other.again_mark = epoch
                    again.append(other)
        for line in self.limits:
            for other in line.pool_lines:
                if other.again_mark != epoch:
                    other.again_mark = epoch
                    again.append(other)
        for wait in self.starts:
            line = wait.line
            if line.line_mark != epoch:
                line.line_mark = epoch
                changed.append(line)
        for wait in self.ends:
            line = wait.line
            if line.line_mark != epoch:
                line.line_mark = epoch
                changed.append(line)
        for line in changed:
            if line.own_mark != epoch:
                line.own_mark = epoch
                own.append(line)
        for line in own:
            self.flush(line, time)
        usage_used = self.usage_used
        for position, line in enumerate(self.usage_lines):
            share, used = line.share, usage_used[position]
            limit = share.limit
            line.pool.excess += max(0, used - limit) - max(0, share.used - limit)
            share.pool.adjust(share, used - share.used)
            self.levels_changed(line, time)
        for line in self.limits:
            recount(line.share.pool)
            line.pool.excess = excess(line.share.pool)
            self.levels_changed(line, time)
        for wait in self.starts:
            wait.active = True
            line = wait.line
            line.count += 1
            heapq.heappush(line.heap, wait.rank)
        for wait in self.ends:
            if wait.active:
                wait.active = False
                wait.line.count -= 1
        by_rank = self.by_rank
        for line in changed:
            heap = line.heap
            while heap and not by_rank[heap[0]].active:
                heapq.heappop(heap)
            if not heap:
                self.forget(line)
                line.own_mark = line.again_mark = -1
            elif line.head is not by_rank[heap[0]]:
                wait = by_rank[heap[0]]
                wait.stint = self.stints
                self.stints += 1
                wait.head_since = time
                self.place(line, wait, time, self.cause_of(line, wait))
                line.own_mark = line.again_mark = -1
        for line in own:  # charged up to now: a new head where its cause changed, else its share's use as now
            head = line.head
            if line.own_mark == epoch and head is not None:
                line.again_mark = -1
                cause = self.cause_of(line, head)
                if cause == line.cause:
                    line.used = line.share.used
                else:
                    self.place(line, head, time, cause)
        for line in again:  # nothing of its own changed: charged and replaced only if its cause changed
            head = line.head
            if line.again_mark == epoch and head is not None:
                cause = self.cause_of(line, head)
                if cause != line.cause:
                    self.flush(line, time)
                    self.place(line, head, time, cause)
        for wait in self.ends:
            self.ended(wait)


def run(sweep: Sweep, usage_times: list[float], who: list[int], used_after: list[int],
        changes: list[tuple[float, int, int, bool]], start_order: list[int], end_order: list[int]) -> None:
    """The events, merged in time order from four streams each in time order, one ``Sweep.instant`` per instant:
    the usage log (``usage_times``, ``who``: line number, ``used_after``: instances used after), the limit changes
    (time, line number, limit, lends), and the stretches by start and by end (their numbers). Events of one instant
    are applied in that order of kinds, each kind in its stream's order."""
    stretches = sweep.stretches
    usage_lines, usage_used, limits, starts, ends = (sweep.usage_lines, sweep.usage_used, sweep.limits, sweep.starts,
                                                     sweep.ends)
    lines = sweep.lines
    used, changed, started, ended = 0, 0, 0, 0
    usage_count, change_count, start_count, end_count = len(usage_times), len(changes), len(start_order), \
        len(end_order)
    # the next stretch to start and to end, and when (infinity once there is none)
    next_start = stretches[start_order[0]] if start_count else None
    next_end = stretches[end_order[0]] if end_count else None
    start_at = next_start.start if next_start is not None else math.inf
    end_at = next_end.end if next_end is not None else math.inf
    # (a report time of infinity, ``engine.run(math.inf)``, ends stretches there: an instant like any other)
    while next_start is not None or next_end is not None or used < usage_count or changed < change_count:
        time = start_at if start_at < end_at else end_at
        if used < usage_count and usage_times[used] < time:
            time = usage_times[used]
        if changed < change_count and changes[changed][0] < time:
            time = changes[changed][0]
        usage_lines.clear()
        usage_used.clear()
        limits.clear()
        starts.clear()
        ends.clear()
        while used < usage_count and usage_times[used] == time:
            usage_lines.append(lines[who[used]])
            usage_used.append(used_after[used])
            used += 1
        while changed < change_count and changes[changed][0] == time:
            _, line_number, limit, lends = changes[changed]
            line = lines[line_number]
            line.share.limit, line.share.lends = limit, lends  # counters recounted in ``instant``
            limits.append(line)
            changed += 1
        while next_start is not None and start_at == time:
            starts.append(next_start)
            started += 1
            next_start = stretches[start_order[started]] if started < start_count else None
            start_at = next_start.start if next_start is not None else math.inf
        while next_end is not None and end_at == time:
            ends.append(next_end)
            ended += 1
            next_end = stretches[end_order[ended]] if ended < end_count else None
            end_at = next_end.end if next_end is not None else math.inf
        sweep.instant(time)
    sweep.finish()
