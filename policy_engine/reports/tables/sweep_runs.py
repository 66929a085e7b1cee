"""One run of a sweep as the JSON documents of ``sweep`` and ``tune`` write it: exactly ``RUN_KEYS``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policy_engine.sweep.run_record import RUN_KEYS, RunRecord

if TYPE_CHECKING:
    from policy_engine.sweep.cost_metrics import RunCosts

__all__ = ["RUN_KEYS", "run_json"]


def run_json(record: RunRecord, costs: RunCosts | None = None) -> dict[str, Any]:
    """A run of the JSON contract: exactly ``RUN_KEYS``, ``costs`` priced by ``costs`` (else ``null``)."""
    return record.to_json(costs.json(record) if costs is not None else None)
