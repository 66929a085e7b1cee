"""The sweep over time of "why jobs waited" (``results.wait_causes``): compiled with the simulator's hot path.

It runs after a run, never during one, but a million-job run gives it millions of instants to look at,
each with a few counter and heap operations: interpreted, it took longer than the run itself. The
rules it applies are described in ``results.wait_causes`` (which builds its inputs and charges its
results) and docs/simulator.md, "Why jobs waited".

Its state is kept on objects, not in dictionaries keyed by them: a line (one share on one instance type)
carries its waiting stretches' ranks (ascending runs, a heap for the rest: ``Line.push``) and its head's
running sums. A stretch is known by its rank, and is an object (``Stretch``) only once it has been its line's head,
until it ends: a heavy million-job run has some 300,000 stretches waiting at once, most of them never the head yet
(objects for them cost 40 MB and a million allocations). Its events come in time order as lists, a window at a time
(``Window``, merged by numpy in ``wait_causes``), the two commonest kinds of instant on short paths
(``Sweep.started``, ``Sweep.placed``); what the sweep finds goes out as typed arrays, one entry per piece of a
head's wait (``Sweep.piece_stretch`` and the other ``piece_`` arrays), that ``wait_causes`` charges with numpy.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterator
from typing import Any, Final, NamedTuple

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import EnvironmentType, Pool, ShareCapacity
from policy_engine.simulation.core.jobs import ACTIVE, PREEMPTED, Job, Status

#: What a line's head waits for, numbered for the sweep's flat tables (``HEAD_CAUSES[number]``).
HEAD_CAUSES: Final = (Cause.MISCONFIGURED, Cause.WAITING_FOR_RECLAIM, Cause.ENVIRONMENT_FULL, Cause.NOTHING_LENDABLE,
                      Cause.LENDABLE_TAKEN, Cause.SHARE_AT_LIMIT)
MISCONFIGURED: Final = 0
WAITING_FOR_RECLAIM: Final = 1
ENVIRONMENT_FULL: Final = 2
NOTHING_LENDABLE: Final = 3
LENDABLE_TAKEN: Final = 4
SHARE_AT_LIMIT: Final = 5

#: A line's ascending runs of ranks (``Line.push``; priorities beyond go in its heap), and how far a run is read
#: before the ranks passed over are let go.
_RUNS: Final = 4
_COMPACT: Final = 64

#: Pieces charged between two moves into the sweep's typed arrays (``Sweep.spill``).
_PIECES: Final = 16_384

#: A job's status as read from its record or the engine (a ``Status``, equal to its value)
_SUCCEEDED: Final = Status.SUCCEEDED.value
_RUNNABLE: Final = Status.RUNNABLE.value
_FAILED: Final = Status.FAILED.value


class Waiting:
    """The waiting stretches of some jobs of a run, one entry per stretch in each list (a job's in order, jobs in
    record order): when a job was RUNNABLE, to its first attempt, between attempts, and after the last until it
    ended. ``read``: how many jobs they come from (some never waited)."""

    def __init__(self, preempted: list[int]) -> None:
        self.read = 0
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
        self.preempted = preempted

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


def read_waits(timelines: Iterator[tuple[Any, Any, Any, Any, Any, Any, Any]], line_of: dict[tuple[str, str], int],
               preempted: list[int], now: float, first: int, limit: int) -> Waiting:
    """The stretches of the next ``limit`` jobs' timelines (``results.records.Timeline``), numbered from ``first``
    (read a chunk at a time: a million jobs' stretches never sit in lists); ``line_of``: line numbers by (share,
    instance type); ``preempted``: counted into (``Waiting.preempted``); ``now``: the report time (a job still
    waiting waits until then)."""
    out = Waiting(preempted)
    index = first - 1
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
        if index - first + 1 == limit:
            break
    out.read = index - first + 1
    return out


def read_jobs(jobs: list[Job], priorities: list[int], statuses: list[Status], line_of: dict[tuple[str, str], int],
              preempted: list[int], now: float, first: int, limit: int) -> Waiting:
    """``read_waits`` of the engine's own finished jobs (a result's ``JobRecords`` with none still open), read from
    the jobs themselves: no timeline tuple per job, a job's line looked up once per share."""
    out = Waiting(preempted)
    lines_by_share: dict[ShareCapacity, int] = {}
    stop = min(len(jobs), first + limit)
    for index in range(first, stop):
        job = jobs[index]
        spec = job.spec
        share = job.share
        line = lines_by_share.get(share, -1)
        if line < 0:
            line = lines_by_share[share] = line_of[(spec.share, spec.instance_type)]
        priority, status = priorities[index], statuses[index]
        since: float = spec.submit_at
        requeued = False
        for attempt in job.segments:
            start: float = attempt.start
            if start > since:
                out.add(index, line, since, start, requeued, spec, priority, False)
            ended_at = attempt.end
            assert ended_at is not None, "an ended attempt has its end"
            since = ended_at
            requeued = attempt.outcome == PREEMPTED
            if requeued:
                preempted[2 * line + (0 if attempt.borrowed else 1)] += 1
        if status == _SUCCEEDED or status in ACTIVE:
            last: float = job.attempt_start
            if last > since:
                out.add(index, line, since, last, requeued, spec, priority, False)
        elif status in (_RUNNABLE, _FAILED):
            finished_at = job.finished_at
            end: float = now if finished_at is None else finished_at
            if end > since:
                failed = status == _FAILED and finished_at is not None
                out.add(index, line, since, end, requeued, spec, priority, failed)
    out.read = max(0, stop - first)
    return out


