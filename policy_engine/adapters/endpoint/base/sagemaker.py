"""SageMaker's training-plan reads on the endpoint's port: ``ListTrainingPlans`` and ``DescribeTrainingPlan``.

SageMaker speaks JSON 1.1 (``POST /`` with ``X-Amz-Target: SageMaker.<Operation>``); botocore sends a
client's SageMaker calls here with ``AWS_ENDPOINT_URL_SAGEMAKER``. The plans are the topology's
``training_plans``, their counts live: ``InUseInstanceCount`` is what the plan's jobs hold now,
``AvailableInstanceCount`` the rest of the Active reserved capacity. Requests are checked against the
installed botocore ``sagemaker`` model (required members, types, enums, min/max, and the patterns of the
request's own members); every other SageMaker operation is ``UnknownOperationException`` (HTTP 400), since
``AWS_ENDPOINT_URL_SAGEMAKER`` sends all of a client's SageMaker calls here, not only these two.

Where SageMaker documents nothing, the choices (docs/training_plans.md, "Account and endpoint"): a plan's
``TotalInstanceCount`` and duration are the sums over its reserved capacities (what was paid for), its
``StartTime``/``EndTime`` the first start and the last end; ``ListTrainingPlans`` sorts by ``StartTime``
descending unless told otherwise, ``StartTimeAfter``/``StartTimeBefore`` are strict, and several ``Filters``
must all hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Protocol

from botocore.model import ServiceModel

from policy_engine.adapters.endpoint.base import protocol
from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.base.validation import validate
from policy_engine.foundation import limits

TARGET_PREFIX = "SageMaker."
CONTENT_TYPE = b"application/x-amz-json-1.1"
OPERATIONS = ("ListTrainingPlans", "DescribeTrainingPlan")
#: What a plan serves here: training jobs (Batch's service jobs are SageMaker training jobs).
TARGET_RESOURCES = ("training-job",)


def service_model() -> ServiceModel:
    return protocol.service_model("sagemaker")


class PlanStatus(Enum):
    """A plan's or a reserved capacity's ``Status`` at an instant (``Pending`` and ``Failed`` are payment states
    that a declared plan never has)."""

    SCHEDULED = "Scheduled"
    ACTIVE = "Active"
    EXPIRED = "Expired"


@dataclass(frozen=True)
class ServedCapacity:
    """One reserved capacity, in the endpoint's simulated seconds."""

    instances: int
    start: float
    end: float
    availability_zone: str | None = None

    def status(self, now: float) -> PlanStatus:
        if now < self.start:
            return PlanStatus.SCHEDULED
        return PlanStatus.ACTIVE if now < self.end else PlanStatus.EXPIRED


@dataclass(frozen=True)
class ServedPlan:
    """A training plan as the endpoint serves it: its reserved capacities in order of time."""

    name: str
    arn: str
    instance_type: str
    capacities: tuple[ServedCapacity, ...]
    #: ``UpfrontFee`` (a decimal string, as the API gives it) and ``CurrencyCode``, when the topology states them
    upfront_fee: str | None = None
    currency: str | None = None

    def status(self, now: float) -> PlanStatus:
        """Active inside a reserved capacity, Expired after the last, Scheduled before and between them."""
        if any(c.status(now) is PlanStatus.ACTIVE for c in self.capacities):
            return PlanStatus.ACTIVE
        if self.capacities and all(c.status(now) is PlanStatus.EXPIRED for c in self.capacities):
            return PlanStatus.EXPIRED
        return PlanStatus.SCHEDULED

    def active_instances(self, now: float) -> int:
        return sum(c.instances for c in self.capacities if c.status(now) is PlanStatus.ACTIVE)

    @property
    def start(self) -> float:
        return min((c.start for c in self.capacities), default=0.0)

    @property
    def end(self) -> float:
        return max((c.end for c in self.capacities), default=0.0)

    @property
    def total_instances(self) -> int:
        return sum(c.instances for c in self.capacities)


class PlanSource(Protocol):
    """What the handlers read of the endpoint: its plans, the clock, and what the plans' jobs hold now."""

    @property
    def now(self) -> float:
        """Simulated seconds."""
        ...

    def ms(self, seconds: float) -> int:
        """Simulated seconds as epoch milliseconds."""
        ...

    def training_plans(self) -> Sequence[ServedPlan]:
        ...

    def plan_in_use(self, plan: ServedPlan) -> int:
        """Instances of the plan its jobs hold now."""
        ...


def _error(code: str, message: str) -> ApiError:
    return ApiError(message, code, 400)


