"""SageMaker training plans in the simulator: a plan job runs only on a free instance of an Active window.

Batch schedules a plan job like any other (its share's quota, the environment's capacity); what it may
then do is SageMaker's: it starts only while one of its plan's reserved capacities is Active and has a
free instance, its running attempts end from 30 minutes before the window's end, and a job pending for
the plan fails after 2 days (or its ``StoppingCondition``). Under ``plan_dispatch: dispatch`` a job placed
before its window sits SCHEDULED, holding quota; under ``hold`` it stays RUNNABLE, out of its line, until
a window opens. docs/training_plans.md says what AWS documents and what the simulator chooses.

The engine calls the gate only for plan jobs (and only when the topology has plans), so a workload
without plans pays nothing; its figures are kept as the run goes, per plan job event. Not compiled: it
runs a few times per plan job, like ``time_limits``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from policy_engine.foundation import limits
from policy_engine.foundation.model import Topology, TrainingPlan
from policy_engine.simulation.causes import Cause, Detail, Reason
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import Pool, ShareCapacity
from policy_engine.simulation.core.events import Event, Kind, Phase
from policy_engine.simulation.core.jobs import ACTIVE, FAILED, PREEMPTED, Job, Status
from policy_engine.simulation.settings import PlanDispatch, PlanEnd, SimulationSettings


class PlanHost(Protocol):
    """What the gate calls of the lifecycle that owns it (``core.lifecycle.JobLifecycle`` is one)."""

    @property
    def now(self) -> float: ...

    @property
    def preemptions(self) -> dict[ShareCapacity, int]: ...

    def push(self, time: float, phase: Phase, kind: Kind, subject: object, data: object = None,
             order: int = 0) -> None: ...

    def transition(self, job: Job, to: Status, cause: Cause, detail: Detail = None) -> None: ...

    def touch(self, share: ShareCapacity) -> None: ...

    def wake(self, pool: Pool, time: float) -> None: ...

    def start_scheduled(self, job: Job) -> None: ...

    def release_attempt(self, job: Job, outcome: str) -> None: ...


class Use(NamedTuple):
    """One job's stay on a window's instances (``start`` to ``end``), or the work a cut at its end lost."""

    share: str
    start: float
    end: float
    instances: int


class Hold(NamedTuple):
    """A SCHEDULED plan job's wait for an instance of its plan (``start`` to ``end``), holding its share's quota."""

    job: str
    share: str
    start: float
    end: float
    instances: int


@dataclass
class ShareUse:
    """One share's figures in one window, in instance-seconds (reports show hours)."""

    used: float = 0.0
    #: attempts SageMaker ended at the window's end, and the work they lost (since their last checkpoint)
    cut_jobs: int = 0
    cut_seconds: float = 0.0


class Window:
    """One reserved capacity in simulated seconds: paid from ``start`` to ``end``, startable until ``cutoff``."""

    __slots__ = ("cutoff", "cuts", "end", "in_use", "index", "instances", "peak", "plan", "running", "shares", "start",
                 "state", "uses")

    def __init__(self, state: PlanState, index: int, instances: int, start: float, end: float):
        self.state = state
        self.plan, self.index, self.instances = state.name, index, instances
        self.start, self.end = start, end
        self.cutoff = max(start, end - limits.PLAN_TERMINATION_LEAD_SECONDS)
        self.in_use = 0
        self.peak = 0
        #: jobs on the window's instances -> when they got them
        self.running: dict[Job, float] = {}
        #: each share's cuts at the window's end; its ``used`` is summed from ``uses`` when reported
        #: (``PlanGate.report``), not on every release
        self.shares: dict[str, ShareUse] = {}
        #: every stay of a job on the window's instances, and the work a cut at its end lost (``Use``, for the bill
        #: over a period: ``outputs.billable`` clips them)
        self.uses: list[Use] = []
        self.cuts: list[Use] = []

    def accepts(self, now: float) -> bool:
        """Active and not yet terminating its instances: a job may start on it now."""
        return self.start <= now < self.cutoff

    def share(self, share_id: str) -> ShareUse:
        use = self.shares.get(share_id)
        if use is None:
            use = self.shares[share_id] = ShareUse()
        return use


