"""What a finished (or stopped) run is read as: the records, metrics, the capacity ledger and its costs, lending,
targets, the wait attribution, the report's aggregates, and runs side by side.

``policy_engine.simulation.results`` is the documented home of ``build_result`` and the records
(docs/simulator.md); they load on first use, so importing one of this package's modules does not load
the others.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from policy_engine.simulation.results.records import (
        AttemptRecord,
        JobRecord,
        SimulationResult,
        build_result,
        simulate,
    )

#: public name -> the module that defines it
_HOMES = {name: "records" for name in ("AttemptRecord", "JobRecord", "SimulationResult", "build_result", "simulate")}

__all__ = ["AttemptRecord", "JobRecord", "SimulationResult", "build_result", "simulate"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
