"""EventBridge rules a stack deploys, matched against the endpoint's own events (the ones ``--events``
writes), and the CloudWatch Logs log groups they deliver to: a target the rehearsal can show
(FilterLogEvents, GetLogEvents), so an alert is rehearsed end to end.

Matching is moto's EventBridge matcher (``moto.events.models.EventPattern``, the one the project's tests
already trust for the shipped patterns), imported when a rule is deployed. A target that is not a log group
of this account (a topic, a function) is counted as stored, not run.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.events.sinks import DeliveryStats

LOG_GROUP_ARN = "arn:aws:logs:{region}:{account}:log-group:"


@dataclass
class Rule:
    name: str
    pattern: Any  # moto's EventPattern
    targets: tuple[str, ...]
    enabled: bool


@dataclass
class LogGroup:
    name: str
    arn: str
    created_ms: int
    events: list[dict[str, Any]] = field(default_factory=list)


class Deliveries:
    """The deployed rules and log groups; ``send`` is an ``EventSink`` (the endpoint hands it every event)."""

    def __init__(self, region: str, account: str) -> None:
        self.region = region
        self.account = account
        self.rules: dict[str, Rule] = {}
        self.log_groups: dict[str, LogGroup] = {}
        #: target ARN -> events matched for a target nothing runs (a topic, a function)
        self.not_run: dict[str, int] = {}
        self.target = "rehearsal: EventBridge rules of deployed stacks"
        self.stats = DeliveryStats()

    # --- what stacks deploy -----------------------------------------------------------------

    def put_rule(self, name: str, properties: dict[str, Any]) -> None:
        pattern = properties.get("EventPattern")
        if pattern is None:  # a schedule: nothing of the endpoint's matches it
            self.rules.pop(name, None)
            return
        from moto.events.models import EventPattern

        targets = tuple(str(t.get("Arn")) for t in properties.get("Targets") or () if isinstance(t, dict))
        text = pattern if isinstance(pattern, str) else json.dumps(pattern)
        self.rules[name] = Rule(name, EventPattern.load(text), targets, properties.get("State", "ENABLED") == "ENABLED")

    def put_log_group(self, name: str, arn: str, now_ms: int) -> None:
        self.log_groups.setdefault(name, LogGroup(name, arn, now_ms))

    # --- the sink -----------------------------------------------------------------------------

    def send(self, event: dict[str, Any]) -> None:
        self.stats.sent += 1
        delivered = False
        for rule in self.rules.values():
            if not (rule.enabled and rule.pattern.matches_event(event)):
                continue
            for arn in rule.targets:
                group = self._log_group(arn)
                if group is None:
                    self.not_run[arn] = self.not_run.get(arn, 0) + 1
                    continue
                group.events.append({"logStreamName": f"events/{rule.name}", "timestamp": _ms(event),
                                     "ingestionTime": _ms(event), "message": json.dumps(event, sort_keys=True),
                                     "eventId": str(uuid.uuid4())})
                delivered = True
        if delivered:
            self.stats.delivered += 1

    def close(self) -> None:
        return None

    def _log_group(self, arn: str) -> LogGroup | None:
        prefix = LOG_GROUP_ARN.format(region=self.region, account=self.account)
        if not arn.startswith(prefix):
            return None
        name = arn[len(prefix):].removesuffix(":*")
        return self.log_groups.get(name)

    # --- CloudWatch Logs' reads (JSON 1.1) --------------------------------------------------

    def handle(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation == "DescribeLogGroups":
            prefix = params.get("logGroupNamePrefix", "")
            return {"logGroups": [{"logGroupName": g.name, "arn": g.arn, "creationTime": g.created_ms,
                                   "storedBytes": sum(len(e["message"]) for e in g.events)}
                                  for g in self.log_groups.values() if g.name.startswith(prefix)]}
        group = self.log_groups.get(params.get("logGroupName", ""))
        if group is None:
            raise ApiError("The specified log group does not exist.", "ResourceNotFoundException", 400)
        if operation == "DescribeLogStreams":
            names = sorted({e["logStreamName"] for e in group.events})
            return {"logStreams": [{"logStreamName": s, "creationTime": group.created_ms} for s in names]}
        if operation == "FilterLogEvents":
            streams = set(params.get("logStreamNames") or ())
            words = str(params.get("filterPattern") or "").strip('"')
            found = [e for e in group.events if (not streams or e["logStreamName"] in streams)
                     and (not words or words in e["message"])]
            return {"events": found, "searchedLogStreams": []}
        if operation == "GetLogEvents":
            found = [e for e in group.events if e["logStreamName"] == params.get("logStreamName")]
            return {"events": [{k: e[k] for k in ("timestamp", "message", "ingestionTime")} for e in found],
                    "nextForwardToken": "f/0", "nextBackwardToken": "b/0"}
        raise ApiError(f"CloudWatch Logs {operation} is not served by the rehearsal (DescribeLogGroups, "
                       "DescribeLogStreams, FilterLogEvents, GetLogEvents)", "InvalidParameterException", 400)


def _ms(event: dict[str, Any]) -> int:
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(str(event.get("time", "")).replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0
