"""A deterministic discrete-event simulator of AWS Batch quota-share scheduling.

Three kinds of module, in three folders (CONTRIBUTING.md, "The simulator's layout"):
``core`` (the event loop and what it calls per job: exactly the modules mypyc compiles),
``inputs`` (scenario and job files, generated workloads, live state) and ``outputs``
(results, metrics, reasons, usage). Beside them: ``settings`` (the run's configuration),
``causes`` (why a job moved or waits: values every part shares), ``time_limits`` and
``topology_changes`` (rules the lifecycle applies, not compiled),
``compiled`` (which build runs) and ``gcpause``.

The names below are imported on first use, so importing a submodule (or this package)
does not load the whole simulator.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

from policy_engine.simulation.compiled import use_source_when_stale

if TYPE_CHECKING:
    from policy_engine.simulation.causes import Cause, Reason, Waiting
    from policy_engine.simulation.core.engine import Engine, simulate
    from policy_engine.simulation.core.jobs import Job, JobSpec, Status
    from policy_engine.simulation.core.preemption import FewestInstancesFirst, LowestPriorityNewestFirst, VictimPolicy
    from policy_engine.simulation.inputs.workload import Scenario, load_scenario
    from policy_engine.simulation.outputs.results import AttemptRecord, JobRecord, SimulationResult
    from policy_engine.simulation.settings import PriorityUpdate, SimulationSettings

#: public name -> the submodule that defines it
_HOMES = {
    "AttemptRecord": "outputs.results",
    "Cause": "causes",
    "Engine": "core.engine",
    "FewestInstancesFirst": "core.preemption",
    "Job": "core.jobs",
    "JobRecord": "outputs.results",
    "JobSpec": "core.jobs",
    "LowestPriorityNewestFirst": "core.preemption",
    "PriorityUpdate": "settings",
    "Reason": "causes",
    "Scenario": "inputs.workload",
    "SimulationResult": "outputs.results",
    "SimulationSettings": "settings",
    "Status": "core.jobs",
    "VictimPolicy": "core.preemption",
    "Waiting": "causes",
    "load_scenario": "inputs.workload",
    "simulate": "core.engine",
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


#: Module paths that docs/simulator.md documents, from before the split -> where the module is now.
_MOVED = {"results": "outputs.results"}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``policy_engine.simulation.results`` is the module ``outputs.results`` itself (not a copy, not a file)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        return importlib.util.spec_from_loader(fullname, self) if package == __name__ and name in _MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return import_module(f"{__name__}.{_MOVED[spec.name.rpartition('.')[2]]}")

    def exec_module(self, module: ModuleType) -> None:
        pass  # already imported by create_module


use_source_when_stale()  # before any hot module is imported: a compiled build older than its source is not run
sys.meta_path.append(_MovedModules())


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
