"""The objects findings are about, as ``ObjectRef``s, and where each sits in the topology's data.

Rules build references from the model (``share_ref``, ``queue_ref``, ...), so a reference always
carries its environment, queue and share; SARIF maps one to its data path (``object_path``) and so
to a line, CDK to a construct, reports to a share, whatever characters the names hold.
"""

from __future__ import annotations

from collections.abc import Iterable

from policy_engine.foundation.diagnostics import ObjectKind, ObjectRef
from policy_engine.foundation.findings import Finding
from policy_engine.foundation.model import Guarantee, JobQueue, QuotaShare, Suppression, Topology

TOPOLOGY = ObjectRef.topology()


def environment_ref(name: str) -> ObjectRef:
    return ObjectRef.of_environment(name)


def queue_ref(queue: JobQueue) -> ObjectRef:
    return ObjectRef.of_queue(queue.name, queue.service_environment)


def share_ref(queue: JobQueue, share: QuotaShare) -> ObjectRef:
    return ObjectRef.of_share(queue.name, share.name, queue.service_environment)


def guarantee_ref(topology: Topology, index: int, guarantee: Guarantee) -> ObjectRef:
    """A guarantee, shown with its share reference as written; about its share when that resolves to one."""
    match = topology.find_share(guarantee.share)
    queue = topology.queue(match.queue) if match.queue is not None else None
    return ObjectRef.of_guarantee(index, match.queue, match.share, queue.service_environment if queue else None,
                                  ref=guarantee.share)


def suppression_ref(index: int, suppression: Suppression) -> ObjectRef:
    return ObjectRef.of_suppression(index, suppression.rule, suppression.object)


def _listed(kind: str, count: int, index: int | None) -> tuple[str | int, ...]:
    return (kind, index) if index is not None and index < count else (kind,)


def object_path(topology: Topology, ref: ObjectRef) -> tuple[str | int, ...]:
    """The data path (as in ``reading.read_data``'s line table) of an object; ``()`` if it has none.

    An object that is no longer (or never was) in the topology maps to its list, or to nothing.
    """
    queues = topology.job_queues
    environments = topology.service_environments
    match ref.kind:
        case ObjectKind.SHARE:
            return next((("job_queues", q_index, "shares", s_index)
                         for q_index, queue in enumerate(queues) if queue.name == ref.queue
                         for s_index, share in enumerate(queue.shares) if share.name == ref.share), ())
        case ObjectKind.QUEUE:
            index = ref.index if ref.index is not None else next(
                (i for i, queue in enumerate(queues) if queue.name == ref.queue), None)
            return _listed("job_queues", len(queues), index)
        case ObjectKind.ENVIRONMENT:
            index = ref.index if ref.index is not None else next(
                (i for i, environment in enumerate(environments) if environment.name == ref.environment), None)
            return _listed("service_environments", len(environments), index)
        case ObjectKind.GUARANTEE:
            return _listed("guarantees", len(topology.guarantees), ref.index)
        case ObjectKind.SUPPRESSION:
            return _listed("suppress", len(topology.suppress), ref.index)
        case ObjectKind.TARGET:
            return _listed("targets", len(topology.targets), ref.index)
        case ObjectKind.TRAINING_PLAN:
            plans = topology.training_plans
            index = ref.index if ref.index is not None else next(
                (i for i, plan in enumerate(plans) if plan.name == ref.label), None)
            return _listed("training_plans", len(plans), index)
        case ObjectKind.ALL_QUEUES:
            return ("job_queues",)
        case ObjectKind.ALL_ENVIRONMENTS:
            return ("service_environments",)
    return ()


def locate(topology: Topology, ref: ObjectRef) -> ObjectRef:
    """The environment, queue and share an object is about (``kind`` kept; unknown parts ``None``).

    A share (or a guarantee that names exactly one) has all three, a job queue its environment and itself,
    an environment itself when the topology declares it or a queue runs on it. An object shown by position
    (a duplicate name) or about the whole topology is about none of them.
    """
    if ref.kind in (ObjectKind.SHARE, ObjectKind.GUARANTEE) and ref.share_id is not None:
        return ObjectRef(ref.kind, ref.environment, ref.queue, ref.share)
    if ref.kind is ObjectKind.QUEUE and ref.index is None and topology.queue(ref.queue or "") is not None:
        return ObjectRef(ref.kind, ref.environment, ref.queue)
    if ref.kind is ObjectKind.ENVIRONMENT and ref.index is not None:
        return ObjectRef(ref.kind)
    if ref.kind is ObjectKind.ENVIRONMENT and (
            topology.environment(ref.environment or "") is not None
            or any(queue.service_environment == ref.environment for queue in topology.job_queues)):
        return ObjectRef(ref.kind, ref.environment)
    return ObjectRef(ref.kind)


def findings_by_share(topology: Topology, findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """Findings that are about one share, named directly (``QUEUE/SHARE``) or through its guarantee."""
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        if (node := locate(topology, finding.object).share_id) is not None:
            out.setdefault(node, []).append(finding)
    return out
