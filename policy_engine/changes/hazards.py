"""Deploy hazards: what CloudFormation deletes and recreates, and which running work a deploy puts at risk.

Replacement is read from the resource schemas' ``createOnlyProperties`` (``resources.py``), never
guessed. The other hazards follow AWS's documented behaviour: lowering a share's limits makes its
jobs above the new limit eligible for preemption; a DISABLED share accepts no new jobs; a share can
only be deleted once DISABLED. What AWS leaves undocumented is said as such in the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from policy_engine.changes.report import Hazard, HazardKind
from policy_engine.changes.resources import (
    JOB_QUEUE,
    QUOTA_SHARE,
    SCHEDULING_POLICY,
    SERVICE_ENVIRONMENT,
    Resource,
    replacing_changes,
)
from policy_engine.foundation.diagnostics import ObjectRef
from policy_engine.foundation.model import JobQueue, QuotaShare, Topology, share_id
from policy_engine.inputs.renames import Renames

_JOBS_OF_DELETED = ("AWS documents only that a DISABLED share's submitted jobs finish and that a share must be "
                    "DISABLED before it is deleted; whether the delete waits for them is undocumented, so plan for "
                    "its RUNNABLE and running jobs to be lost")


class PolicyType(Enum):
    """A scheduling policy's type: AWS documents that it cannot be changed once set."""

    QUOTA_SHARE = "QuotaSharePolicy"
    FAIR_SHARE = "FairsharePolicy"


@dataclass(frozen=True)
class Policy:
    """One scheduling policy of a side: its type and the job queues using it."""

    type: PolicyType
    queues: tuple[str, ...]


#: Scheduling policy name -> its type and queues, for one side of a diff.
PolicyTypes = Mapping[str, Policy]


def policy_types(topology: Topology, fair_share: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, Policy]:
    """A side's policies: the topology's (quota-share) and a template's fair-share ones (name -> queues)."""
    found: dict[str, Policy] = {name: Policy(PolicyType.FAIR_SHARE, tuple(queues))
                                for name, queues in (fair_share or {}).items()}
    for queue in topology.job_queues:
        old = found.get(queue.scheduling_policy_name)
        queues = (*(old.queues if old and old.type is PolicyType.QUOTA_SHARE else ()), queue.name)
        found[queue.scheduling_policy_name] = Policy(PolicyType.QUOTA_SHARE, queues)
    return found


def policy_type_changes(base: PolicyTypes, head: PolicyTypes) -> list[Hazard]:
    """A policy named on both sides whose type differs: AWS cannot change it in place, so it is replaced, and
    every queue using it on either side with it."""
    found = []
    for name, before in base.items():
        after = head.get(name)
        if after is None or after.type is before.type:
            continue
        queues = tuple(dict.fromkeys([*before.queues, *after.queues]))
        first = queues[0] if queues else ""
        found.append(Hazard(
            HazardKind.REPLACE, SCHEDULING_POLICY, ObjectRef.of_scheduling_policy(first, name),
            f"scheduling policy {name} changes type ({before.type.value} -> {after.type.value}); AWS documents "
            f"that a policy's type cannot be changed once set, so CloudFormation replaces it, and it cannot "
            f"replace a custom-named resource under the same name: give the new policy a new name. Queues using "
            f"it: {', '.join(queues) or 'none'}", ("FairsharePolicy", "QuotaSharePolicy")))
        found += [Hazard(
            HazardKind.REPLACE, JOB_QUEUE, ObjectRef.of_queue(queue),
            f"job queue {queue} uses scheduling policy {name}, which is replaced ({before.type.value} -> "
            f"{after.type.value}); whether AWS moves a queue between a fair-share and a quota-share policy in "
            f"place is undocumented, so plan for the queue to be replaced: its jobs are not moved, submitters "
            f"must use the new queue's ARN", ("SchedulingPolicyArn",)) for queue in queues]
    return found


def _share_resource(queue: JobQueue, share: QuotaShare) -> Resource:
    return Resource(QUOTA_SHARE, f"quota share {share_id(queue, share)}", queue=queue, share=share)


def _replaced(before: Resource, after: Resource, name: ObjectRef, subject: str, then: str,
              how: str = "") -> list[Hazard]:
    """A ``replace`` hazard when a create-only property differs: ``CloudFormation replaces SUBJECT ([HOW; ]
    PROPERTIES create-only)THEN``."""
    changed = replacing_changes(before, after)
    if not changed:
        return []
    message = f"CloudFormation replaces {subject} ({how}{', '.join(changed)} create-only){then}"
    return [Hazard(HazardKind.REPLACE, before.type, name, message, tuple(changed))]


def _environments(base: Topology, head: Topology, renames: Renames) -> list[Hazard]:
    found = []
    for environment in base.service_environments:
        after = head.environment(renames.environment(environment.name))
        if after is None:
            found.append(Hazard(HazardKind.DELETE, SERVICE_ENVIRONMENT, ObjectRef.of_environment(environment.name),
                                f"CloudFormation deletes service environment {environment.name}: every job queue "
                                f"on it must be gone or moved first"))
            continue
        found += _replaced(Resource(SERVICE_ENVIRONMENT, environment.name, environment=environment),
                           Resource(SERVICE_ENVIRONMENT, after.name, environment=after),
                           ObjectRef.of_environment(after.name),
                           f"service environment {environment.name}",
                           f": it creates {after.name} and deletes {environment.name}; the job queues on it are "
                           f"updated to the new one")
        for instance_type, count in environment.capacity.items():
            new = after.capacity.get(instance_type, 0)
            if new < count:
                found.append(Hazard(
                    HazardKind.CAPACITY_CUT, SERVICE_ENVIRONMENT, ObjectRef.of_environment(after.name),
                    f"{after.name} {instance_type} capacity {count} -> {new}: when more than {new} are in use at "
                    f"deploy, nothing new is placed on {instance_type} until usage is back under {new}; nothing "
                    f"is preempted for it (AWS documents no preemption for a capacity cut: batch-quota's choice)"))
    return found


