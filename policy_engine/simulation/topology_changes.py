"""Topology changes at a time (``update_share``, ``update_environment``), applied as AWS applies an update.

What AWS documents, and what batch-quota chooses where it does not (docs/simulator.md):

- Lowering a share's limits makes its SCHEDULED, STARTING and RUNNING jobs above the new limit
  eligible for preemption, even for LEND and RESERVE shares. Here they become *reclaim victims*:
  a head of another share within its own limit may take them back when it needs the capacity (as it
  takes back borrowed capacity). Nothing is preempted merely because a limit dropped, and the share
  places nothing new until it is back under its limit. Usage above the lowered limit of a RESERVE or
  LEND share is not borrowed capacity: it blocks nobody's borrowing, only the environment's room.
- An environment whose capacity is lowered below its usage places nothing new in that pool until
  usage is back under the capacity, and nothing is preempted to get there (AWS documents no
  preemption for this: batch-quota's choice). While an environment is above its capacity no head
  preempts at all (it would have to take more than it needs).
- A DISABLED share accepts no new jobs (submissions fail, ``REJECTED``); its RUNNABLE jobs stay in
  line and still run, its running jobs finish (AWS: "submitted jobs finish"). ENABLED again: it
  accepts jobs again.
- ``capacity`` replaces the whole list, as ``UpdateQuotaShare``/``UpdateServiceEnvironment`` do: an
  instance type left out gets 0. A new instance type cannot appear mid-run (declare it in the topology).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import Pool, ShareCapacity


class RunningEngine(Protocol):
    """What an update changes of a running engine (``core.engine.Engine`` is one): its shares and pools, the
    capacity-time corrections of utilisation, and which heads look again."""

    @property
    def now(self) -> float: ...

    @property
    def shares(self) -> Mapping[tuple[str, str], ShareCapacity]: ...

    @property
    def pools(self) -> list[Pool]: ...

    @property
    def capacity_corrections(self) -> dict[object, float]: ...

    @property
    def misconfig_cache(self) -> dict[tuple[ShareCapacity, int], str]: ...

    def touch(self, share: ShareCapacity) -> None: ...

    def capacity_freed(self, pool: Pool) -> None: ...

#: Fields of a quota share an ``update_share`` may set (``QuotaShare`` names).
SHARE_FIELDS = ("capacity", "strategy", "borrow_limit", "in_share_preemption", "state")


def _contribution(share: ShareCapacity) -> tuple[int, int]:
    """What the share adds to its pool's ``borrowed`` and ``lender_idle`` counters."""
    used, limit = share.used, share.limit
    borrowed = used - limit if used > limit and share.borrows else 0
    idle = limit - used if share.lends and used < limit else 0
    return borrowed, idle


@dataclass(frozen=True)
class ShareUpdate:
    """``UpdateQuotaShare`` at ``at``: ``changes`` holds only the fields given (``SHARE_FIELDS``)."""

    at: float
    share: str
    changes: Mapping[str, Any] = field(default_factory=dict)
    #: ``SameInstant.ONE_BY_ONE``: how many of the instant's submissions come before it (its call's place)
    after_submissions: int = 0

    def apply(self, engine: RunningEngine) -> None:
        now = engine.now
        parts = [capacity for (node, _), capacity in engine.shares.items() if node == self.share]
        if not parts:
            return
        changes = dict(self.changes)
        if "capacity" in changes:
            changes["capacity"] = {t: changes["capacity"].get(t, 0) for t in parts[0].model.capacity} | dict(
                changes["capacity"])
        model = parts[0].model.model_copy(update=changes)
        for share in parts:
            pool = share.pool
            pool.change(share, 0, now)  # integrate the metrics up to now under the old limits
            old_borrowed, old_idle = _contribution(share)
            share.model = model
            _correct(engine, share, share.limit, model.capacity.get(share.instance_type, 0))
            share.limit = model.capacity.get(share.instance_type, 0)
            share.ceiling = model.ceiling(share.instance_type)
            share.lends, share.borrows = model.lends, model.borrows
            share.in_share = model.in_share_preemption
            share.rejected = (f"job queue {share.queue.name}" if share.queue.state == "DISABLED"
                              else f"quota share {share.share_id}" if model.state == "DISABLED" else "")
            new_borrowed, new_idle = _contribution(share)
            pool.borrowed += new_borrowed - old_borrowed
            pool.lender_idle += new_idle - old_idle
            if pool.series is not None:
                pool.record(now)
            if pool.log is not None:
                pool.log.record_limit(now, share.number, share.limit, share.lends)
        _reconsider(engine, {share.pool for share in parts})


@dataclass(frozen=True)
class EnvironmentUpdate:
    """``UpdateServiceEnvironment`` at ``at``: the new capacity of every instance type (left out: 0)."""

    at: float
    name: str
    capacity: Mapping[str, int] = field(default_factory=dict)
    #: ``SameInstant.ONE_BY_ONE``: how many of the instant's submissions come before it (its call's place)
    after_submissions: int = 0

    def apply(self, engine: RunningEngine) -> None:
        pools = environment_pools(engine.pools, self.name)
        for instance_type, env_pools in pools.items():
            environment = env_pools[0].env
            for pool in environment.pools:
                for share in pool.shares:
                    pool.change(share, 0, engine.now)
            _correct(engine, environment, environment.capacity, self.capacity.get(instance_type, 0))
            environment.capacity = self.capacity.get(instance_type, 0)
        _reconsider(engine, {pool for env_pools in pools.values() for pool in env_pools[0].env.pools})


def environment_pools(pools: list[Pool], name: str) -> dict[str, list[Pool]]:
    """``instance type -> pools`` of the environment ``name`` (pools with shares name their queue's environment)."""
    found: dict[str, list[Pool]] = {}
    for pool in pools:
        if pool.shares and pool.shares[0].queue.service_environment == name:
            found.setdefault(pool.instance_type, []).append(pool)
    return found


def _correct(engine: RunningEngine, key: object, old: int, new: int) -> None:
    """Keep ``capacity x time`` right for utilisation: ``new x span + (old - new) x now`` once it changes."""
    if old != new:
        engine.capacity_corrections[key] = engine.capacity_corrections.get(key, 0.0) + (old - new) * engine.now


def _reconsider(engine: RunningEngine, pools: set[Pool]) -> None:
    """Limits or capacity changed: which waiting jobs can ever run may differ, and every head looks again."""
    engine.misconfig_cache.clear()
    for pool in sorted(pools, key=lambda p: p.index):
        for share in pool.shares:
            for job in share.line.in_order():
                job.misconfigured = placement.misconfiguration(pool, share, job.spec.instances)
            engine.touch(share)
        engine.capacity_freed(pool)
