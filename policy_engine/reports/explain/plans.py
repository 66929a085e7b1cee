"""``explain``'s training-plan sentences: what each window of each plan gives one share's plan jobs.

The figures are the ones the guarantees' proofs use (``guarantees.window_reach``), so what ``explain``
tells a team about a window and what a ``during: PLAN[i]`` guarantee is checked against never disagree.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.guarantees import WindowReach, reach_by_window
from policy_engine.foundation.model import Topology, plan_time_text

Sentence = tuple[str, str]
TOPIC = "plans"


def _when(topology: Topology, reach: WindowReach) -> str:
    plan = topology.plan(reach.plan)
    if plan is None:
        return ""
    window = plan.reserved_capacities[reach.window]
    start, end = plan_time_text(window.start), plan_time_text(window.end)
    if isinstance(start, str) and isinstance(end, str):
        return f", {start} to {end}"
    return f", {_offset(window.start)} to {_offset(window.end)} after the scenario start"


def _offset(value: datetime | float) -> str:
    """Seconds from the scenario start as people read a duration; a date (a plan mixing both) as written."""
    from policy_engine.foundation.units import duration_text

    return str(plan_time_text(value)) if isinstance(value, datetime) else duration_text(value)


def plan_sentences(topology: Topology, graph: BorrowGraph, node: str) -> list[Sentence]:
    """One sentence per window of every plan whose type the share runs; one saying so when there is none."""
    reaches = reach_by_window(topology, graph, node)
    if not reaches:
        return [(TOPIC, f"No training plan reserves an instance type {node} runs.")] if topology.training_plans else []
    out: list[Sentence] = []
    for reach in reaches:
        held = ", ".join(f"{other} {count}" for other, count in reach.others.items())
        worst = (f" while the other shares hold plan instances up to their own limits ({held})" if held else "")
        out.append((TOPIC, f"Training plan {reach.plan} window {reach.window} ({reach.instances} x "
                           f"{reach.instance_type}{_when(topology, reach)}): plan jobs of {node} are sure of "
                           f"{reach.guaranteed}{worst}, and reach at most {reach.burst} when every other share is "
                           "idle."))
    return out


def plan_figures(topology: Topology, graph: BorrowGraph, node: str) -> list[dict[str, Any]]:
    """The same per window, as numbers (``explain --format json``)."""
    return [{"plan": r.plan, "window": r.window, "instance_type": r.instance_type, "instances": r.instances,
             "guaranteed": r.guaranteed, "burst": r.burst, "others_at_their_limits": dict(r.others)}
            for r in reach_by_window(topology, graph, node)]
