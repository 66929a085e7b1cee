"""What ``sweep`` and ``tune`` hand their renderers (``reports.sweep``, ``reports.tune``; the tables are in
``reports.registry``).

Kept in this package, beside what they hold, so that the reports' own subjects never name the sweep's types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policy_engine.analysis.promise_changes import PromiseChange
    from policy_engine.sweep.cost_metrics import RunCosts
    from policy_engine.sweep.expressions import Constraint, Expression
    from policy_engine.sweep.grammar import Axis
    from policy_engine.sweep.guarantee_policy import GuaranteePolicy
    from policy_engine.sweep.run_record import RunRecord
    from policy_engine.sweep.tune import Objective, TuneResult


@dataclass(frozen=True)
class SweepOutput:
    """Every run of a sweep, ranked by ``objective`` for the text summary (``top`` rows)."""

    records: list[RunRecord]
    axes: list[Axis]
    pairs: list[tuple[str, str]]
    objective: Expression
    maximize: bool
    top: int
    out_dir: str | None = None
    #: Each run's cost (priced with ``--prices``, else instance-hours); ``None``: not shown.
    costs: RunCosts | None = None


@dataclass(frozen=True)
class TuneOutput:
    """A tuning run: the result (the recommendation, the Pareto front, every run) and what it was asked; the
    renderers derive the evidence and the front's rows from it (``reports.tune.view``)."""

    result: TuneResult
    axes: list[Axis]
    objectives: list[Objective]
    constraints: list[Constraint]
    out_file: str | None = None
    #: The guarantee declarations the recommendation changes (``--guarantee-policy follow|drop``).
    promises: list[PromiseChange] = field(default_factory=list)
    policy: GuaranteePolicy | None = None
    min_gain: float = 0.0
    costs: RunCosts | None = None
