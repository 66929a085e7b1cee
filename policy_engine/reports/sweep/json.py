"""``sweep --format json``: ``{"runs": [...]}``, each run exactly ``values, status, findings, error, summary,
shares, targets, costs`` (``tune --format json`` writes its runs the same way). ``costs`` is the run's cost
report as ``simulate --format json`` writes it (docs/costs.md), priced with ``--prices`` or in instance-hours;
``null`` for a run that was not simulated."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.reports.sweep.view import SweepOutput, json_document
from policy_engine.reports.tables.sweep_runs import RUN_KEYS, run_json

__all__ = ["RUN_KEYS", "run_json", "write"]


def write(output: SweepOutput, stream: TextIO) -> None:
    json.dump(json_document(output), stream)
    stream.write("\n")