#: ``Use`` from one tuple without the keyword constructor: one per plan job's stay on a window
_use = tuple.__new__

#: A pending plan job's timer: (the job's version when it was dispatched, the cause it fails with, its detail).
PendingTimer = tuple[int, Cause, Detail]


class PlanState:
    """A plan's windows and the jobs waiting for it: SCHEDULED ones (dispatched) and held RUNNABLE ones."""

    __slots__ = ("held", "holds", "instance_type", "last_cutoff", "name", "open", "open_from", "open_until", "unarmed",
                 "waiting", "windows")

    def __init__(self, plan: TrainingPlan, start: datetime | None):
        self.name = plan.name
        self.instance_type = plan.instance_type
        self.windows = [Window(self, index, window.instances, window.start_seconds(start),
                               window.end_seconds(start))
                        for index, window in enumerate(plan.reserved_capacities)]
        #: when the plan's last startable window stops accepting jobs (``-inf``: no window ever accepts one)
        self.last_cutoff = max((window.cutoff for window in self.windows if window.cutoff > window.start),
                               default=float("-inf"))
        #: SCHEDULED jobs waiting for a free instance, in dispatch order -> (version, since)
        self.waiting: dict[Job, tuple[int, float]] = {}
        #: RUNNABLE jobs held out of their lines until a window opens (``hold``), in submission order
        self.held: dict[Job, None] = {}
        #: pending timers not yet on the heap -> (deadline, the event's data): armed when no window event of the
        #: plan comes first, so that a job which gets an instance leaves no timer behind to prolong the run
        self.unarmed: dict[Job, tuple[float, PendingTimer]] = {}
        #: every ended SCHEDULED wait for an instance (``Hold``): ``plan_hold_seconds`` and the idle attribution
        self.holds: list[Hold] = []
        #: ``open_window``'s last answer and the instants ``[open_from, open_until)`` it holds for: a placement
        #: compares the clock twice instead of asking every window
        self.open: Window | None = None
        self.open_from = self.open_until = float("-inf")

    def open_window(self, now: float) -> Window | None:
        if self.open_from <= now < self.open_until:
            return self.open
        return self.find_open(now)

    def find_open(self, now: float) -> Window | None:
        """The window accepting jobs at ``now`` (kept with the instants the answer holds for, ``open_window``)."""
        window = next((window for window in self.windows if window.accepts(now)), None)
        if window is not None:
            self.open_from, self.open_until = window.start, window.cutoff
        else:  # none until the next window that accepts a job opens (the clock never goes back)
            self.open_from = now
            self.open_until = min((w.start for w in self.windows if w.start > now and w.cutoff > w.start),
                                  default=float("inf"))
        self.open = window
        return window

    def has_window_left(self, now: float) -> bool:
        """A window whose cutoff (its end minus 30 minutes) is still ahead: a job naming the plan can still run."""
        return now < self.last_cutoff

    def status(self, now: float) -> str:
        """The plan's status as ``DescribeTrainingPlan`` would show it now, for a job refused for having no window
        left: Expired after its last end, else Active in its last window's final 30 minutes (or Scheduled between
        windows too short to start a job on)."""
        if all(window.end <= now for window in self.windows):
            return "Expired"
        if any(window.start <= now < window.end for window in self.windows):
            return "Active, in its last window's final 30 minutes"
        return "Scheduled, no window long enough to start a job"

    def next_change(self, now: float) -> float | None:
        """When a window of the plan next opens or starts terminating its instances (``None``: never again)."""
        times = [time for window in self.windows if window.cutoff > window.start
                 for time in (window.start, window.cutoff) if time > now]
        return min(times) if times else None


