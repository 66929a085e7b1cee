"""``walkthrough``'s view: per step of AWS's example, its title with the time, what AWS's example expects, the jobs'
rows for the table, and the JSON document's steps (every job as ``simulate --format json`` writes it plus its
priority), read once from the steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit.subjects import WalkthroughStep
from policy_engine.reports.tables.jobs_table import JobRow, job_rows
from policy_engine.simulation.results.numbers import as_number

__all__ = ["StepView", "WalkthroughStep", "WalkthroughView", "build"]


@dataclass(frozen=True)
class StepView:
    title: str  # with the step's time: ``Submit job A (t=0s)``
    expected: str
    jobs: tuple[JobRow, ...]


@dataclass(frozen=True)
class WalkthroughView:
    steps: tuple[StepView, ...]
    #: the JSON document: ``{"steps": [{"time", "title", "expected", "jobs"}]}``
    document: dict[str, Any]


def build(steps: Sequence[WalkthroughStep], *, document: bool = True, rows: bool = True) -> WalkthroughView:
    """The view of every step; a format asks only for what it shows (``document``: the JSON, ``rows``: the tables)."""
    views = tuple(StepView(f"{step.title} (t={duration_text(step.time)})", step.expected,
                           job_rows(step.result) if rows else ()) for step in steps)
    data = ({"steps": [{"time": as_number(step.time), "title": step.title, "expected": step.expected,
                        "jobs": [{**job.to_json(), "priority": job.priority} for job in step.result.jobs]}
                       for step in steps]} if document else {})
    return WalkthroughView(views, data)
