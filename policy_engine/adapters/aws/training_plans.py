"""Read an account's SageMaker training plans into the topology's ``training_plans`` (``import``, ``drift``,
``snapshot``).

Calls: ListTrainingPlans (paginated) once, then DescribeTrainingPlan per listed plan. Only plans for
training jobs (``TargetResources`` holds ``training-job``) that still hold capacity (not ``Expired`` or
``Failed``) are read; every other plan is skipped with its reason, and so is a plan reserved as
UltraServers (``ReservedCapacityType: UltraServer``, which batch-quota does not model). A plan whose
reserved capacities name several instance types cannot be one topology plan: an error naming it.
Times are written as ISO 8601 in UTC, as the API gives them. ``UpfrontFee`` (a string in the API) is read as a
decimal into the plan's ``upfront_fee`` with its ``CurrencyCode``: what the bill charges for the plan (docs/costs.md);
text that is no number is an error naming the plan, never a fee of zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from policy_engine.adapters.aws.clients import Api, AwsError

#: What a plan must target for Batch's service jobs (SageMaker training jobs) to use it.
TRAINING_JOB_TARGET = "training-job"
#: Plan states without capacity to share: nothing to check or simulate.
ENDED = ("Expired", "Failed")
ULTRASERVER = "UltraServer"


@dataclass
class PlansRead:
    """The plans read (topology data), the plans skipped with their reasons, and the calls that failed."""

    plans: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    errors: list[AwsError] = field(default_factory=list)


def _iso(value: Any) -> str:
    """A timestamp botocore parsed (an aware ``datetime``) as ISO 8601 in UTC with ``Z``."""
    if isinstance(value, datetime):
        stamp = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
        return stamp.isoformat().replace("+00:00", "Z")
    return str(value)


def skip_reason(summary: dict[str, Any]) -> str | None:
    """Why a listed plan is not read, or ``None``."""
    targets = summary.get("TargetResources") or []
    if TRAINING_JOB_TARGET not in targets:
        return f"targets {', '.join(targets) or 'nothing'}, not {TRAINING_JOB_TARGET}"
    if summary.get("Status") in ENDED:
        return f"status {summary['Status']}: it holds no capacity any more"
    if any(c.get("ReservedCapacityType") == ULTRASERVER for c in summary.get("ReservedCapacitySummaries") or ()):
        return "reserved as UltraServers, which batch-quota does not model"
    return None


def plan_data(detail: dict[str, Any]) -> dict[str, Any]:
    """A DescribeTrainingPlan response as a topology ``training_plans`` entry; ``ValueError`` when its reserved
    capacities name several instance types or its ``UpfrontFee`` is no number."""
    capacities = sorted(detail.get("ReservedCapacitySummaries") or (), key=lambda c: c.get("StartTime") or 0)
    types = sorted({c["InstanceType"] for c in capacities})
    if len(types) != 1:
        raise ValueError(f"its reserved capacities name {len(types)} instance types ({', '.join(types) or 'none'}); "
                         "a topology plan has one")
    windows = []
    for capacity in capacities:
        window: dict[str, Any] = {"instances": capacity["TotalInstanceCount"], "start": _iso(capacity["StartTime"]),
                                  "end": _iso(capacity["EndTime"])}
        if capacity.get("AvailabilityZone"):
            window["availability_zone"] = capacity["AvailabilityZone"]
        windows.append(window)
    out: dict[str, Any] = {"name": detail["TrainingPlanName"], "arn": detail["TrainingPlanArn"],
                           "instance_type": types[0], "reserved_capacities": windows}
    fee = upfront_fee(detail)
    if fee is not None:
        out["upfront_fee"] = fee
        if detail.get("CurrencyCode"):
            out["currency"] = detail["CurrencyCode"]
    return out


def upfront_fee(detail: dict[str, Any]) -> float | None:
    """``UpfrontFee`` (a string in botocore's model) read as a decimal number; ``None`` when the plan states none, a
    ``ValueError`` for text that is no finite number of 0 or more (a fee is never guessed)."""
    text = detail.get("UpfrontFee")
    if text is None or text == "":
        return None
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        raise ValueError(f"its UpfrontFee {text!r} is not a number") from None
    if not value.is_finite() or value < 0:
        raise ValueError(f"its UpfrontFee {text!r} is not a finite amount of 0 or more")
    return float(value)


def read_plans(api: Api) -> PlansRead:
    """Every training-job plan of the account (``api`` is a SageMaker client's), sorted by name."""
    result = PlansRead()
    try:
        summaries = [s for page in api.pages("ListTrainingPlans", "every training plan")
                     for s in page.get("TrainingPlanSummaries", [])]
    except AwsError as error:
        result.errors.append(error)
        return result
    for summary in sorted(summaries, key=lambda s: s["TrainingPlanName"]):
        name = summary["TrainingPlanName"]
        reason = skip_reason(summary)
        if reason is not None:
            result.skipped.append((name, reason))
            continue
        try:
            detail = api.call("DescribeTrainingPlan", f"training plan {name}", TrainingPlanName=name)
        except AwsError as error:
            result.errors.append(error)
            continue
        reason = skip_reason(detail)
        if reason is not None:  # it changed between the two calls
            result.skipped.append((name, reason))
            continue
        try:
            result.plans.append(plan_data(detail))
        except ValueError as error:
            result.errors.append(AwsError("DescribeTrainingPlan", f"training plan {name}", str(error),
                                          "UnexpectedShape"))
    return result


def plan_name_of(arn: str) -> str:
    """A plan's name from its ARN (``arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME``); the text itself when it
    is no plan ARN."""
    head, sep, name = arn.rpartition(":training-plan/")
    return name if sep and head.startswith("arn:") and name else arn


def describe_used_plans(api: Api, arns: list[str]) -> PlansRead:
    """The plans a window's jobs ran on (``history --scenario``), one DescribeTrainingPlan each by the name in
    its ARN, whatever their status now: an Expired plan's windows are still the ones the jobs met. ``skipped``
    holds ``(ARN, why)`` for each plan that cannot be replayed (deleted, access denied, not a training-job plan,
    UltraServers, several instance types, another ARN than the jobs name); ``errors`` stays empty."""
    result = PlansRead()
    for arn in sorted(arns):
        name = plan_name_of(arn)
        try:
            detail = api.call("DescribeTrainingPlan", f"training plan {name}", TrainingPlanName=name)
        except AwsError as error:
            result.skipped.append((arn, error.line))
            continue
        reason = skip_reason({**detail, "Status": None})  # an ended plan still replays its windows
        if reason is None and detail.get("TrainingPlanArn") != arn:
            reason = f"DescribeTrainingPlan answers with another plan ({detail.get('TrainingPlanArn')})"
        if reason is None:
            try:
                result.plans.append(plan_data(detail))
            except ValueError as error:
                reason = str(error)
        if reason is not None:
            result.skipped.append((arn, reason))
    return result
