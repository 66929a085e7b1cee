"""batch-quota's policy engine: pure Python, never imports aws_cdk.

Data flows one way: topology (``model``, ``loading``) -> checks -> simulation,
synthesis (``quota_constructs``) and reports.

The public names below load on first use (module ``__getattr__``), so importing any
submodule, e.g. ``policy_engine.cli.app`` for ``--help``, does not pay for pydantic and YAML.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policy_engine.foundation.model import (
        Guarantee,
        JobQueue,
        JobStateTimeLimitAction,
        QuotaShare,
        ServiceEnvironment,
        Suppression,
        Target,
        Topology,
    )
    from policy_engine.inputs.loading import LoadError, load_topology

_HOMES = {
    "Guarantee": "policy_engine.foundation.model",
    "JobQueue": "policy_engine.foundation.model",
    "JobStateTimeLimitAction": "policy_engine.foundation.model",
    "LoadError": "policy_engine.inputs.loading",
    "QuotaShare": "policy_engine.foundation.model",
    "ServiceEnvironment": "policy_engine.foundation.model",
    "Suppression": "policy_engine.foundation.model",
    "Target": "policy_engine.foundation.model",
    "Topology": "policy_engine.foundation.model",
    "load_topology": "policy_engine.inputs.loading",
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
