"""The account's Batch resources as the API shows them, and the topology they make for the simulator.

Records are kept in the API's own shapes (``ServiceEnvironmentDetail``, ``JobQueueDetail``,
...), so Describe and List return them as they are. A change is applied to a copy,
turned into a ``Topology`` and checked by the policy engine's AWS rules (BQ0xx, BQ1xx:
what AWS itself rejects) before it replaces the current state; every new problem
becomes one line of the ``ClientException``.

Status: a created or updated resource is CREATING / UPDATING for ``transition_seconds``
of simulated time, then VALID; a deleted one is DELETING, then gone (AWS's life cycle,
compressed; 0 makes every change VALID at once).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from policy_engine.adapters.endpoint.base.errors import client_error
from policy_engine.foundation.aws_rules import written_borrow_limit
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.foundation.model import (
    JobQueue,
    JobStateTimeLimitAction,
    QuotaShare,
    ServiceEnvironment,
    Topology,
    TrainingPlan,
)

#: A resource record in the API's own shape (``ServiceEnvironmentDetail``, ``JobQueueDetail``, ...).
Record = dict[str, Any]
#: A key of a ``Resources`` table: a name, or ``(queue, share)`` for shares.
Key = str | tuple[str, str]


def api_problems(topology: Topology) -> list[Finding]:
    """The policy engine's findings that AWS itself would reject (``Rule.enforced_by_aws``: structure and AWS
    limits), as values; capacity, borrowing and guarantee rules stay ``check``'s."""
    from policy_engine.analysis.rules import Context, all_rules

    context = Context(topology)
    findings = [finding for each in all_rules() if each.enforced_by_aws for finding in each.run(context)]
    return [f for f in findings if f.severity is Severity.ERROR]


def problem_text(finding: Finding) -> str:
    """How the endpoint and ``serve`` word a finding AWS would reject: ``RULE OBJECT: message``."""
    return f"{finding.rule} {finding.object}: {finding.message}"


@dataclass
class Arns:
    region: str = "us-east-1"
    account: str = "123456789012"

    def _base(self) -> str:
        return f"arn:aws:batch:{self.region}:{self.account}"

    def environment(self, name: str) -> str:
        return f"{self._base()}:service-environment/{name}"

    def policy(self, name: str) -> str:
        return f"{self._base()}:scheduling-policy/{name}"

    def queue(self, name: str) -> str:
        return f"{self._base()}:job-queue/{name}"

    def share(self, queue: str, name: str) -> str:
        return f"{self._base()}:job-queue/{queue}/quota-share/{name}"

    def job(self, job_id: str) -> str:
        return f"{self._base()}:service-job/{job_id}"

    def training_plan(self, name: str) -> str:
        """The ARN SageMaker gives a plan (``arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME``)."""
        return f"arn:aws:sagemaker:{self.region}:{self.account}:training-plan/{name}"

    def training_job(self, name: str) -> str:
        return f"arn:aws:sagemaker:{self.region}:{self.account}:training-job/{name}"


def written_sharing(sharing: Record) -> Record:
    """A share's ``resourceSharingConfiguration`` as the endpoint keeps and answers it: a LEND_AND_BORROW share's
    ``borrowLimit`` always (unset: -1, what AWS applies), never another's (``aws_rules.written_borrow_limit``)."""
    borrow = written_borrow_limit(sharing["strategy"], sharing.get("borrowLimit"))
    return {"strategy": sharing["strategy"], **({"borrowLimit": borrow} if borrow is not None else {})}


@dataclass
class Resources:
    """Every resource record by name; shares by ``(queue, share)``. Insertion order is creation order."""

    environments: dict[str, Record] = field(default_factory=dict)
    policies: dict[str, Record] = field(default_factory=dict)
    queues: dict[str, Record] = field(default_factory=dict)
    shares: dict[tuple[str, str], Record] = field(default_factory=dict)
    #: (table, key) -> (settles at, field, final value or None to remove the record)
    pending: dict[tuple[str, Key], tuple[float, str, str | None]] = field(default_factory=dict)

    def table(self, kind: str) -> dict[Any, Record]:
        """``environments``, ``policies``, ``queues`` or ``shares`` by name."""
        tables: dict[str, dict[Any, Record]] = {"environments": self.environments, "policies": self.policies,
                                                "queues": self.queues, "shares": self.shares}
        return tables[kind]


def _capacity(limits: list[Record], where: str) -> dict[str, int]:
    capacity: dict[str, int] = {}
    for index, limit in enumerate(limits, 1):
        unit, count = limit.get("capacityUnit"), limit.get("maxCapacity")
        if unit is None or count is None:
            raise client_error(f"{where}.capacityLimits.{index}: capacityUnit and maxCapacity are required")
        if unit in capacity:
            raise client_error(f"{where}.capacityLimits: capacityUnit {unit} is listed twice")
        capacity[unit] = count
    return capacity


