"""The EventBridge patterns for AWS Batch's service-job events: the documented import path, kept for users;
the code is in ``events/patterns.py``.

Nothing inside ``policy_engine`` imports this module (CONTRIBUTING.md, "Where things live").
"""

from __future__ import annotations

from policy_engine.events.patterns import (
    DetailSpec,
    EventKind,
    detail_spec,
    kind,
    kinds,
    pattern,
    source,
)

__all__ = [
    "DetailSpec",
    "EventKind",
    "detail_spec",
    "kind",
    "kinds",
    "pattern",
    "source",
]
