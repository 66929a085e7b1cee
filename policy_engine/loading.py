"""Reading a topology from YAML, JSON or a Python module: the documented import path, kept for users;
the code is in ``inputs/loading.py``.

Nothing inside ``policy_engine`` imports this module (CONTRIBUTING.md, "Where things live").
"""

from __future__ import annotations

from policy_engine.inputs.loading import (
    MAX_INSTANCE_TYPES,
    MAX_QUEUES,
    MAX_SHARES,
    MAX_SHARES_PER_QUEUE,
    LoadError,
    find_lone_surrogate,
    line_of,
    load_topology,
    load_topology_stream,
    read_data,
    topology_from_data,
    validate_topology,
)

__all__ = [
    "MAX_INSTANCE_TYPES",
    "MAX_QUEUES",
    "MAX_SHARES",
    "MAX_SHARES_PER_QUEUE",
    "LoadError",
    "find_lone_surrogate",
    "line_of",
    "load_topology",
    "load_topology_stream",
    "read_data",
    "topology_from_data",
    "validate_topology",
]
