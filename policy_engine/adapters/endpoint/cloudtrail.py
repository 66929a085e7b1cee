"""The endpoint's own CloudTrail: every call that changed the account, answered by ``LookupEvents``.

AWS Batch keeps no record of past priority or share changes; an account's CloudTrail does, as
management events. ``serve`` records each successful call that changes state (the operations the
``--state`` store logs) as CloudTrail would: ``eventName``, ``eventTime``, ``eventSource``
``batch.amazonaws.com``, ``requestParameters`` (the request's members as sent) and
``responseElements``. A topology the endpoint starts from (``serve TOPOLOGY``, ``/_batch-quota/topology``)
is recorded as the Create calls that would have made it, at simulated second 0, so that a reader
can tell the account's state at any time from the trail alone.

``LookupEvents`` speaks CloudTrail's JSON 1.1 protocol on the same port (``X-Amz-Target:
com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents``; ``AWS_ENDPOINT_URL_CLOUDTRAIL``
sends boto3 there), newest first, a page at most limits.LOOKUP_EVENTS_PAGE, one lookup attribute per call, as AWS
documents. ``EventTime`` carries the simulated clock to the millisecond; the record's ``eventTime``
is whole seconds, as in CloudTrail's records. Read-only calls are not recorded (``ReadOnly`` is always
``false``): nothing replays them.
"""

from __future__ import annotations

import json
import uuid
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from botocore.model import ServiceModel

from policy_engine.adapters.endpoint.base import protocol
from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.base.validation import validate
from policy_engine.foundation import limits
from policy_engine.simulation.gcpause import gc_paused

TARGET_PREFIX = "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101."
CONTENT_TYPE = b"application/x-amz-json-1.1"
EVENT_SOURCE = "batch.amazonaws.com"
#: Who made the calls, as the records name them (SigV4 signatures are not verified, so the caller is unknown).
USER = "batch-quota-serve"
ACCESS_KEY = "ASIABATCHQUOTASERVE0"
#: LookupEvents' page bound (``MaxResults``; its default is the bound too).
PAGE = limits.LOOKUP_EVENTS_PAGE.at_most
#: Resource types CloudTrail names Batch resources by, per request member that holds one.
_RESOURCE_MEMBERS = (("jobQueue", "AWS::Batch::JobQueue"), ("quotaShareArn", "AWS::Batch::QuotaShare"),
                     ("serviceEnvironment", "AWS::Batch::ServiceEnvironment"), ("jobId", "AWS::Batch::ServiceJob"),
                     ("arn", "AWS::Batch::SchedulingPolicy"), ("resourceArn", "AWS::Batch::Resource"))
_RESPONSE_RESOURCES = (("quotaShareArn", "AWS::Batch::QuotaShare"), ("jobId", "AWS::Batch::ServiceJob"),
                       ("jobArn", "AWS::Batch::ServiceJob"),
                       ("jobQueueArn", "AWS::Batch::JobQueue"),
                       ("serviceEnvironmentArn", "AWS::Batch::ServiceEnvironment"),
                       ("arn", "AWS::Batch::SchedulingPolicy"))


def service_model() -> ServiceModel:
    return protocol.service_model("cloudtrail")


class TrailEvent(NamedTuple):
    """One recorded call: simulated seconds, the operation, its request members and its response (a tuple: a
    ``--state`` restart builds a hundred thousand of them)."""

    seq: int
    at: float
    name: str
    request: dict[str, Any]
    response: dict[str, Any]
    event_id: str

    def resources(self) -> list[dict[str, str]]:
        found: dict[str, str] = {}
        for members, pairs in ((self.request, _RESOURCE_MEMBERS), (self.response, _RESPONSE_RESOURCES)):
            for member, kind in pairs:
                value = members.get(member)
                if isinstance(value, str) and value and value not in found:
                    found[value] = kind
        return [{"ResourceType": kind, "ResourceName": name} for name, kind in found.items()]


def _error(code: str, message: str) -> ApiError:
    return ApiError(message, code, 400)


