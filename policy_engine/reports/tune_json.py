"""``tune --format json``: ``objectives``, ``constraints``, ``recommended``, ``current``, ``front`` and ``runs``
(each run as ``sweep --format json`` writes it), for scripts."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.reports.sweep_json import run_json
from policy_engine.sweep.subjects import TuneOutput


def write(output: TuneOutput, stream: TextIO) -> None:
    result = output.result
    json.dump({
        "objectives": [o.label for o in output.objectives],
        "constraints": [c.text for c in output.constraints],
        "recommended": run_json(result.chosen) if result.chosen else None,
        "current": run_json(result.current),
        "front": [run_json(r) for r in result.front],
        "runs": [run_json(r) for r in result.runs],
    }, stream)
    stream.write("\n")
