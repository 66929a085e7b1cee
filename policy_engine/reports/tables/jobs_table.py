"""One row per job of a simulation, as a rich table: ``simulate --format text`` shows it, and ``walkthrough``
shows it after every step."""

from __future__ import annotations

from rich.table import Table

from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit.safe_text import rich_text
from policy_engine.simulation.results.records import SimulationResult


def jobs_table(result: SimulationResult, title: str, caption: str | None = None, waits: bool = True) -> Table:
    """One row per job: state, preemptions, (capacity retries: a run with training plans), (wait) and reason;
    ``walkthrough`` shows the same table per step."""
    table = Table(title=title, caption=caption)
    plans = result.plans is not None  # a requeue after 2 days pending for a plan (docs/training_plans.md)
    columns = ("job", "share", "priority", "status", "preemptions", *(("capacity retries",) if plans else ()),
               *(("wait",) if waits else ()), "reason")
    for column in columns:
        table.add_column(column, overflow="fold")
    for job in result.jobs:
        retries = (str(job.capacity_retries),) if plans else ()
        wait = (duration_text(job.wait_seconds),) if waits else ()
        table.add_row(rich_text(job.name), rich_text(job.share), str(job.priority), job.status, str(job.preemptions),
                      *retries, *wait, rich_text(job.reason))
    return table
