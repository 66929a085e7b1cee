"""batch-quota's policy engine: pure Python, never imports aws_cdk.

Data flows one way: topology (``model``, ``loading``) -> checks -> simulation,
synthesis (``quota_constructs``) and reports.

The public names below load on first use (module ``__getattr__``), so importing any
submodule, e.g. ``policy_engine.cli`` for ``--help``, does not pay for pydantic and YAML.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policy_engine.loading import LoadError, load_topology
    from policy_engine.model import (
        Guarantee,
        JobQueue,
        JobStateTimeLimitAction,
        QuotaShare,
        ServiceEnvironment,
        Suppression,
        Target,
        Topology,
    )

_HOMES = {
    "Guarantee": "policy_engine.model",
    "JobQueue": "policy_engine.model",
    "JobStateTimeLimitAction": "policy_engine.model",
    "LoadError": "policy_engine.loading",
    "QuotaShare": "policy_engine.model",
    "ServiceEnvironment": "policy_engine.model",
    "Suppression": "policy_engine.model",
    "Target": "policy_engine.model",
    "Topology": "policy_engine.model",
    "load_topology": "policy_engine.loading",
}

__all__ = [
    "Guarantee",
    "JobQueue",
    "JobStateTimeLimitAction",
    "LoadError",
    "QuotaShare",
    "ServiceEnvironment",
    "Suppression",
    "Target",
    "Topology",
    "load_topology",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'policy_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
