"""``sweep --format json``: ``{"runs": [...]}``, each run exactly ``values, status, findings, error, summary,
shares, targets`` (``tune --format json`` writes its runs the same way)."""

from __future__ import annotations

import json
from typing import Any, TextIO

from policy_engine.sweep.subjects import SweepOutput

#: The keys of one run in the JSON documents of ``sweep`` and ``tune``.
RUN_KEYS = ("values", "status", "findings", "error", "summary", "shares", "targets")


def run_json(record: dict[str, Any]) -> dict[str, Any]:
    """A run of the JSON contract: exactly ``RUN_KEYS``."""
    return {key: record[key] for key in RUN_KEYS}


def write(output: SweepOutput, stream: TextIO) -> None:
    json.dump({"runs": [run_json(record) for record in output.records]}, stream)
    stream.write("\n")
