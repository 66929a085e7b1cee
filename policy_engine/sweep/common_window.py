"""A sweep's or tune's runs with their time-weighted figures over one window (``results.window``): from 0 to the
latest end among the simulated runs, read from each record's capacity ledger (``costs["capacity"]``). Without it,
a candidate that ends the month sooner shows a higher utilisation on every instance type, changed or not.

With ``--workload-samples`` a record holds the mean over the samples (``samples.mean_record``), and its ledger the
mean ledger: the window is then applied to the means (the latest mean end), not sample by sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from policy_engine.simulation.results.capacity_hours import CapacityHours
from policy_engine.simulation.results.window import common_window, widened_json
from policy_engine.sweep.run_record import RunRecord


def _ledger(record: RunRecord) -> CapacityHours | None:
    kept = (record.costs or {}).get("capacity")
    return CapacityHours.from_json(kept) if kept and record.summary else None


def over_common_window(records: Sequence[RunRecord]) -> list[RunRecord]:
    """``records`` in their order, each simulated one measured over the latest end among them."""
    ledgers = [_ledger(record) for record in records]
    window = common_window(ledger.span for ledger in ledgers if ledger is not None)
    out = []
    for record, ledger in zip(records, ledgers, strict=True):
        if ledger is None:
            out.append(record)
            continue
        summary, shares, targets = widened_json(record.summary, record.shares, record.targets, ledger, window)
        out.append(replace(record, summary=summary, shares=tuple(shares), targets=tuple(targets)))
    return out
