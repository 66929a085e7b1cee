"""A deterministic discrete-event simulator of AWS Batch quota-share scheduling.

Separated like Kueue's scheduler: ``jobs`` (records and states), ``workload``
(scenario files), ``generate`` (synthetic workloads), ``queues`` (waiting lines),
``capacity`` (accounting), ``placement`` (who fits where), ``preemption`` (victim
policies), ``pool_queue`` and ``steps`` (the scheduling pass), ``lifecycle`` (job
transitions), ``engine`` (the event loop), ``causes`` (why a job moved or waits), ``reasons``, ``metrics`` and
``results``.

The names below are imported on first use, so importing a submodule (or this package)
does not load the whole simulator.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from policy_engine.simulation.compiled import use_source_when_stale

if TYPE_CHECKING:
    from policy_engine.simulation.causes import Cause, Reason, Waiting
    from policy_engine.simulation.engine import Engine, simulate
    from policy_engine.simulation.jobs import Job, JobSpec, Status
    from policy_engine.simulation.preemption import FewestInstancesFirst, LowestPriorityNewestFirst, VictimPolicy
    from policy_engine.simulation.results import AttemptRecord, JobRecord, SimulationResult
    from policy_engine.simulation.settings import PriorityUpdate, SimulationSettings
    from policy_engine.simulation.workload import Scenario, load_scenario

#: public name -> the submodule that defines it
_HOMES = {
    "AttemptRecord": "results",
    "Cause": "causes",
    "Engine": "engine",
    "FewestInstancesFirst": "preemption",
    "Job": "jobs",
    "JobRecord": "results",
    "JobSpec": "jobs",
    "LowestPriorityNewestFirst": "preemption",
    "PriorityUpdate": "settings",
    "Reason": "causes",
    "Scenario": "workload",
    "SimulationResult": "results",
    "SimulationSettings": "settings",
    "Status": "jobs",
    "VictimPolicy": "preemption",
    "Waiting": "causes",
    "load_scenario": "workload",
    "simulate": "engine",
}

__all__ = [
    "AttemptRecord",
    "Cause",
    "Engine",
    "FewestInstancesFirst",
    "Job",
    "JobRecord",
    "JobSpec",
    "LowestPriorityNewestFirst",
    "PriorityUpdate",
    "Reason",
    "Scenario",
    "SimulationResult",
    "SimulationSettings",
    "Status",
    "VictimPolicy",
    "Waiting",
    "load_scenario",
    "simulate",
]


use_source_when_stale()  # before any hot module is imported: a compiled build older than its source is not run


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
