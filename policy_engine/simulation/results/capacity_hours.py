"""The run's capacity ledger in instance-hours: per share and type, own use, borrowed, lent and limit;
per environment and type, capacity and use. What costs are priced from (``results.costs``).

Read from the engine's integrals when the result is built (no work on the hot path), so every run
has it, sweeps' and ``diff``'s included. Lent capacity here is the engine's own attribution
(in proportion to each lender's idle capacity); ``results.lending`` attributes it pair by pair.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from policy_engine.foundation.model import Topology

if TYPE_CHECKING:
    from policy_engine.simulation.view import EngineView

HOUR = 3600.0


class ShareHours(NamedTuple):
    """One share on one instance type over the run, in instance-hours."""

    share: str
    instance_type: str
    strategy: str
    own: float  # used within the own limit
    borrowed: float  # used above it (other shares' idle capacity)
    lent: float  # own idle capacity other shares used
    limit: float  # the own limit in force, integrated over the run

    @property
    def idle(self) -> float:
        """Own capacity nobody used: a RESERVE share's idle reservation, or a lender's capacity not borrowed."""
        return self.limit - self.own - self.lent


class EnvironmentHours(NamedTuple):
    """One service environment's instances of one type over the run, in instance-hours."""

    environment: str
    instance_type: str
    capacity: float
    used: float

    @property
    def idle(self) -> float:
        return self.capacity - self.used


@dataclass(frozen=True)
class CapacityHours:
    span: float  # seconds the ledger covers, from 0
    shares: tuple[ShareHours, ...]
    environments: tuple[EnvironmentHours, ...]

    def to_json(self) -> dict[str, Any]:
        return {"span_seconds": self.span, "shares": [row._asdict() for row in self.shares],
                "environments": [row._asdict() for row in self.environments]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CapacityHours:
        return cls(float(data["span_seconds"]), tuple(ShareHours(**row) for row in data["shares"]),
                   tuple(EnvironmentHours(**row) for row in data["environments"]))


def pool_environments(topology: Topology) -> list[tuple[str, str]]:
    """``(environment, instance type)`` of each pool, in ``capacity.build_pools`` order (queues, then types)."""
    out = []
    for queue in topology.job_queues:
        environment = topology.environment(queue.service_environment)
        types = list(environment.capacity) if environment else []
        for share in queue.shares:
            types += [t for t in share.capacity if t not in types]
        out += [(queue.service_environment, t) for t in types]
    return out


def capacity_hours(engine: EngineView) -> CapacityHours:
    """The ledger of ``engine`` at its clock."""
    span = engine.now or 0.0
    corrections = engine.capacity_corrections
    shares = tuple(ShareHours(sid, instance_type, share.model.strategy, share.own_int / HOUR,
                              share.borrowed_int / HOUR, share.lent_int / HOUR,
                              (share.limit * span + corrections.get(share, 0.0)) / HOUR)
                   for (sid, instance_type), share in engine.shares.items())
    keys = pool_environments(engine.topology)
    if [t for _, t in keys] != [pool.instance_type for pool in engine.pools]:
        raise RuntimeError("the engine's pools do not follow its topology's order")
    environments: dict[int, EnvironmentHours] = {}
    for (name, instance_type), pool in zip(keys, engine.pools, strict=True):
        env = pool.env
        row = environments.get(id(env))
        if row is None:
            row = EnvironmentHours(name, instance_type, (env.capacity * span + corrections.get(env, 0.0)) / HOUR, 0.0)
        environments[id(env)] = row._replace(used=row.used + pool.used_int / HOUR)
    return CapacityHours(span, shares, tuple(environments.values()))


def merge_hours(span: float, parts: Iterable[CapacityHours | None]) -> CapacityHours | None:
    """One ledger from the ledgers of runs over disjoint parts of a topology, all advanced to ``span``."""
    given = [part for part in parts if part is not None]
    if not given:
        return None
    return CapacityHours(span, tuple(row for part in given for row in part.shares),
                         tuple(row for part in given for row in part.environments))


def mean_hours(ledgers: list[CapacityHours]) -> CapacityHours:
    """The mean of ledgers of one topology run on several workloads (row by row, in the same order)."""
    n = len(ledgers)

    def mean(rows: Iterable[Any]) -> Any:
        rows = list(rows)
        first = rows[0]
        return first._replace(**{k: sum(getattr(r, k) for r in rows) / n for k, v in first._asdict().items()
                                 if isinstance(v, float)})

    return CapacityHours(sum(ledger.span for ledger in ledgers) / n,
                         tuple(mean(rows) for rows in zip(*(ledger.shares for ledger in ledgers), strict=True)),
                         tuple(mean(rows) for rows in zip(*(ledger.environments for ledger in ledgers), strict=True)))