def stretch_code(needs: int, bad: bool, watched: bool) -> int:
    """A waiting stretch's instances needed, misconfigured and watched (see ``Stretch``) as one positive int: what
    ``Sweep.state`` keeps per rank while it waits (``wait_causes`` packs the same with numpy)."""
    return (needs << 2) | (2 if bad else 0) | (1 if watched else 0)


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

    def clear(self) -> None:
        self.seconds = self.needs = self.lendable = self.lender_idle = self.environment_idle = self.used = 0.0

    def figures(self) -> list[float]:
        """The sums in ``CauseContext``'s order: seconds, needs, lendable, lender idle, environment idle, used."""
        return [self.seconds, self.needs, self.lendable, self.lender_idle, self.environment_idle, self.used]


class Stretch:
    """One stretch of waiting of one job, as the sweep follows it: made when it first becomes its line's head, let go
    when it ends."""

    __slots__ = ("bad", "blocked", "blocking", "first_blocked", "first_cause", "first_sums", "head_since", "line",
                 "needs", "rank", "stint", "watched")

    def __init__(self, rank: int, line: Line, needs: int, bad: bool, watched: bool) -> None:
        #: its place in its line's order among all stretches (priority, then submission, then workload order, then
        #: start), so that a line's runs and heap compare integers: what names it in the sweep's results (the
        #: pieces, ``Sweep.watched``, a line's blocker); its line, the instances it needs, misconfigured
        self.rank, self.line, self.needs, self.bad = rank, line, needs, bad
        #: its last stint and when it began are kept when it ends (``Sweep.watched``): a time-limit action may have
        #: ended it
        self.watched = watched
        #: numbered each time it becomes its line's head (-1: never was), and since when it is
        self.stint = -1
        self.head_since = 0.0
        #: the waiting seconds of the jobs behind it so far, when it first blocked its line, and per head cause
        #: the pool's state meanwhile (``Sums`` times the jobs behind): the first cause's on its own (most stretches
        #: block for one cause: no dictionary each), any later one's in ``blocking``; let go when it ends
        self.blocked = 0.0
        self.first_blocked = -1
        self.first_cause = -1
        self.first_sums: Sums | None = None
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
    """One share on one instance type: its waiting stretches (ranks in ascending runs, and a heap of the others: see
    ``push``), its head and
    the head's running sums since last charged, and what its heads were charged, per cause."""

    def __init__(self, number: int, share: ShareCapacity, pool: Region, environment: Region,
                 pool_lines: list[Line]):
        self.number, self.share, self.pool, self.environment = number, share, pool, environment
        #: the lines of its pool (a limit change there may change any of their heads' causes)
        self.pool_lines = pool_lines
        #: the ranks of its waiting stretches (and of ended ones not yet passed over): in ascending runs, each read
        #: from ``run_at`` on, and the others in a heap (``push``, ``first``)
        self.runs: list[list[int]] = []
        self.run_at: list[int] = []
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


    def push(self, rank: int) -> None:
        """A stretch starts waiting. A line's stretches mostly start in rank order within a priority (a job's first
        stretch starts as it is submitted): appended to the first run it extends, they need no heap operation (whose
        comparisons of deep lines cost more than the rest of the sweep's step); the others go in the heap."""
        runs = self.runs
        for run in runs:
            if not run or run[-1] < rank:
                run.append(rank)
                return
        if len(runs) < _RUNS:
            runs.append([rank])
            self.run_at.append(0)
            return
        heapq.heappush(self.heap, rank)

    def first(self, state: list[int]) -> int:
        """The rank of the waiting stretch of the lowest rank (-1: none waits): the lowest of the runs' fronts and the
        heap's top, passing over (and letting go) ended ones, 0 in ``state`` (looked up only for that lowest
        rank)."""
        runs, run_at, heap = self.runs, self.run_at, self.heap
        while True:
            best = which = -1
            for number in range(len(runs)):
                run = runs[number]
                at = run_at[number]
                if at < len(run):
                    rank = run[at]
                    if best < 0 or rank < best:
                        best, which = rank, number
            if heap:
                top = heap[0]
                if best < 0 or top < best:
                    best, which = top, len(runs)
            if best < 0:
                return -1
            if state[best]:
                return best
            if which == len(runs):  # ended: passed over
                heapq.heappop(heap)
                continue
            run = runs[which]
            at = run_at[which] + 1
            if at == len(run):
                run.clear()
                at = 0
            elif at >= _COMPACT and 2 * at >= len(run):
                del run[:at]
                at = 0
            run_at[which] = at


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
        #: per rank, its ``stretch_code`` while it waits (0 before and after), and the ``Stretch`` of each waiting
        #: one that has been its line's head (``None`` for the others: a list, read twice per stretch, not a dict)
        self.state: list[int] = []
        self.known: list[Stretch | None] = []
        #: the first cause's sums of stretches that ended without blocking their line most, to be used again
        self.spare_sums: list[Sums] = []
        #: per watched stretch's number, its last stint and when it began (``Stretch.watched``)
        self.watched: dict[int, tuple[int, float]] = {}
        self.stints = 0
        self.blocked_count = 0
        self.epoch = 0
        #: every piece a head was charged, in the order charged: its stretch's rank, its ``HEAD_CAUSES`` number and
        #: its seconds (typed arrays, filled from the ``_pending`` lists a chunk at a time); for a watched stretch's
        #: pieces, by position, the stint each belongs to
        self.piece_stretch: array[int] = array("i")
        self.piece_cause: array[int] = array("b")
        self.piece_seconds: array[float] = array("d")
        self.watched_pieces: dict[int, int] = {}
        self.pieces = 0
        self._pending_stretch: list[int] = []
        self._pending_cause: list[int] = []
        self._pending_seconds: list[float] = []
        # one window of the event stream (``Window``): per event its line's number, its value and a start's code;
        # the limit changes an event of that kind numbers; and the lists an instant fills (reused: it allocates
        # nothing)
        self.event_lines: list[int] = []
        self.event_values: list[int] = []
        self.event_codes: list[int] = []
        self.changes: list[tuple[float, int, int, bool]] = []
        self.ending: list[Stretch] = []
        self.own: list[Line] = []
        self.changed: list[Line] = []
        self.again: list[Line] = []

    def expect(self, stretches: int) -> None:
        """How many stretches the windows will bring (their ranks are 0 to ``stretches - 1``)."""
        self.state = [0] * stretches
        self.known = [None] * stretches

    def take_pieces(self) -> tuple[array[int], array[int], array[float]]:
        """The pieces' arrays (stretch, cause, seconds), handed over: the sweep keeps none, so that the caller lets
        each go once copied (a million-job run has millions of pieces)."""
        taken = self.piece_stretch, self.piece_cause, self.piece_seconds
        self.piece_stretch, self.piece_cause, self.piece_seconds = array("i"), array("b"), array("d")
        return taken

    def spill(self) -> None:
        """The pieces charged since the last spill, moved into the typed arrays."""
        self.piece_stretch.fromlist(self._pending_stretch)  # ``fromlist``: a list's items, twice as fast as ``extend``
        self.piece_cause.fromlist(self._pending_cause)
        self.piece_seconds.fromlist(self._pending_seconds)
        self._pending_stretch.clear()
        self._pending_cause.clear()
        self._pending_seconds.clear()

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
        pending = self._pending_stretch
        pending.append(wait.rank)
        self._pending_cause.append(cause)
        self._pending_seconds.append(seconds)
        if wait.watched:
            self.watched_pieces[self.pieces] = wait.stint
        self.pieces += 1
        if len(pending) >= _PIECES:
            self.spill()
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
            if wait.first_cause < 0:
                wait.first_blocked = self.blocked_count
                self.blocked_count += 1
                wait.first_cause = cause
                wait.first_sums = self.spare_sums.pop() if self.spare_sums else Sums()
            wait.blocked += behind
            total = wait.first_sums
            if cause != wait.first_cause or total is None:
                blocking = wait.blocking
                if blocking is None:
                    blocking = wait.blocking = {}
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
        if wait.watched:
            self.watched[wait.rank] = (wait.stint, wait.head_since)
        first = wait.first_sums
        if first is None:
            return
        later = wait.blocking
        wait.first_sums = wait.blocking = None
        line = wait.line
        seconds, order = wait.blocked, wait.first_blocked
        if line.blocker is None or seconds > line.blocker_seconds or (
                seconds == line.blocker_seconds and order < line.blocker_order):
            # its sums by cause in the order first charged (the first cause, then the later ones)
            sums = {wait.first_cause: first}
            if later is not None:
                sums.update(later)
            line.blocker, line.blocker_seconds, line.blocker_order, line.blocker_sums = wait, seconds, order, sums
        else:  # its first cause's sums serve the next stretch to block
            first.clear()
            self.spare_sums.append(first)

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
        normally none; of those never the head, nothing is kept)."""
        for line in self.lines:
            self.forget(line)
        waiting = [wait for wait in self.known if wait is not None]
        for wait in sorted(waiting, key=lambda wait: wait.first_blocked):
            self.ended(wait)
        self.spill()

    def levels_changed(self, line: Line, time: float) -> None:
        """After a change of the counters of ``line``'s pool, the integrals carry on from the new values."""
        pool = line.share.pool
        line.pool.free.set(time, max(0, pool.free_lendable))
        line.pool.lender_idle.set(time, pool.lender_idle)
        env = pool.env
        line.environment.free.set(time, max(0, env.capacity - env.used))

    def heads_around(self, line: Line, epoch: int) -> None:
        """The heads of ``line``'s pool and environment, whose cause a change of its use may change, listed in
        ``again`` (once per ``epoch``)."""
        again = self.again
        for other in line.pool.heads:
            if other.again_mark != epoch:
                other.again_mark = epoch
                again.append(other)
        for other in line.environment.heads:
            if other.again_mark != epoch:
                other.again_mark = epoch
                again.append(other)

    def use(self, line: Line, used: int, time: float) -> None:
        """``line``'s share uses ``used`` instances from ``time`` on: its pool's counters and levels follow."""
        share = line.share
        limit = share.limit
        line.pool.excess += max(0, used - limit) - max(0, share.used - limit)
        share.pool.adjust(share, used - share.used)
        self.levels_changed(line, time)

    def new_head(self, line: Line, rank: int, time: float) -> None:
        """The waiting stretch ``rank`` is ``line``'s head from ``time`` on (an object from its first time)."""
        wait = self.known[rank]
        if wait is None:
            code = self.state[rank]
            wait = self.known[rank] = Stretch(rank, line, code >> 2, (code & 2) != 0, (code & 1) != 0)
        wait.stint = self.stints
        self.stints += 1
        wait.head_since = time
        self.place(line, wait, time, self.cause_of(line, wait))

    def look_again(self, again: list[Line], epoch: int, time: float) -> None:
        """The heads of ``again`` whose pool or environment changed, and nothing of their own (still marked for
        this ``epoch``): charged up to now and placed again only where their cause changed."""
        for line in again:
            head = line.head
            if line.again_mark == epoch and head is not None:
                cause = self.cause_of(line, head)
                if cause != line.cause:
                    self.flush(line, time)
                    self.place(line, head, time, cause)

    def started(self, time: float, at: int) -> None:
        """An instant whose one event, at ``at``, is a stretch starting (half of a heavy run's instants): what
        ``instant`` does for it, without its lists. No counter changed, so the head's cause is as it was; only a new
        head (the stretch, first in its line) is classified."""
        line = self.lines[self.event_lines[at]]
        rank = self.event_values[at]
        self.flush(line, time)
        self.state[rank] = self.event_codes[at]
        line.count += 1
        line.push(rank)
        head = line.head
        if head is None or rank < head.rank:  # no head: nothing else waits (``instant`` lets a head go only then)
            self.new_head(line, rank, time)

    def placed(self, time: float, at: int) -> None:
        """An instant whose events are a line's usage change, at ``at``, and a stretch of that line ending, at
        ``at + 1`` (a job placed: a third of a heavy run's instants): what ``instant`` does for them, with one list."""
        epoch = self.epoch = self.epoch + 1
        line = self.lines[self.event_lines[at]]
        again = self.again
        again.clear()
        self.heads_around(line, epoch)
        self.flush(line, time)
        self.use(line, self.event_values[at], time)
        state, rank = self.state, self.event_values[at + 1]
        assert state[rank], "a stretch ends after it starts, once"
        state[rank] = 0
        line.count -= 1
        ending = self.known[rank]
        self.known[rank] = None
        line.again_mark = -1  # looked at here, not among ``again``
        first = line.first(state)
        head = line.head
        if first < 0:
            self.forget(line)
        elif head is None or head.rank != first:
            self.new_head(line, first, time)
        else:
            cause = self.cause_of(line, head)
            if cause == line.cause:
                line.used = line.share.used
            else:
                self.place(line, head, time, cause)
        self.look_again(again, epoch, time)
        if ending is not None:
            self.ended(ending)

    def instant(self, time: float, begin: int, usage_end: int, limit_end: int, start_end: int, end: int) -> None:
        """One instant: the window's events ``begin`` to ``end``, by kind (usage changes, limit changes, stretches
        starting, stretches ending; see ``Window``). The heads whose own share or line changes are charged up to it,
        the changes applied, then the heads whose cause may have changed looked at again (and charged up to now
        first, where it did)."""
        epoch = self.epoch = self.epoch + 1
        lines, event_lines, event_values = self.lines, self.event_lines, self.event_values
        own, changed, again = self.own, self.changed, self.again
        own.clear()  # its share's use or its line changes: charged now, whatever follows
        changed.clear()  # its line changes: its head may change
        again.clear()  # its pool or environment changes: its head's cause may change
        for at in range(usage_end, limit_end):  # a limit in force from now (counters recounted below)
            _, _, limit, lends = self.changes[event_values[at]]
            share = lines[event_lines[at]].share
            share.limit, share.lends = limit, lends
        for at in range(begin, usage_end):
            line = lines[event_lines[at]]
            if line.own_mark != epoch:
                line.own_mark = epoch
                own.append(line)
            self.heads_around(line, epoch)
        for at in range(usage_end, limit_end):
            for other in lines[event_lines[at]].pool_lines:
                if other.again_mark != epoch:
                    other.again_mark = epoch
                    again.append(other)
        for at in range(limit_end, end):  # stretches starting, then ending
            line = lines[event_lines[at]]
            if line.line_mark != epoch:
                line.line_mark = epoch
                changed.append(line)
        for line in changed:
            if line.own_mark != epoch:
                line.own_mark = epoch
                own.append(line)
        for line in own:
            self.flush(line, time)
        for at in range(begin, usage_end):
            self.use(lines[event_lines[at]], event_values[at], time)
        for at in range(usage_end, limit_end):
            line = lines[event_lines[at]]
            recount(line.share.pool)
            line.pool.excess = excess(line.share.pool)
            self.levels_changed(line, time)
        state, known, ending, event_codes = self.state, self.known, self.ending, self.event_codes
        for at in range(limit_end, start_end):
            line = lines[event_lines[at]]
            rank = event_values[at]
            state[rank] = event_codes[at]
            line.count += 1
            line.push(rank)
        ending.clear()
        for at in range(start_end, end):
            line = lines[event_lines[at]]
            rank = event_values[at]
            assert state[rank], "a stretch ends after it starts, once"
            state[rank] = 0
            line.count -= 1
            wait = known[rank]
            known[rank] = None
            if wait is not None:
                ending.append(wait)
        for line in changed:
            first = line.first(state)
            if first < 0:
                self.forget(line)
                line.own_mark = line.again_mark = -1
            else:
                head = line.head
                if head is None or head.rank != first:
                    self.new_head(line, first, time)
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
        self.look_again(again, epoch, time)  # nothing of its own changed
        for wait in ending:
            self.ended(wait)


