"""Every reserved hour of a run's training plans accounted for: why each window sat idle, and the hazards' cost.

One call after the run (``account``) reads the lines plan jobs wait in once (``plan_lines``) and hands them to
the idle attribution (``plan_idle``) and the hazards (``plan_hazards``); what every format and ``explain`` read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from policy_engine.simulation.results.plan_hazards import PlanHazards, hazards
from policy_engine.simulation.results.plan_idle import DEFAULT_ORDER, ORDERS, IdleOrder, WindowIdle, attribute
from policy_engine.simulation.results.plan_lines import read_lines

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.results.records import SimulationResult


@dataclass(frozen=True)
class PlanAccount:
    """A run's plans accounted for: per plan, each window's idle by cause; the hazards; each job's hold."""

    order: str
    idle: dict[str, list[WindowIdle]]
    hazards: PlanHazards
    #: per job record (``result.jobs`` order): its ``plan_hold_seconds`` (``None``: it names no plan)
    plan_hold: list[float | None]

    def window(self, plan: str, index: int) -> WindowIdle:
        return self.idle[plan][index]


def account(result: SimulationResult, topology: Topology, order: IdleOrder | str = DEFAULT_ORDER
            ) -> PlanAccount | None:
    """The account of ``result``'s plans (``None`` without plans)."""
    if result.plans is None:
        return None
    policy = ORDERS[order] if isinstance(order, str) else order
    lines = read_lines(result, topology)
    found = hazards(result.plans.plans, lines)
    return PlanAccount(policy.name, attribute(result.plans.plans, lines, policy), found,
                       found.plan_hold_column(lines))
