"""The order every sweep report lists runs in: ok runs best first by the objective, those missing a target last."""

from __future__ import annotations

from policy_engine.sweep.expressions import Expression
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.target_constraints import missed_targets


def ranked(records: list[RunRecord], objective: Expression, maximize: bool) -> list[tuple[float, RunRecord]]:
    """Ok runs best first by ``objective`` (ties by grid order), runs that miss a target (infeasible) after all
    the others."""
    scored = [(objective(record), record) for record in records if record.status == RunStatus.OK]
    return sorted(scored, key=lambda pair: (missed_targets(pair[1]) > 0, -pair[0] if maximize else pair[0],
                                            pair[1].index))