class Window(NamedTuple):
    """A stretch of time's events, merged in time order, as lists the sweep reads (``Sweep.instant``): per instant,
    its time and how many events of each kind it has (counts, not positions: small ints, which Python does not
    allocate); per event, its line's number, its value and, for a stretch starting, its ``stretch_code`` (0 for
    the others). Events of one instant come in that order of kinds: usage changes (value: the instances used after
    it), limit changes (value: its number in the sweep's ``changes``), stretches starting, then ending (value: the
    stretch's rank)."""

    times: list[float]
    usages: list[int]
    limits: list[int]
    starts: list[int]
    ends: list[int]
    lines: list[int]
    values: list[int]
    codes: list[int]


def run(sweep: Sweep, windows: Iterator[Window], changes: list[tuple[float, int, int, bool]]) -> None:
    """Every instant of the windows, in time order (``changes``: the limit changes (time, line number, limit,
    lends) the windows' limit events number), then the heads still waiting retired."""
    sweep.changes = changes
    for window in windows:
        sweep.event_lines, sweep.event_values, sweep.event_codes = window.lines, window.values, window.codes
        begin = 0
        usages, limits, starts, ends = window.usages, window.limits, window.starts, window.ends
        for at, time in enumerate(window.times):
            usage_end = begin + usages[at]
            limit_end = usage_end + limits[at]
            start_end = limit_end + starts[at]
            end = start_end + ends[at]
            if limit_end == begin and start_end == end == begin + 1:
                sweep.started(time, begin)
            elif usage_end == limit_end == start_end == begin + 1 and end == begin + 2 and \
                    sweep.event_lines[begin] == sweep.event_lines[start_end]:
                sweep.placed(time, begin)
            else:
                sweep.instant(time, begin, usage_end, limit_end, start_end, end)
            begin = end
    sweep.finish()
