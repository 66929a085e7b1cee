"""A deterministic discrete-event simulator of AWS Batch quota-share scheduling.

Organised by concept (CONTRIBUTING.md, "Where things live"): ``core/`` is the event loop and what it
calls per job (exactly the modules mypyc compiles); beside it, at this folder's top, what the event loop
calls or records and which calls back into it: ``settings`` (the run's configuration), ``causes`` (why
a job moved or waits), ``reasons`` (a job's reason now), ``usage`` (the log of share usage),
``time_limits``, ``plan_windows`` and ``topology_changes`` (rules the lifecycle applies, not compiled),
``exact_types`` and ``live`` (what the engine accepts at its door), ``view`` (what readers see of an
engine), ``compiled`` (which build runs) and ``gcpause``. Above them, each importing only what is below:
``inputs/`` (job files, generated workloads), ``profiles/`` (workload profiles), ``scenarios/``
(scenario files and their timed actions) and ``results/`` (what a finished run is read as, the wait
attribution included).

The names below are imported on first use, so importing a submodule (or this package)
does not load the whole simulator.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from policy_engine.simulation.compiled import use_source_when_stale

if TYPE_CHECKING:
    from policy_engine.simulation.causes import Cause, Reason, Waiting
    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.core.jobs import Job, JobSpec, Status
    from policy_engine.simulation.core.preemption import FewestInstancesFirst, LowestPriorityNewestFirst, VictimPolicy
    from policy_engine.simulation.results.records import AttemptRecord, JobRecord, SimulationResult, simulate
    from policy_engine.simulation.scenarios.workload import Scenario, load_scenario
    from policy_engine.simulation.settings import PriorityUpdate, SimulationSettings

#: public name -> the submodule that defines it
_HOMES = {
    "AttemptRecord": "results.records",
    "Cause": "causes",
    "Engine": "core.engine",
    "FewestInstancesFirst": "core.preemption",
    "Job": "core.jobs",
    "JobRecord": "results.records",
    "JobSpec": "core.jobs",
    "LowestPriorityNewestFirst": "core.preemption",
    "PriorityUpdate": "settings",
    "Reason": "causes",
    "Scenario": "scenarios.workload",
    "SimulationResult": "results.records",
    "SimulationSettings": "settings",
    "Status": "core.jobs",
    "VictimPolicy": "core.preemption",
    "Waiting": "causes",
    "load_scenario": "scenarios.workload",
    "simulate": "results.records",
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