class Account:
    """Resources plus the rules of their life cycle; ``topology()`` is what the scheduler runs."""

    def __init__(self, arns: Arns | None = None, transition_seconds: float = 0.0) -> None:
        self.arns = arns or Arns()
        self.transition_seconds = transition_seconds
        self.resources = Resources()
        #: resource ARN -> tags (jobs' tags live on their records)
        self.tags: dict[str, dict[str, str]] = {}
        #: the topology's SageMaker training plans: bought, not created by the Batch API, so no call changes them
        self.plans: tuple[TrainingPlan, ...] = ()
        #: (resources, their AWS-rule problems): what the last change left, so the next one checks only once
        self._problems: tuple[Resources, list[Finding]] | None = None

    # --- lookups ------------------------------------------------------------------------

    @staticmethod
    def _named(table: dict[str, Record], ref: str, marker: str, arn_key: str, what: str) -> Record:
        """A record by name or by ARN (whose part after ``marker`` is the name)."""
        is_arn = ref.startswith("arn:")
        record = table.get(ref.rsplit(marker, 1)[-1] if is_arn else ref)
        if record is None or (is_arn and record[arn_key] != ref):
            raise client_error(f"{what} {ref} does not exist")
        return record

    def environment(self, ref: str) -> Record:
        return self._named(self.resources.environments, ref, "service-environment/", "serviceEnvironmentArn",
                           "Service environment")

    def policy(self, arn: str) -> Record:
        name = arn.rsplit("scheduling-policy/", 1)[-1]
        record = self.resources.policies.get(name)
        if record is None or record["arn"] != arn:
            raise client_error(f"Scheduling policy {arn} does not exist")
        return record

    def queue(self, ref: str) -> Record:
        return self._named(self.resources.queues, ref, "job-queue/", "jobQueueArn", "Job queue")

    def share(self, arn: str) -> Record:
        head, sep, share = arn.rpartition("/quota-share/")
        queue = head.rsplit("job-queue/", 1)[-1]
        record = self.resources.shares.get((queue, share)) if sep else None
        if record is None or record["quotaShareArn"] != arn:
            raise client_error(f"Quota share {arn} does not exist")
        return record

    def queue_shares(self, queue: str) -> list[Record]:
        return [record for (q, _), record in self.resources.shares.items() if q == queue]

    def policy_of(self, queue: Record) -> Record | None:
        arn = queue.get("schedulingPolicyArn")
        if not arn:
            return None
        return self.resources.policies.get(arn.rsplit("scheduling-policy/", 1)[-1])

    # --- life cycle -----------------------------------------------------------------------

    def begin(self, resources: Resources, kind: str, key: Key, field_name: str, transitional: str,
              final: str | None, now: float) -> None:
        """Set the record's ``field_name`` to ``transitional`` until ``transition_seconds`` pass, then to
        ``final`` (``None``: the record goes away)."""
        record = resources.table(kind)[key]
        if self.transition_seconds <= 0:
            if final is None:
                self.remove(resources, kind, key)
            else:
                record[field_name] = final
            return
        record[field_name] = transitional
        resources.pending[(kind, key)] = (now + self.transition_seconds, field_name, final)

    def settle(self, now: float) -> bool:
        """Finish every transition due by ``now`` (CREATING/UPDATING -> VALID, DELETING -> gone); whether a
        resource went (the topology changed)."""
        pending = self.resources.pending
        if not pending:
            return False
        removed = False
        for (kind, key), (when, field_name, final) in list(pending.items()):
            if when <= now:
                del pending[(kind, key)]
                if final is None:
                    self.remove(self.resources, kind, key)
                    removed = True
                else:
                    self.resources.table(kind)[key][field_name] = final
        return removed

    def remove(self, resources: Resources, kind: str, key: Key) -> None:
        """Drop a record, its pending transition and its tags."""
        record = resources.table(kind).pop(key, None)
        resources.pending.pop((kind, key), None)
        if record is not None:
            for arn_key in ("serviceEnvironmentArn", "jobQueueArn", "quotaShareArn", "arn"):
                if kind == "shares" and arn_key == "jobQueueArn":
                    continue
                if arn_key in record:
                    self.tags.pop(record[arn_key], None)
                    break

    # --- the topology ---------------------------------------------------------------------

    def topology(self, resources: Resources | None = None) -> Topology:
        """The simulator's view: environments, and the SAGEMAKER_TRAINING queues with their shares."""
        res = resources or self.resources
        environments = tuple(
            ServiceEnvironment(name=name, capacity=_capacity(record["capacityLimits"], name), state=record["state"])
            for name, record in res.environments.items()
        )
        queues = []
        for name, record in res.queues.items():
            order = record.get("serviceEnvironmentOrder") or []
            environment = order[0]["serviceEnvironment"] if order else ""
            if environment.startswith("arn:"):
                environment = environment.rsplit("service-environment/", 1)[-1]
            shares = tuple(self._share_model(share) for (q, _), share in res.shares.items() if q == name)
            policy = record.get("schedulingPolicyArn")
            queues.append(JobQueue(
                name=name, service_environment=environment, shares=shares, priority=record["priority"],
                state=record["state"],
                job_state_time_limit_actions=tuple(
                    JobStateTimeLimitAction(max_time_seconds=action["maxTimeSeconds"], reason=action["reason"])
                    for action in record.get("jobStateTimeLimitActions") or ()),
                scheduling_policy=policy.rsplit("/", 1)[-1] if policy else None,
            ))
        return Topology(service_environments=environments, job_queues=tuple(queues), allow_oversubscription=True,
                        training_plans=self.plans)

    @staticmethod
    def _share_model(record: Record) -> QuotaShare:
        sharing = record["resourceSharingConfiguration"]
        return QuotaShare(
            name=record["quotaShareName"], capacity=_capacity(record["capacityLimits"], record["quotaShareName"]),
            strategy=sharing["strategy"], borrow_limit=sharing.get("borrowLimit"),
            in_share_preemption=record["preemptionConfiguration"]["inSharePreemption"] == "ENABLED",
            state=record["state"],
        )

    def apply(self, change: Callable[[Resources], object]) -> None:
        """Run ``change(resources_copy)``, check the result with the AWS rules, then keep it."""
        cached = self._problems
        before = cached[1] if cached is not None and cached[0] is self.resources else api_problems(self.topology())
        candidate = copy.deepcopy(self.resources)
        change(candidate)
        after = api_problems(self.topology(candidate))
        problems = [finding for finding in after if finding not in before]
        if problems:
            raise client_error("; ".join(map(problem_text, problems)))
        self.resources = candidate
        self._problems = (candidate, after)

    def load(self, topology: Topology, now: float) -> None:
        """Create every resource of ``topology`` at once, VALID (``serve TOPOLOGY``, ``/_batch-quota/topology``)."""
        res = Resources()
        arns = self.arns
        for env in topology.service_environments:
            res.environments[env.name] = {
                "serviceEnvironmentName": env.name, "serviceEnvironmentArn": arns.environment(env.name),
                "serviceEnvironmentType": "SAGEMAKER_TRAINING", "state": env.state, "status": "VALID",
                "capacityLimits": [{"maxCapacity": n, "capacityUnit": t} for t, n in env.capacity.items()],
            }
        for queue in topology.job_queues:
            policy = queue.scheduling_policy_name
            res.policies.setdefault(policy, {"name": policy, "arn": arns.policy(policy),
                                             "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}})
            res.queues[queue.name] = {
                "jobQueueName": queue.name, "jobQueueArn": arns.queue(queue.name), "state": queue.state,
                "schedulingPolicyArn": arns.policy(policy), "status": "VALID", "statusReason": "JobQueue Healthy",
                "priority": queue.priority, "computeEnvironmentOrder": [],
                "serviceEnvironmentOrder": [{"order": 1,
                                             "serviceEnvironment": arns.environment(queue.service_environment)}],
                "jobQueueType": "SAGEMAKER_TRAINING",
                "jobStateTimeLimitActions": [
                    {"reason": a.reason, "state": a.state, "maxTimeSeconds": a.max_time_seconds, "action": a.action}
                    for a in queue.job_state_time_limit_actions],
            }
            for share in queue.shares:
                sharing = written_sharing({"strategy": share.strategy, "borrowLimit": share.borrow_limit})
                res.shares[(queue.name, share.name)] = {
                    "quotaShareName": share.name, "quotaShareArn": arns.share(queue.name, share.name),
                    "jobQueueArn": arns.queue(queue.name),
                    "capacityLimits": [{"maxCapacity": n, "capacityUnit": t} for t, n in share.capacity.items()],
                    "resourceSharingConfiguration": sharing,
                    "preemptionConfiguration": {"inSharePreemption": "ENABLED" if share.in_share_preemption
                                                else "DISABLED"},
                    "state": share.state, "status": "VALID",
                }
        self.resources = res
        self.plans = topology.training_plans
        self.tags = {}
        for env in topology.service_environments:
            if env.tags:
                self.tags[arns.environment(env.name)] = dict(env.tags)
        for queue in topology.job_queues:
            if queue.tags:
                self.tags[arns.queue(queue.name)] = dict(queue.tags)
            for share in queue.shares:
                if share.tags:
                    self.tags[arns.share(queue.name, share.name)] = dict(share.tags)
