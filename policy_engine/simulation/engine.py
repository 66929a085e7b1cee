"""The event loop: applies the events of one instant, then runs the scheduling pass.

Order at one instant: completions (and failures), start-up completions, priority
updates, submissions, then the scheduling pass; only then ``jobStateTimeLimitActions``
timers of heads still waiting (then the pass again); ties by workload order.
The pass only visits pools touched at that instant and, inside a pool, only lines
whose head may have changed (``dirty``) or that wait for capacity
which has just been freed, so an instant costs O(changes x log n), not O(shares).

The pass follows the steps of the issue (own capacity, reclaim, borrow FIFO,
in-share preemption) and restarts at step 1 after any placement or preemption.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise

from policy_engine.model import JobStateTimeLimitAction, Topology
from policy_engine.simulation import placement
from policy_engine.simulation.capacity import Pool, ShareCapacity, build_pools
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.jobs import (
    ACTIVE,
    CAPACITY_INSUFFICIENT,
    FAILED,
    PREEMPTED,
    SUCCEEDED,
    AttemptRecord,
    Job,
    JobSpec,
    LiveState,
    Status,
)
from policy_engine.simulation.numbers import format_seconds
from policy_engine.simulation.preemption import (
    POLICIES,
    LowestPriorityNewestFirst,
    VictimPolicy,
    above_limit,
    in_share_victims,
    reclaim_victims,
)
from policy_engine.simulation.queues import Line
from policy_engine.simulation.results import SimulationResult, build_result
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate
from policy_engine.simulation.usage import LoggedShare, UsageLog

_RUNNABLE = Status.RUNNABLE
_attempt = AttemptRecord._make  # a fixed-size tuple: faster than the keyword constructor, once per attempt

# event phases inside one instant
_FINISH, _ADVANCE, _UPDATE, _SUBMIT, _LIMIT = 0, 1, 2, 3, 4
_NEVER = float("inf")


@dataclass(frozen=True)
class SimulationSettings:
    """Choices a scenario may change; every default is documented in docs/simulator.md."""

    startup_delay: float = 0.0
    preemption_delay: float = 0.0
    backfill: bool = False
    victim_policy: str = LowestPriorityNewestFirst.name
    utilisation_series: bool = False
    #: Log every usage change compactly (``SimulationResult.usage``): what the HTML report aggregates.
    usage_log: bool = False
    #: A job placed at T is not a preemption victim before T + this (> 0: no preemption loop inside an instant).
    min_runtime: float = 1.0

    def __post_init__(self) -> None:
        if self.min_runtime <= 0:
            raise ValueError("min_runtime must be > 0: it is what stops preemption loops inside one instant")
        if not isinstance(self.victim_policy, str) or self.victim_policy not in POLICIES:
            raise ValueError(f"unknown victim policy {self.victim_policy!r} (known: {', '.join(POLICIES)})")

    def policy(self) -> VictimPolicy:
        return POLICIES[self.victim_policy]


@dataclass(frozen=True)
class PriorityUpdate:
    """``UpdateServiceJob``: set ``job``'s scheduling priority at time ``at``."""

    at: float
    job: str
    priority: int


#: What a scenario's ``actions`` do at a time: a job's priority, or the topology (``topology_changes``).
Action = PriorityUpdate | ShareUpdate | EnvironmentUpdate

Transition = Callable[[float, Job, str, str, str], None]


class _PoolQueue:
    """Scheduling state of one pool: which heads to look at and which wait for capacity."""

    __slots__ = ("borrow", "borrow_member", "deep", "dirty", "own", "pool", "position", "preempt", "preempt_member",
                 "reclaim", "settled", "waiting")

    def __init__(self, pool: Pool):
        self.pool = pool
        self.dirty: dict[ShareCapacity, None] = {}
        self.own: list = []
        self.reclaim: list = []
        self.borrow: list = []  # persistent FIFO of borrowing heads: (submitted, seq, job, share)
        self.borrow_member: dict[ShareCapacity, Job] = {}
        self.preempt: list = []
        self.preempt_member: dict[ShareCapacity, Job] = {}
        self.waiting: dict[ShareCapacity, None] = {}  # heads that failed reclaim / in-share preemption
        #: lines with a job behind the head (set by the line, dropped by backfill): backfill's candidates
        self.deep: dict[ShareCapacity, None] = {}
        self.position = {share: index for index, share in enumerate(pool.shares)}
        #: backfill found nothing, and since then no capacity was freed and no job joined a line of the pool:
        #: placements only take capacity, so it would find nothing again
        self.settled = False

    def retry_waiting(self) -> None:
        """Heads that failed reclaim or in-share preemption look again: capacity or the victims changed."""
        if self.waiting:
            self.dirty.update(self.waiting)
            self.waiting.clear()


