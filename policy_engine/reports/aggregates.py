"""What the HTML report shows, computed in bulk with numpy: the documented import path, kept for users;
the code is in ``simulation/results/aggregates.py``.

Nothing inside ``policy_engine`` imports this module (CONTRIBUTING.md, "Where things live").
"""

from __future__ import annotations

from policy_engine.simulation.results.aggregates import (
    ACTIVE,
    BINS,
    MAX_LANES,
    METRICS,
    PREEMPTED,
    WORST_JOBS,
    Aggregates,
    JobRecord,
    Lanes,
    Series,
    SimulationResult,
    Status,
    UsageLog,
    WaitStats,
    aggregate,
    all_attempts,
    edges_for,
    held_for_plan,
    job_timelines,
    job_waits,
    lanes,
    split_held,
    time_unit,
    worst_indices,
    worst_waiting,
)

__all__ = [
    "ACTIVE",
    "BINS",
    "MAX_LANES",
    "METRICS",
    "PREEMPTED",
    "WORST_JOBS",
    "Aggregates",
    "JobRecord",
    "Lanes",
    "Series",
    "SimulationResult",
    "Status",
    "UsageLog",
    "WaitStats",
    "aggregate",
    "all_attempts",
    "edges_for",
    "held_for_plan",
    "job_timelines",
    "job_waits",
    "lanes",
    "split_held",
    "time_unit",
    "worst_indices",
    "worst_waiting",
]