def _duration(seconds: float) -> dict[str, int]:
    minutes = int(seconds // 60)
    return {"DurationHours": minutes // 60, "DurationMinutes": minutes % 60}


def _epoch(source: PlanSource, seconds: float) -> float:
    """A JSON 1.1 timestamp: epoch seconds."""
    return source.ms(seconds) / 1000


def _capacity_summary(source: PlanSource, plan: ServedPlan, index: int, capacity: ServedCapacity) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ReservedCapacityArn": f"{plan.arn.replace(':training-plan/', ':reserved-capacity/')}-{index}",
        "ReservedCapacityType": "Instance", "InstanceType": plan.instance_type,
        "TotalInstanceCount": capacity.instances, "Status": capacity.status(source.now).value,
        **_duration(capacity.end - capacity.start),
        "StartTime": _epoch(source, capacity.start), "EndTime": _epoch(source, capacity.end),
    }
    if capacity.availability_zone:
        out["AvailabilityZone"] = capacity.availability_zone
    return out


def summary(source: PlanSource, plan: ServedPlan) -> dict[str, Any]:
    """The plan as ``ListTrainingPlans`` lists it (``TrainingPlanSummary``), counts at the clock's instant."""
    now = source.now
    in_use = source.plan_in_use(plan)
    return {
        "TrainingPlanArn": plan.arn, "TrainingPlanName": plan.name, "Status": plan.status(now).value,
        **_duration(sum(c.end - c.start for c in plan.capacities)),
        "StartTime": _epoch(source, plan.start), "EndTime": _epoch(source, plan.end),
        "TotalInstanceCount": plan.total_instances,
        "AvailableInstanceCount": max(0, plan.active_instances(now) - in_use),
        "InUseInstanceCount": in_use, "TargetResources": list(TARGET_RESOURCES),
        "ReservedCapacitySummaries": [_capacity_summary(source, plan, index, capacity)
                                      for index, capacity in enumerate(plan.capacities, 1)],
    }


def describe(source: PlanSource, params: dict[str, Any]) -> dict[str, Any]:
    """``DescribeTrainingPlan`` by name or ARN; an unknown plan is ``ResourceNotFound``."""
    ref = params["TrainingPlanName"]
    plan = next((p for p in source.training_plans() if ref in (p.name, p.arn)), None)
    if plan is None:
        raise _error("ResourceNotFound", f"Training plan {ref} does not exist")
    fee = {"UpfrontFee": plan.upfront_fee, **({"CurrencyCode": plan.currency} if plan.currency else {})} \
        if plan.upfront_fee is not None else {}
    return {**summary(source, plan), "UnhealthyInstanceCount": 0, "AvailableSpareInstanceCount": 0, **fee}


_SORT_KEYS = {"TrainingPlanName": lambda s: s["TrainingPlanName"], "StartTime": lambda s: s["StartTime"],
              "Status": lambda s: s["Status"]}


def list_plans(source: PlanSource, params: dict[str, Any]) -> dict[str, Any]:
    """``ListTrainingPlans``: filtered by ``Filters`` (all must hold) and the strict start-time bounds, sorted,
    a page of ``MaxResults`` (default and bound limits.LIST_TRAINING_PLANS_PAGE) with ``NextToken``."""
    after = params.get("StartTimeAfter")
    before = params.get("StartTimeBefore")
    listed = []
    for plan in source.training_plans():
        shown = summary(source, plan)
        if after is not None and not shown["StartTime"] > _timestamp(after):
            continue
        if before is not None and not shown["StartTime"] < _timestamp(before):
            continue
        if all(shown.get(f["Name"]) == f["Value"] for f in params.get("Filters") or ()):
            listed.append(shown)
    listed.sort(key=_SORT_KEYS[params.get("SortBy") or "StartTime"],
                reverse=(params.get("SortOrder") or "Descending") == "Descending")
    size = params.get("MaxResults") or limits.LIST_TRAINING_PLANS_PAGE.at_most
    start = 0
    token = params.get("NextToken")
    if token:
        if not token.isdigit() or int(token) > len(listed):
            raise _error("ValidationException", "Invalid NextToken for ListTrainingPlans")
        start = int(token)
    out: dict[str, Any] = {"TrainingPlanSummaries": listed[start:start + size]}
    if start + size < len(listed):
        out["NextToken"] = str(start + size)
    return out


def _timestamp(value: Any) -> float:
    """A request timestamp as epoch seconds (botocore sends JSON 1.1 timestamps as numbers; ISO text is read too)."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise _error("ValidationException", f"Value '{value}' is not a timestamp") from None
    return float(value)


def handle(source: PlanSource, target: str, body: bytes) -> dict[str, Any]:
    """One SageMaker JSON 1.1 request: the two plan reads; any other operation is ``UnknownOperationException``."""
    operation = target[len(TARGET_PREFIX):]
    if operation not in OPERATIONS:
        known = operation in service_model().operation_names
        raise _error("UnknownOperationException",
                     f"Operation {operation} is not supported by batch-quota serve: of SageMaker it answers only "
                     f"{' and '.join(OPERATIONS)}" if known else f"Unknown SageMaker operation {operation}")
    params = protocol.json_11_body(body)
    shape = service_model().operation_model(operation).input_shape
    problems = validate(shape, params)
    if problems:
        count = len(problems)
        raise _error("ValidationException",
                     f"{count} validation error{'s' if count > 1 else ''} detected: " + "; ".join(problems))
    if operation == "DescribeTrainingPlan":
        return describe(source, params)
    return list_plans(source, params)
