"""Every implemented operation, registered: importing this module loads each resource family's handlers.

Resource handlers change the account through ``Account.apply`` (so the policy engine's AWS rules see
every change before it is kept); job handlers go through the scheduler. ``HANDLERS`` maps an
operation name to its handler; ``MUTATING`` names the operations the ``--state`` store logs.
"""

from __future__ import annotations

from policy_engine.adapters.endpoint.handlers import (  # noqa: F401  (importing them registers their operations)
    environments,
    policies,
    queues,
    service_jobs,
    shares,
    snapshot,
    submit,
    tags,
)
from policy_engine.adapters.endpoint.handlers.registry import HANDLERS, MUTATING, Handler
from policy_engine.adapters.endpoint.handlers.service_jobs import TERMINATE_BATCH
from policy_engine.adapters.endpoint.handlers.submit import DURATION_TAG

__all__ = ["DURATION_TAG", "HANDLERS", "MUTATING", "TERMINATE_BATCH", "Handler"]
