"""One function per implemented operation: input as botocore sends it, output in the operation's shape.

Resource handlers change the account through ``Account.apply`` (so the policy engine's
AWS rules see every change before it is kept); job handlers go through the scheduler.
Each resource family has its module; importing this package registers them all in ``HANDLERS``.
"""

from __future__ import annotations

from policy_engine.endpoint.handlers import (  # noqa: F401  (registers the operations)
    environments,
    policies,
    queues,
    service_jobs,
    shares,
    snapshot,
    submit,
    tags,
)
from policy_engine.endpoint.handlers.registry import HANDLERS, MUTATING, Handler
from policy_engine.endpoint.handlers.service_jobs import TERMINATE_BATCH
from policy_engine.endpoint.handlers.submit import DURATION_TAG

__all__ = ["DURATION_TAG", "HANDLERS", "MUTATING", "TERMINATE_BATCH", "Handler"]
