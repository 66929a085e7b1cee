"""Read an account's quota-managed job queues into a topology (``batch-quota import``, ``drift``).

Calls, for Q quota queues with S shares in all: DescribeJobQueues (one page per 100 queues),
DescribeSchedulingPolicies and DescribeServiceEnvironments (batched, 100 per call),
ListQuotaShares (one page per queue, more for a queue with many shares) and
ListTagsForResource once per share (ListQuotaShares returns no tags). Queues that are
not ``SAGEMAKER_TRAINING`` with a quota-share policy are skipped, each with its reason.
An object whose call fails is recorded with the call's one-line error; reading goes on,
so one run names every object it could not read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from policy_engine.adapters.aws.clients import Api, AwsError, Shape
from policy_engine.inputs import api_shapes as shapes

#: DescribeJobQueues / DescribeSchedulingPolicies / DescribeServiceEnvironments take up to 100 identifiers.
BATCH_SIZE = 100


@dataclass
class AccountRead:
    """What an import read: the topology mapping, what it skipped and why, and what it could not read."""

    data: dict[str, Any]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    errors: list[AwsError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Job queues asked for by name that the account does not have.
    missing: list[str] = field(default_factory=list)
    #: Service environments (by name) whose Describe call failed: their queues and shares are still read, and
    #: ``data`` names them without describing them (``fill_unread_environments`` completes it for ``drift``).
    unread_environments: list[str] = field(default_factory=list)

    def fill_unread_environments(self, known: dict[str, dict[str, Any]]) -> None:
        """Describe each unread environment as ``known[name]`` so the readable objects can be compared."""
        for name in self.unread_environments:
            if name in known:
                self.data["service_environments"].append(dict(known[name], name=name))

    def missing_errors(self, region: str) -> list[AwsError]:
        return [AwsError("DescribeJobQueues", f"job queue {name}", f"no such job queue in Region {region}", "NotFound",
                         (shapes.name_from_arn(name),))
                for name in self.missing]


def _chunks(items: Sequence[str], size: int = BATCH_SIZE) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


def _about_share(queue: str, share: str) -> tuple[str, ...]:
    """What a call about one share is about: the share and its queue."""
    return (queue, f"{queue}/{share}")


def _unsettled(kind: str, name: str, detail: Shape, call: str, about: tuple[str, ...]) -> AwsError | None:
    status = detail.get("status")
    if status is None or status in shapes.SETTLED:
        return None
    why = f": {detail['statusReason']}" if detail.get("statusReason") else ""
    return AwsError(call, f"{kind} {name}", f"status {status}{why}; import it once it is VALID", "UnexpectedState",
                    about)


def read_account(api: Api, queues: Sequence[str] = ()) -> AccountRead:
    """Read ``queues`` (names or ARNs; every queue when empty) and their environments, policies and shares."""
    result = AccountRead({"service_environments": [], "job_queues": []})
    details: list[Shape] = []
    if queues:
        for chunk in _chunks(list(dict.fromkeys(queues))):
            for page in api.pages("DescribeJobQueues", f"job queue(s) {', '.join(chunk)}",
                                  tuple(map(shapes.name_from_arn, chunk)), jobQueues=chunk):
                details.extend(page.get("jobQueues", []))
        found = {d["jobQueueName"] for d in details} | {d["jobQueueArn"] for d in details}
        result.missing = [wanted for wanted in dict.fromkeys(queues) if wanted not in found]
    else:
        for page in api.pages("DescribeJobQueues", "every job queue"):
            details.extend(page.get("jobQueues", []))

    quota_queues = []
    for detail in sorted(details, key=lambda d: d["jobQueueName"]):  # AWS's order means nothing; files stay stable
        name = detail["jobQueueName"]
        if detail.get("jobQueueType") != shapes.QUOTA_QUEUE_TYPE:
            result.skipped.append((name, f"job queue type {detail.get('jobQueueType', 'ECS')}, not SAGEMAKER_TRAINING"))
        elif not detail.get("schedulingPolicyArn"):
            result.skipped.append((name, "no scheduling policy (a FIFO queue, no quota shares)"))
        elif (error := _unsettled("job queue", name, detail, "DescribeJobQueues", (name,))) is not None:
            result.errors.append(error)
        else:
            quota_queues.append(detail)

    policies: dict[str, Shape] = {}
    policy_arns = list(dict.fromkeys(d["schedulingPolicyArn"] for d in quota_queues))
    for chunk in _chunks(policy_arns):
        try:
            page = api.call("DescribeSchedulingPolicies", f"scheduling policies of {len(chunk)} job queue(s)",
                            arns=chunk)
        except AwsError as error:
            result.errors.append(error)
            continue
        policies.update({p["arn"]: p for p in page.get("schedulingPolicies", [])})

    environments: dict[str, Shape] = {}
    env_refs = list(dict.fromkeys(o["serviceEnvironment"] for d in quota_queues
                                  for o in d.get("serviceEnvironmentOrder") or ()))
    for chunk in _chunks(env_refs):
        try:
            for page in api.pages("DescribeServiceEnvironments", f"service environment(s) {', '.join(chunk)}",
                                  tuple(map(shapes.name_from_arn, chunk)), serviceEnvironments=chunk):
                for env in page.get("serviceEnvironments", []):
                    environments[env["serviceEnvironmentArn"]] = env
                    environments[env["serviceEnvironmentName"]] = env
        except AwsError as error:
            result.errors.append(error)

    added_envs: set[str] = set()
    for detail in quota_queues:
        queue_data = _read_queue(api, detail, policies, environments, result)
        if queue_data is None:
            continue
        env = environments.get(queue_data["service_environment"])
        if env is None:  # its DescribeServiceEnvironments failed (recorded); the queue itself was read
            env_name = shapes.name_from_arn(queue_data["service_environment"])
            if env_name not in result.unread_environments:
                result.unread_environments.append(env_name)
            queue_data["service_environment"] = env_name
            result.data["job_queues"].append(queue_data)
            continue
        if env["serviceEnvironmentName"] not in added_envs:
            added_envs.add(env["serviceEnvironmentName"])
            try:
                result.data["service_environments"].append(shapes.environment_data(env))
            except shapes.DuplicateCapacityUnit as error:
                result.errors.append(AwsError("DescribeServiceEnvironments",
                                              f"service environment {env['serviceEnvironmentName']}", str(error),
                                              "UnexpectedShape", (env["serviceEnvironmentName"],)))
                result.unread_environments.append(env["serviceEnvironmentName"])
        queue_data["service_environment"] = env["serviceEnvironmentName"]
        result.data["job_queues"].append(queue_data)
    return result


def _read_queue(api: Api, detail: Shape, policies: dict[str, Shape], environments: dict[str, Shape],
                result: AccountRead) -> dict[str, Any] | None:
    """The queue as the topology file spells it (``api_shapes.queue_data``), or ``None`` when it cannot be read."""
    name = detail["jobQueueName"]
    policy = policies.get(detail["schedulingPolicyArn"])
    if policy is None:
        if not any(e.call == "DescribeSchedulingPolicies" for e in result.errors):
            result.errors.append(AwsError("DescribeSchedulingPolicies", f"scheduling policy of job queue {name}",
                                          f"{detail['schedulingPolicyArn']} was not returned", "NotFound", (name,)))
        return None
    if not policy.get("quotaSharePolicy"):
        result.skipped.append((name, f"scheduling policy {policy['name']} is a fair-share policy, "
                                     "not a quota-share one"))
        return None
    order = detail.get("serviceEnvironmentOrder") or []
    if len(order) != 1:
        result.errors.append(AwsError("DescribeJobQueues", f"job queue {name}",
                                      f"{len(order)} service environments; a quota-managed queue has exactly one",
                                      "UnexpectedShape", (name,)))
        return None
    env = environments.get(order[0]["serviceEnvironment"])
    env_unreadable = env is None and any(e.call == "DescribeServiceEnvironments" for e in result.errors)
    if env is None and not env_unreadable:
        result.errors.append(AwsError("DescribeServiceEnvironments", f"service environment of job queue {name}",
                                      f"{order[0]['serviceEnvironment']} does not exist", "NotFound", (name,)))
        return None
    if env is not None and (error := _unsettled("service environment", env["serviceEnvironmentName"], env,
                            "DescribeServiceEnvironments", (env["serviceEnvironmentName"],))) is not None:
        if error.line not in {e.line for e in result.errors}:
            result.errors.append(error)
        return None
    queue_user, _ = shapes.split_tags(detail.get("tags"))
    policy_user, _ = shapes.split_tags(policy.get("tags"))
    if policy_user != queue_user:
        result.notes.append(f"scheduling policy {policy['name']} of job queue {name} has tags {policy_user or '{}'} "
                            f"other than the queue's {queue_user or '{}'}; "
                            "batch-quota gives the policy the queue's tags")
    shares = []
    try:
        summaries = [s for page in api.pages("ListQuotaShares", f"quota shares of job queue {name}", (name,),
                                             jobQueue=detail["jobQueueArn"]) for s in page.get("quotaShares", [])]
    except AwsError as error:
        result.errors.append(error)
        return None
    for summary in summaries:
        share_name = summary.get("quotaShareName", "?")
        subject = f"quota share {name}/{share_name}"
        about = _about_share(name, share_name)
        unsettled = _unsettled("quota share", f"{name}/{share_name}", summary, "ListQuotaShares", about)
        if unsettled is not None:
            result.errors.append(unsettled)
            continue
        try:
            tags = api.call("ListTagsForResource", subject, about, resourceArn=summary["quotaShareArn"]).get("tags")
        except AwsError as error:
            result.errors.append(error)
            continue
        try:
            shares.append(shapes.share_data(summary, tags))
        except shapes.DuplicateCapacityUnit as error:
            result.errors.append(AwsError("ListQuotaShares", subject, str(error), "UnexpectedShape", about))
    return shapes.queue_data(detail, order[0]["serviceEnvironment"], policy["name"], shares)