class PlanGate:
    """The training plans of one engine: which plan job may start, and what each window was used for."""

    def __init__(self, host: PlanHost, topology: Topology, settings: SimulationSettings):
        self.host = host
        self.hold = settings.plan_dispatch is PlanDispatch.HOLD
        self.window_end = settings.plan_window_end
        self.pending_end = settings.plan_pending_end
        self.plans = {plan.name: PlanState(plan, settings.start) for plan in topology.training_plans}
        #: the same, looked up by a job's ``training_plan`` as it is (the engine calls only for jobs naming one)
        self.by_plan: dict[str | None, PlanState] = {name: state for name, state in self.plans.items()}
        #: the first instant some plan has no window left: before it no placement needs ``refuses`` (the engine
        #: compares, so that a run with plans pays a comparison per plan job placed, not a call)
        self.horizon = min(state.last_cutoff for state in self.plans.values())
        #: job -> the window whose instances it holds
        self.on_window: dict[Job, Window] = {}
        #: instance-seconds of quota held by SCHEDULED plan jobs waiting for an instance, per share and plan
        self.held_quota: dict[tuple[str, str], float] = {}
        #: plans whose waiting jobs look for freed instances at this instant
        self.filling: set[str] = set()
        for state in self.plans.values():
            for window in state.windows:
                if window.cutoff > window.start:
                    host.push(window.start, Phase.FINISH, Kind.PLAN, window, "open")
                    host.push(window.cutoff, Phase.FINISH, Kind.PLAN, window, "cutoff")

    # --- the engine's calls, for plan jobs only ------------------------------------------------

    def holds(self, job: Job) -> bool:
        """At submission (``hold``): keep the job RUNNABLE out of its line while its plan has no Active window; a
        job whose plan has no window left fails at once (``refuses``)."""
        state = self.plans[str(job.spec.training_plan)]
        if not self.hold or state.open_window(self.host.now) is not None:
            return False
        if not state.has_window_left(self.host.now):
            self._no_window_left(job, state)
            return True
        self.host.transition(job, Status.RUNNABLE, Cause.WAITING_FOR_PLAN_WINDOW, state.name)
        state.held[job] = None
        return True

    def refuses(self, job: Job) -> bool:
        """About to be dispatched (its line and quota allowed it): SageMaker takes a job only for a plan "in the
        Scheduled or Active status", so a plan with no window left fails the job before it holds anything."""
        state = self.plans[str(job.spec.training_plan)]
        if state.has_window_left(self.host.now):
            return False
        self._no_window_left(job, state)
        self.host.touch(job.share)  # its line has a new head
        return True

    def waits(self, job: Job, now: float) -> bool:
        """Just placed (SCHEDULED) at ``now``: take a free instance of an Active window, or wait SCHEDULED for one."""
        state = self.by_plan[job.spec.training_plan]
        # self._take(state, job, now), inline: once per plan job placed
        window = state.open if state.open_from <= now < state.open_until else state.find_open(now)
        n = job.spec.instances
        if window is not None and window.in_use + n <= window.instances:
            in_use = window.in_use = window.in_use + n
            if in_use > window.peak:
                window.peak = in_use
            window.running[job] = now
            self.on_window[job] = window
            return False
        state.waiting[job] = (job.version, now)
        limit = float(limits.PLAN_PENDING_SECONDS)
        cause = Cause.PLAN_PENDING_EXPIRED
        detail: Detail = state.name
        max_runtime = job.spec.max_runtime
        if max_runtime is not None and max_runtime < limit:
            limit, cause, detail = max_runtime, Cause.PLAN_STOPPING_CONDITION, (state.name, max_runtime)
        # its timer goes on the heap now if due before the plan's next window event, else waits in ``unarmed`` for
        # that event (``_arm``): the timers already there were weighed against the same next event, so only this one
        upcoming = state.next_change(now)
        deadline = now + limit
        timer: PendingTimer = (job.version, cause, detail)
        if upcoming is None or deadline < upcoming:
            self.host.push(deadline, Phase.FINISH, Kind.PLAN, job, timer, job.seq)
        else:
            state.unarmed[job] = (deadline, timer)
        return True

    def released(self, job: Job) -> None:
        """The job leaves capacity (finished, failed, preempted, terminated): its plan instances go to the next."""
        now = self.host.now
        window = self.on_window.pop(job, None)
        if window is None:  # it waited SCHEDULED for an instance, or never got that far
            state = self.plans[str(job.spec.training_plan)]
            waited = state.waiting.pop(job, None)
            if waited is not None:
                self._count_held(job, state, waited[1], now)
            return
        started = window.running.pop(job)
        spec = job.spec
        window.uses.append(_use(Use, (spec.share, started, now, spec.instances)))  # each share's ``used``: ``report``
        window.in_use -= spec.instances
        state = window.state
        if state.waiting and state.name not in self.filling:  # the next ones start after this change, at this instant
            self.filling.add(state.name)
            self.host.push(now, Phase.FINISH, Kind.PLAN, state, "fill")

    def pending(self, job: Job) -> bool:
        """Whether the job waits for its plan: held RUNNABLE (``hold``) or SCHEDULED without an instance."""
        if job.spec.training_plan is None:
            return False
        state = self.plans[job.spec.training_plan]
        return job in state.held or job in state.waiting

    def unhold(self, job: Job) -> bool:
        """Whether the RUNNABLE job was held out of its line (``hold``); it is no longer."""
        if job.spec.training_plan is None:
            return False
        return self.plans[job.spec.training_plan].held.pop(job, False) is None

    def on_event(self, event: Event) -> None:
        """A window opens or starts terminating its instances, or a job has waited for its plan too long."""
        subject, data = event.subject, event.data
        if isinstance(subject, PlanState):
            self.filling.discard(subject.name)
            self._start_waiting(subject, self.host.now)
            return
        if isinstance(subject, Window):
            state = self.plans[subject.plan]
            if data == "open":
                self._opened(state)
            else:
                self._cut(subject)
                if not state.has_window_left(self.host.now):
                    self._expire(state)
            self._arm(state, self.host.now)
            return
        job: Job = subject
        version, cause, detail = data
        state = self.plans[str(job.spec.training_plan)]
        waited = state.waiting.get(job)
        if waited is None or waited[0] != version or job.version != version:
            return  # it got an instance, or left capacity, since
        now = self.host.now
        # retried or requeued, a job no window can ever start again (or whose wait ends the instant it begins,
        # a MaxRuntimeSeconds of 0) would wait and end forever: it fails instead (docs/training_plans.md)
        hopeless = waited[1] >= now or (state.open_window(now) is None and state.next_change(now) is None)
        self.host.release_attempt(job, FAILED)  # leaves ``waiting`` through ``released``
        policy = self.pending_end
        if policy is PlanEnd.REQUEUE and cause is not Cause.PLAN_PENDING_EXPIRED:
            policy = PlanEnd.RETRY  # a MaxRuntimeExceeded is the job's own limit, not a capacity error
        self._end_attempt(job, PlanEnd.FAIL if hopeless else policy, cause, detail, 0.0)

    # --- inside -------------------------------------------------------------------------------

    def _arm(self, state: PlanState, now: float) -> None:
        """At a window event: pending timers due before the plan's next window event go on the heap; a job can only
        get an instance at a window event or while a window is Active, so a timer armed then goes stale before that
        event. Between two window events the next one stays the same, so a new timer is weighed alone (``waits``)."""
        upcoming = state.next_change(now)
        for job, (deadline, timer) in list(state.unarmed.items()):
            waited = state.waiting.get(job)
            if waited is None or waited[0] != timer[0]:
                del state.unarmed[job]
            elif upcoming is None or deadline < upcoming:
                del state.unarmed[job]
                self.host.push(deadline, Phase.FINISH, Kind.PLAN, job, timer, job.seq)

    def _take(self, state: PlanState, job: Job, now: float) -> bool:
        window = state.open_window(now)
        n = job.spec.instances
        if window is None or window.in_use + n > window.instances:
            return False
        window.in_use += n
        if window.in_use > window.peak:
            window.peak = window.in_use
        window.running[job] = now
        self.on_window[job] = window
        return True

    def _start_waiting(self, state: PlanState, now: float) -> None:
        """Waiting SCHEDULED jobs that fit on the open window start, in dispatch order (first fit)."""
        window = state.open_window(now)
        if window is None or not state.waiting:
            return
        for job, (version, since) in list(state.waiting.items()):
            if window.in_use >= window.instances:
                break
            if job.version != version or job.status is not Status.SCHEDULED:
                continue
            if self._take(state, job, now):
                del state.waiting[job]
                self._count_held(job, state, since, now)
                self.host.start_scheduled(job)

    def _opened(self, state: PlanState) -> None:
        host = self.host
        if state.held:
            held = list(state.held)
            state.held.clear()
            for job in held:
                self._join_line(job)
        self._start_waiting(state, host.now)

    def _join_line(self, job: Job) -> None:
        share = job.share
        job.misconfigured = placement.misconfiguration(share.pool, share, job.spec.instances)
        share.line.push(job)
        self.host.touch(share)
        self.host.wake(share.pool, self.host.now)

    def _cut(self, window: Window) -> None:
        """From 30 minutes before the window's end SageMaker terminates its instances: every attempt on it ends."""
        now = self.host.now
        for job in list(window.running):
            kept = lost = 0.0
            if job.status is Status.RUNNING and job.run_started is not None:
                done = now - job.run_started
                interval = job.spec.checkpoint_interval
                kept = (done // interval) * interval if interval else 0.0
                lost = done - kept
            use = window.share(job.spec.share)
            use.cut_jobs += 1
            use.cut_seconds += lost * job.spec.instances
            if lost > 0:
                window.cuts.append(Use(job.spec.share, now - lost, now, job.spec.instances))
            self.host.release_attempt(job, PREEMPTED if self.window_end is PlanEnd.PREEMPT else FAILED)
            self._end_attempt(job, self.window_end, Cause.PLAN_WINDOW_ENDED, (window.plan, window.index), kept)

    def _end_attempt(self, job: Job, policy: PlanEnd, cause: Cause, detail: Detail, kept: float) -> None:
        """SageMaker ended the attempt; the job retries, counts a preemption or fails, as ``policy`` says."""
        host = self.host
        failed = policy is PlanEnd.FAIL
        if policy is PlanEnd.REQUEUE:  # a capacity retry: neither an attempt nor a preemption (docs/training_plans.md)
            job.capacity_retries += 1
            cause = Cause.PLAN_CAPACITY_RETRY
        elif policy is PlanEnd.RETRY:
            job.attempts_failed += 1
            failed = job.attempts_failed >= job.spec.attempts
        elif policy is PlanEnd.PREEMPT:
            job.preemptions += 1
            host.preemptions[job.share] += 1
            retries = job.spec.preemption_retries
            failed = retries is not None and job.preemptions > retries
        if failed:
            job.finished_at = host.now
            job.end_reason = Reason(cause, detail)
            host.transition(job, Status.FAILED, cause, detail)
            host.wake(job.share.pool, host.now)
            return
        job.remaining -= kept
        host.transition(job, Status.RUNNABLE, cause, detail)
        state = self.plans[str(job.spec.training_plan)]
        if self.hold and state.open_window(host.now) is None:
            if not state.has_window_left(host.now):
                self._no_window_left(job, state)  # held, it would wait forever
                return
            state.held[job] = None
            return
        self._join_line(job)

    def _no_window_left(self, job: Job, state: PlanState) -> None:
        """The job fails: its plan can never start it (a status reason of the simulator's wording, AWS gives none)."""
        host = self.host
        detail = (state.name, state.status(host.now))
        job.finished_at = host.now
        job.end_reason = Reason(Cause.PLAN_NO_WINDOW_LEFT, detail)
        host.transition(job, Status.FAILED, Cause.PLAN_NO_WINDOW_LEFT, detail)

    def _expire(self, state: PlanState) -> None:
        """The plan's last cutoff passed: jobs held for it (``hold``) or waiting SCHEDULED for an instance fail
        now, so that no job holds quota, or waits, for a plan with no window left."""
        host = self.host
        held = list(state.held)
        state.held.clear()
        for job in held:
            self._no_window_left(job, state)
        for job, (version, _) in list(state.waiting.items()):
            if job.version != version or job.status is not Status.SCHEDULED:
                continue
            host.release_attempt(job, FAILED)  # leaves ``waiting`` through ``released``
            self._no_window_left(job, state)
            host.wake(job.share.pool, host.now)

    def _count_held(self, job: Job, state: PlanState, since: float, now: float) -> None:
        spec = job.spec
        key = (spec.share, state.name)
        self.held_quota[key] = self.held_quota.get(key, 0.0) + (now - since) * spec.instances
        state.holds.append(Hold(spec.name, spec.share, since, now, spec.instances))

    # --- figures -------------------------------------------------------------------------------

    def report(self, now: float) -> PlanReport:
        """Each plan's windows and each share's use of them, up to ``now`` (open attempts and waits counted)."""
        held = dict(self.held_quota)
        holds: dict[str, list[Hold]] = {name: list(state.holds) for name, state in self.plans.items()}
        for state in self.plans.values():
            for job, (_, since) in state.waiting.items():
                if job.status in ACTIVE:
                    key = (job.spec.share, state.name)
                    held[key] = held.get(key, 0.0) + (now - since) * job.spec.instances
                    holds[state.name].append(Hold(job.spec.name, job.spec.share, since, now, job.spec.instances))
        plans = []
        for state in self.plans.values():
            windows = []
            for window in state.windows:
                shares = {sid: ShareUse(0.0, use.cut_jobs, use.cut_seconds) for sid, use in window.shares.items()}
                uses = list(window.uses)
                for job, started in window.running.items():
                    uses.append(Use(job.spec.share, started, now, job.spec.instances))
                for use_share, start, end, instances in uses:  # in the order the stays ended, as the run went
                    figures = shares.get(use_share)
                    if figures is None:
                        figures = shares[use_share] = ShareUse()
                    figures.used += (end - start) * instances
                windows.append(WindowFigures(window.index, window.instances, window.start, window.end, window.cutoff,
                                             window.peak, dict(sorted(shares.items())), tuple(uses),
                                             tuple(window.cuts)))
            plans.append(PlanFigures(state.name, state.instance_type, windows,
                                     {share: seconds for (share, plan), seconds in sorted(held.items())
                                      if plan == state.name}, tuple(holds[state.name])))
        return PlanReport(plans)


@dataclass(frozen=True)
class WindowFigures:
    """One window's figures, instance-seconds: ``paid`` whatever happens, ``used`` by jobs, the rest idle."""

    index: int
    instances: int
    start: float
    end: float
    cutoff: float
    peak: int
    shares: dict[str, ShareUse]
    #: each stay of a job on the window's instances, and the work cut at its end lost (instances x seconds)
    uses: tuple[Use, ...] = ()
    cuts: tuple[Use, ...] = ()

    @property
    def paid(self) -> float:
        return self.instances * (self.end - self.start)

    @property
    def used(self) -> float:
        return sum(use.used for use in self.shares.values())

    @property
    def idle(self) -> float:
        return self.paid - self.used

    @property
    def cut_jobs(self) -> int:
        return sum(use.cut_jobs for use in self.shares.values())

    @property
    def cut_seconds(self) -> float:
        return sum(use.cut_seconds for use in self.shares.values())


@dataclass(frozen=True)
class PlanFigures:
    name: str
    instance_type: str
    windows: list[WindowFigures]
    #: instance-seconds of quota SCHEDULED jobs of each share held while waiting for an instance of the plan
    held_quota: dict[str, float]
    #: each of those waits, job by job (``Hold``), in the order they ended (those still on at the report time last)
    holds: tuple[Hold, ...] = ()

    @property
    def paid(self) -> float:
        return sum(window.paid for window in self.windows)

    @property
    def used(self) -> float:
        return sum(window.used for window in self.windows)

    @property
    def idle(self) -> float:
        return self.paid - self.used


@dataclass(frozen=True)
class PlanReport:
    """What a run did with its training plans (``SimulationResult.plans``)."""

    plans: list[PlanFigures]

    @property
    def idle_seconds(self) -> float:
        """Reserved instance-seconds paid and not used, over every plan and window."""
        return sum(plan.idle for plan in self.plans)

