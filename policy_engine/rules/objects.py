"""How findings name objects, and the way back from a name to where it sits in the file.

Findings say ``training/QS1``, ``service_environments[gpu-env]``, ``job_queues[training]``
or ``guarantees[0] (training/QS1)``; SARIF needs the file path of that object to find its
line, so naming and locating live together.
"""

from __future__ import annotations

import re

from policy_engine.model import Guarantee, Topology, share_id

TOPOLOGY = "(topology)"


def environment_object(name: str) -> str:
    return f"service_environments[{name}]"


def queue_object(name: str) -> str:
    return f"job_queues[{name}]"


def guarantee_object(index: int, guarantee: Guarantee) -> str:
    return f"guarantees[{index}] ({guarantee.share})"


_LISTED = re.compile(r"^(service_environments|job_queues)\[([^\]]*)\]")
_GUARANTEE = re.compile(r"^guarantees\[(\d+)\]")


def object_path(topology: Topology, name: str) -> tuple[str | int, ...]:
    """The data path (as in ``loading.read_data``'s line table) of a named object; ``()`` if unknown."""
    if match := _GUARANTEE.match(name):
        index = int(match.group(1))
        return ("guarantees", index) if index < len(topology.guarantees) else ("guarantees",)
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