class Engine:
    """Replays ``jobs`` and ``updates`` against ``topology``; deterministic for the same input."""

    def __init__(
        self,
        topology: Topology,
        jobs: Sequence[JobSpec],
        updates: Sequence[Action] = (),
        settings: SimulationSettings | None = None,
        live: Mapping[str, LiveState] | None = None,
    ):
        self.topology = topology
        self.settings = settings or SimulationSettings()
        self.policy = self.settings.policy()
        self.now = 0.0
        self.observers: list[Callable[[Engine], None]] = []
        self.on_transition: Transition | None = None
        self.pools: list[Pool] = []
        self.shares: dict[tuple[str, str], ShareCapacity] = {}
        self._queues: list[_PoolQueue] = []
        self._build(topology)
        self.jobs = [Job(spec, seq) for seq, spec in enumerate(jobs)]
        for job in self.jobs:
            job.share = self.shares[(job.spec.share, job.spec.instance_type)]
        #: Jobs already on capacity at time 0 (a live queue's snapshot): placed when the run starts.
        self._live = self._live_jobs(jobs, live or {})
        times = [job.spec.submit_at for job in self.jobs]
        if not self._live and all(a <= b for a, b in pairwise(times)):
            self._arrivals, self._arrival_times = self.jobs, times  # in submission order already: no second list
        else:
            self._arrivals = sorted((j for j in self.jobs if j.seq not in self._live),
                                    key=lambda j: (j.spec.submit_at, j.seq))
            self._arrival_times = [job.spec.submit_at for job in self._arrivals]
        self._next_arrival = 0
        self._events: list[tuple] = []
        self._seq = 0
        self._start_counter = 0
        self._touched: dict[int, None] = {}
        self._touched_lines: dict[ShareCapacity, None] = {}
        self._timers: dict[ShareCapacity, tuple[Job, JobStateTimeLimitAction]] = {}
        self.preemptions: dict[ShareCapacity, int] = dict.fromkeys(self.shares.values(), 0)
        self.lost_instance_seconds: dict[ShareCapacity, float] = dict.fromkeys(self.shares.values(), 0.0)
        self._wakes: set[tuple[int, float]] = set()
        self._misconfig_cache: dict[tuple[ShareCapacity, int], str] = {}
        #: Capacity-seconds to add to ``capacity x time`` after topology changes (``topology_changes``).
        self.capacity_corrections: dict[object, float] = {}
        self._live_started = False
        for order, update in enumerate(updates):
            kind = "update" if isinstance(update, PriorityUpdate) else "topology"
            self._push(update.at, _UPDATE, kind, update, order=order)

    @cached_property
    def by_name(self) -> dict[str, Job]:
        """Jobs by name; built on first use (priority updates), not for every run of a million jobs."""
        return {job.spec.name: job for job in self.jobs}

    # --- construction ---------------------------------------------------------------

    def _live_jobs(self, specs: Sequence[JobSpec], live: Mapping[str, LiveState]) -> dict[int, LiveState]:
        """``seq -> LiveState`` of the jobs already on capacity; ``LiveStateError`` if they break an invariant."""
        if not live:
            return {}
        from policy_engine.simulation.live import LiveStateError, live_state_problems

        problems = live_state_problems(self.topology, specs, live)
        if problems:
            raise LiveStateError(problems)
        return {job.seq: live[job.spec.name] for job in self.jobs if job.spec.name in live}

    def _start_live(self) -> None:
        """Put the live jobs on capacity at time 0, in workload order, as the snapshot had them."""
        for seq, state in self._live.items():
            job = self.jobs[seq]
            share = job.share
            if self.on_transition is not None:
                self.on_transition(self.now, job, "", Status.SUBMITTED.value, "on capacity at the snapshot")
            share.pool.change(share, job.spec.instances, self.now)
            share.active[job] = None
            job.version += 1
            self._start_counter += 1
            job.start_order = self._start_counter
            job.attempt_start = state.started_at
            job.placed_at = self.now  # its wait ended before the snapshot
            job.placed_borrowed = share.used > share.limit
            job.remaining = state.remaining
            job.run_started = None
            if state.status is Status.RUNNING:
                self._run(job)
                job.started_at = state.started_at
            else:
                self._transition(job, Status.SCHEDULED, "on capacity at the snapshot")
                if state.status is Status.STARTING:
                    self._transition(job, Status.STARTING)
                    self._after_starting(job)
                else:  # SCHEDULED: starts like a job placed now
                    self._push(self.now, _ADVANCE, "advance", job, job.version, job.seq)
        self._live_started = True

    def _build(self, topology: Topology) -> None:
        self.pools = build_pools(topology)
        self.usage: UsageLog | None = None
        if self.settings.usage_log:
            self.usage = UsageLog([LoggedShare(s.share_id, s.instance_type, s.limit, s.lends, pool.index)
                                   for pool in self.pools for s in pool.shares])
        for pool in self.pools:
            pool.log = self.usage
            if self.settings.utilisation_series:
                pool.series = []
            queue = _PoolQueue(pool)
            self._queues.append(queue)
            for capacity in pool.shares:
                capacity.line = Line(self.settings.backfill, queue.deep, capacity)
                self.shares[(capacity.share_id, capacity.instance_type)] = capacity
        # per queue, the shortest jobStateTimeLimitAction for each status reason it names
        self._time_limit: dict[str, dict[str, JobStateTimeLimitAction]] = {}
        for queue in topology.job_queues:
            for action in sorted(queue.job_state_time_limit_actions, key=lambda a: -a.max_time_seconds):
                self._time_limit.setdefault(queue.name, {})[action.reason] = action

    # --- events ---------------------------------------------------------------------

    def _push(self, time: float, phase: int, kind: str, subject, data=None, order: int = 0) -> None:
        """Events sort by time, phase, then ``order`` (workload order of the job), then push order."""
        self._seq += 1
        heapq.heappush(self._events, (time, phase, order, self._seq, kind, subject, data))

    def _transition(self, job: Job, to: Status, reason: str = "") -> None:
        if self.on_transition is None:
            job.status = to
            return
        before = job.status
        job.status = to
        self.on_transition(self.now, job, before.value, to.value, reason)

    def run(self, until: float | None = None, progress: Callable[[int], None] | None = None,
            close: bool = True) -> float:
        """Process every instant up to ``until`` (all, when ``None``); return the clock.

        ``close=False`` skips integrating every share's metrics up to the clock (O(shares)): a live
        driver calling ``run`` once per request does not read them.
        """
        with gc_paused():
            return self._run_until(until, progress, close)

    def _run_until(self, until: float | None, progress: Callable[[int], None] | None, close: bool = True) -> float:
        if self._live and not self._live_started:
            self._start_live()
        instants = 0
        events, times, total = self._events, self._arrival_times, len(self._arrival_times)
        limit = _NEVER if until is None else until
        observers = self.observers
        while True:
            time = events[0][0] if events else _NEVER
            if self._next_arrival < total and times[self._next_arrival] < time:
                time = times[self._next_arrival]
            if time == _NEVER or time > limit:
                break
            self.now = time
            self._instant(time)
            instants += 1
            for observer in observers:
                observer(self)
            if progress is not None and not instants & 4095:
                progress(self._next_arrival)
        if until is not None:
            self.now = max(self.now, until)
        if close:
            for pool in self.pools:
                pool.close(self.now)
        if progress is not None:
            progress(self._next_arrival)
        return self.now

    def _instant(self, time: float) -> None:
        events, arrivals, times = self._events, self._arrivals, self._arrival_times
        total = len(times)
        pop, dispatch = heapq.heappop, self._dispatch
        while True:
            while events and events[0][0] == time and events[0][1] < _SUBMIT:
                dispatch(pop(events))
            while self._next_arrival < total and times[self._next_arrival] == time:
                self._submit(arrivals[self._next_arrival])
                self._next_arrival += 1
            while events and events[0][0] == time and events[0][1] < _LIMIT:
                dispatch(pop(events))
            touched = self._touched
            while touched:
                if len(touched) == 1:
                    index = next(iter(touched))
                    touched.clear()
                    self._pass(self._queues[index])
                    continue
                order = sorted(touched)
                touched.clear()
                for index in order:
                    self._pass(self._queues[index])
            if self._time_limit:
                self._arm_time_limits()
            if not (events and events[0][0] == time):
                break
            # time limits only after the pass: a head that can be placed at this instant is placed,
            # not terminated ("RUNNABLE longer than" the limit); the pass runs again afterwards
            if events[0][1] == _LIMIT:
                while events and events[0][0] == time and events[0][1] == _LIMIT:
                    dispatch(pop(events))

    def _dispatch(self, event: tuple) -> None:
        kind, subject, data = event[4], event[5], event[6]
        if kind == "finish":
            job, version, failed = subject, data[0], data[1]
            if job.version == version and job.status is Status.RUNNING:
                self._finish(job, failed)
        elif kind == "advance":
            job, version = subject, data
            if job.version == version and job.status in ACTIVE:
                self._advance(job)
        elif kind == "update":
            self._update_priority(subject)
        elif kind == "topology":
            subject.apply(self)
        elif kind == "limit":
            self._time_limit_expired(subject, data)
        elif kind == "wake":
            self._wakes.discard((subject, self.now))
            self._capacity_freed(self.pools[subject])

    # --- job life cycle -------------------------------------------------------------

    def _touch(self, share: ShareCapacity) -> None:
        queue = self._queues[share.pool.index]
        queue.dirty[share] = None
        queue.settled = False
        self._touched[share.pool.index] = None
        if self._time_limit:
            self._touched_lines[share] = None

    def _capacity_freed(self, pool: Pool) -> None:
        """Heads waiting for capacity in this pool (and pools sharing its environment) look again."""
        pools = pool.env.pools if len(pool.env.pools) > 1 else (pool,)
        for other in pools:
            queue = self._queues[other.index]
            queue.retry_waiting()
            queue.settled = False
            self._touched[other.index] = None

    def _submit(self, job: Job) -> None:
        share = job.share
        if self.on_transition is not None:
            self.on_transition(self.now, job, "", Status.SUBMITTED.value, "submitted")
        if share.rejected:
            job.reason = f"REJECTED: {share.rejected} is DISABLED"
            job.finished_at = self.now
            self._transition(job, Status.FAILED, job.reason)
            return
        key = (share, job.spec.instances)
        misconfigured = self._misconfig_cache.get(key)
        if misconfigured is None:
            misconfigured = self._misconfig_cache[key] = placement.misconfiguration(share.pool, share, key[1])
        job.misconfigured = misconfigured
        if self.on_transition is None:
            job.status = Status.RUNNABLE
        else:
            self._transition(job, Status.RUNNABLE, misconfigured)
        share.line.push(job)
        self._touch(share)

    def _place(self, share: ShareCapacity, job: Job, borrowed: bool, after_preemption: bool, remove=False) -> None:
        if remove:
            share.line.remove(job)
        else:
            share.line.pop_known_head()
        share.pool.change(share, job.spec.instances, self.now)
        share.active[job] = None
        job.version += 1
        self._start_counter += 1
        job.start_order = self._start_counter
        job.attempt_start = self.now
        job.placed_borrowed = borrowed
        if job.placed_at is None:
            job.placed_at = self.now
        job.run_started = None
        queue = self._queues[share.pool.index]
        queue.dirty[share] = None  # the line has a new head
        if borrowed:  # new borrowed jobs are new reclaim victims
            queue.retry_waiting()
        if self._time_limit:
            self._touched_lines[share] = None
        delay = self.settings.preemption_delay if after_preemption else 0.0
        if self.on_transition is None and delay == 0 and self.settings.startup_delay == 0:
            self._run(job)  # the common case: SCHEDULED, STARTING and RUNNING at this instant
            return
        self._transition(job, Status.SCHEDULED, "borrowed capacity" if borrowed else "own capacity")
        if delay > 0:
            self._push(self.now + delay, _ADVANCE, "advance", job, job.version, job.seq)
            return
        self._transition(job, Status.STARTING)
        self._after_starting(job)

    def _after_starting(self, job: Job) -> None:
        if self.settings.startup_delay > 0:
            self._push(self.now + self.settings.startup_delay, _ADVANCE, "advance", job, job.version, job.seq)
        else:
            self._run(job)

    def _advance(self, job: Job) -> None:
        if job.status is Status.SCHEDULED:
            self._transition(job, Status.STARTING)
            self._after_starting(job)
        elif job.status is Status.STARTING:
            self._run(job)

    def _run(self, job: Job) -> None:
        if self.on_transition is None:
            job.status = Status.RUNNING
        else:
            self._transition(job, Status.RUNNING)
        now = self.now
        job.run_started = now
        if job.started_at is None:
            job.started_at = now
        spec = job.spec
        fails = job.attempts_failed < spec.failures
        work = job.remaining
        if fails and spec.fail_after is not None:
            work = min(work, spec.fail_after)
        self._seq += 1
        heapq.heappush(self._events, (now + work, _FINISH, job.seq, self._seq, "finish", job, (job.version, fails)))

    def _release(self, job: Job, outcome: str) -> None:
        share = job.share
        pool = share.pool
        pool.change(share, -job.spec.instances, self.now)
        del share.active[job]
        job.start_order = 0  # it only ranks placed jobs (victim order): a million finished jobs keep no int
        job.segments += (_attempt((job.attempt_start, self.now, outcome, job.placed_borrowed)),)
        job.version += 1
        self._touch(share)
        if len(pool.env.pools) == 1:  # the common case of _capacity_freed, inline
            queue = self._queues[pool.index]
            if queue.waiting:
                queue.retry_waiting()
        else:
            self._capacity_freed(pool)

    def _finish(self, job: Job, failed: bool) -> None:
        self._release(job, FAILED if failed else SUCCEEDED)
        if not failed:
            job.remaining = 0.0
            job.finished_at = self.now
            job.reason = ""
            if self.on_transition is None:
                job.status = Status.SUCCEEDED
            else:
                self._transition(job, Status.SUCCEEDED, "work done")
            return
        job.attempts_failed += 1
        if job.attempts_failed >= job.spec.attempts:
            job.finished_at = self.now
            job.reason = f"FAILED: attempt {job.attempts_failed} of {job.spec.attempts} (retryStrategy.attempts) failed"
            self._transition(job, Status.FAILED, job.reason)
            return
        job.remaining = float(job.spec.duration)
        self._transition(job, Status.RUNNABLE, f"attempt {job.attempts_failed} failed; retrying")
        job.share.line.push(job)

    def _preempt(self, job: Job, by: Job, kind: str) -> None:
        share = job.share
        if job.status is Status.RUNNING and job.run_started is not None:
            done = self.now - job.run_started
            interval = job.spec.checkpoint_interval
            kept = (done // interval) * interval if interval else 0.0
            job.remaining -= kept
            self.lost_instance_seconds[share] += (done - kept) * job.spec.instances
        self._release(job, PREEMPTED)
        job.preemptions += 1
        self.preemptions[share] += 1
        retries = job.spec.preemption_retries
        if retries is not None and job.preemptions > retries:
            job.finished_at = self.now
            job.reason = f"PREEMPTED: preemptionRetriesBeforeTermination ({retries}) exceeded"
            self._transition(job, Status.FAILED, job.reason)
            return
        self._transition(job, Status.RUNNABLE, f"preempted ({kind}) by {by.spec.name}")
        share.line.push(job)

    def _update_priority(self, update: PriorityUpdate) -> None:
        job = self.by_name[update.job]
        if job.status in (Status.SUCCEEDED, Status.FAILED) or job.priority == update.priority:
            job.priority = update.priority
            return
        job.priority = update.priority
        share = job.share
        if job.status is Status.RUNNABLE:
            share.line.reprioritise(job)
        self._touch(share)
        self._capacity_freed(share.pool)  # victim orders changed: waiting heads look again

    def _arm_time_limits(self) -> None:
        """Start the ``jobStateTimeLimitActions`` clock for every line whose head changed.

        Only an action naming the head's status reason applies: its misconfiguration, else
        ``CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY`` (a head still waiting after the pass).
        """
        lines = self._touched_lines
        self._touched_lines = {}
        if not self._time_limit:
            return
        for share in lines:
            actions = self._time_limit.get(share.queue.name)
            if actions is None:
                continue
            head = share.line.head()
            timer = self._timers.get(share)
            action = actions.get(head.misconfigured or CAPACITY_INSUFFICIENT) if head is not None else None
            if action is None:
                self._timers.pop(share, None)
            elif timer is None or timer[0] is not head:
                self._timers[share] = (head, action)
                self._push(self.now + action.max_time_seconds, _LIMIT, "limit", share, head, head.seq)

    def _time_limit_expired(self, share: ShareCapacity, job: Job) -> None:
        timer = self._timers.get(share)
        if timer is None or timer[0] is not job or share.line.head() is not job:
            return
        del self._timers[share]
        share.line.pop_head()
        job.version += 1
        job.finished_at = self.now
        job.reason = f"Terminated by JobStateTimeLimit action due to reason: {timer[1].reason}"
        self._transition(job, Status.FAILED, job.reason)
        self._touch(share)

    # --- the scheduling pass --------------------------------------------------------

    def _pass(self, queue: _PoolQueue) -> None:
        while True:
            if queue.dirty:
                self._classify(queue)
            if queue.own and self._step_own(queue):
                continue
            if queue.reclaim and self._step_reclaim(queue):
                continue
            if queue.borrow and self._step_borrow(queue):
                continue
            if queue.preempt and self._step_in_share(queue):
                continue
            if queue.dirty:
                continue
            if self.settings.backfill and not queue.settled:
                if self._backfill(queue):
                    continue
                queue.settled = True
            break

    @staticmethod
    def _has_lower(share: ShareCapacity, job: Job) -> bool:
        if not share.in_share:
            return False
        priority = job.priority
        return any(other.priority < priority for other in share.active)

    def _classify(self, queue: _PoolQueue) -> None:
        """Sort each changed head into the step that may place it."""
        pool = queue.pool
        env = pool.env
        dirty = queue.dirty
        queue.dirty = {}
        push = heapq.heappush
        for share in dirty:
            job = share.line.head()
            if job is None or job.misconfigured:
                continue
            spec = job.spec
            n = spec.instances
            key = (-job.priority, spec.submit_at, job.seq, job, share)
            used = share.used
            if used + n <= share.limit:
                if env.capacity - env.used >= n and (not share.lends or pool.lender_idle - pool.borrowed >= n):
                    push(queue.own, key)
                    continue
                push(queue.reclaim, key)
            elif (share.borrows and (share.ceiling is None or used + n <= share.ceiling)  # under its ceiling
                  and queue.borrow_member.get(share) is not job):
                queue.borrow_member[share] = job
                push(queue.borrow, (spec.submit_at, job.seq, job, share))
            if share.in_share and queue.preempt_member.get(share) is not job and self._has_lower(share, job):
                queue.preempt_member[share] = job
                push(queue.preempt, key)

    @staticmethod
    def _is_head(share: ShareCapacity, job: Job) -> bool:
        return job.status is Status.RUNNABLE and share.line.head() is job

    def _step_own(self, queue: _PoolQueue) -> bool:
        pool = queue.pool
        env = pool.env
        while queue.own:
            entry = heapq.heappop(queue.own)
            job, share = entry[3], entry[4]
            if job.status is not _RUNNABLE or share.line.head() is not job:  # _is_head, inline: once per job
                continue
            n = job.spec.instances  # placement.own_fits, inline
            if share.used + n <= share.limit and env.capacity - env.used >= n and (
                    not share.lends or pool.lender_idle - pool.borrowed >= n):
                self._place(share, job, borrowed=False, after_preemption=False)
                return True
            queue.dirty[share] = None  # no longer fits on its own: look at it again
        return False

    def _step_reclaim(self, queue: _PoolQueue) -> bool:
        pool = queue.pool
        while queue.reclaim:
            entry = heapq.heappop(queue.reclaim)
            job, share = entry[3], entry[4]
            if not self._is_head(share, job):
                continue
            n = job.spec.instances
            if not placement.within_own_limit(share, n) or placement.own_fits(pool, share, n):
                queue.dirty[share] = None
                continue
            victims = reclaim_victims(pool, share, job, self.policy)
            if victims is None or not self._all_ready(pool, victims):
                queue.waiting[share] = None
                continue
            for victim in victims:
                self._preempt(victim, job, "reclaim")
            self._place(share, job, borrowed=False, after_preemption=True)
            return True
        return False

    def _step_borrow(self, queue: _PoolQueue) -> bool:
        pool = queue.pool
        lendable, env_free = pool.lender_idle - pool.borrowed, pool.env.capacity - pool.env.used
        if not queue.borrow or lendable <= 0 or env_free <= 0:
            return False
        room = lendable if lendable < env_free else env_free  # nothing changes them until a placement
        skipped = []
        placed = False
        member = queue.borrow_member
        while queue.borrow:
            entry = heapq.heappop(queue.borrow)
            job, share = entry[2], entry[3]
            if member.get(share) is not job:
                continue  # stale: the line's current head has its own entry
            if job.status is not _RUNNABLE or share.line.head() is not job:
                del member[share]  # it will be classified again when it is the head again
                continue
            n = job.spec.instances
            if share.used + n <= share.limit or (share.ceiling is not None and share.used + n > share.ceiling):
                del member[share]  # within its own limit now, or no longer under its ceiling
                queue.dirty[share] = None
                continue
            if n <= room:  # placement.borrow_fits: the share borrows and is above its limit, under its ceiling
                del member[share]
                self._place(share, job, borrowed=True, after_preemption=False)
                placed = True
                break
            skipped.append(entry)
        for entry in skipped:
            heapq.heappush(queue.borrow, entry)
        return placed

    def _step_in_share(self, queue: _PoolQueue) -> bool:
        pool = queue.pool
        while queue.preempt:
            entry = heapq.heappop(queue.preempt)
            job, share = entry[3], entry[4]
            if queue.preempt_member.get(share) is job:
                del queue.preempt_member[share]
            if not self._is_head(share, job):
                continue
            n = job.spec.instances
            if placement.fits(pool, share, n):
                queue.dirty[share] = None
                continue
            victims = in_share_victims(pool, share, job, self.policy)
            if victims is None or not self._all_ready(pool, victims):
                queue.waiting[share] = None
                continue
            borrowed = share.used - sum(v.spec.instances for v in victims if v.share is share) + n > share.limit
            for victim in victims:
                self._preempt(victim, job, "in-share" if victim.share is share else "reclaim")
            self._place(share, job, borrowed=borrowed, after_preemption=True)
            return True
        return False

    def protected_until(self, job: Job) -> float | None:
        """When a placed job stops being protected from preemption, or ``None`` when it is not protected."""
        end = job.attempt_start + self.settings.min_runtime
        return end if self.now < end else None

    def _all_ready(self, pool: Pool, victims: list[Job]) -> bool:
        """Whether the rule's victims may all be preempted now; otherwise wake the pool when they may.

        The loop guard: a job placed at T is no victim before T + min_runtime, or two heads
        could preempt each other forever inside one instant. The head waits for the same
        victims (the rule's choice) instead of taking others that are not protected.
        """
        ends = [end for end in map(self.protected_until, victims) if end is not None]
        if not ends:
            return True
        key = (pool.index, max(ends))
        if key not in self._wakes:
            self._wakes.add(key)
            self._push(key[1], _FINISH, "wake", pool.index)
        return False

    def _backfill(self, queue: _PoolQueue) -> bool:
        """Optional: a job behind a blocked head may use capacity the head cannot (no preemption).

        The first job in line order (head excluded) that fits on own or borrowed capacity, share by
        share in pool order. What fits is every size up to a bound (own room, or borrowed room above
        the own limit: the two ranges always join), so the line's size index answers it without a scan.
        """
        pool = queue.pool
        env_free = pool.env.capacity - pool.env.used
        if env_free <= 0:
            return False
        lendable = pool.lender_idle - pool.borrowed
        deep = queue.deep
        shares = list(deep)
        if len(shares) > 1:
            shares.sort(key=queue.position.__getitem__)  # pool order, as the definition walks it
        for share in shares:
            line = share.line
            if line.waiting < 2:
                del deep[share]
                continue
            room = share.limit - share.used
            if room <= 0 and (lendable <= 0 or not share.borrows):
                continue  # the common case on a busy cluster: at its limit, nothing to borrow
            most = room if room < env_free else env_free
            if share.lends and lendable < most:
                most = lendable
            if share.borrows:
                top = lendable if lendable < env_free else env_free
                if share.ceiling is not None and share.ceiling - share.used < top:
                    top = share.ceiling - share.used
                if top > room and top > most:
                    most = top
            if most <= 0:
                continue
            job = line.first_fitting(most, line.head())
            if job is not None:
                n = job.spec.instances
                borrowed = not placement.own_fits(pool, share, n)
                self._place(share, job, borrowed=borrowed, after_preemption=False, remove=True)
                return True
        return False

    # --- what a waiting job is waiting for -------------------------------------------

    def waiting_reason(self, job: Job) -> str:
        """Why a RUNNABLE job is not running: misconfigured, blocked behind a named head, or capacity."""
        if job.misconfigured:
            return job.misconfigured
        share = job.share
        head = share.line.head()
        if head is not None and head is not job:
            why = "misconfigured" if head.misconfigured else "waiting for capacity"
            return f"BLOCKED: behind head job {head.spec.name} of {share.share_id} ({why})"
        n, pool, kind = job.spec.instances, share.pool, share.instance_type
        used, limit, sid = share.used, share.limit, share.share_id
        victims: list[Job] | None = None
        if used + n <= limit:
            idle = pool.env.capacity - pool.env.used
            if share.lends:
                idle = min(idle, pool.free_lendable)
            reclaimable = sum(o.used - o.limit for o in above_limit(pool, share))
            idle = max(0, idle)
            only = "only " if idle + reclaimable < n else ""
            reason = (f"CAPACITY: {sid} needs {n} {kind} within its limit ({used}/{limit} used); "
                      f"{idle} idle, {only}{reclaimable} reclaimable from shares above their limits")
            victims = reclaim_victims(pool, share, job, self.policy)
        elif share.borrows and placement.under_ceiling(share, n):
            reason = (f"CAPACITY: {sid} uses {used} of its own {limit} {kind}; "
                      f"{max(0, pool.free_lendable)} lendable idle instance(s), needs {n}")
        else:
            word, bound = ("ceiling", share.ceiling) if share.borrows else ("limit", limit)
            who = sid if share.borrows else f"{sid} ({share.model.strategy}, cannot borrow)"
            if used >= bound:
                reason = f"CAPACITY: {who} at its {word} ({used}/{bound} {kind}); needs {n}"
            else:
                reason = f"CAPACITY: {who} uses {used} of its {word} {bound} {kind}; needs {n}, {bound - used} left"
        if victims is None and self._has_lower(share, job):
            victims = in_share_victims(pool, share, job, self.policy)
            if victims is None:
                reason += "; in-share preemption of lower-priority jobs cannot free enough"
        if victims:
            protected = [(v, end) for v in victims if (end := self.protected_until(v)) is not None]
            if protected:
                names = ", ".join(f"{v.spec.name} (placed at {format_seconds(v.attempt_start)}, "
                                  f"protected until {format_seconds(end)} by min_runtime)" for v, end in protected)
                reason += f"; preemption waits for {names}"
        return reason

    # --- views used by reports and properties ----------------------------------------

    def submitted_jobs(self) -> Iterable[Job]:
        """Jobs submitted by now, in workload order."""
        if self._next_arrival >= len(self._arrivals):
            return iter(self.jobs)
        submitted = {job.seq for job in self._arrivals[: self._next_arrival]} | self._live.keys()
        return (job for job in self.jobs if job.seq in submitted)

    @property
    def submissions_done(self) -> bool:
        return self._next_arrival >= len(self._arrivals)

    # --- driving a live engine (``batch-quota serve``): inputs arrive at the clock's time --------

    def submit(self, spec: JobSpec) -> Job:
        """Add a job submitted now (``spec.submit_at`` is the clock); the next ``run(now)`` schedules it."""
        if spec.submit_at < self.now:
            raise ValueError(f"job {spec.name} submitted at {spec.submit_at} before the clock ({self.now})")
        seq = self.jobs[-1].seq + 1 if self.jobs else 0
        job = Job(spec, seq)
        job.share = self.shares[(spec.share, spec.instance_type)]
        self.jobs.append(job)
        self.by_name[spec.name] = job
        if self._arrivals is not self.jobs:  # the arrival order may be the jobs list itself
            self._arrivals.append(job)
        self._arrival_times.append(spec.submit_at)
        return job

    def update_priority_now(self, name: str, priority: int) -> None:
        """``UpdateServiceJob`` at the clock's time; applied by the next ``run(now)``."""
        self._push(self.now, _UPDATE, "update", PriorityUpdate(self.now, name, priority))

    def terminate(self, job: Job, reason: str) -> None:
        """``TerminateServiceJob`` at the clock's time: the job fails and frees its capacity or line place."""
        if job.status in (Status.SUCCEEDED, Status.FAILED):
            return
        share = job.share
        if job.status is Status.RUNNABLE:
            share.line.remove(job)
            self._touch(share)
        elif job.status in ACTIVE:
            self._release(job, FAILED)
        job.finished_at = self.now
        job.reason = reason
        self._transition(job, Status.FAILED, reason)
        self._wake_now(share.pool)

    def _wake_now(self, pool: Pool) -> None:
        """Make the next ``run(now)`` run the scheduling pass of ``pool`` (a live input changed it)."""
        key = (pool.index, self.now)
        if key not in self._wakes:
            self._wakes.add(key)
            self._push(self.now, _FINISH, "wake", pool.index)

    def adopt(self, old: Job, advance_at: float | None = None) -> Job | None:
        """Carry a job over from an engine on the previous topology, at this engine's clock.

        A waiting job joins its line again (keeping its submission order), a running one keeps
        its capacity and its finish time, a SCHEDULED or STARTING one its capacity and the time
        it moves on (``advance_at``, from the previous engine). ``None`` when the topology no
        longer has its share and instance type.
        """
        spec = old.spec
        share = self.shares.get((spec.share, spec.instance_type))
        if share is None:
            return None
        job = Job(spec, old.seq)
        for name in ("priority", "preemptions", "attempts_failed", "started_at", "placed_at", "finished_at",
                     "attempt_start", "run_started", "start_order", "placed_borrowed", "reason", "segments"):
            setattr(job, name, getattr(old, name))
        job.share = share
        job.remaining = old.remaining
        job.status = old.status
        self.jobs.append(job)
        self.by_name[spec.name] = job
        self._start_counter = max(self._start_counter, job.start_order)
        if old.status is Status.RUNNABLE:
            job.misconfigured = placement.misconfiguration(share.pool, share, spec.instances)
            share.line.push(job)
        elif old.status in ACTIVE:
            share.pool.change(share, spec.instances, self.now)
            share.active[job] = None
            job.version += 1
            if old.status is Status.RUNNING:
                fails = job.attempts_failed < spec.failures
                work = min(job.remaining, spec.fail_after) if fails and spec.fail_after is not None else job.remaining
                self._seq += 1
                heapq.heappush(self._events, (old.run_started + work, _FINISH, job.seq, self._seq, "finish", job,
                                              (job.version, fails)))
            else:
                if advance_at is None:
                    raise ValueError(f"job {spec.name} is {old.status}: adopting it needs the time it moves on")
                self._push(advance_at, _ADVANCE, "advance", job, job.version, job.seq)
        else:
            return job
        self._touch(share)
        self._wake_now(share.pool)
        return job

    def pending_advances(self) -> dict[str, float]:
        """When each SCHEDULED / STARTING job moves on (for ``adopt`` into a new engine)."""
        return {event[5].spec.name: event[0] for event in self._events
                if event[4] == "advance" and event[5].version == event[6]}


def simulate(
    topology: Topology,
    jobs: Sequence[JobSpec],
    updates: Sequence[Action] = (),
    settings: SimulationSettings | None = None,
    until: float | None = None,
    live: Mapping[str, LiveState] | None = None,
) -> SimulationResult:
    """Run a whole simulation and return its ``SimulationResult``."""
    engine = Engine(topology, jobs, updates, settings, live)
    engine.run(until)
    return build_result(engine)
