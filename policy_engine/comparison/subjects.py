"""What ``compare`` hands its renderers (``reports.compare_*``, in ``reports.registry``): the runs and their
before/after tables, built once here so that every format shows the same figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from policy_engine.comparison.designs import Design
from policy_engine.comparison.runs import DesignRun
from policy_engine.comparison.table import (
    INSTANCE_HOURS_LOST,
    JOBS,
    PREEMPTIONS,
    WAIT_P50,
    WAIT_P95,
    Figure,
    FigureUnit,
    ShareComparison,
    ShareRow,
    TargetComparison,
    compare_targets,
    from_metrics,
)

ALL_SHARES = "all shares"
ALL_TYPES = "all types"
UTILISATION = Figure("utilisation", "utilisation", FigureUnit.FRACTION, higher_is_better=True)
CAPACITY = Figure("capacity", "instances", FigureUnit.COUNT, higher_is_better=True)
#: The run as a whole (``summary``): what the overall table shows.
OVERALL_FIGURES = (JOBS, WAIT_P50, WAIT_P95, PREEMPTIONS, INSTANCE_HOURS_LOST)


@dataclass(frozen=True)
class CompareOutput:
    scenario: str
    jobs: int
    runs: tuple[DesignRun, ...]  # in design order; the first is the baseline of every difference
    #: the whole run, one row
    overall: ShareComparison
    #: per instance type: utilisation (instance-seconds used over capacity-seconds) and instances
    types: ShareComparison
    shares: ShareComparison
    targets: TargetComparison
    executor: str = ""

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(run.label for run in self.runs)

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(run.source for run in self.runs)

    def last_misses(self) -> int:
        """Target criteria the last design misses (what ``--fail-on-target`` fails on)."""
        return sum(1 for result in self.runs[-1].targets if not result.met)

    def to_json(self) -> dict:
        return {
            "scenario": self.scenario, "jobs": self.jobs, "baseline": self.runs[0].label,
            "runs": [{"label": run.label, "source": run.source, "time": run.time, "summary": run.summary,
                      "utilisation": run.utilisation, "capacity": run.capacity,
                      "targets": [result.to_json() for result in run.targets]} for run in self.runs],
            "overall": self.overall.to_json()[0],
            "instance_types": self.types.to_json(),
            "shares": self.shares.to_json(),
            "targets": self.targets.to_json(),
        }


def build(scenario: str, jobs: int, runs: Sequence[DesignRun], designs: Sequence[Design],
          executor: str = "") -> CompareOutput:
    labels = tuple(run.label for run in runs)
    names = [design.shares for design in designs]
    overall = ShareComparison(labels, OVERALL_FIGURES, (ShareRow(ALL_SHARES, ALL_TYPES, tuple(
        {f.key: float(run.summary[f.key]) for f in OVERALL_FIGURES} for run in runs)),))
    types = list(dict.fromkeys(t for run in runs for t in run.utilisation))
    per_type = ShareComparison(labels, (UTILISATION, CAPACITY), tuple(
        ShareRow(ALL_SHARES, t, tuple({UTILISATION.key: run.utilisation[t], CAPACITY.key: float(run.capacity[t])}
                                      if t in run.utilisation else None for run in runs)) for t in types))
    return CompareOutput(scenario, jobs, tuple(runs), overall, per_type,
                         from_metrics(labels, [run.shares for run in runs], names),
                         compare_targets(labels, [run.targets for run in runs], names), executor)
