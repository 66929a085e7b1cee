"""Which shares use a training plan, as the topology says it: the plan's ``shares:`` or a guarantee's ``during:``.

Jobs name their plan one by one (``ResourceConfig.TrainingPlanArn``), so a topology never knows every user; what it
declares is enough for the hazard rules (BQ610, BQ611) and for the borrow graph to draw a plan beside its shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from policy_engine.foundation.model import JobQueue, QuotaShare, Topology, TrainingPlan


class Declared(StrEnum):
    """Where the topology says a share uses a plan."""

    SHARES = "the plan's shares"
    DURING = "a guarantee during the plan"


@dataclass(frozen=True)
class PlanUser:
    """One share known to use one plan (once per plan and share, the first declaration found)."""

    plan: TrainingPlan
    queue: JobQueue
    share: QuotaShare
    declared: Declared

    @property
    def share_id(self) -> str:
        return f"{self.queue.name}/{self.share.name}"


def plan_users(topology: Topology) -> list[PlanUser]:
    """Per plan in declaration order, its shares: its ``shares:`` first, then the guarantees' ``during:``. A
    reference that names no share, or no plan, is left to the checks that report it (BQ404, the structure
    checks)."""
    found: dict[tuple[int, str, str], PlanUser] = {}
    for index, plan in enumerate(topology.training_plans):
        for ref in plan.shares:
            for queue, share in topology.resolve_share(ref):
                found.setdefault((index, queue.name, share.name), PlanUser(plan, queue, share, Declared.SHARES))
        for guarantee in topology.guarantees:
            if guarantee.during is None or not plan.named_by(guarantee.during.plan):
                continue
            for queue, share in topology.resolve_share(guarantee.share):
                found.setdefault((index, queue.name, share.name), PlanUser(plan, queue, share, Declared.DURING))
    return list(found.values())
