"""The event loop: applies the events of one instant, then runs the scheduling pass.

Order at one instant: completions (and failures), start-up completions, priority
updates, submissions, then the scheduling pass (``steps``); only then
``jobStateTimeLimitActions`` timers of heads still waiting (``time_limits``, then the
pass again); ties by workload order. The pass only visits pools touched at that instant.
With ``same_instant: one_by_one`` the instant's own events and their pass come first, then each
input (a submission or an action) with its own pass, in call order (``_run_calls``): what a live
endpoint does with calls that share an instant.

An engine can also be driven live (``batch-quota serve``, the account connectors): inputs
arrive at the clock's time, and jobs carry over from an engine on the previous topology.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Final, SupportsFloat

from policy_engine.foundation.model import Topology
from policy_engine.simulation.causes import Cause, Reason, Waiting
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.agenda import Agenda
from policy_engine.simulation.core.events import Event, Kind, Phase
from policy_engine.simulation.core.jobs import ACTIVE, FAILED, FINAL, Job, JobSpec, LiveState, Status
from policy_engine.simulation.core.lifecycle import JobLifecycle, Transition
from policy_engine.simulation.exact_types import exact_number
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.reasons import waiting, waiting_reason
from policy_engine.simulation.settings import (
    Action,
    JobTermination,
    PriorityUpdate,
    SameInstant,
    SimulationSettings,
)
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate

__all__ = ["Action", "Agenda", "Engine", "PriorityUpdate", "SimulationSettings", "Transition"]

_RUNNING: Final = Status.RUNNING
_SUBMIT: Final = Phase.SUBMIT
_LIMIT: Final = Phase.LIMIT
#: the clock's bound when running to the end: every finite time, never infinity
_LATEST: Final = sys.float_info.max
#: What ``adopt`` carries over from a job of the previous engine as it is.
_CARRIED = ("priority", "preemptions", "attempts_failed", "started_at", "placed_at", "finished_at", "attempt_start",
            "run_started", "start_order", "placed_borrowed", "end_reason", "segments", "remaining", "status")


class Engine(JobLifecycle):
    """Replays ``jobs`` and ``updates`` against ``topology``; deterministic for the same input."""

    def __init__(
        self,
        topology: Topology,
        jobs: Sequence[JobSpec],
        updates: Sequence[Action] = (),
        settings: SimulationSettings | None = None,
        live: Mapping[str, LiveState] | None = None,
    ):
        super().__init__(topology, jobs, settings)
        self.observers: list[Callable[[Engine], None]] = []
        #: Jobs already on capacity at time 0 (a live queue's snapshot): placed when the run starts.
        self._live = self._live_jobs(jobs, live or {})
        times = [job.spec.submit_at for job in self.jobs]
        #: ``same_instant: one_by_one``: every input as a call, in call order (``_run_calls``); None otherwise
        self._calls: list[tuple[float, int, int, int, Job | None, Action | None]] | None = None
        self._next_call = 0
        if self.settings.same_instant is SameInstant.ONE_BY_ONE:
            self._calls = self._call_order(updates)
            self._arrivals, self._arrival_times = [], []
        elif not self._live and all(a <= b for a, b in pairwise(times)):
            self._arrivals, self._arrival_times = self.jobs, times  # in submission order already: no second list
        else:
            self._arrivals = sorted((j for j in self.jobs if j.seq not in self._live),
                                    key=lambda j: (j.spec.submit_at, j.seq))
            self._arrival_times = [job.spec.submit_at for job in self._arrivals]
        self._next_arrival = 0
        self._live_started = False
        #: seqs of jobs carried over from an engine on the previous topology (``adopt``): submitted already
        self._adopted: set[int] = set()
        self._handlers: tuple[Callable[[Event], None], ...] = (
            self._on_finish, self._on_advance, self._on_priority, self._on_topology, self._on_limit, self._on_wake,
            self._on_terminate, self._on_plan)
        if self._calls is None:
            for order, update in enumerate(updates):
                self.push(update.at, Phase.UPDATE, _kind(update), update, order=order)

    def _call_order(self, updates: Sequence[Action]) -> list[tuple[float, int, int, int, Job | None, Action | None]]:
        """Every input as ``(time, place, 0 submission / 1 action, order, job, action)``, sorted: an instant's
        submissions in workload order, each action after the ``after_submissions`` first of them."""
        calls: list[tuple[float, int, int, int, Job | None, Action | None]] = []
        counts: dict[float, int] = {}
        for job in sorted((j for j in self.jobs if j.seq not in self._live), key=lambda j: (j.spec.submit_at, j.seq)):
            at = job.spec.submit_at
            place = counts.get(at, 0) + 1
            counts[at] = place
            calls.append((at, place, 0, job.seq, job, None))
        for order, update in enumerate(updates):
            calls.append((update.at, update.after_submissions, 1, order, None, update))
        calls.sort(key=lambda call: (call[0], call[1], call[2], call[3]))
        return calls

    def _live_jobs(self, specs: Sequence[JobSpec], live: Mapping[str, LiveState]) -> dict[int, LiveState]:
        """``seq -> LiveState`` of the jobs already on capacity; ``LiveStateError`` if they break an invariant."""
        if not live:
            return {}
        from policy_engine.simulation.live import LiveStateError, live_state_problems

        problems = live_state_problems(self.topology, specs, live)
        if problems:
            raise LiveStateError(problems)
        return {job.seq: live[job.spec.name] for job in self.jobs if job.spec.name in live}

    # --- the loop ---------------------------------------------------------------------

    def run(self, until: SupportsFloat | None = None, progress: Callable[[int], None] | None = None,
            close: bool = True) -> float:
        """Process every instant up to ``until`` (all, when ``None``); return the clock.

        ``close=False`` skips integrating every share's metrics up to the clock (O(shares)): a live
        driver calling ``run`` once per request does not read them.
        """
        with gc_paused():
            end = None if until is None else exact_number("until", until)
            if self._calls is not None:
                return self._run_calls(end, progress, close)
            return self._run_until(end, progress, close)

    def _run_calls(self, until: float | None, progress: Callable[[int], None] | None, close: bool) -> float:
        """``same_instant: one_by_one``: each input as a live endpoint takes a call: the engine first catches up
        to the call's instant (its own events and their pass), then applies the call and runs that instant's
        pass again."""
        calls = self._calls
        assert calls is not None
        limit = _LATEST if until is None else until
        index = self._next_call
        while index < len(calls) and calls[index][0] <= limit:
            at, _, _, order, job, action = calls[index]
            index += 1
            self._next_call = index
            self._run_until(at, progress, False)
            if job is not None:
                self._arrivals.append(job)
                self._arrival_times.append(at)
            elif action is not None:
                self.push(at, Phase.UPDATE, _kind(action), action, order=order)
            self._run_until(at, progress, False)
        return self._run_until(until, progress, close)

    def _run_until(self, until: float | None, progress: Callable[[int], None] | None, close: bool = True) -> float:
        if self._live and not self._live_started:
            self._start_live()
        instants = 0
        events, arrivals, times, total = self._events, self._arrivals, self._arrival_times, len(self._arrival_times)
        limit = _LATEST if until is None else until  # an event at infinity never runs
        observers = self.observers
        # bound once: the loop below runs twice per job
        pop, handlers, submit, touched = heapq.heappop, self._handlers, self._submit, self._touched
        run_pass, agendas, limits = self.steps.run_pass, self._agendas, self.time_limits
        arrival = self._next_arrival
        alone = limits is None and not self.settings.backfill  # a lone submission may be placed as it arrives
        while True:
            # the next instant: a submission before the next event, or the next event's time
            if arrival < total and (not events or times[arrival] < events[0][0]):
                time = times[arrival]
                if time > limit:
                    break
                self.now = time  # no event is due at this instant before its submissions
                job = arrivals[arrival]
                arrival += 1
                if arrival < total and times[arrival] == time:
                    submit(job, False)  # the others follow below
                    done = False
                else:
                    # alone when nothing else happens at this instant (no pass pending, no time limit after)
                    submit(job, alone and not touched)
                    # most submissions: nothing else to do at this instant (no pass, no event it brought)
                    done = alone and not touched and not (events and events[0][0] == time)
            else:
                if not events:
                    break
                time = events[0][0]
                if time > limit:
                    break
                self.now = time
                while events and (event := events[0])[0] == time and event[1] < _SUBMIT:
                    pop(events)
                    handlers[event[4]](event)
                done = False
            # the rest of the instant, in the order of the module docstring
            while True:  # not ``while not done``: mypyc 2.4 miscompiles that loop
                if done:
                    break
                if arrival < total and times[arrival] == time:
                    while True:
                        job = arrivals[arrival]
                        arrival += 1
                        if arrival < total and times[arrival] == time:
                            submit(job, False)
                            continue
                        submit(job, alone and not touched)  # the instant's last submission
                        break
                # events the submissions brought to this instant (a job that needs no time)
                while events and (event := events[0])[0] == time and event[1] < _LIMIT:
                    pop(events)
                    handlers[event[4]](event)
                while touched:
                    if len(touched) == 1:
                        run_pass(agendas[touched.popitem()[0]])
                        continue
                    order = sorted(touched)
                    touched.clear()
                    for index in order:
                        run_pass(agendas[index])
                if limits is not None:
                    limits.arm()
                if not (events and events[0][0] == time):
                    break
                # time limits only after the pass: a head that can be placed at this instant is placed,
                # not terminated ("RUNNABLE longer than" the limit); the pass runs again afterwards
                while events and (event := events[0])[0] == time and event[1] == _LIMIT:
                    pop(events)
                    handlers[event[4]](event)
                # then what the pass and the time limits brought to this instant, as at its start
                while events and (event := events[0])[0] == time and event[1] < _SUBMIT:
                    pop(events)
                    handlers[event[4]](event)
            if observers:
                self._next_arrival = arrival
                for observer in observers:
                    observer(self)
            if progress is not None:
                instants += 1
                if not instants & 4095:
                    progress(arrival)
        self._next_arrival = arrival
        if until is not None:
            self.now = max(self.now, until)
        if close:
            for pool in self.pools:
                pool.close(self.now)
        if progress is not None:
            progress(arrival)
        return self.now

    def _on_advance(self, event: Event) -> None:
        job = event[5]
        if job.version == event[6] and job.status in ACTIVE:
            self._advance(job)

    def _on_priority(self, event: Event) -> None:
        self._update_priority(event.subject)

    def _on_topology(self, event: Event) -> None:
        event.subject.apply(self)

    def _on_terminate(self, event: Event) -> None:
        termination: JobTermination = event.subject
        job = self.by_name[termination.job]
        if job.status is Status.SUBMITTED and event.phase < _LIMIT:
            # submitted at this instant and not yet arrived: terminated after its submission and the pass,
            # as the call came after the submission
            self.push(self.now, _LIMIT, Kind.TERMINATE, termination, order=event.order)
            return
        self.terminate(job, termination.status_reason)

    def _on_limit(self, event: Event) -> None:
        if self.time_limits is not None:
            self.time_limits.expired(event.subject, event.data)

    def _on_plan(self, event: Event) -> None:
        if self.plans is not None:
            self.plans.on_event(event)

    def _on_wake(self, event: Event) -> None:
        self._wakes.discard((event.subject, self.now))
        self.capacity_freed(self.pools[event.subject])

    # --- views used by reports and properties ----------------------------------------

    def waiting_reason(self, job: Job) -> str:
        """Why a RUNNABLE job is not running, worded (``reasons.waiting_reason``)."""
        return waiting_reason(self, job)

    def waiting(self, job: Job) -> Waiting:
        """Why a RUNNABLE job is not running, as a value (``reasons.waiting``)."""
        return waiting(self, job)

    def submitted_jobs(self) -> Iterable[Job]:
        """Jobs submitted by now, in workload order."""
        calls = self._calls
        if self._next_arrival >= len(self._arrivals) and (calls is None or self._next_call >= len(calls)):
            return iter(self.jobs)
        submitted = {job.seq for job in self._arrivals[: self._next_arrival]} | self._live.keys() | self._adopted
        return [job for job in self.jobs if job.seq in submitted]

    # --- driving a live engine (``batch-quota serve``): inputs arrive at the clock's time --------

    def _start_live(self) -> None:
        """Put the live jobs on capacity at time 0, in workload order, as the snapshot had them."""
        for seq, state in self._live.items():
            job = self.jobs[seq]
            if self.on_transition is not None or self.on_reason is not None:
                self.record(job, "", Status.SUBMITTED.value, Reason(Cause.ON_CAPACITY_AT_SNAPSHOT))
            self._occupy(job, job.share)
            self._start_counter += 1
            job.start_order = self._start_counter
            job.attempt_start = state.started_at
            job.placed_at = self.now  # its wait ended before the snapshot
            job.placed_borrowed = job.share.used > job.share.limit
            job.remaining = state.remaining
            job.run_started = None
            if state.status is _RUNNING:
                self._run(job)
                job.started_at = state.started_at
                continue
            self.transition(job, Status.SCHEDULED, Cause.ON_CAPACITY_AT_SNAPSHOT)
            if state.status is Status.STARTING:
                self.transition(job, Status.STARTING, Cause.STARTED)
                self._after_starting(job)
            else:  # SCHEDULED: starts like a job placed now
                self._advance_at(job, self.now)
        self._live_started = True

    def submit(self, spec: JobSpec) -> Job:
        """Add a job submitted now (``spec.submit_at`` is the clock); the next ``run(now)`` schedules it."""
        if spec.submit_at < self.now:
            raise ValueError(f"job {spec.name} submitted at {spec.submit_at} before the clock ({self.now})")
        seq = self.jobs[-1].seq + 1 if self.jobs else 0
        job = Job(spec, seq, self.shares[(spec.share, spec.instance_type)])
        self.jobs.append(job)
        self.by_name[spec.name] = job
        if self._arrivals is not self.jobs:  # the arrival order may be the jobs list itself
            self._arrivals.append(job)
        self._arrival_times.append(spec.submit_at)
        return job

    def update_priority_now(self, name: str, priority: int) -> None:
        """``UpdateServiceJob`` at the clock's time; applied by the next ``run(now)``."""
        self.push(self.now, Phase.UPDATE, Kind.PRIORITY, PriorityUpdate(self.now, name, priority))

    def change_now(self, action: ShareUpdate | EnvironmentUpdate) -> None:
        """``UpdateQuotaShare`` / ``UpdateServiceEnvironment`` at the clock's time, as the scenario action at that
        time; applied by the next ``run(now)``."""
        self.push(self.now, Phase.UPDATE, Kind.TOPOLOGY, action)

    def terminate(self, job: Job, reason: str) -> None:
        """``TerminateServiceJob`` at the clock's time: the job fails and frees its capacity or line place."""
        if job.status in FINAL:
            return
        share = job.share
        if job.status is Status.RUNNABLE:
            if self.plans is None or not self.plans.unhold(job):  # a held plan job is in no line
                share.line.remove(job)
            self.touch(share)
        elif job.status in ACTIVE:
            self._release(job, FAILED)
        job.finished_at = self.now
        job.end_reason = Reason(Cause.TERMINATED, reason)
        self.transition(job, Status.FAILED, Cause.TERMINATED, reason)
        self.wake(share.pool, self.now)

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
        if old.status in ACTIVE and old.status is not _RUNNING and advance_at is None:
            raise ValueError(f"job {spec.name} is {old.status}: adopting it needs the time it moves on")
        job = Job(spec, old.seq, share)
        for name in _CARRIED:
            setattr(job, name, getattr(old, name))
        if self._arrivals is self.jobs:
            # an adopted job is no arrival: the jobs list stops being the arrival order (else the next
            # submission would be read as this job arriving again, and would itself never arrive)
            self._arrivals = list(self.jobs)
        self._adopted.add(job.seq)
        self.jobs.append(job)
        self.by_name[spec.name] = job
        self._start_counter = max(self._start_counter, job.start_order)
        if old.status is Status.RUNNABLE:
            job.misconfigured = placement.misconfiguration(share.pool, share, spec.instances)
            share.line.push(job)
        elif old.status in ACTIVE:
            self._occupy(job, share)
            if old.status is _RUNNING and old.run_started is not None:
                self._schedule_finish(job, old.run_started)
            elif advance_at is not None:
                self._advance_at(job, advance_at)
        else:
            return job
        self.touch(share)
        self.wake(share.pool, self.now)
        return job

    def pending_advances(self) -> dict[str, float]:
        """When each SCHEDULED / STARTING job moves on (for ``adopt`` into a new engine)."""
        return {event.subject.spec.name: event.time for event in self._events
                if event.kind is Kind.ADVANCE and event.subject.version == event.data}



def _kind(update: Action) -> Kind:
    """The event kind that applies a scenario action."""
    return (Kind.PRIORITY if isinstance(update, PriorityUpdate) else
            Kind.TERMINATE if isinstance(update, JobTermination) else Kind.TOPOLOGY)
