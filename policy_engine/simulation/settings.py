"""What a scenario may choose and change: the simulation's settings and its timed updates.

Apart from the event loop so that scenario loading (``workload``) needs no engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy_engine.simulation.core.preemption import POLICIES, LowestPriorityNewestFirst, VictimPolicy
from policy_engine.simulation.inputs.exact_types import exact_flag, exact_integer, exact_number
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate


@dataclass(frozen=True)
class SimulationSettings:
    """Choices a scenario may change; every default is documented in docs/simulator.md."""

    startup_delay: float = 0.0
    preemption_delay: float = 0.0
    backfill: bool = False
    victim_policy: str = LowestPriorityNewestFirst.name
    utilisation_series: bool = False
    #: Log every usage change compactly (``SimulationResult.usage``): what the HTML report aggregates.
    usage_log: bool = False
    #: A job placed at T is not a preemption victim before T + this (> 0: no preemption loop inside an instant).
    min_runtime: float = 1.0

    def __post_init__(self) -> None:
        # the types the (compiled) engine reads: numpy scalars and 0/1 from a data frame become them exactly
        for name in ("startup_delay", "preemption_delay", "min_runtime"):
            object.__setattr__(self, name, exact_number(name, getattr(self, name)))
        for name in ("backfill", "utilisation_series", "usage_log"):
            object.__setattr__(self, name, exact_flag(name, getattr(self, name)))
        if self.min_runtime <= 0:
            raise ValueError("min_runtime must be > 0: it is what stops preemption loops inside one instant")
        if not isinstance(self.victim_policy, str) or self.victim_policy not in POLICIES:
            raise ValueError(f"unknown victim policy {self.victim_policy!r} (known: {', '.join(POLICIES)})")

    def policy(self) -> VictimPolicy:
        return POLICIES[self.victim_policy]


@dataclass(frozen=True)
class PriorityUpdate:
    """``UpdateServiceJob``: set ``job``'s scheduling priority at time ``at``."""

    at: float
    job: str
    priority: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "at", exact_number("at", self.at))
        object.__setattr__(self, "priority", exact_integer("priority", self.priority))


#: What a scenario's ``actions`` do at a time: a job's priority, or the topology (``topology_changes``).
Action = PriorityUpdate | ShareUpdate | EnvironmentUpdate
