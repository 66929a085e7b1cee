"""``sweep --format csv``: one row per run, the varied fields and the figures as columns (``dataset.flat_row``),
then per instance type its utilisation and instance-hours, and what the run cost.

Columns a sweep adds to the dataset's are named as the expressions that read them (``utilisation(TYPE)``,
``idle_instance_hours(TYPE)``, ``cost``, ``idle_cost``, ``share(QUEUE/SHARE).cost``), so a spreadsheet's column
is what ``--minimize`` takes. Costs are in ``cost_unit``: the prices' currency, or, without ``--prices``, only
per instance type in instance-hours (instance-hours of different types are not added up). The rows are read
from the runs by ``reports.sweep.view.csv_rows``.
"""

from __future__ import annotations

import csv
import json
from typing import TextIO

from policy_engine.reports.sweep.view import SweepOutput, csv_rows


def write(output: SweepOutput, stream: TextIO) -> None:
    rows = csv_rows(output)
    columns = [c for c in (rows[0] if rows else {"run": 0}) if c != "key"]
    writer = csv.DictWriter(stream, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else json.dumps(v) if isinstance(v, bool) else v) for k, v in row.items()})
