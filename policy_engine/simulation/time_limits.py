"""``jobStateTimeLimitActions``: a head that waits too long for a reason its queue names is terminated.

Only an action naming the head's status reason applies: its misconfiguration, else
``CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY`` (a head still waiting after the pass). A timer starts
when a line's head changes, so lines nobody touched cost nothing.
"""

from __future__ import annotations

from typing import Protocol

from policy_engine.foundation.model import JobStateTimeLimitAction, Topology
from policy_engine.simulation.causes import Cause, Detail, Reason
from policy_engine.simulation.core.capacity import ShareCapacity
from policy_engine.simulation.core.events import Kind, Phase
from policy_engine.simulation.core.jobs import CAPACITY_INSUFFICIENT, Job, Status


class TimerHost(Protocol):
    """What the timers call of the lifecycle that owns them (``core.lifecycle.JobLifecycle`` is one)."""

    @property
    def now(self) -> float: ...

    def push(self, time: float, phase: Phase, kind: Kind, subject: object, data: object = None,
             order: int = 0) -> None: ...

    def instant(self, time: float) -> float: ...

    def transition(self, job: Job, to: Status, cause: Cause, detail: Detail = None) -> None: ...

    def touch(self, share: ShareCapacity) -> None: ...


def queue_actions(topology: Topology) -> dict[str, dict[str, JobStateTimeLimitAction]]:
    """Per queue, the shortest action for each status reason it names (empty: no queue has one)."""
    actions: dict[str, dict[str, JobStateTimeLimitAction]] = {}
    for queue in topology.job_queues:
        for action in sorted(queue.job_state_time_limit_actions, key=lambda a: -a.max_time_seconds):
            actions.setdefault(queue.name, {})[action.reason] = action
    return actions


class TimeLimits:
    """The timers of the heads of lines whose queue has ``jobStateTimeLimitActions``."""

    __slots__ = ("actions", "engine", "timers", "touched")

    def __init__(self, engine: TimerHost, actions: dict[str, dict[str, JobStateTimeLimitAction]]):
        self.engine = engine
        self.actions = actions
        #: lines whose head may have changed since the last ``arm``
        self.touched: dict[ShareCapacity, None] = {}
        self.timers: dict[ShareCapacity, tuple[Job, JobStateTimeLimitAction]] = {}

    def arm(self) -> None:
        """Start the clock for every touched line whose head has an action for its reason."""
        lines = self.touched
        self.touched = {}
        engine = self.engine
        for share in lines:
            actions = self.actions.get(share.queue.name)
            if actions is None:
                continue
            head = share.line.first
            timer = self.timers.get(share)
            action = actions.get(head.misconfigured or CAPACITY_INSUFFICIENT) if head is not None else None
            if action is None or head is None:
                self.timers.pop(share, None)
            elif timer is None or timer[0] is not head:
                self.timers[share] = (head, action)
                engine.push(engine.instant(engine.now + action.max_time_seconds), Phase.LIMIT, Kind.LIMIT, share, head,
                            head.seq)

    def expired(self, share: ShareCapacity, job: Job) -> None:
        """A timer ran out: the head it was started for is terminated if it is still the waiting head."""
        timer = self.timers.get(share)
        if timer is None or timer[0] is not job or share.line.first is not job:
            return
        del self.timers[share]
        engine = self.engine
        share.line.pop_head()
        job.version += 1
        job.finished_at = engine.now
        job.end_reason = Reason(Cause.TIME_LIMIT_ACTION, timer[1].reason)
        engine.transition(job, Status.FAILED, Cause.TIME_LIMIT_ACTION, timer[1].reason)
        engine.touch(share)
