"""``sweep --format json``: ``{"runs": [...]}``, each run exactly ``values, status, findings, error, summary,
shares, targets, costs`` (``tune --format json`` writes its runs the same way). ``costs`` is the run's cost
report as ``simulate --format json`` writes it (docs/costs.md), priced with ``--prices`` or in instance-hours;
``null`` for a run that was not simulated."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from policy_engine.sweep.subjects import SweepOutput

if TYPE_CHECKING:
    from policy_engine.sweep.cost_metrics import RunCosts

#: The keys of one run in the JSON documents of ``sweep`` and ``tune``.
RUN_KEYS = ("values", "status", "findings", "error", "summary", "shares", "targets", "costs")


def run_json(record: dict[str, Any], costs: RunCosts | None = None) -> dict[str, Any]:
    """A run of the JSON contract: exactly ``RUN_KEYS``."""
    out = {key: record[key] for key in RUN_KEYS if key != "costs"}
    out["costs"] = costs.json(record) if costs is not None else None
    return out


def write(output: SweepOutput, stream: TextIO) -> None:
    json.dump({"runs": [run_json(record, output.costs) for record in output.records]}, stream)
    stream.write("\n")
