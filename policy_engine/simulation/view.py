"""What the output modules read of a run: a small read-only view of the engine, not the ``Engine`` class.

``results``, ``metrics`` and ``reasons`` are handed an ``EngineView``; ``core.engine.Engine`` is one (a
structural type, checked by mypy), so the outputs depend on the core's values (jobs, shares, pools) and
never on its event loop, and the core's modules never loop back through them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.core.capacity import Pool, ShareCapacity
    from policy_engine.simulation.core.jobs import Job
    from policy_engine.simulation.core.preemption import VictimPolicy
    from policy_engine.simulation.plan_windows import PlanGate
    from policy_engine.simulation.settings import SimulationSettings
    from policy_engine.simulation.time_limits import TimeLimits
    from policy_engine.simulation.usage import UsageLog


class EngineView(Protocol):
    """The engine at its clock, as reports read it: nothing here changes the run."""

    @property
    def now(self) -> float: ...

    @property
    def settings(self) -> SimulationSettings: ...

    @property
    def policy(self) -> VictimPolicy: ...

    @property
    def topology(self) -> Topology:
        """The topology the run started from (the pools' order follows it)."""
        ...

    @property
    def pools(self) -> Sequence[Pool]: ...

    @property
    def shares(self) -> Mapping[tuple[str, str], ShareCapacity]: ...

    @property
    def preemptions(self) -> Mapping[ShareCapacity, int]: ...

    @property
    def lost_instance_seconds(self) -> Mapping[ShareCapacity, float]: ...

    @property
    def capacity_corrections(self) -> Mapping[object, float]: ...

    @property
    def usage(self) -> UsageLog | None: ...

    @property
    def time_limits(self) -> TimeLimits | None:
        """The ``jobStateTimeLimitActions`` timers (a waiting job's reason says whether one runs for it)."""
        ...

    @property
    def plans(self) -> PlanGate | None:
        """The training plans' windows and their figures (``None``: the topology has no plans)."""
        ...

    def submitted_jobs(self) -> Iterable[Job]:
        """Every job submitted by now, in workload order."""
        ...

    def protected_until(self, job: Job) -> float | None:
        """When ``job`` stops being protected from preemption by ``min_runtime`` (None: it is not)."""
        ...
