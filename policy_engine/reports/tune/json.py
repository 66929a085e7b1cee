"""``tune --format json``: ``objectives``, ``constraints``, ``recommended``, the decision (``keep_current``,
``keep_reason``, ``best``, ``gain``, ``min_gain``, workload samples and wins, the spread, the nearest miss),
``promise_changes``, ``sensitivity``, ``current``, ``front`` and ``runs`` (each run as ``sweep --format
json`` writes it), for scripts."""

from __future__ import annotations

import json
from typing import Any, TextIO

from policy_engine.reports.tables.sweep_runs import run_json as run_record_json
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.tune import Objective, SensitivityRow, TuneResult, invalid_reasons


def write(output: TuneOutput, stream: TextIO) -> None:
    result = output.result

    def run_json(record: RunRecord) -> dict[str, Any]:
        return run_record_json(record, output.costs)

    json.dump({
        "objectives": [o.label for o in output.objectives],
        "constraints": [c.text for c in output.constraints],
        "cost_unit": output.costs.unit if output.costs is not None else None,
        "recommended": run_json(result.chosen) if result.chosen else None,
        "keep_current": bool(result.keep_reason),
        "keep_reason": result.keep_reason or None,
        "best": run_json(result.best) if result.best else None,
        "gain": result.gain, "gain_relative": result.relative_gain, "min_gain": output.min_gain,
        "workload_samples": result.samples, "wins": result.wins,
        "spread": _spreads(result, output.objectives) if result.samples else None,
        "nearest": ({"run": run_json(result.nearest),
                     "misses": [{"constraint": text, "by": amount} for text, amount in result.misses]}
                    if result.nearest else None),
        "unmet": [{"constraint": text, "nearest": run_json(closest), "by": amount}
                  for text, closest, amount in result.unmet],
        "invalid_by_rule": dict(invalid_reasons(result.runs).most_common()),
        "promise_changes": [p.to_dict() for p in output.promises],
        "sensitivity": [_sensitivity_json(row, output.objectives) for row in result.sensitivity],
        "current": run_json(result.current),
        "front": [run_json(r) for r in result.front],
        "runs": [run_json(r) for r in result.runs],
    }, stream)
    stream.write("\n")


def _spreads(result: TuneResult, objectives: list[Objective]) -> dict[str, Any]:
    def spread(record: RunRecord | None) -> dict[str, Any] | None:
        if not record or not record.samples:
            return None
        values = [objectives[0].expression(sample) for sample in record.samples]
        return {"values": values, "min": min(values), "max": max(values)}

    return {"current": spread(result.current), "best": spread(result.best)}


def _sensitivity_json(row: SensitivityRow, objectives: list[Objective]) -> dict[str, Any]:
    def value(record: RunRecord | None) -> float | None:
        return objectives[0].expression(record) if record and record.status == RunStatus.OK else None

    return {"assumption": row.assumption, "current": value(row.current),
            "recommended": value(row.recommended), "best": value(row.best),
            "best_values": row.best.values if row.best else None}
