"""A job's life on the simulated cluster: submitted, waiting, placed, running, preempted, finished.

The state every scheduling decision reads (pools, shares, lines, the event heap) and the
transitions that change it. The event loop (``engine``) decides when; the scheduling steps
(``steps``) decide who; this module carries a decision out and keeps the books.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Final

from policy_engine.foundation.model import Topology
from policy_engine.simulation.causes import Cause, Detail, Reason, describe
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.agenda import Agenda
from policy_engine.simulation.core.capacity import Pool, ShareCapacity, build_pools
from policy_engine.simulation.core.events import Event, Kind, Phase, make_event
from policy_engine.simulation.core.jobs import (
    ACTIVE,
    FAILED,
    FINAL,
    PREEMPTED,
    SUCCEEDED,
    AttemptRecord,
    Job,
    JobSpec,
    Status,
)
from policy_engine.simulation.core.steps import Steps
from policy_engine.simulation.exact_types import exact_spec
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.plan_windows import PlanGate
from policy_engine.simulation.settings import PriorityUpdate, SimulationSettings
from policy_engine.simulation.time_limits import TimeLimits, queue_actions
from policy_engine.simulation.usage import LoggedShare, UsageLog

_RUNNABLE: Final = Status.RUNNABLE
_RUNNING: Final = Status.RUNNING
_SCHEDULED: Final = Status.SCHEDULED
_SUCCEEDED: Final = Status.SUCCEEDED
_FINISH: Final = Phase.FINISH
_ADVANCE: Final = Phase.ADVANCE
_FINISH_KIND: Final = Kind.FINISH
_QUEUED: Final = Cause.QUEUED
_STARTED: Final = Cause.STARTED
_OWN: Final = Cause.PLACED_ON_OWN_CAPACITY
_BORROWED: Final = Cause.PLACED_ON_BORROWED_CAPACITY

#: ``JobLifecycle.pass_start`` while no scheduling pass runs: no job was placed by the pass running now.
OUTSIDE_PASS: Final = 1 << 60  # a short int when compiled; no run places that many jobs

#: ``on_transition(time, job, from, to, reason)``: every state change (``--events``, the local endpoint), its
#: reason worded (``causes.describe``).
Transition = Callable[[float, Job, str, str, str], None]
#: ``on_reason(time, job, from, to, reason)``: the same changes, the reason as a value (``causes.Reason``).
ReasonListener = Callable[[float, Job, str, str, Reason], None]


class JobLifecycle:
    """The simulated cluster's state and the transitions of its jobs, at the clock ``now``."""

    def __init__(self, topology: Topology, jobs: Sequence[JobSpec], settings: SimulationSettings | None = None):
        self.topology = topology
        self.settings = settings or SimulationSettings()
        self.policy = self.settings.policy()
        self._backfill = self.settings.backfill
        #: nothing delays a start (no start-up, no preemption delay): unless someone listens, a placed job runs
        #: at once (``place``)
        self._immediate = self.settings.startup_delay == 0 and self.settings.preemption_delay == 0
        #: ``millisecond_instants``: computed instants are rounded to the millisecond (``instant``)
        self._milliseconds = self.settings.millisecond_instants
        self.now = 0.0
        self.on_transition: Transition | None = None
        self.on_reason: ReasonListener | None = None
        self.pools = build_pools(topology, indexed_lines=self.settings.backfill)
        self.shares = {(s.share_id, s.instance_type): s for pool in self.pools for s in pool.shares}
        self.usage: UsageLog | None = None
        if self.settings.usage_log:
            self.usage = UsageLog([LoggedShare(s.share_id, s.instance_type, s.limit, s.lends, pool.index)
                                   for pool in self.pools for s in pool.shares])
        for pool in self.pools:
            pool.keep_log(self.usage)
            if self.settings.utilisation_series:
                pool.series = []
            pool.recorded = pool.log is not None or pool.series is not None
        self._agendas = [Agenda(pool) for pool in self.pools]
        self.steps = Steps(self)
        actions = queue_actions(topology)
        self.time_limits = TimeLimits(self, actions) if actions else None
        shares = self.shares
        with gc_paused():  # a million new objects: the collector's scans would cost twice the building
            try:
                self.jobs = [Job(spec, seq, shares[(spec.share, spec.instance_type)]) for seq, spec in enumerate(jobs)]
            except TypeError:  # compiled, a field of another type than annotated (a numpy integer, say): exactly
                self.jobs = [Job(exact_spec(spec), seq, shares[(spec.share, spec.instance_type)])
                             for seq, spec in enumerate(jobs)]
        self._by_name: dict[str, Job] | None = None
        self._events: list[Event] = []
        self._seq = 0
        self._start_counter = 0
        #: ``_start_counter`` when the running scheduling pass began (``Steps.run_pass``); a job placed since is
        #: no victim in that pass. ``OUTSIDE_PASS`` between passes.
        self.pass_start = OUTSIDE_PASS
        #: pools given one more pass at ``_repass_time`` for victims their pass had placed (``repass``)
        self._repassed: set[int] = set()
        self._repass_time = -1.0
        #: pools whose scheduling pass runs at the end of this instant
        self._touched: dict[int, None] = {}
        self.preemptions: dict[ShareCapacity, int] = dict.fromkeys(self.shares.values(), 0)
        self.lost_instance_seconds: dict[ShareCapacity, float] = dict.fromkeys(self.shares.values(), 0.0)
        self._wakes: set[tuple[int, float]] = set()
        self.misconfig_cache: dict[tuple[ShareCapacity, int], str] = {}
        #: Capacity-seconds to add to ``capacity x time`` after topology changes (``topology_changes``).
        self.capacity_corrections: dict[object, float] = {}
        #: The training plans' windows, only when the topology has plans: without, no plan code runs at all.
        self.plans: PlanGate | None = None
        if topology.training_plans:
            self.plans = PlanGate(self, topology, self.settings)

    @property
    def by_name(self) -> dict[str, Job]:
        """Jobs by name; built on first use (priority updates), not for every run of a million jobs. Kept by
        hand, not a ``functools.cached_property``: compiled (mypyc), that one built the dict again at every
        read, so every ``serve`` submission cost time in proportion to the jobs before it."""
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = {job.spec.name: job for job in self.jobs}
        return by_name

    # --- events ---------------------------------------------------------------------

    def push(self, time: float, phase: Phase, kind: Kind, subject: object, data: object = None,
             order: int = 0) -> None:
        """Events sort by time, phase, then ``order`` (workload order of the job), then push order."""
        self._seq += 1
        heapq.heappush(self._events, make_event(Event, (time, phase, order, self._seq, kind, subject, data)))

    def wake(self, pool: Pool, time: float) -> None:
        """Run ``pool``'s scheduling pass at ``time`` (once, however many heads wait for it)."""
        key = (pool.index, time)
        if key not in self._wakes:
            self._wakes.add(key)
            self.push(time, _FINISH, Kind.WAKE, pool.index)

    def repass(self, pool: Pool) -> None:
        """One more pass of ``pool`` at this instant, for a head whose victims this pass placed: at most one per
        pool and instant, so every instant ends (a head still waiting then looks again at the pool's next event)."""
        if self._repass_time != self.now:
            self._repass_time = self.now
            self._repassed.clear()
        if pool.index not in self._repassed:
            self._repassed.add(pool.index)
            self.wake(pool, self.now)

    def transition(self, job: Job, to: Status, cause: Cause, detail: Detail = None) -> None:
        """Move ``job`` to ``to``; the reason is built only when someone listens (``record``)."""
        if self.on_transition is None and self.on_reason is None:
            job.status = to
            return
        before = job.status
        job.status = to
        self.record(job, before.value, to.value, Reason(cause, detail))

    def record(self, job: Job, before: str, after: str, reason: Reason) -> None:
        """Tell the listeners about one state change (``before`` is ``""`` on submission)."""
        if self.on_reason is not None:
            self.on_reason(self.now, job, before, after, reason)
        if self.on_transition is not None:
            self.on_transition(self.now, job, before, after, describe(reason))

    # --- job life cycle -------------------------------------------------------------

    def touch(self, share: ShareCapacity) -> None:
        """The share's line or usage changed: its pool's pass looks at its head again."""
        agenda = self._agendas[share.pool.index]
        agenda.dirty[share] = None
        agenda.settled = False
        agenda.fill_from = 0
        self._touched[share.pool.index] = None
        if self.time_limits is not None:
            self.time_limits.touched[share] = None

    def capacity_freed(self, pool: Pool) -> None:
        """Heads waiting for capacity in this pool (and pools sharing its environment) look again."""
        pools = pool.env.pools if len(pool.env.pools) > 1 else (pool,)
        for other in pools:
            agenda = self._agendas[other.index]
            agenda.retry_waiting()
            agenda.settled = False
            agenda.fill_from = 0
            self._touched[other.index] = None

    def _submit(self, job: Job, alone: bool = False) -> None:
        """A job joins its line; ``alone``: nothing else happens in any pool at this instant (the loop knows)."""
        share = job.share
        if self.on_transition is not None or self.on_reason is not None:
            self.record(job, "", Status.SUBMITTED.value, Reason(Cause.SUBMITTED))
        if share.rejected:
            job.end_reason = Reason(Cause.REJECTED_BY_DISABLED_SHARE, share.rejected)
            job.finished_at = self.now
            self.transition(job, Status.FAILED, Cause.REJECTED_BY_DISABLED_SHARE, share.rejected)
            return
        if self.plans is not None and self.plans.hold and job.spec.training_plan is not None and self.plans.holds(job):
            return  # ``hold``: RUNNABLE out of its line until its plan has an Active window
        key = (share, job.spec.instances)
        misconfigured = self.misconfig_cache.get(key)
        if misconfigured is None:
            misconfigured = self.misconfig_cache[key] = placement.misconfiguration(share.pool, share, key[1])
        job.misconfigured = misconfigured
        if self.on_transition is None and self.on_reason is None:
            job.status = _RUNNABLE
        elif misconfigured:
            self.transition(job, _RUNNABLE, Cause.MISCONFIGURED, misconfigured)
        else:
            self.transition(job, _RUNNABLE, _QUEUED)
        line = share.line
        if line.push(job):  # it is the head
            if alone and line.waiting == 1 and not misconfigured and placement.own_fits(share.pool, share,
                                                                                          job.spec.instances):
                # the instant's pass would look at this one head and place it on own capacity: place it now
                self.place(share, job, False, False)  # own capacity, no preemption (positional: a faster call)
                return
            if (share.used < share.limit or share.borrows or share.in_share or self._backfill
                    or self.time_limits is not None):
                self.touch(share)  # else no step could place it: the pool's pass would change nothing
            return
        # the head and the share's usage are as the last pass left them, so classifying the head again would
        # change nothing (on a busy cluster, most submissions): only backfill and the head's time limit look
        # again. Unless the head waits for protected victims: placements since may change which set it takes.
        agenda = self._agendas[share.pool.index]
        if share in agenda.protected:
            del agenda.protected[share]  # noted again if it still waits for protected victims
            self.touch(share)
            return
        if self._backfill:
            pool = share.pool
            # backfill could place it now only with room on the share (own, or borrowed) and in the environment
            if (job.spec.instances <= pool.env.capacity - pool.env.used
                    and (share.limit > share.used or (share.borrows and pool.lender_idle > pool.borrowed))):
                if agenda.settled:
                    agenda.fresh[share] = None  # the new job may fit where nothing else did
                self._touched[pool.index] = None
        if self.time_limits is not None:
            self.time_limits.touched[share] = None

    def _occupy(self, job: Job, share: ShareCapacity) -> None:
        """Put the job's instances on capacity (a placement, a live job at the snapshot, an adopted job)."""
        share.pool.change(share, job.spec.instances, self.now)
        share.active[job] = None
        counts = share.active_priorities
        counts[job.priority] = counts.get(job.priority, 0) + 1
        job.version += 1  # events and line entries of its previous state are stale

    def place(self, share: ShareCapacity, job: Job, borrowed: bool, after_preemption: bool,
              remove: bool = False) -> None:
        """Place a waiting job (the head, or with ``remove`` one behind it) on capacity now."""
        line = share.line
        if remove:
            line.remove(job)
        else:
            line.pop_known_head()
        plans = self.plans
        if plans is not None and job.spec.training_plan is not None and self.now >= plans.horizon and plans.refuses(
                job):
            return  # its plan has no window left: SageMaker refuses the dispatched job, which fails holding nothing
        now = self.now
        # self._occupy(job, share), inline: once per placement
        share.pool.change(share, job.spec.instances, now)
        share.active[job] = None
        counts = share.active_priorities
        counts[job.priority] = counts.get(job.priority, 0) + 1
        job.version += 1
        self._start_counter += 1
        job.start_order = self._start_counter
        job.attempt_start = now
        job.placed_borrowed = borrowed
        # one float object for the times set below: compiled, each store of ``now`` would make its own (24 bytes)
        at: float | None = now
        if job.placed_at is None:
            job.placed_at = at
        agenda = self._agendas[share.pool.index]
        # the line has a new head; after backfill the head is the same, and only in-share preemption gains
        # from the share's higher use (a new lower-priority job it may preempt), or a head waiting for protected
        # victims (the capacity just taken may change which set it takes): other steps lose by it. No step
        # places the head of a share at its limit that neither borrows nor preempts in-share: it is not looked at.
        if (line.waiting and (not remove or share.in_share or share in agenda.protected)
                and (share.used < share.limit or share.borrows or share.in_share)):
            agenda.dirty[share] = None
        if borrowed:  # new borrowed jobs are new reclaim victims
            agenda.retry_waiting()
        if self.time_limits is not None:
            self.time_limits.touched[share] = None
        if self._immediate and self.on_transition is None and self.on_reason is None:
            if plans is not None and job.spec.training_plan is not None and plans.waits(job, now):
                job.run_started = None
                job.status = _SCHEDULED
                return  # SCHEDULED, holding its quota, until a window of its plan has a free instance
            # self._run(job), inline: the common case, SCHEDULED, STARTING and RUNNING at this instant (a plan job
            # that got a free instance of its plan's Active window too)
            job.status = _RUNNING
            job.run_started = at
            if job.started_at is None:
                job.started_at = at
            self._schedule_finish(job, now)
            return
        delay = self.settings.preemption_delay if after_preemption else 0.0
        job.run_started = None
        self.transition(job, Status.SCHEDULED, _BORROWED if borrowed else _OWN)
        if self.plans is not None and job.spec.training_plan is not None and self.plans.waits(job, now):
            return  # SCHEDULED, holding its quota, until a window of its plan has a free instance
        if delay > 0:
            self._advance_at(job, self.now + delay)
            return
        self.transition(job, Status.STARTING, _STARTED)
        self._after_starting(job)

    def start_scheduled(self, job: Job) -> None:
        """A SCHEDULED job that waited for its training plan got an instance: it starts now."""
        self.transition(job, Status.STARTING, _STARTED)
        self._after_starting(job)

    def release_attempt(self, job: Job, outcome: str) -> None:
        """The job's attempt ends (``outcome``) and its capacity is freed; the caller says what becomes of it."""
        self._release(job, outcome)

    def _advance_at(self, job: Job, time: float) -> None:
        """The job moves on (SCHEDULED -> STARTING -> RUNNING) at ``time``, unless it left capacity before."""
        self.push(self.instant(time), _ADVANCE, Kind.ADVANCE, job, job.version, job.seq)

    def _after_starting(self, job: Job) -> None:
        if self.settings.startup_delay > 0:
            self._advance_at(job, self.now + self.settings.startup_delay)
        else:
            self._run(job)

    def _advance(self, job: Job) -> None:
        if job.status is Status.SCHEDULED:
            self.transition(job, Status.STARTING, _STARTED)
            self._after_starting(job)
        elif job.status is Status.STARTING:
            self._run(job)

    def _run(self, job: Job) -> None:
        if self.on_transition is None and self.on_reason is None:
            job.status = _RUNNING
        else:
            self.transition(job, _RUNNING, _STARTED)
        now = self.now
        job.run_started = now
        if job.started_at is None:
            job.started_at = now
        self._schedule_finish(job, now)

    def _schedule_finish(self, job: Job, run_started: float) -> None:
        """The end of the attempt that runs since ``run_started``: its work done, or its failure."""
        spec = job.spec
        fails = job.attempts_failed < spec.failures
        work = job.remaining
        if fails and spec.fail_after is not None:
            work = min(work, spec.fail_after)
        end = run_started + work
        if self._milliseconds:
            end = round(end * 1000.0) / 1000.0
        self._seq += 1
        heapq.heappush(self._events, make_event(Event, (end, _FINISH, job.seq, self._seq, _FINISH_KIND,
                                                        job, (job.version, fails))))

    def instant(self, time: float) -> float:
        """A computed instant as the engine keeps it: to the millisecond with ``millisecond_instants``."""
        return round(time * 1000.0) / 1000.0 if self._milliseconds else time

    def _release(self, job: Job, outcome: str) -> None:
        share = job.share
        if self.plans is not None and job.spec.training_plan is not None:
            self.plans.released(job)
        pool = share.pool
        pool.change(share, -job.spec.instances, self.now)
        del share.active[job]
        counts = share.active_priorities  # _uncount, inline: once per attempt
        left = counts[job.priority] - 1
        if left:
            counts[job.priority] = left
        else:
            del counts[job.priority]
        job.start_order = 0  # it only ranks placed jobs (victim order): a million finished jobs keep no int
        if outcome is not SUCCEEDED:  # the succeeding attempt is the job's last: its record derives it (``attempts``)
            job.segments += (AttemptRecord(job.attempt_start, self.now, outcome, job.placed_borrowed,
                                           job.run_started if job.status is _RUNNING else None),)
        job.version += 1
        index = pool.index
        agenda = self._agendas[index]
        if (outcome is SUCCEEDED and not share.line.waiting and not agenda.borrow and not agenda.waiting
                and not self._backfill and self.time_limits is None and pool.env_alone):
            # nobody waits in its line, nobody waits to borrow the capacity and no head waits for capacity to be
            # freed: the pool's pass would find nothing to do (every other head was sorted when it last changed)
            return
        # self.touch(share), inline: once per job
        agenda.dirty[share] = None
        agenda.settled = False
        agenda.fill_from = 0
        self._touched[index] = None
        if self.time_limits is not None:
            self.time_limits.touched[share] = None
        if pool.env_alone:  # self.capacity_freed(pool), inline: the common case, a pool alone on its environment
            if agenda.waiting:
                agenda.retry_waiting()
        else:
            self.capacity_freed(pool)

    def _on_finish(self, event: Event) -> None:
        """A FINISH event: the attempt ends (its work done, or failed) unless the job left capacity before."""
        job, data = event[5], event[6]  # subject, data: by index, once per job attempt
        if job.version != data[0] or job.status is not _RUNNING:
            return  # stale: preempted or terminated since the event was pushed
        failed = data[1]
        self._release(job, FAILED if failed else SUCCEEDED)
        if not failed:
            job.remaining = 0.0
            job.finished_at = self.now
            if self.on_transition is None and self.on_reason is None:
                job.status = _SUCCEEDED
            else:
                self.transition(job, Status.SUCCEEDED, Cause.WORK_DONE)
            return
        job.attempts_failed += 1
        if job.attempts_failed >= job.spec.attempts:
            job.finished_at = self.now
            exhausted = (job.attempts_failed, job.spec.attempts)
            job.end_reason = Reason(Cause.RETRIES_EXHAUSTED, exhausted)
            self.transition(job, Status.FAILED, Cause.RETRIES_EXHAUSTED, exhausted)
            return
        job.remaining = float(job.spec.duration)
        self.transition(job, _RUNNABLE, Cause.ATTEMPT_FAILED, job.attempts_failed)
        job.share.line.push(job)

    def preempt(self, job: Job, by: Job, cause: Cause) -> None:
        """``by`` takes ``job``'s capacity (``cause``: reclaim or in-share preemption): work since the last
        checkpoint is lost, the job waits again."""
        share = job.share
        if job.status is _RUNNING and job.run_started is not None:
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
            job.end_reason = Reason(Cause.PREEMPTION_RETRIES_EXHAUSTED, retries)
            self.transition(job, Status.FAILED, Cause.PREEMPTION_RETRIES_EXHAUSTED, retries)
            return
        self.transition(job, _RUNNABLE, cause, by.spec.name)
        share.line.push(job)

    def _update_priority(self, update: PriorityUpdate) -> None:
        job = self.by_name[update.job]
        if job.status in FINAL or job.priority == update.priority:
            job.priority = update.priority
            return
        share = job.share
        if job.status in ACTIVE:
            _uncount(share.active_priorities, job.priority)
            share.active_priorities[update.priority] = share.active_priorities.get(update.priority, 0) + 1
        job.priority = update.priority
        if job.status is _RUNNABLE and not (self.plans is not None and self.plans.pending(job)):
            share.line.reprioritise(job)  # a plan job held out of its line (``hold``) joins it later, as it is
        self.touch(share)
        self.capacity_freed(share.pool)  # victim orders changed: waiting heads look again

    def protected_until(self, job: Job) -> float | None:
        """When a placed job stops being protected from preemption, or ``None`` when it is not protected.

        The loop guard is the order of passes: a job placed by the scheduling pass running now is no
        victim in that pass (the clock, ``now``: the pool's next pass may take it), so every pass ends.
        ``min_runtime`` > 0 protects it longer, until ``attempt_start + min_runtime``.
        """
        end = job.attempt_start + self.settings.min_runtime
        if self.now < end:
            return end
        return self.now if job.start_order > self.pass_start else None


def _uncount(counts: dict[int, int], priority: int) -> None:
    """One active job of ``priority`` fewer (the key goes with the last one)."""
    left = counts[priority] - 1
    if left:
        counts[priority] = left
    else:
        del counts[priority]
