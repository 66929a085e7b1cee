"""The least-privilege, read-only IAM policy the account commands need, as data.

One table, ``command -> actions``, is the source for ``batch-quota iam-policy`` and the
``ReadOnlyQuotaAccess`` construct, and a test checks that every operation the connectors
call is in it. Resource scoping follows the Service Authorization Reference for AWS Batch:
the Describe calls and ListServiceJobs/DescribeServiceJob accept only ``*``;
ListQuotaShares and GetJobQueueSnapshot take the job queue's ARN; ListTagsForResource
the tagged resource's (here: quota shares).
"""

from __future__ import annotations

#: Which API operations each command calls.
COMMAND_OPERATIONS: dict[str, tuple[str, ...]] = {
    "import": ("DescribeJobQueues", "DescribeSchedulingPolicies", "DescribeServiceEnvironments", "ListQuotaShares",
               "ListTagsForResource"),
    "drift": ("DescribeJobQueues", "DescribeSchedulingPolicies", "DescribeServiceEnvironments", "ListQuotaShares",
              "ListTagsForResource"),
    "snapshot": ("DescribeJobQueues", "DescribeSchedulingPolicies", "DescribeServiceEnvironments", "ListQuotaShares",
                 "ListTagsForResource", "ListServiceJobs", "DescribeServiceJob", "GetJobQueueSnapshot"),
    "history": ("ListServiceJobs", "DescribeServiceJob"),
    "top": ("GetJobQueueSnapshot", "ListQuotaShares", "ListServiceJobs", "DescribeServiceJob"),
}

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
}


def operations(commands: tuple[str, ...] | None = None) -> list[str]:
    """The operations of ``commands`` (every command when ``None``), in a stable order."""
    chosen = commands or tuple(COMMAND_OPERATIONS)
    unknown = [c for c in chosen if c not in COMMAND_OPERATIONS]
    if unknown:
        raise ValueError(f"unknown command(s) {', '.join(unknown)} (known: {', '.join(COMMAND_OPERATIONS)})")
    return sorted({op for command in chosen for op in COMMAND_OPERATIONS[command]})


def statements(commands: tuple[str, ...] | None = None, region: str = "*", account: str = "*",
               partition: str = "aws") -> list[dict]:
    """IAM statements: one for the ``*``-only actions, one per scoped resource kind."""
    grouped: dict[str | None, list[str]] = {}
    for operation in operations(commands):
        grouped.setdefault(RESOURCE_OF[operation], []).append(f"batch:{operation}")
    result = []
    for kind, actions in sorted(grouped.items(), key=lambda item: item[0] or ""):
        sid = "BatchQuotaRead" + ("Any" if kind is None else "".join(
            part.title() for part in kind.replace("/*", "").replace("-", " ").replace("/", " ").split()))
        resource = "*" if kind is None else f"arn:{partition}:batch:{region}:{account}:{kind}"
        result.append({"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": resource})
    return result


def policy_document(commands: tuple[str, ...] | None = None, region: str = "*", account: str = "*") -> dict:
    return {"Version": "2012-10-17", "Statement": statements(commands, region, account)}
