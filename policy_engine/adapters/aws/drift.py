"""The account against a topology, per object and field: missing, extra, different.

Compared: what the constructs deploy. ``system_tags`` (``aws:*``, AWS's own) and what is never
deployed (guarantees, ``allow_oversubscription``) are not. A borrow limit is compared by
its effective value (unset and -1 both mean unlimited to AWS). The scope is the
topology's job queues and their environments: shares in those queues that the topology
lacks are ``extra``; other queues of the account are not this topology's business.
Training plans (read with SageMaker's ListTrainingPlans and DescribeTrainingPlan) are compared account-wide:
a plan of the account the topology lacks is ``extra``. Per plan: instance type, ARN (when the topology gives
one) and windows: instances, start and end (ISO 8601; for a plan written in seconds from the scenario start,
which has no date, each window's length instead) and availability zone (when the topology gives one).
The reports are ``reports.drift.text``, ``drift_json`` and ``drift_markdown`` (``reports.registry.DRIFT_FORMATS``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from policy_engine.foundation.diagnostics import ObjectRef
from policy_engine.foundation.model import (
    JobQueue,
    QuotaShare,
    ServiceEnvironment,
    Topology,
    TrainingPlan,
    plan_time_text,
)


class DifferenceKind(StrEnum):
    """How an object of the topology and the account differ."""

    #: in the topology, not in the account
    MISSING = "missing"
    #: in the account (a share of one of the topology's queues), not in the topology
    EXTRA = "extra"
    #: in both, a field with another value
    DIFFERENT = "different"


MISSING, EXTRA, DIFFERENT = DifferenceKind.MISSING, DifferenceKind.EXTRA, DifferenceKind.DIFFERENT


@dataclass(frozen=True)
class Difference:
    """One drifted field of an object (``field`` is empty for a whole missing or extra object)."""

    ref: ObjectRef
    field: str
    kind: DifferenceKind
    expected: Any = None
    actual: Any = None

    @property
    def object(self) -> str:
        """The object as reports name it (``job_queues[training]``, ``training/QS1``)."""
        return str(self.ref)

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object, "field": self.field, "kind": self.kind, "expected": self.expected,
                "actual": self.actual}

    def line(self) -> str:
        if self.kind is MISSING:
            return f"{self.object}: missing from the account"
        if self.kind is EXTRA:
            return f"{self.object}: in the account, not in the topology"
        return f"{self.object}.{self.field}: topology {shown(self.expected)}, account {shown(self.actual)}"


def shown(value: Any) -> str:
    """A field's value as reports write it: JSON for mappings and lists, ``repr`` otherwise."""
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list, tuple)) else repr(value)


def _environment_fields(env: ServiceEnvironment) -> dict[str, Any]:
    return {"capacity": dict(env.capacity), "state": env.state, "tags": dict(env.tags)}


def _queue_fields(queue: JobQueue) -> dict[str, Any]:
    return {"service_environment": queue.service_environment, "priority": queue.priority, "state": queue.state,
            "scheduling_policy": queue.scheduling_policy_name,
            "job_state_time_limit_actions": [a.model_dump() for a in queue.job_state_time_limit_actions],
            "tags": dict(queue.tags)}


def _share_fields(share: QuotaShare) -> dict[str, Any]:
    return {"capacity": dict(share.capacity), "strategy": share.strategy,
            "borrow_limit": share.effective_borrow_limit if share.borrows else share.borrow_limit,
            "in_share_preemption": share.in_share_preemption, "state": share.state, "tags": dict(share.tags)}


def _plan_fields(plan: TrainingPlan, dated: bool, zones: bool) -> dict[str, Any]:
    """A plan's compared fields: windows by their times when ``dated``, else by their lengths (seconds)."""
    windows = []
    for capacity in plan.reserved_capacities:
        window: dict[str, Any] = {"instances": capacity.instances}
        if dated:
            window.update(start=plan_time_text(capacity.start), end=plan_time_text(capacity.end))
        else:
            window["seconds"] = _seconds(capacity.end) - _seconds(capacity.start)
        if zones:
            window["availability_zone"] = capacity.availability_zone
        windows.append(window)
    return {"instance_type": plan.instance_type, "reserved_capacities": windows}


def _seconds(value: Any) -> float:
    return value.timestamp() if hasattr(value, "timestamp") else float(value)


def _dated(plan: TrainingPlan) -> bool:
    """Whether the plan's windows are dates (ISO 8601), not seconds from a scenario's start."""
    return all(hasattr(t, "timestamp") for c in plan.reserved_capacities for t in (c.start, c.end))


def plan_drift(desired: Topology, account: Topology) -> list[Difference]:
    """Every difference between the topology's training plans and the account's (all of them: a plan belongs to
    the account, not to a queue)."""
    found: list[Difference] = []
    for plan in desired.training_plans:
        ref = ObjectRef.of_plan(plan.name)
        actual = next((p for p in account.training_plans if p.name == plan.name), None)
        if actual is None:
            found.append(Difference(ref, "", MISSING))
            continue
        if plan.arn is not None and plan.arn != actual.arn:
            found.append(Difference(ref, "arn", DIFFERENT, plan.arn, actual.arn))
        zones = any(c.availability_zone for c in plan.reserved_capacities)
        dated = _dated(plan)
        found += _compare(ref, _plan_fields(plan, dated, zones), _plan_fields(actual, dated, zones))
    for plan in account.training_plans:
        if not any(p.name == plan.name for p in desired.training_plans):
            found.append(Difference(ObjectRef.of_plan(plan.name), "", EXTRA, None,
                                    _plan_fields(plan, True, True) | {"arn": plan.arn}))
    return found


def _compare(name: ObjectRef, expected: dict[str, Any], actual: dict[str, Any]) -> list[Difference]:
    return [Difference(name, key, DIFFERENT, expected[key], actual[key]) for key in expected
            if expected[key] != actual[key]]


def drift(desired: Topology, account: Topology) -> list[Difference]:
    """Every difference between ``desired`` and what ``account`` holds for it."""
    found: list[Difference] = []
    for env in desired.service_environments:
        name = ObjectRef.of_environment(env.name)
        actual = account.environment(env.name)
        if actual is None:
            # environments are read through their queues: one whose queues are all missing was not looked at
            if any(q.service_environment == env.name and account.queue(q.name) for q in desired.job_queues):
                found.append(Difference(name, "", MISSING))
            continue
        found += _compare(name, _environment_fields(env), _environment_fields(actual))
    for queue in desired.job_queues:
        name = ObjectRef.of_queue(queue.name)
        actual_queue = account.queue(queue.name)
        if actual_queue is None:
            found.append(Difference(name, "", MISSING))
            continue
        expected_fields = _queue_fields(queue)
        found += _compare(name, expected_fields, _queue_fields(actual_queue))
        for share in queue.shares:
            actual_share = actual_queue.share(share.name)
            if actual_share is None:
                found.append(Difference(ObjectRef.of_share(queue.name, share.name), "", MISSING))
                continue
            found += _compare(ObjectRef.of_share(queue.name, share.name), _share_fields(share),
                              _share_fields(actual_share))
        for share in actual_queue.shares:
            if queue.share(share.name) is None:
                found.append(Difference(ObjectRef.of_share(queue.name, share.name), "", EXTRA, None,
                                        _share_fields(share)))
    return found
