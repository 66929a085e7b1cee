"""``sweep --format csv``: one row per run, the varied fields and the figures as columns (``dataset.flat_row``)."""

from __future__ import annotations

import csv
import json
from typing import TextIO

from policy_engine.sweep.dataset import flat_row
from policy_engine.sweep.grid import candidate_key
from policy_engine.sweep.subjects import SweepOutput


def write(output: SweepOutput, stream: TextIO) -> None:
    rows = [flat_row(record, candidate_key(record["values"]), output.axes, output.pairs) for record in output.records]
    columns = [c for c in (rows[0] if rows else {"run": 0}) if c != "key"]
    writer = csv.DictWriter(stream, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else json.dumps(v) if isinstance(v, bool) else v) for k, v in row.items()})
