"""AWS Batch API shapes <-> the topology file's mappings: the one place that knows both spellings.

Builders return the plain mappings a topology file holds (``loading.topology_from_data``
validates them), so an imported account, a CloudFormation template and a YAML file go
through the same checks. System tags (``aws:*``, set by CloudFormation and other AWS
services) are kept apart in ``system_tags``: read-only, never deployed, never drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policy_engine.foundation.aws_rules import written_borrow_limit
from policy_engine.foundation.model import UNLIMITED_BORROW, split_system_tags

#: The statuses in which an object's properties are settled and can be imported.
SETTLED = ("VALID",)
QUOTA_QUEUE_TYPE = "SAGEMAKER_TRAINING"


def split_tags(tags: Mapping[str, str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """``(user tags, system tags)``: keys starting with ``aws:`` are AWS's, not the user's."""
    return split_system_tags(dict(tags or {}))


class DuplicateCapacityUnit(ValueError):
    """``capacityLimits`` names one unit twice: which limit AWS applies cannot be told, so none is picked."""


def _capacity(limits: list[Mapping[str, Any]] | None) -> dict[str, int]:
    capacity: dict[str, int] = {}
    for item in limits or ():
        if item["capacityUnit"] in capacity:
            raise DuplicateCapacityUnit(f"capacityLimits gives {item['capacityUnit']} more than once")
        capacity[item["capacityUnit"]] = item["maxCapacity"]
    return capacity


def _tagged(data: dict[str, Any], tags: Mapping[str, str] | None) -> dict[str, Any]:
    user, system = split_tags(tags)
    if user:
        data["tags"] = user
    if system:
        data["system_tags"] = system
    return data


def environment_data(detail: Mapping[str, Any]) -> dict[str, Any]:
    """A ``DescribeServiceEnvironments`` entry -> a ``service_environments`` item."""
    data: dict[str, Any] = {"name": detail["serviceEnvironmentName"], "capacity": _capacity(detail["capacityLimits"])}
    if detail.get("state", "ENABLED") != "ENABLED":
        data["state"] = detail["state"]
    return _tagged(data, detail.get("tags"))


def share_data(summary: Mapping[str, Any], tags: Mapping[str, str] | None) -> dict[str, Any]:
    """A ``ListQuotaShares`` entry (or ``DescribeQuotaShare``) and its tags -> a ``shares`` item.

    A borrow limit is written only where it means something: AWS reports its default (-1)
    on shares that cannot borrow, which the file leaves unset; a LEND_AND_BORROW share's is always written.
    """
    sharing = summary.get("resourceSharingConfiguration") or {}
    strategy = sharing.get("strategy")
    data: dict[str, Any] = {
        "name": summary.get("quotaShareName"),
        "capacity": _capacity(summary.get("capacityLimits")),
        "strategy": strategy,
    }
    borrow = sharing.get("borrowLimit")
    if strategy == "LEND_AND_BORROW":  # explicit, unset as -1 (``aws_rules.written_borrow_limit``)
        data["borrow_limit"] = written_borrow_limit(strategy, borrow)
    elif borrow is not None and borrow != UNLIMITED_BORROW:
        data["borrow_limit"] = borrow
    if (summary.get("preemptionConfiguration") or {}).get("inSharePreemption") == "ENABLED":
        data["in_share_preemption"] = True
    if summary.get("state", "ENABLED") != "ENABLED":
        data["state"] = summary["state"]
    return _tagged(data, tags)


def time_limit_data(action: Mapping[str, Any]) -> dict[str, Any]:
    return {"max_time_seconds": action["maxTimeSeconds"], "reason": action["reason"], "action": action["action"],
            "state": action["state"]}


def queue_data(
    detail: Mapping[str, Any], environment: str, policy_name: str, shares: list[dict[str, Any]]
) -> dict[str, Any]:
    """A ``DescribeJobQueues`` entry, its environment's and policy's names and its shares -> a ``job_queues`` item."""
    name = detail["jobQueueName"]
    data: dict[str, Any] = {"name": name, "service_environment": environment}
    if "priority" in detail:  # explicit, 0 included (``file_data``)
        data["priority"] = detail["priority"]
    if detail.get("state", "ENABLED") != "ENABLED":
        data["state"] = detail["state"]
    if detail.get("jobStateTimeLimitActions"):
        data["job_state_time_limit_actions"] = [time_limit_data(a) for a in detail["jobStateTimeLimitActions"]]
    if policy_name != f"{name}-quota-policy":
        data["scheduling_policy"] = policy_name
    data["shares"] = shares
    return _tagged(data, detail.get("tags"))


def name_from_arn(value: str) -> str:
    """``arn:...:job-queue/NAME`` -> ``NAME``; a plain name is returned as it is."""
    if value.startswith("arn:"):
        return value.rsplit("/", 1)[-1]
    return value