class Trail:
    """The recorded calls, oldest first (sequence and time grow together).

    After a ``--state`` restart the events recorded before it are read from the checkpoint only when a
    ``LookupEvents`` needs them (``load``): a hundred thousand of them cost more than the rest of the restart.
    """

    def __init__(self, region: str, account_id: str, origin_ms: int) -> None:
        self.region = region
        self.account_id = account_id
        self.origin_ms = origin_ms
        #: events from ``base`` on (all of them unless events before a restart are still unread)
        self.recent: list[TrailEvent] = []
        self.base = 0
        self._before: Callable[[], list[TrailEvent]] | None = None
        self._last_at: float | None = None
        self._times: list[float] = []
        #: event name -> sequence numbers (ascending): a lookup by ``EventName`` reads only those
        self._by_name: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return self.base + len(self.recent)

    @property
    def events(self) -> list[TrailEvent]:
        """Every event, oldest first (the ones before a restart read now, if they were not yet)."""
        before = self._before
        if before is not None:
            self._before = None
            recent = self.recent
            self.recent, self.base, self._times, self._by_name = [], 0, [], {}
            with gc_paused():
                for event in (*before(), *recent):
                    self._add(event)
        return self.recent

    @property
    def last_at(self) -> float | None:
        """The last event's time (``None``: none yet)."""
        return self._last_at

    def _add(self, event: TrailEvent) -> None:
        self.recent.append(event)
        self._times.append(event.at)
        self._by_name.setdefault(event.name, []).append(event.seq)
        self._last_at = event.at

    def record(self, at: float, name: str, request: dict[str, Any], response: dict[str, Any],
               event_id: str | None = None) -> None:
        at = at if self._last_at is None else max(at, self._last_at)  # the clock never goes back
        self._add(TrailEvent(len(self), at, name, _plain(request), _plain(response), event_id or str(uuid.uuid4())))

    def load(self, count: int, last_at: float | None, events: Callable[[], list[TrailEvent]]) -> None:
        """Start from ``count`` recorded events (a ``--state`` checkpoint), the last at ``last_at``; ``events``
        reads them, oldest first, when a lookup first needs them."""
        self.recent, self._times, self._by_name = [], [], {}
        self.base, self._last_at, self._before = count, last_at, (events if count else None)
        if last_at is None and count:
            self.events  # noqa: B018 -- without the last event's time, read them now

    def ms(self, seconds: float) -> int:
        return self.origin_ms + round(seconds * 1000)

    def record_of(self, event: TrailEvent) -> dict[str, Any]:
        """The event as CloudTrail's record (``CloudTrailEvent``) holds it."""
        stamp = datetime.fromtimestamp(self.ms(event.at) // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "eventVersion": "1.09",
            "userIdentity": {"type": "IAMUser", "principalId": ACCESS_KEY, "accountId": self.account_id,
                             "accessKeyId": ACCESS_KEY, "userName": USER,
                             "arn": f"arn:aws:iam::{self.account_id}:user/{USER}"},
            "eventTime": stamp, "eventSource": EVENT_SOURCE, "eventName": event.name, "awsRegion": self.region,
            "sourceIPAddress": "127.0.0.1", "userAgent": "batch-quota-serve",
            "requestParameters": event.request, "responseElements": event.response or None,
            "requestID": event.event_id, "eventID": event.event_id, "readOnly": False,
            "resources": [{"ARN": r["ResourceName"], "accountId": self.account_id, "type": r["ResourceType"]}
                          for r in event.resources()],
            "eventType": "AwsApiCall", "managementEvent": True, "recipientAccountId": self.account_id,
            "eventCategory": "Management",
        }

    def lookup(self, params: dict[str, Any]) -> dict[str, Any]:
        """``LookupEvents``: newest first within ``StartTime``/``EndTime``, one attribute, a page at most
        ``limits.LOOKUP_EVENTS_PAGE``."""
        attributes = params.get("LookupAttributes") or []
        if len(attributes) > 1:
            raise _error("InvalidLookupAttributesException", "You cannot specify more than one lookup attribute")
        category = params.get("EventCategory")
        if category not in (None, "insight"):
            raise _error("InvalidEventCategoryException", f"Event category {category!r} is not valid")
        size = params.get("MaxResults") or PAGE
        if not 1 <= size <= PAGE:
            raise _error("InvalidMaxResultsException", f"MaxResults must be between 1 and {PAGE}, got {size}")
        start = _seconds_of(params.get("StartTime"), self.origin_ms)
        end = _seconds_of(params.get("EndTime"), self.origin_ms)
        if start is not None and end is not None and start > end:
            raise _error("InvalidTimeRangeException", "StartTime must be before EndTime")
        if category == "insight":
            return {"Events": []}
        events = self.events
        low = bisect_left(self._times, start) if start is not None else 0
        high = bisect_right(self._times, end) if end is not None else len(events)
        token = params.get("NextToken")
        if token:
            try:
                below = int(token)
            except ValueError:
                raise _error("InvalidNextTokenException", "Invalid NextToken") from None
            if not low <= below <= high:
                raise _error("InvalidNextTokenException", "NextToken does not belong to this lookup")
            high = below
        attribute = attributes[0] if attributes else None
        if attribute is not None and attribute["AttributeKey"] == "EventName":
            seqs = self._by_name.get(attribute["AttributeValue"], [])
            first, last = bisect_left(seqs, low), bisect_left(seqs, high)
            chosen = seqs[max(first, last - size):last][::-1]
            rest = last - len(chosen) > first
        else:
            matches = _matcher(attribute)
            chosen = []
            at = high
            while at > low and len(chosen) < size:
                at -= 1
                if matches(events[at]):
                    chosen.append(at)
            rest = at > low and len(chosen) == size
        out: dict[str, Any] = {"Events": [self._shown(events[seq]) for seq in chosen]}
        if rest and chosen:
            out["NextToken"] = str(chosen[-1])
        return out

    def _shown(self, event: TrailEvent) -> dict[str, Any]:
        return {"EventId": event.event_id, "EventName": event.name, "ReadOnly": "false", "AccessKeyId": ACCESS_KEY,
                "EventTime": self.ms(event.at) / 1000, "EventSource": EVENT_SOURCE, "Username": USER,
                "Resources": event.resources(),
                "CloudTrailEvent": json.dumps(self.record_of(event), separators=(",", ":"))}


