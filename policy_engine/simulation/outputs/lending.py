"""Who lent to whom: instance-hours per lender -> borrower and instance type, from the run's usage log.

AWS documents borrowing from a pool of lendable capacity, not from a particular lender: a borrower
uses idle capacity of the job queue's LEND and LEND_AND_BORROW shares. Which lender's idle capacity a
borrowed instance "is" is therefore a choice (docs/costs.md), made by an ``AttributionPolicy``: at each
instant it says how much of the pool's borrowed total each lender supplies; every borrower then draws
from what the lenders supply in proportion to what it borrows. ``proportional`` (the default) is the
engine's own attribution (``capacity.Pool``: each lender in proportion to its idle capacity), so its
per-lender totals equal the run's ``lent`` figures; ``topology-order`` drains the lenders in the order
the topology lists them. A new rule is a new class registered with ``register_attribution``.

Computed after the run in bulk with numpy: the pool's shares' usage as a step function per share, in
chunks of log entries (a chunk x shares matrix at a time, never a changes x shares one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, Protocol

import numpy as np

from policy_engine.simulation.outputs.usage import UsageLog

HOUR = 3600.0
#: Numbers per quantity in one chunk of the step functions (log entries x the pool's shares).
CHUNK_CELLS = 2_000_000


class AttributionPolicy(Protocol):
    """Which lenders supply a pool's borrowed capacity at each instant of the run."""

    name: str

    def supplied(self, lendable: np.ndarray, borrowed: np.ndarray) -> np.ndarray:
        """``lendable`` (instants x lenders): idle capacity each lender may lend; ``borrowed`` (instants): the
        pool's borrowed total, never above the row's sum. Returns instants x lenders, each row summing to
        ``borrowed`` and each cell at most ``lendable``."""
        ...


class Proportional:
    """Each lender in proportion to its idle lendable capacity (what the engine's ``lent`` figures do)."""

    name = "proportional"

    def supplied(self, lendable: np.ndarray, borrowed: np.ndarray) -> np.ndarray:
        total = lendable.sum(axis=1)
        ratio = np.divide(borrowed, total, out=np.zeros_like(borrowed), where=total > 0)
        return lendable * ratio[:, None]


class TopologyOrder:
    """The first lender the topology lists lends all it can, then the next one."""

    name = "topology-order"

    def supplied(self, lendable: np.ndarray, borrowed: np.ndarray) -> np.ndarray:
        before = np.cumsum(lendable, axis=1) - lendable  # what the lenders listed earlier can supply
        return np.clip(borrowed[:, None] - before, 0.0, lendable)


ATTRIBUTIONS: dict[str, AttributionPolicy] = {}
DEFAULT_ATTRIBUTION = "proportional"


def register_attribution(policy: AttributionPolicy) -> AttributionPolicy:
    ATTRIBUTIONS[policy.name] = policy
    return policy


register_attribution(Proportional())
register_attribution(TopologyOrder())


class Flow(NamedTuple):
    """Instance-hours of ``lender``'s idle capacity that ``borrower`` used, on one instance type."""

    lender: str
    borrower: str
    instance_type: str
    instance_hours: float


