"""A deterministic discrete-event simulator of AWS Batch quota-share scheduling.

Separated like Kueue's scheduler: ``jobs`` (records and states), ``workload``
(scenario files), ``generate`` (synthetic workloads), ``queues`` (waiting lines),
``capacity`` (accounting), ``placement`` (who fits where), ``preemption`` (victim
policies), ``engine`` (the event loop), ``metrics`` and ``results``.
"""

from policy_engine.simulation.engine import Engine, SimulationSettings, simulate
from policy_engine.simulation.jobs import Job, JobSpec, Status
from policy_engine.simulation.preemption import FewestInstancesFirst, LowestPriorityNewestFirst, VictimPolicy
from policy_engine.simulation.results import AttemptRecord, JobRecord, SimulationResult
from policy_engine.simulation.workload import PriorityUpdate, Scenario, load_scenario

__all__ = [
    "AttemptRecord",
    "Engine",
    "FewestInstancesFirst",
    "Job",
    "JobRecord",
    "JobSpec",
    "LowestPriorityNewestFirst",
    "PriorityUpdate",
    "Scenario",
    "SimulationResult",
    "SimulationSettings",
    "Status",
    "VictimPolicy",
    "load_scenario",
    "simulate",
]
