"""``sweep --format csv``: one row per run, the varied fields and the figures as columns (``dataset.flat_row``),
then per instance type its utilisation and instance-hours, and what the run cost.

Columns a sweep adds to the dataset's are named as the expressions that read them (``utilisation(TYPE)``,
``idle_instance_hours(TYPE)``, ``cost``, ``idle_cost``, ``share(QUEUE/SHARE).cost``), so a spreadsheet's column
is what ``--minimize`` takes. Costs are in ``cost_unit``: the prices' currency, or, without ``--prices``, only
per instance type in instance-hours (instance-hours of different types are not added up).
"""

from __future__ import annotations

import csv
import json
from typing import Any, TextIO

from policy_engine.simulation.results.type_usage import SUMMARY_KEY
from policy_engine.sweep.cost_metrics import CLUSTER_COST_METRICS, cluster_figure, share_figure
from policy_engine.sweep.dataset import flat_row
from policy_engine.sweep.grid import candidate_key
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.subjects import SweepOutput

#: Per instance type, ``summary.instance_types`` figures as ``METRIC(TYPE)`` columns.
TYPE_COLUMNS = ("utilisation", "used_instance_hours", "idle_instance_hours", "borrowed_instance_hours",
                "lent_instance_hours")


def _type_columns(record: RunRecord, types: list[str]) -> dict[str, Any]:
    by_type = record.summary.get(SUMMARY_KEY, {})
    return {f"{metric}({t})": by_type.get(t, {}).get(metric) for t in types for metric in TYPE_COLUMNS}


def _cost_columns(output: SweepOutput, record: RunRecord, shares: list[str]) -> dict[str, Any]:
    costs = output.costs
    if costs is None:
        return {}
    row: dict[str, Any] = {"cost_unit": costs.unit}
    if not costs.priced:
        return row
    report = costs.report(record)
    row.update({name: cluster_figure(report, name) for name in CLUSTER_COST_METRICS} if report else
               dict.fromkeys(CLUSTER_COST_METRICS))
    row.update({f"share({share}).bill": share_figure(report, share) if report else None for share in shares})
    return {key: round(value, 6) if isinstance(value, float) else value for key, value in row.items()}


def write(output: SweepOutput, stream: TextIO) -> None:
    types = list(dict.fromkeys(t for record in output.records for t in record.summary.get(SUMMARY_KEY, {})))
    shares = list(dict.fromkeys(share for share, _ in output.pairs))
    rows = [{**flat_row(record, candidate_key(record.values), output.axes, output.pairs),
             **_type_columns(record, types), **_cost_columns(output, record, shares)} for record in output.records]
    columns = [c for c in (rows[0] if rows else {"run": 0}) if c != "key"]
    writer = csv.DictWriter(stream, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else json.dumps(v) if isinstance(v, bool) else v) for k, v in row.items()})
