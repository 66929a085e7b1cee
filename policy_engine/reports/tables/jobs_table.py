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
    """A job as the table shows it: its wait already as text (``duration_text``)."""

    name: str
    share: str
    priority: int
    status: str
    preemptions: int
    wait: str
    reason: str


def job_rows(result: SimulationResult) -> tuple[JobRow, ...]:
    return tuple(JobRow(job.name, job.share, job.priority, job.status, job.preemptions,
                        duration_text(job.wait_seconds), job.reason) for job in result.jobs)


def jobs_table(rows: Sequence[JobRow], title: str, caption: str | None = None, waits: bool = True) -> Table:
    """One row per job: state, preemptions, (wait) and reason; ``walkthrough`` shows the same table per step."""
    table = Table(title=title, caption=caption)
    columns = ("job", "share", "priority", "status", "preemptions", *(("wait",) if waits else ()), "reason")
    for column in columns:
        table.add_column(column, overflow="fold")
    for job in rows:
        wait = (job.wait,) if waits else ()
        table.add_row(rich_text(job.name), rich_text(job.share), str(job.priority), job.status, str(job.preemptions),
                      *wait, rich_text(job.reason))
    return table
