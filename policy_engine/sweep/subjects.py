"""What ``sweep`` and ``tune`` hand their renderers (``reports.sweep_*``, ``tune_*``; the tables are in
``reports.registry``).

Kept in this package, beside what they hold, so that the reports' own subjects never name the sweep's types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policy_engine.sweep.expressions import Constraint, Expression
    from policy_engine.sweep.grammar import Axis
    from policy_engine.sweep.tune import Objective, TuneResult


@dataclass(frozen=True)
class SweepOutput:
    """Every run of a sweep, ranked by ``objective`` for the text summary (``top`` rows)."""

    records: list[dict[str, Any]]
    axes: list[Axis]
    pairs: list[tuple[str, str]]
    objective: Expression
    maximize: bool
    top: int
    out_dir: str | None = None


@dataclass(frozen=True)
class TuneOutput:
    """A tuning run: the recommendation with its evidence rows, and the Pareto front."""

    result: TuneResult
    axes: list[Axis]
    objectives: list[Objective]
    constraints: list[Constraint]
    evidence: list[tuple[str, str, str]]
    front_rows: list[tuple[str, ...]]
    out_file: str | None = None
