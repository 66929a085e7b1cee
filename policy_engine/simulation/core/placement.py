"""Who fits where: the capacity tests behind the scheduling steps, as pure functions.

Kept apart from the event loop so that each rule (own limit, ceiling, lendable
capacity, environment) can be read and tested on its own.
"""

from __future__ import annotations

from policy_engine.foundation.burst import burst_limit
from policy_engine.simulation.core.capacity import Pool, ShareCapacity
from policy_engine.simulation.core.jobs import MISCONFIG_ENVIRONMENT, MISCONFIG_QUOTA


def within_own_limit(share: ShareCapacity, instances: int) -> bool:
    return share.used + instances <= share.limit


def own_fits(pool: Pool, share: ShareCapacity, instances: int) -> bool:
    """Step 1: within the share's own limit, and its owned capacity is idle (not lent out)."""
    if share.used + instances > share.limit or pool.env.capacity - pool.env.used < instances:
        return False
    return not share.lends or pool.lender_idle - pool.borrowed >= instances


def under_ceiling(share: ShareCapacity, instances: int) -> bool:
    return share.ceiling is None or share.used + instances <= share.ceiling


def borrow_fits(pool: Pool, share: ShareCapacity, instances: int) -> bool:
    """Step 3: a LEND_AND_BORROW share above its own limit, under its ceiling, in lendable idle capacity."""
    return (
        share.borrows
        and share.used + instances > share.limit
        and under_ceiling(share, instances)
        and pool.lender_idle - pool.borrowed >= instances
        and pool.env.capacity - pool.env.used >= instances
    )


def fits(pool: Pool, share: ShareCapacity, instances: int) -> bool:
    return own_fits(pool, share, instances) or borrow_fits(pool, share, instances)


def reach(pool: Pool, share: ShareCapacity) -> int:
    """The most instances one job of ``share`` can ever get in ``pool`` (``burst.burst_limit``).

    Its own limit (RESERVE, LEND), or for LEND_AND_BORROW the smaller of its ceiling and
    its limit plus every other lender's limit; never more than the environment.
    """
    if not share.borrows:
        return burst_limit(share.limit, 0, None, pool.env.capacity)
    lendable = sum(other.limit for other in pool.shares if other.lends and other is not share)
    return burst_limit(share.limit, lendable, share.ceiling, pool.env.capacity)


def misconfiguration(pool: Pool, share: ShareCapacity, instances: int) -> str:
    """Why a job can never run, or ``""``: larger than the environment, or than the share can ever reach."""
    if instances > pool.env.capacity:
        return MISCONFIG_ENVIRONMENT
    if instances > reach(pool, share):
        return MISCONFIG_QUOTA
    return ""


def over_capacity(pool: Pool) -> bool:
    """An environment above its capacity (after a cut, ``topology_changes``) places nothing new and preempts for
    nobody."""
    return pool.env.used > pool.env.capacity
