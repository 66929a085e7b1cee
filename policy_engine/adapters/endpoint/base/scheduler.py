"""The simulator driven live: a simulated clock, and the engine fed with API calls as they arrive.

The clock runs at ``speed`` x real time (0: only ``advance`` moves it). Before every
request the engine catches up to the clock (``run(now)``: completions, preemptions and
placements due by then), so time passes even with no background thread. Inputs are
applied at the clock's time through the engine's live hooks (``submit``,
``update_priority_now``, ``terminate``, ``change_now``): a share or environment update is
the scenario action ``update_share`` / ``update_environment`` at that time
(``topology_diff``); any other topology change builds a new engine and carries every
unfinished job over (``Engine.adopt``), so running jobs keep their capacity and waiting
jobs their place.

The engine's state changes are mirrored onto the API records (status, reason,
timestamps, attempts, ``preemptionSummary``) and kept as the event log ``export`` returns.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from policy_engine.adapters.endpoint.base.jobs import ACTIVE, FINAL, RECENT_PREEMPTIONS, JobIndex, ServiceJob
from policy_engine.adapters.endpoint.base.status_reasons import attempt_reason, status_reason
from policy_engine.adapters.endpoint.base.topology_diff import live_actions
from policy_engine.foundation.model import Topology
from policy_engine.simulation.causes import PREEMPTIONS, Cause, Reason, describe, describe_waiting
from policy_engine.simulation.core.engine import Engine, SimulationSettings
from policy_engine.simulation.core.jobs import Job, JobSpec


class Clock:
    """Simulated seconds since the account began; ``speed`` simulated seconds per real second, up to ``latest``.

    ``latest`` is the last second a date can show (``bounds.MAX_INSTANT`` from the account's start): a running
    clock stops there (docs/endpoint.md), and ``set`` past it is a bug of the caller (``Service`` refuses an
    advance that would pass it)."""

    def __init__(self, speed: float, start: float = 0.0, wall: Callable[[], float] = time.monotonic,
                 latest: float = math.inf) -> None:
        self.speed = speed
        self.latest = latest
        self._wall = wall
        self._anchor_sim = start
        self._anchor_wall = wall()

    def now(self) -> float:
        if not self.speed:
            return self._anchor_sim
        return _millisecond(min(self._anchor_sim + (self._wall() - self._anchor_wall) * self.speed, self.latest))

    def set(self, seconds: float) -> None:
        if seconds > self.latest:
            raise ValueError(f"the clock cannot be set to {seconds:g} s, past its latest instant {self.latest:g} s")
        self._anchor_sim = _millisecond(seconds)
        self._anchor_wall = self._wall()

    def advance(self, seconds: float) -> float:
        self.set(self.now() + seconds)
        return self._anchor_sim


def _millisecond(seconds: float) -> float:
    """The clock shows whole milliseconds, as the API's times do: a call is at the instant its record shows, so
    ``history`` carries it exactly (a sum of advances such as 0.1 + 0.2 is 0.30000000000000004 otherwise)."""
    return round(seconds * 1000.0) / 1000.0 if abs(seconds) < _UNROUNDED else seconds


#: Past this many seconds (far beyond any date) a time is kept as it is: ``seconds * 1000`` could overflow.
_UNROUNDED = 1e15


class ChangeWatcher(Protocol):
    """Sees every change mirrored onto a record (``serve --events``), after the record shows it."""

    def changed(self, record: ServiceJob, now: float, before: str, after: str, reason: Reason, started: bool) -> None:
        """``reason`` is the engine's; ``started``: the change ends a PREEMPTION_IN_PROGRESS window."""

    def preemption_started(self, record: ServiceJob, now: float, status: str, reason: Reason) -> None:
        """A PREEMPTION_IN_PROGRESS window opens: ``record`` still holds its capacity in ``status``."""


class Scheduler:
    """One engine on the account's topology, the job records it updates, and the event log."""

    def __init__(self, topology: Topology, clock: Clock, training_arn: Callable[[str], str],
                 keep_events: bool = True, preemption_seconds: float = 0.0, start: datetime | None = None) -> None:
        self.clock = clock
        #: AWS's PREEMPTION_IN_PROGRESS window: a victim shows RUNNING this long while its preemptor is
        #: SCHEDULED (the engine's ``preemption_delay``); 0: victims are RUNNABLE at once
        self.preemption_seconds = preemption_seconds
        #: ``start``: the instant simulated second 0 stands for (the account's start), what ISO 8601 plan windows
        #: count from
        self.settings = SimulationSettings(preemption_delay=preemption_seconds, start=start, millisecond_instants=True)
        #: victims in their PREEMPTION_IN_PROGRESS window: job id -> (ends at, the preemption)
        self._in_progress: dict[str, tuple[float, Reason]] = {}
        self.jobs = JobIndex()
        self.training_arn = training_arn
        self.keep_events = keep_events
        #: (time, job id, from, to, reason worded as ``simulate --events`` does): every state change, for ``export``
        self.events: list[tuple[float, str, str, str, str]] = []
        #: state changes before ``events``, not read yet (a ``--state`` checkpoint's, read by the first ``export``):
        #: how many, and how to read them; ``state_changes`` is the whole log
        self.events_base = 0
        self.events_before: Callable[[], list[tuple[float, str, str, str, str]]] | None = None
        #: (time, job id, priority) and (time, job id, reason): inputs a scenario replays
        self.updates: list[tuple[float, str, int]] = []
        self.terminations: list[tuple[float, str, str]] = []
        self.watcher: ChangeWatcher | None = None
        #: sequence numbers of the records changed since the last ``--state`` checkpoint took them (``checkpoint``)
        self.changed: set[int] = set()
        #: the account's topology the engine runs (changed live, so ``engine.topology`` may be older)
        self.topology = topology
        self.engine = self._new_engine(topology, clock.now())

    def _new_engine(self, topology: Topology, now: float) -> Engine:
        engine = Engine(topology, [], settings=self.settings)
        engine.now = now
        engine.on_reason = self._on_reason
        return engine

    # --- time ---------------------------------------------------------------------------

    def catch_up(self) -> float:
        """Run the engine up to the clock; return the clock."""
        now = self.clock.now()
        if now < self.engine.now:  # the clock never goes back (it was restored or set behind)
            self.clock.set(self.engine.now)
            now = self.engine.now
        self.engine.run(now, close=False)
        if self._in_progress:
            for job_id, (ends, _) in list(self._in_progress.items()):
                if ends <= now:
                    self._end_preemption(self.jobs.by_id[job_id], ends)
        return now

    def advance(self, seconds: float) -> float:
        self.clock.advance(seconds)
        return self.catch_up()

    # --- inputs ---------------------------------------------------------------------------

    def change_topology(self, topology: Topology) -> list[ServiceJob]:
        """The account's resources changed: apply it to the running engine as the scenario actions that make
        the same change (``topology_diff``), or on a new engine where no action does (``set_topology``).
        Returns the jobs that failed because their share or its instance type is gone."""
        now = self.engine.now
        actions = live_actions(self.topology, topology, now)
        if actions is None:
            return self.set_topology(topology)
        self.topology = topology
        if actions:
            for action in actions:
                self.engine.change_now(action)
            self.engine.run(now, close=False)
        return []

    def set_topology(self, topology: Topology) -> list[ServiceJob]:
        """A new engine on ``topology`` with every unfinished job carried over; returns the jobs that could
        not be (their share or its instance type is gone): they fail."""
        self.topology = topology
        old = self.engine
        now = old.now
        engine = self._new_engine(topology, now)
        advances = old.pending_advances()
        orphans: list[Job] = []
        for job in sorted(old.jobs, key=lambda j: j.seq):
            if job.status.value in FINAL:
                continue
            if engine.adopt(job, advances.get(job.spec.name)) is None:
                orphans.append(job)
        self.engine = engine
        for job in orphans:
            self._on_reason(now, job, job.status.value, "FAILED",
                            Reason(Cause.TOPOLOGY_CHANGE, (job.spec.share, job.spec.instance_type)))
        engine.run(now, close=False)
        return [self.jobs.by_id[job.spec.name] for job in orphans]

    def submit(self, record: ServiceJob, attempts: int, attempt_timeout: float | None = None) -> None:
        """Add a job now. An ``attempt_timeout`` shorter than the run time fails every attempt after that long
        (``timeoutConfig.attemptDurationSeconds``); ``retryStrategy.attempts`` then retries it."""
        now = self.engine.now
        self.jobs.add(record)
        self.changed.add(record.seq)
        duration = record.duration
        times_out = attempt_timeout is not None and attempt_timeout < duration
        spec = JobSpec(record.id, f"{record.queue}/{record.share}", record.instance_type, record.instances,
                       record.priority, now, duration, record.preemption_retries, None, attempts,
                       attempts if times_out else 0, attempt_timeout if times_out else None,
                       training_plan=record.training_plan, max_runtime=record.max_runtime)
        self.engine.submit(spec)
        self.engine.run(now, close=False)

    def update_priority(self, record: ServiceJob, priority: int) -> None:
        now = self.engine.now
        self.jobs.reprioritise(record, priority)
        self.changed.add(record.seq)
        self.updates.append((now, record.id, priority))
        job = self.engine.by_name.get(record.id)
        if job is None:
            return
        self.engine.update_priority_now(record.id, priority)
        self.engine.run(now, close=False)

    def terminate(self, record: ServiceJob, reason: str) -> None:
        now = self.engine.now
        record.terminated = True
        self.changed.add(record.seq)
        self.terminations.append((now, record.id, reason))
        job = self.engine.by_name.get(record.id)
        if job is None:
            return
        self.engine.terminate(job, reason)
        self.engine.run(now, close=False)

    def plan_in_use(self, plan: str) -> int:
        """Instances of the plan's windows its jobs hold now, as the engine counts them (0 without the plan)."""
        gate = self.engine.plans
        state = gate.plans.get(plan) if gate is not None else None
        return sum(window.in_use for window in state.windows) if state is not None else 0

    def state_changes(self) -> list[tuple[float, str, str, str, str]]:
        """Every state change since the account began, oldest first (``export``)."""
        if self.events_before is None:
            return self.events
        before = self.events_before()
        self.events_before = lambda: before  # read once
        return before + self.events

    def job(self, record: ServiceJob) -> Job | None:
        return self.engine.by_name.get(record.id)

    def waiting_reason(self, record: ServiceJob) -> str:
        job = self.job(record)
        if job is None or job.status.value != "RUNNABLE":
            return record.reason
        return describe_waiting(self.engine.waiting(job), self.named)

    # --- mirroring the engine onto the API records ----------------------------------------

    def _on_reason(self, now: float, job: Job, before: str, after: str, reason: Reason) -> None:
        record = self.jobs.by_id[job.spec.name]
        self.changed.add(record.seq)
        if self.keep_events:
            self.events.append((now, record.id, before, after, describe(reason)))
        if record.id in self._in_progress:  # its next change ends the window first
            self._end_preemption(record, min(now, self._in_progress[record.id][0]))
        if (self.preemption_seconds > 0 and after == "RUNNABLE" and reason.cause in PREEMPTIONS
                and before in ACTIVE):
            # as AWS shows it: still RUNNING, reason PREEMPTION_IN_PROGRESS, while its preemptor waits SCHEDULED
            self._in_progress[record.id] = (now + self.preemption_seconds, reason)
            record.reason = "PREEMPTION_IN_PROGRESS"
            if self.watcher is not None:
                self.watcher.preemption_started(record, now, before, reason)
            return
        self._apply(record, now, before, after, reason)

    def _end_preemption(self, record: ServiceJob, at: float) -> None:
        _, reason = self._in_progress.pop(record.id)
        self._apply(record, at, record.status, "RUNNABLE", reason, started=True)

    def _apply(self, record: ServiceJob, now: float, before: str, after: str, reason: Reason,
               started: bool = False) -> None:
        """Mirror one state change onto the record: attempts, timestamps, reason, and the list indexes."""
        self.changed.add(record.seq)
        if before in ACTIVE and record.attempts:
            attempt = record.attempts[-1]
            if "stoppedAt" not in attempt:
                attempt["stoppedAt"] = now
                attempt["statusReason"] = attempt_reason(after, reason, self.named)
                if reason.cause in _PREEMPTED_ATTEMPT:  # a preemption past the job's retries counts too
                    record.preempted_count += 1
                    record.preempted.append(attempt)
                    del record.preempted[:-RECENT_PREEMPTIONS]
        if after == "SCHEDULED":
            record.scheduled = now
        elif after == "RUNNING":
            if record.started is None:
                record.started = now
            resource = self.training_arn(f"{record.training_name}-{len(record.attempts) + 1}")
            record.attempts.append({"startedAt": now, "resource": resource})
        elif after in FINAL:
            record.stopped = now
        record.reason = status_reason(after, reason, self.named)
        self.jobs.move(record, after)
        if self.watcher is not None:
            self.watcher.changed(record, now, before, after, reason, started)

    def named(self, job_id: str) -> str:
        """A job id of the engine as a user reads it: ``jobName (jobId)`` (the id itself when unknown)."""
        record = self.jobs.by_id.get(job_id)
        return f"{record.name} ({record.id})" if record else job_id


#: The causes of an attempt ended by preemption: the job waits again, or it fails because the preemption exceeded
#: its ``preemptionRetriesBeforeTermination`` (``lifecycle``); both are preempted attempts.
_PREEMPTED_ATTEMPT = PREEMPTIONS | {Cause.PREEMPTION_RETRIES_EXHAUSTED}
