"""A topology as the project's YAML (or JSON) file text: what ``import`` writes and ``check`` reads back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from policy_engine.foundation.file_data import topology_file_data
from policy_engine.foundation.model import Topology
from policy_engine.inputs import safe_yaml


def topology_to_data(topology: Topology) -> dict[str, Any]:
    """The mapping a topology file holds; defaults are left out (not a queue's priority nor a LEND_AND_BORROW
    share's borrow limit: ``file_data``), ``system_tags`` notes kept."""
    return topology_file_data(topology)


def topology_text(topology: Topology, path: str | Path | None, header: Sequence[str] = ()) -> str:
    """YAML (or JSON for a ``.json`` path) with ``header`` lines as comments (YAML only)."""
    data = topology_to_data(topology)
    if path is not None and Path(path).suffix.lower() == ".json":
        return json.dumps(data, indent=2) + "\n"
    comments = "".join(f"# {line}\n" for line in header)
    return comments + safe_yaml.dump(data)  # quoted where YAML 1.2 would read a name as a number
