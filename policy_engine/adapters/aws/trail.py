"""What AWS Batch does not remember, read from CloudTrail: past priority, share and environment changes.

DescribeServiceJob shows only a job's current priority, DescribeQuotaShare only a share's current
settings. The calls that changed them are CloudTrail management events (``eventSource``
``batch.amazonaws.com``), which ``LookupEvents`` returns for the last 90 days, newest first, 50 per
page, one lookup attribute per call (``EventName`` here: one paginated lookup per event name).
Each event becomes a ``Change`` with its time and its request's members, so that ``history`` can
write it as a scenario action and unwind the topology to the window's start.

Job events (priority updates, terminations, and the submissions that give a job's priority before
its first update) are read within the window; share and environment events as far back as
CloudTrail keeps them (``LOOKBACK_DAYS``), so that a share's settings before its first update in the
window are known. A lookup that fails (AccessDenied, no endpoint) is kept as a ``Blind`` spot: what
``history`` could not see, said in one line, never a silent gap.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from policy_engine.adapters.aws.clients import Api, AwsError

#: How far back CloudTrail's event history (``LookupEvents``) goes.
LOOKBACK_DAYS = 90
#: LookupEvents' largest page.
PAGE = 50


class EventName(StrEnum):
    """The CloudTrail events ``history`` reads (AWS Batch operation names)."""

    UPDATE_SERVICE_JOB = "UpdateServiceJob"
    TERMINATE_SERVICE_JOB = "TerminateServiceJob"
    TERMINATE_SERVICE_JOBS = "TerminateServiceJobs"
    SUBMIT_SERVICE_JOB = "SubmitServiceJob"
    CREATE_QUOTA_SHARE = "CreateQuotaShare"
    UPDATE_QUOTA_SHARE = "UpdateQuotaShare"
    DELETE_QUOTA_SHARE = "DeleteQuotaShare"
    CREATE_SERVICE_ENVIRONMENT = "CreateServiceEnvironment"
    UPDATE_SERVICE_ENVIRONMENT = "UpdateServiceEnvironment"
    UPDATE_JOB_QUEUE = "UpdateJobQueue"
    DELETE_JOB_QUEUE = "DeleteJobQueue"


#: Where CloudTrail says Batch's calls come from (``eventSource``).
EVENT_SOURCE = "batch.amazonaws.com"
#: Every event name ``history`` reads.
_NAMES = frozenset(str(name) for name in EventName)
#: Events of jobs, read within the window.
JOB_EVENTS = (EventName.UPDATE_SERVICE_JOB, EventName.TERMINATE_SERVICE_JOB, EventName.TERMINATE_SERVICE_JOBS)
#: Events of the topology, read as far back as CloudTrail keeps them (the state at the window's start needs them).
TOPOLOGY_EVENTS = (EventName.CREATE_QUOTA_SHARE, EventName.UPDATE_QUOTA_SHARE, EventName.DELETE_QUOTA_SHARE,
                   EventName.CREATE_SERVICE_ENVIRONMENT, EventName.UPDATE_SERVICE_ENVIRONMENT)
#: Events of the job queue itself: a scenario has no action for them, so they are reported, not replayed.
QUEUE_EVENTS = (EventName.UPDATE_JOB_QUEUE, EventName.DELETE_JOB_QUEUE)


@dataclass(frozen=True)
class Change:
    """One recorded call: epoch milliseconds, the operation, its request members and response elements."""

    at_ms: int
    name: EventName
    request: dict[str, Any]
    response: dict[str, Any]
    event_id: str


@dataclass(frozen=True)
class Blind:
    """Events ``history`` could not read: which, and why (the failed call's one line)."""

    events: tuple[EventName, ...]
    reason: str

    @property
    def line(self) -> str:
        return f"could not read {', '.join(self.events)} from CloudTrail (LookupEvents): {self.reason}"


@dataclass
class Trail:
    """The changes read, oldest first, and what could not be read."""

    changes: list[Change] = field(default_factory=list)
    blind: list[Blind] = field(default_factory=list)
    #: Events whose record could not be read (no CloudTrailEvent, not JSON): counted, with the first reason.
    unreadable: int = 0
    unreadable_reason: str = ""

    def of(self, *names: EventName) -> Iterator[Change]:
        wanted = set(names)
        return (change for change in self.changes if change.name in wanted)

    def saw(self, name: EventName) -> bool:
        return not any(name in blind.events for blind in self.blind)


def _epoch_ms(value: Any) -> int | None:
    if isinstance(value, datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=UTC)
        return round(stamp.timestamp() * 1000)
    return None


def _lookup(api: Api, name: EventName, start_ms: int) -> Iterator[dict[str, Any]]:
    """Every ``name`` event from ``start_ms`` on (no ``EndTime``: up to now)."""
    start = datetime.fromtimestamp(start_ms / 1000, UTC)
    for page in api.pages("LookupEvents", f"CloudTrail events {name} since {start:%Y-%m-%dT%H:%M:%SZ}",
                          LookupAttributes=[{"AttributeKey": "EventName", "AttributeValue": str(name)}],
                          StartTime=start, PaginationConfig={"PageSize": PAGE}):
        yield from page.get("Events") or ()


def read_trail(api: Api, window_start_ms: int, now_ms: int, submissions: bool) -> Trail:
    """Every change ``history`` replays, oldest first; ``submissions`` also reads SubmitServiceJob (the priority a
    job had before its first update). A failed lookup is a ``Blind`` spot, and reading goes on."""
    trail = Trail()
    lookback_ms = now_ms - LOOKBACK_DAYS * 86_400_000
    plan: list[tuple[EventName, int]] = [(name, window_start_ms) for name in JOB_EVENTS]
    plan += [(name, lookback_ms) for name in TOPOLOGY_EVENTS]
    plan += [(name, window_start_ms) for name in QUEUE_EVENTS]
    failed: dict[str, list[EventName]] = {}
    for name, start_ms in plan:
        try:
            _read(trail, _lookup(api, name, start_ms), name)
        except AwsError as error:
            failed.setdefault(error.reason, []).append(name)
    updated = any(change.name is EventName.UPDATE_SERVICE_JOB for change in trail.changes)
    if submissions and updated:
        try:
            _read(trail, _lookup(api, EventName.SUBMIT_SERVICE_JOB, window_start_ms),
                  EventName.SUBMIT_SERVICE_JOB)
        except AwsError as error:
            failed.setdefault(error.reason, []).append(EventName.SUBMIT_SERVICE_JOB)
    trail.blind = [Blind(tuple(names), reason) for reason, names in failed.items()]
    trail.changes.sort(key=lambda change: change.at_ms)  # stable: same-millisecond events keep CloudTrail's order
    return trail


def calls_at(api: Api, instants: Iterable[int]) -> tuple[dict[int, list[Change]], dict[str, int]]:
    """Every Batch call CloudTrail recorded at each instant (epoch ms), oldest first: the order of calls that share
    a millisecond, which the per-name lookups of ``read_trail`` cannot tell across names. One lookup per instant
    (``EventSource``, a window of a few milliseconds around it), so only instants where the order matters cost one.
    Events that cannot be read are left out (``read_trail`` counted them); failed lookups are counted by reason."""
    found: dict[int, list[Change]] = {}
    failed: dict[str, int] = {}
    for at_ms in sorted(set(instants)):
        start = datetime.fromtimestamp((at_ms - 1) / 1000, UTC)
        end = datetime.fromtimestamp((at_ms + 1) / 1000, UTC)
        scratch = Trail()
        try:
            events = (event for page in api.pages(
                "LookupEvents", f"CloudTrail events of {EVENT_SOURCE} at {start:%Y-%m-%dT%H:%M:%S}",
                LookupAttributes=[{"AttributeKey": "EventSource", "AttributeValue": EVENT_SOURCE}],
                StartTime=start, EndTime=end, PaginationConfig={"PageSize": PAGE}) for event in page.get("Events") or ()
                if event.get("EventName") in _NAMES)
            _read(scratch, events, None)
        except AwsError as error:
            failed[error.reason] = failed.get(error.reason, 0) + 1
            continue
        found[at_ms] = [change for change in scratch.changes if change.at_ms == at_ms]
    return found, failed


def _read(trail: Trail, events: Iterable[dict[str, Any]], name: EventName | None) -> None:
    """``name``: the events' name (one lookup per name), or ``None``: each event's own (``calls_at``)."""
    found: list[Change] = []
    for event in events:
        at_ms = _epoch_ms(event.get("EventTime"))
        try:
            record = json.loads(event.get("CloudTrailEvent") or "")
        except ValueError:
            record = None
        if at_ms is None or not isinstance(record, dict):
            trail.unreadable += 1
            trail.unreadable_reason = trail.unreadable_reason or (
                f"event {event.get('EventId', '?')} ({name or event.get('EventName', '?')}) has no readable "
                "CloudTrailEvent or EventTime")
            continue
        request = record.get("requestParameters") or {}
        response = record.get("responseElements") or {}
        found.append(Change(at_ms, name or EventName(event["EventName"]), request if isinstance(request, dict) else {},
                            response if isinstance(response, dict) else {}, str(event.get("EventId") or "")))
    found.reverse()  # LookupEvents lists newest first
    trail.changes.extend(found)
