"""Capacity accounting per job queue and instance type, with integer counters.

A *pool* is one job queue's view of one instance type. Each share owns its limit;
usage above it is borrowed, and the pool keeps ``borrowed <= lender_idle`` (the
idle owned capacity of LEND and LEND_AND_BORROW shares), so RESERVE idle capacity
and capacity that belongs to no share are never used by anyone else. The
environment counter is shared by every pool on the same environment and type.

Time-weighted integrals (own use, borrowed, lent) are updated only at changes.
Lent capacity is a property of the pool, not of a lender; it is attributed to
lenders in proportion to their idle capacity (``idle_s x borrowed / lender_idle``),
integrated in O(1) per change through the running integral of that ratio.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from policy_engine.foundation.model import JobQueue, QuotaShare, Topology, share_id
from policy_engine.simulation.core.queues import Line

if TYPE_CHECKING:
    from policy_engine.simulation.core.jobs import Job
    from policy_engine.simulation.usage import UsageLog

#: One utilisation sample (``Pool.record``): (time, share, instance type, own use, borrowed, lent, idle not lent).
UtilisationSample = tuple[float, str, str, int, int, float, float]


class EnvironmentType:
    """Physical instances of one type in one service environment."""

    __slots__ = ("capacity", "pools", "used")

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.used = 0
        self.pools: list[Pool] = []


class ShareCapacity:
    """One share's limit, usage, running jobs and waiting line for one instance type."""

    __slots__ = (
        "active",
        "active_priorities",
        "borrowed_int",
        "borrows",
        "ceiling",
        "in_share",
        "instance_type",
        "last_r",
        "last_t",
        "lends",
        "lent_int",
        "limit",
        "line",
        "log_at",
        "log_time",
        "model",
        "number",
        "own_int",
        "pool",
        "queue",
        "rejected",
        "share_id",
        "used",
    )

    def __init__(self, queue: JobQueue, share: QuotaShare, instance_type: str, pool: Pool, number: int,
                 indexed: bool = False):
        self.queue = queue
        self.model = share
        self.share_id = share_id(queue, share)
        self.instance_type = instance_type
        self.pool = pool
        self.limit = share.capacity.get(instance_type, 0)
        self.ceiling = share.ceiling(instance_type)
        self.lends = share.lends
        self.borrows = share.borrows
        self.in_share = share.in_share_preemption
        #: What is DISABLED, so that every job submitted here is rejected; "" when queue and share are enabled.
        self.rejected = (f"job queue {queue.name}" if queue.state == "DISABLED"
                         else f"quota share {self.share_id}" if share.state == "DISABLED" else "")
        self.used = 0
        self.number = number  # position among every share of the topology (the usage log's share number)
        self.active: dict[Job, None] = {}  # insertion-ordered for determinism
        #: priority -> how many of ``active`` have it: "is a lower-priority job running?" without a scan
        self.active_priorities: dict[int, int] = {}
        #: indexed by job size when backfill asks "the first job that fits"; marks the pool's ``deep`` lines
        self.line = Line(indexed, pool.deep, self)
        self.own_int = self.borrowed_int = self.lent_int = 0.0
        self.last_t = 0.0
        self.last_r = 0.0
        #: when its use was last logged, and where in the log's pending lists (``Pool.change``)
        self.log_time = math.nan
        self.log_at = -1

    @property
    def idle(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def borrowing(self) -> int:
        return max(0, self.used - self.limit)


class Pool:
    """All shares of one job queue for one instance type."""

    __slots__ = (
        "borrowed",
        "deep",
        "env",
        "env_alone",
        "index",
        "instance_type",
        "last_t",
        "lender_idle",
        "log",
        "log_times",
        "log_used",
        "log_who",
        "r_int",
        "recorded",
        "series",
        "shares",
    )

    def __init__(self, instance_type: str, env: EnvironmentType, index: int):
        self.instance_type = instance_type
        self.env = env
        self.index = index
        self.shares: list[ShareCapacity] = []
        self.borrowed = 0
        self.lender_idle = 0
        self.last_t = 0.0
        self.r_int = 0.0  # integral of borrowed / lender_idle: attributes lending to lenders
        self.series: list[UtilisationSample] | None = None  # only when a report asked for samples
        self.log: UsageLog | None = None  # a compact log, only when a report asked for one
        #: the log's lists of changes not yet moved into its arrays (``UsageLog.pending_times``), appended to here
        #: (set by ``keep_log``)
        self.log_times: list[float] = []
        self.log_who: list[int] = []
        self.log_used: list[int] = []
        #: ``series`` or ``log`` is kept (set with them): ``change`` records nothing otherwise
        self.recorded = False
        #: the only pool on its environment's instances (``build_pools`` says): freed capacity concerns it alone
        self.env_alone = True
        #: lines with a job behind the head (set by the line, dropped by backfill): backfill's candidates
        self.deep: dict[ShareCapacity, None] = {}

    def keep_log(self, log: UsageLog | None) -> None:
        """Record every change of a share's usage in ``log`` (``None``: no log)."""
        self.log = log
        if log is not None:
            self.log_times, self.log_who, self.log_used = log.pending_times, log.pending_who, log.pending_used

    def add_share(self, share: ShareCapacity) -> None:
        self.shares.append(share)
        if share.lends:
            self.lender_idle += share.idle

    @property
    def used_int(self) -> float:
        """Instance-seconds used in the pool: its shares' own and borrowed use (integrated up to their last change)."""
        return sum(share.own_int + share.borrowed_int for share in self.shares)

    @property
    def free_lendable(self) -> int:
        """Idle owned capacity of lenders not already borrowed by someone."""
        return self.lender_idle - self.borrowed

    def adjust(self, share: ShareCapacity, delta: int) -> None:
        """Change a share's usage by ``delta`` instances (counters only: tentative or real)."""
        old = share.used
        new = old + delta
        limit = share.limit
        if share.borrows:  # usage above a lowered limit of a share that cannot borrow is not borrowed capacity
            self.borrowed += (new - limit if new > limit else 0) - (old - limit if old > limit else 0)
        if share.lends:
            self.lender_idle += (limit - new if new < limit else 0) - (limit - old if old < limit else 0)
        share.used = new
        self.env.used += delta

    def change(self, share: ShareCapacity, delta: int, now: float) -> None:
        """A real change at ``now``: integrate the metrics up to now, then adjust (twice per job: kept lean)."""
        last = self.last_t
        if now != last:
            dt = now - last
            borrowed = self.borrowed
            if borrowed and self.lender_idle > 0:
                self.r_int += borrowed / self.lender_idle * dt
            self.last_t = now
        used, limit = share.used, share.limit
        last = share.last_t
        if now != last:
            span = now - last
            if used > limit:
                share.own_int += limit * span
                share.borrowed_int += (used - limit) * span
            else:
                share.own_int += used * span
            share.last_t = now
        new = used + delta
        r_int = self.r_int
        # self.adjust(share, delta), inline, with the metrics that depend on which side of the limit it is
        if used < limit:
            if share.lends:
                share.lent_int += (limit - used) * (r_int - share.last_r)
                self.lender_idle += (limit - new if new < limit else 0) - (limit - used)
            if new > limit and share.borrows:
                self.borrowed += new - limit
        else:
            # usage above a lowered limit of a share that cannot borrow (any more) is not borrowed capacity
            if (used > limit or new > limit) and share.borrows:
                self.borrowed += (new - limit if new > limit else 0) - (used - limit)
            if new < limit and share.lends:
                self.lender_idle += limit - new
        share.last_r = r_int
        share.used = new
        self.env.used += delta
        if self.recorded:
            if self.series is not None:
                self.record(now)
            log = self.log
            if log is not None:  # ``log.record``, inline: list appends, no call into the (interpreted) log
                log_times = self.log_times
                at = share.log_at
                if share.log_time == now and at < len(log_times) and self.log_who[at] == share.number:
                    self.log_used[at] = new  # its second change this instant: one entry, its use as it ends
                else:
                    if len(log_times) >= log.spill_at and log_times[-1] != now:  # between instants only
                        log.spill()
                    share.log_time, share.log_at = now, len(log_times)
                    log_times.append(now)
                    self.log_who.append(share.number)
                    self.log_used.append(new)

    def lent_now(self, share: ShareCapacity) -> float:
        """Instances of ``share`` lent out at this instant (proportional attribution)."""
        if not share.lends or self.lender_idle <= 0:
            return 0.0
        return share.idle * self.borrowed / self.lender_idle

    def record(self, now: float) -> None:
        """Append one utilisation sample per share (only when the time series was asked for)."""
        series = self.series
        if series is None:
            return
        for share in self.shares:
            lent = self.lent_now(share)
            series.append(
                (now, share.share_id, self.instance_type, min(share.used, share.limit), share.borrowing, lent,
                 share.idle - lent if share.lends else share.idle)
            )

    def close(self, now: float) -> None:
        """Integrate every share up to ``now`` (end of run or ``--until``)."""
        for share in self.shares:
            self.change(share, 0, now)


def build_pools(topology: Topology, indexed_lines: bool = False) -> list[Pool]:
    """One pool per job queue and instance type (its environment's types, then its shares'), with its shares.

    Pools on the same environment and type share one ``EnvironmentType``. Apart from the
    engine so that capacity questions (``placement.reach``) need no simulation. ``indexed_lines``:
    the waiting lines index their jobs by size (backfill asks for the first job that fits).
    """
    envs: dict[tuple[str, str], EnvironmentType] = {}
    pools: list[Pool] = []
    for queue in topology.job_queues:
        environment = topology.environment(queue.service_environment)
        env_capacity = dict(environment.capacity) if environment else {}
        types = list(env_capacity)
        for share in queue.shares:
            types += [t for t in share.capacity if t not in types]
        for instance_type in types:
            key = (queue.service_environment, instance_type)
            if key not in envs:
                envs[key] = EnvironmentType(env_capacity.get(instance_type, 0))
            pool = Pool(instance_type, envs[key], len(pools))
            envs[key].pools.append(pool)
            pools.append(pool)
            for share in queue.shares:
                if instance_type in share.capacity:
                    number = sum(len(p.shares) for p in pools)
                    pool.add_share(ShareCapacity(queue, share, instance_type, pool, number, indexed_lines))
    for pool in pools:
        pool.env_alone = len(pool.env.pools) == 1
    return pools
