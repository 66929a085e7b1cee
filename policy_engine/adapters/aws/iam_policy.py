"""The least-privilege, read-only IAM policy the account commands need, as data.

One table, ``command -> actions``, is the source for ``batch-quota iam-policy`` and the
``ReadOnlyQuotaAccess`` construct, and a test checks that every operation the connectors
call is in it. Resource scoping follows the Service Authorization Reference for AWS Batch:
the Describe calls and ListServiceJobs/DescribeServiceJob accept only ``*``;
ListQuotaShares and GetJobQueueSnapshot take the job queue's ARN; ListTagsForResource
the tagged resource's (here: quota shares). ``history`` also reads CloudTrail's
``LookupEvents`` (past priority and share changes), which accepts only ``*``. ``import``, ``drift`` and
``snapshot`` read the account's SageMaker training plans: ``sagemaker:ListTrainingPlans`` accepts only
``*``, ``sagemaker:DescribeTrainingPlan`` the plan's ARN (``training-plan/NAME``), per the Service
Authorization Reference for Amazon SageMaker.
"""

from __future__ import annotations

from typing import TypedDict

#: Which API operations each command calls.
COMMAND_OPERATIONS: dict[str, tuple[str, ...]] = {
    "import": ("DescribeJobQueues", "DescribeSchedulingPolicies", "DescribeServiceEnvironments", "ListQuotaShares",
               "ListTagsForResource", "ListTrainingPlans", "DescribeTrainingPlan"),
    "drift": ("DescribeJobQueues", "DescribeSchedulingPolicies", "DescribeServiceEnvironments", "ListQuotaShares",
              "ListTagsForResource", "ListTrainingPlans", "DescribeTrainingPlan"),
    "snapshot": ("DescribeJobQueues", "DescribeSchedulingPolicies", "DescribeServiceEnvironments", "ListQuotaShares",
                 "ListTagsForResource", "ListServiceJobs", "DescribeServiceJob", "GetJobQueueSnapshot",
                 "ListTrainingPlans", "DescribeTrainingPlan"),
    "history": ("ListServiceJobs", "DescribeServiceJob", "DescribeJobQueues", "DescribeSchedulingPolicies",
                "DescribeServiceEnvironments", "ListQuotaShares", "ListTagsForResource", "LookupEvents",
                "DescribeTrainingPlan"),
    "top": ("GetJobQueueSnapshot", "ListQuotaShares", "ListServiceJobs", "DescribeServiceJob"),
}

#: The service of an operation, where it is not AWS Batch.
SERVICE_OF: dict[str, str] = {"LookupEvents": "cloudtrail", "ListTrainingPlans": "sagemaker",
                              "DescribeTrainingPlan": "sagemaker"}

#: ``operation -> resource kind`` it can be scoped to; ``None`` = only ``*`` exists.
RESOURCE_OF: dict[str, str | None] = {
    "DescribeJobQueues": None,
    "DescribeSchedulingPolicies": None,
    "DescribeServiceEnvironments": None,
    "ListServiceJobs": None,
    "DescribeServiceJob": None,
    "ListQuotaShares": "job-queue/*",
    "GetJobQueueSnapshot": "job-queue/*",
    "ListTagsForResource": "job-queue/*/quota-share/*",
    "LookupEvents": None,
    "ListTrainingPlans": None,
    "DescribeTrainingPlan": "training-plan/*",
}


def action(operation: str) -> str:
    """The IAM action of an operation: ``batch:ListServiceJobs``, ``cloudtrail:LookupEvents``."""
    return f"{SERVICE_OF.get(operation, 'batch')}:{operation}"


def operations(commands: tuple[str, ...] | None = None) -> list[str]:
    """The operations of ``commands`` (every command when ``None``), in a stable order."""
    chosen = commands or tuple(COMMAND_OPERATIONS)
    unknown = [c for c in chosen if c not in COMMAND_OPERATIONS]
    if unknown:
        raise ValueError(f"unknown command(s) {', '.join(unknown)} (known: {', '.join(COMMAND_OPERATIONS)})")
    return sorted({op for command in chosen for op in COMMAND_OPERATIONS[command]})


class Statement(TypedDict):
    """One IAM policy statement, as IAM's JSON spells it."""

    Sid: str
    Effect: str
    Action: list[str]
    Resource: str


class PolicyDocument(TypedDict):
    Version: str
    Statement: list[Statement]


def statements(commands: tuple[str, ...] | None = None, region: str = "*", account: str = "*",
               partition: str = "aws") -> list[Statement]:
    """IAM statements: one for the ``*``-only actions, one per scoped resource kind (of its service)."""
    grouped: dict[str | None, list[str]] = {}
    service: dict[str | None, str] = {}
    for operation in operations(commands):
        kind = RESOURCE_OF[operation]
        grouped.setdefault(kind, []).append(action(operation))
        service[kind] = SERVICE_OF.get(operation, "batch")
    result: list[Statement] = []
    for kind, actions in sorted(grouped.items(), key=lambda item: item[0] or ""):
        sid = "BatchQuotaRead" + ("Any" if kind is None else "".join(
            part.title() for part in kind.replace("/*", "").replace("-", " ").replace("/", " ").split()))
        resource = "*" if kind is None else f"arn:{partition}:{service[kind]}:{region}:{account}:{kind}"
        result.append({"Sid": sid, "Effect": "Allow", "Action": sorted(actions), "Resource": resource})
    return result


def policy_document(commands: tuple[str, ...] | None = None, region: str = "*",
                    account: str = "*") -> PolicyDocument:
    return {"Version": "2012-10-17", "Statement": statements(commands, region, account)}
