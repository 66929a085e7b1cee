"""The walkthrough scenario (AWS's worked example), simulated once per test session for the report tests."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

from policy_engine.simulation import Scenario, SimulationResult, load_scenario, simulate

WALKTHROUGH = Path(__file__).resolve().parents[3] / "scenarios" / "walkthrough.yaml"


@cache
def walkthrough() -> tuple[Scenario, SimulationResult]:
    """The scenario and its result, with the usage log the report aggregates."""
    scenario = load_scenario(WALKTHROUGH)
    settings = replace(scenario.settings, usage_log=True)
    return scenario, simulate(scenario.topology, scenario.jobs, scenario.updates, settings)


def step_times(scenario: Scenario) -> tuple[float, float]:
    """When QS2's job arrives (reclaim) and when the priority update happens (in-share preemption)."""
    reclaim = next(job.submit_at for job in scenario.jobs if job.share == "training/QS2")
    update = next(u.at for u in scenario.updates if u.job == "qs1_job_low")
    return reclaim, update
