"""One run of a sweep as the JSON documents of ``sweep`` and ``tune`` write it: exactly ``RUN_KEYS``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policy_engine.sweep.cost_metrics import RunCosts

#: The keys of one run in the JSON documents of ``sweep`` and ``tune``.
RUN_KEYS = ("values", "status", "findings", "error", "summary", "shares", "targets", "costs")


def run_json(record: dict[str, Any], costs: RunCosts | None = None) -> dict[str, Any]:
    """A run of the JSON contract: exactly ``RUN_KEYS``."""
    out = {key: record[key] for key in RUN_KEYS if key != "costs"}
    out["costs"] = costs.json(record) if costs is not None else None
    return out