def _matcher(attribute: dict[str, str] | None) -> Callable[[TrailEvent], bool]:
    if attribute is None:
        return lambda event: True
    key, value = attribute["AttributeKey"], attribute["AttributeValue"]
    constant: dict[str, str] = {"ReadOnly": "false", "Username": USER, "EventSource": EVENT_SOURCE,
                                "AccessKeyId": ACCESS_KEY}
    if key in constant:
        return lambda event: value == constant[key]
    if key == "EventName":
        return lambda event: event.name == value
    if key == "EventId":
        return lambda event: event.event_id == value
    if key == "ResourceName":
        return lambda event: any(r["ResourceName"] == value for r in event.resources())
    return lambda event: any(r["ResourceType"] == value for r in event.resources())  # ResourceType


def _seconds_of(value: Any, origin_ms: int) -> float | None:
    """A request timestamp (epoch seconds, as botocore sends JSON 1.1 timestamps) as simulated seconds."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            epoch = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise _error("InvalidTimeRangeException", f"Not a timestamp: {value!r}") from None
    else:
        epoch = float(value)
    return (epoch * 1000 - origin_ms) / 1000


def _plain(value: Any) -> Any:
    """A JSON-ready copy (the request's mappings are the handler's; the record must not change with them)."""
    return json.loads(json.dumps(value))


def handle(trail: Trail, target: str, body: bytes) -> dict[str, Any]:
    """One CloudTrail JSON 1.1 request: ``LookupEvents``; any other operation is ``UnsupportedOperationException``."""
    operation = target[len(TARGET_PREFIX):]
    model = service_model()
    if operation not in model.operation_names:
        raise _error("UnknownOperationException", f"Unknown CloudTrail operation {operation}")
    if operation != "LookupEvents":
        raise _error("UnsupportedOperationException",
                     f"Operation {operation} is not supported by batch-quota serve (it answers LookupEvents)")
    params = protocol.json_11_body(body)
    size = params.get("MaxResults")
    if isinstance(size, int) and not isinstance(size, bool) and not 1 <= size <= PAGE:  # CloudTrail's own error
        raise _error("InvalidMaxResultsException", f"MaxResults must be between 1 and {PAGE}, got {size}")
    problems = validate(model.operation_model(operation).input_shape, params)
    if problems:
        count = len(problems)
        raise _error("ValidationException",
                     f"{count} validation error{'s' if count > 1 else ''} detected: " + "; ".join(problems))
    return trail.lookup(params)
