"""One row per job of a simulation, as a rich table: ``simulate --format text`` shows it, and ``walkthrough``
shows it after every step. The views read the rows (``job_rows``); the formats lay them out (``jobs_table``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table

from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit.safe_text import rich_text
from policy_engine.simulation.results.records import SimulationResult


@dataclass(frozen=True)
class JobRow:
    """A job as the table shows it: its wait already as text (``duration_text``); ``capacity_retries``: its requeues
    after 2 days pending for its plan (``None``: a run without training plans, so no such column)."""

    name: str
    share: str
    priority: int
    status: str
    preemptions: int
    wait: str
    reason: str
    capacity_retries: int | None = None


def job_rows(result: SimulationResult) -> tuple[JobRow, ...]:
    plans = result.plans is not None  # a requeue after 2 days pending for a plan (docs/training_plans.md)
    return tuple(JobRow(job.name, job.share, job.priority, job.status, job.preemptions,
                        duration_text(job.wait_seconds), job.reason, job.capacity_retries if plans else None)
                 for job in result.jobs)


def jobs_table(rows: Sequence[JobRow], title: str, caption: str | None = None, waits: bool = True) -> Table:
    """One row per job: state, preemptions, (capacity retries: a run with training plans), (wait) and reason;
    ``walkthrough`` shows the same table per step."""
    table = Table(title=title, caption=caption)
    plans = any(job.capacity_retries is not None for job in rows)  # the run had training plans
    columns = ("job", "share", "priority", "status", "preemptions", *(("capacity retries",) if plans else ()),
               *(("wait",) if waits else ()), "reason")
    for column in columns:
        table.add_column(column, overflow="fold")
    for job in rows:
        retries = (str(job.capacity_retries),) if plans else ()
        wait = (job.wait,) if waits else ()
        table.add_row(rich_text(job.name), rich_text(job.share), str(job.priority), job.status, str(job.preemptions),
                      *retries, *wait, rich_text(job.reason))
    return table
