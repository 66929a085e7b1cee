"""``serve --events`` / ``--events-url``: every mirrored state change as the EventBridge events AWS would send.

The scheduler calls ``changed`` after a record shows the change, so an event's detail is the job
as DescribeServiceJob shows it at that instant (its reason as the change set it) and its ``time``
is the simulated clock. What the events are is decided in ``policy_engine.events.service_events``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policy_engine.adapters.endpoint.handlers.service_jobs import describe
from policy_engine.events.service_events import EventFactory, preemption_of
from policy_engine.events.sinks import EventSink
from policy_engine.simulation.causes import Reason

if TYPE_CHECKING:
    from policy_engine.adapters.endpoint.base.jobs import ServiceJob
    from policy_engine.adapters.endpoint.handlers.context import Endpoint


class EndpointEvents:
    """The scheduler's ``ChangeWatcher``: builds the events of each change and hands them to every sink."""

    def __init__(self, service: Endpoint, sinks: list[EventSink], factory: EventFactory) -> None:
        self.service = service
        self.sinks = sinks
        self.factory = factory

    def _send(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            for sink in self.sinks:
                sink.send(event)

    def changed(self, record: ServiceJob, now: float, before: str, after: str, reason: Reason, started: bool) -> None:
        service = self.service
        self._send(self.factory.for_change(service.ms(now), record.arn, before, after, reason,
                                           lambda: describe(service, record, live_reason=False), started))

    def preemption_started(self, record: ServiceJob, now: float, status: str, reason: Reason) -> None:
        preemption = preemption_of(status, "RUNNABLE", reason)
        if preemption is not None:
            self._send([self.factory.preemption_started(self.service.ms(now), record.arn, preemption, status)])

    def state(self) -> dict[str, Any]:
        """Where events go and how many arrived (``GET /_batch-quota/events``)."""
        return {"sinks": [{"target": sink.target, **sink.stats.as_dict()} for sink in self.sinks]}

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()
