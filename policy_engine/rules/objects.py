"""How findings name objects, and the way back from a name to where it sits in the file.

Findings say ``training/QS1``, ``service_environments[gpu-env]``, ``job_queues[training]``
or ``guarantees[0] (training/QS1)``; SARIF needs the file path of that object to find its
line, and reports need the share, queue or environment it is about, so naming and locating
live together.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from policy_engine.findings import Finding
from policy_engine.model import Guarantee, JobQueue, QuotaShare, Topology, share_id

TOPOLOGY = "(topology)"


def environment_object(name: str) -> str:
    return f"service_environments[{name}]"


def queue_object(name: str) -> str:
    return f"job_queues[{name}]"


def guarantee_object(index: int, guarantee: Guarantee) -> str:
    return f"guarantees[{index}] ({guarantee.share})"


_LISTED = re.compile(r"^(service_environments|job_queues)\[([^\]]*)\]")
_GUARANTEE = re.compile(r"^guarantees\[(\d+)\]")
_SUPPRESSION = re.compile(r"^suppress\[(\d+)\]")


def object_path(topology: Topology, name: str) -> tuple[str | int, ...]:
    """The data path (as in ``loading.read_data``'s line table) of a named object; ``()`` if unknown."""
    if match := _GUARANTEE.match(name):
        index = int(match.group(1))
        return ("guarantees", index) if index < len(topology.guarantees) else ("guarantees",)
    if match := _SUPPRESSION.match(name):
        index = int(match.group(1))
        return ("suppress", index) if index < len(topology.suppress) else ("suppress",)
    if match := _LISTED.match(name):
        kind, item = match.groups()
        items = topology.service_environments if kind == "service_environments" else topology.job_queues
        index = next((i for i, x in enumerate(items) if x.name == item), None)
        return (kind,) if index is None else (kind, index)
    for q_index, queue in enumerate(topology.job_queues):
        for s_index, share in enumerate(queue.shares):
            if name == share_id(queue, share):
                return ("job_queues", q_index, "shares", s_index)
    if name in ("service_environments", "job_queues", "guarantees"):
        return (name,)
    return ()


@dataclass(frozen=True)
class ObjectLocation:
    """Where a finding's object sits: its service environment, job queue and share (``None`` = not one)."""

    environment: str | None = None
    queue: str | None = None
    share: str | None = None

    @property
    def share_id(self) -> str | None:
        """``QUEUE/SHARE`` when the object is (or guarantees) exactly one share."""
        return share_id(self.queue, self.share) if self.queue and self.share else None


def _share_location(queue: JobQueue, share: QuotaShare) -> ObjectLocation:
    return ObjectLocation(queue.service_environment, queue.name, share.name)


def locate(topology: Topology, object_name: str) -> ObjectLocation:
    """The environment, queue and share a finding's object name is about: a share (or a guarantee that
    names exactly one) has all three, a job queue its environment and itself, an environment itself."""
    match object_path(topology, object_name):
        case ("job_queues", int(q_index), "shares", int(s_index)):
            queue = topology.job_queues[q_index]
            return _share_location(queue, queue.shares[s_index])
        case ("job_queues", int(q_index)):
            queue = topology.job_queues[q_index]
            return ObjectLocation(queue.service_environment, queue.name)
        case ("service_environments", int(e_index)):
            return ObjectLocation(topology.service_environments[e_index].name)
        case ("guarantees", int(g_index)):
            matches = topology.resolve_share(topology.guarantees[g_index].share)
            return _share_location(*matches[0]) if len(matches) == 1 else ObjectLocation()
    # An environment only job queues name (not declared) has no path, yet is still where they run.
    match = _LISTED.match(object_name)
    if match and match.group(1) == "service_environments" and any(
            queue.service_environment == match.group(2) for queue in topology.job_queues):
        return ObjectLocation(match.group(2))
    return ObjectLocation()


def findings_by_share(topology: Topology, findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """Findings that are about one share, named directly (``QUEUE/SHARE``) or through its guarantee."""
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        if (node := locate(topology, finding.object).share_id) is not None:
            out.setdefault(node, []).append(finding)
    return out