def _queues(base: Topology, head: Topology, renames: Renames) -> list[Hazard]:
    found = []
    for queue in base.job_queues:
        after = head.queue(renames.queue(queue.name))
        shares = ", ".join(share_id(queue, s) for s in queue.shares) or "none"
        if after is None:
            found.append(Hazard(HazardKind.DELETE, JOB_QUEUE, ObjectRef.of_queue(queue.name),
                                f"CloudFormation deletes job queue {queue.name} and its scheduling policy "
                                f"{queue.scheduling_policy_name}, with every share on it ({shares}); "
                                f"{_JOBS_OF_DELETED}"))
            continue
        found += _replaced(Resource(JOB_QUEUE, queue.name, queue=queue),
                           Resource(JOB_QUEUE, after.name, queue=after), ObjectRef.of_queue(after.name),
                           f"job queue {queue.name}",
                           f" with {after.name}, and with it every share on it ({shares}): jobs are not moved "
                           f"to the new queue; submitters must use the new queue's ARN")
        if queue.state == "ENABLED" and after.state == "DISABLED":
            found.append(Hazard(HazardKind.DISABLED, JOB_QUEUE, ObjectRef.of_queue(after.name),
                                f"job queue {after.name} becomes DISABLED: every share on it rejects new jobs; "
                                f"jobs already submitted finish"))
        found += _replaced(Resource(SCHEDULING_POLICY, queue.scheduling_policy_name, queue=queue),
                           Resource(SCHEDULING_POLICY, after.scheduling_policy_name, queue=after),
                           ObjectRef.of_scheduling_policy(after.name, after.scheduling_policy_name),
                           f"scheduling policy {queue.scheduling_policy_name}",
                           f" with {after.scheduling_policy_name}; job queue {after.name} is pointed at the new one")
    return found


def _removed_share(queue: JobQueue, share: QuotaShare) -> Hazard:
    node = share_id(queue, share)
    limits = ", ".join(f"{count} {t}" for t, count in share.capacity.items())
    held = ("already DISABLED: it accepts no new jobs, but jobs submitted before may still hold capacity"
            if share.state == "DISABLED" or queue.state == "DISABLED"
            else f"ENABLED, it may hold RUNNABLE and running jobs (limit {limits})")
    return Hazard(HazardKind.DELETE, QUOTA_SHARE, ObjectRef.of_share(queue.name, share.name),
                  f"CloudFormation deletes quota share {node} ({held}); {_JOBS_OF_DELETED}")


def _lowered_limits(head: ObjectRef, before: QuotaShare, after: QuotaShare) -> list[Hazard]:
    head_id = head.name
    found = []
    for instance_type, count in before.capacity.items():
        new = after.capacity.get(instance_type, 0)
        if new < count:
            found.append(Hazard(
                HazardKind.LOWERED_LIMIT, QUOTA_SHARE, head,
                f"{head_id} {instance_type} limit {count} -> {new}: on deploy its SCHEDULED, STARTING and RUNNING "
                f"jobs above {new} become eligible for preemption (reclaimed for heads of shares within their "
                f"limits), even for a {after.strategy} share; nothing is preempted merely because the limit "
                f"dropped, and the share places nothing new until it is back under {new}"))
    return found


def find(base: Topology, head: Topology, renames: Renames, matched: dict[str, str]) -> list[Hazard]:
    """Every hazard of deploying ``head`` over ``base``; ``matched`` maps BASE share ids to HEAD ids."""
    found = _environments(base, head, renames) + _queues(base, head, renames)
    head_shares = {share_id(q, s): (q, s) for q, s in head.shares()}
    for queue, share in base.shares():
        base_id = share_id(queue, share)
        if base_id not in matched:
            found.append(_removed_share(queue, share))
            continue
        head_id = matched[base_id]
        new_queue, new_share = head_shares[head_id]
        head_ref = ObjectRef.of_share(new_queue.name, new_share.name)
        how = "renamed" if queue.name == new_queue.name else "moved" if share.name == new_share.name else \
            "moved and renamed"
        found += _replaced(
            _share_resource(queue, share), _share_resource(new_queue, new_share), head_ref, f"quota share {base_id}",
            f": it creates {head_id} and deletes {base_id}. Jobs are not moved: RUNNABLE jobs of {base_id} never "
            f"start under {head_id} and must be resubmitted there; {_JOBS_OF_DELETED}", f"{how} to {head_id}; ")
        found += _lowered_limits(head_ref, share, new_share)
        was_enabled = share.state == "ENABLED"
        if was_enabled and new_share.state == "DISABLED":
            found.append(Hazard(HazardKind.DISABLED, QUOTA_SHARE, head_ref,
                                f"{head_id} becomes DISABLED: it accepts no new jobs (submissions are rejected); "
                                f"its RUNNABLE jobs stay queued and still run, its running jobs finish"))
    return found