def lending_flows(log: UsageLog, end: float, borrowers: Mapping[tuple[str, str], bool],
                  policy: AttributionPolicy) -> list[Flow]:
    """Every lender -> borrower flow of the run up to ``end`` (non-zero ones, pool by pool, in log order).

    ``borrowers``: whether each ``(share, instance type)`` may borrow (LEND_AND_BORROW): usage above a
    lowered limit of any other share is not borrowed capacity, as in the engine.
    """
    flows: list[Flow] = []
    shares = log.shares
    times = np.frombuffer(log.times, dtype=np.float64)
    who = np.frombuffer(log.who, dtype=np.int64)
    used = np.frombuffer(log.used, dtype=np.int64).astype(np.float64)
    # limit changes as entries of their own (used: NaN, carried from the share's previous entry)
    change_t = np.array([c.time for c in log.limit_changes], dtype=np.float64)
    change_who = np.array([c.number for c in log.limit_changes], dtype=np.int64)
    change_limit = np.array([c.limit for c in log.limit_changes], dtype=np.float64)
    change_lends = np.array([c.lends for c in log.limit_changes], dtype=np.float64)
    all_t = np.concatenate([times, change_t])
    all_who = np.concatenate([who, change_who])
    all_used = np.concatenate([used, np.full(len(change_t), np.nan)])
    all_limit = np.concatenate([np.full(len(times), np.nan), change_limit])
    all_lends = np.concatenate([np.full(len(times), np.nan), change_lends])
    late = np.concatenate([np.zeros(len(times), dtype=bool), np.ones(len(change_t), dtype=bool)])
    pool_of = np.array([s.pool for s in shares], dtype=np.int64)
    entry_pool = pool_of[all_who] if len(all_who) else np.zeros(0, dtype=np.int64)
    # pool by pool, chronological; at one instant a limit change after the usage entries
    order = np.lexsort((late, all_t, entry_pool))
    bounds = np.searchsorted(entry_pool[order], np.arange(int(pool_of.max(initial=-1)) + 2))
    for pool in sorted(set(pool_of.tolist())):
        members = np.flatnonzero(pool_of == pool)
        borrows = np.array([borrowers.get((shares[n].share, shares[n].instance_type), False) for n in members])
        if not borrows.any():
            continue
        column = np.full(len(shares), -1, dtype=np.int64)
        column[members] = np.arange(len(members))
        mine = order[bounds[pool]:bounds[pool + 1]]
        start = np.stack([np.zeros(len(members)), np.array([shares[n].limit for n in members], dtype=np.float64),
                          np.array([shares[n].lends for n in members], dtype=np.float64)])
        total = np.zeros((len(members), len(members)))
        carry, carry_t = start, 0.0
        rows_per_chunk = max(256, CHUNK_CELLS // len(members))
        for lo in range(0, max(len(mine), 1), rows_per_chunk):
            picked = mine[lo:lo + rows_per_chunk]
            t = np.concatenate([[carry_t], all_t[picked]])
            state = np.full((3, len(t), len(members)), np.nan)
            state[:, 0, :] = carry
            rows, cols = np.arange(1, len(t)), column[all_who[picked]]
            state[0, rows, cols] = all_used[picked]
            state[1, rows, cols] = all_limit[picked]
            state[2, rows, cols] = all_lends[picked]
            state = _forward_fill(state)
            after = lo + rows_per_chunk
            following = float(all_t[mine[after]]) if after < len(mine) else max(end, float(t[-1]))
            dt = np.diff(np.concatenate([t, [following]]))
            if lo:  # the carried row's interval was counted in the chunk before
                dt[0] = 0.0
            carry, carry_t = state[:, -1, :].copy(), float(t[-1])
            use, limit, lends = state
            borrowed = np.where(borrows, np.maximum(use - limit, 0.0), 0.0)
            lendable = np.maximum(limit - use, 0.0) * lends
            pooled = borrowed.sum(axis=1)
            supplied = policy.supplied(lendable, pooled)
            weight = np.divide(dt, pooled, out=np.zeros_like(dt), where=pooled > 0)
            total += (supplied * weight[:, None]).T @ borrowed
        for i, j in zip(*np.nonzero(total > 1e-9), strict=True):
            lender, borrower = shares[members[i]], shares[members[j]]
            if i != j:
                flows.append(Flow(lender.share, borrower.share, lender.instance_type, float(total[i, j]) / HOUR))
    return flows


def _forward_fill(state: np.ndarray) -> np.ndarray:
    """Each NaN replaced by the last value above it in its column (row 0 has none)."""
    missing = np.isnan(state)
    index = np.where(missing, 0, np.arange(state.shape[1])[None, :, None])
    np.maximum.accumulate(index, axis=1, out=index)
    return np.take_along_axis(state, index, axis=1)
