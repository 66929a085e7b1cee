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

from policy_engine.simulation.usage import UsageLog

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
        cols = column[all_who[mine]]
        n = len(members)
        start = np.stack([np.zeros(n), np.array([shares[m].limit for m in members], dtype=np.float64),
                          np.array([shares[m].lends for m in members], dtype=np.float64)])
        # each entry as the change it makes to its share's value (0 where it leaves the quantity alone)
        deltas = [_deltas(cols, quantity[mine], start[q])
                  for q, quantity in enumerate((all_used, all_limit, all_lends))]
        limits_change = bool(deltas[1].any() or deltas[2].any())
        total = np.zeros((n, n))
        carry, carry_t = start, 0.0
        rows_per_chunk = max(256, CHUNK_CELLS // n)
        for lo in range(0, max(len(mine), 1), rows_per_chunk):
            hi = min(lo + rows_per_chunk, len(mine))
            t = np.concatenate([[carry_t], all_t[mine[lo:hi]]])
            chunk_cols = cols[lo:hi]
            use = _steps(carry[0], chunk_cols, deltas[0][lo:hi])
            limit, lends = ((_steps(carry[1], chunk_cols, deltas[1][lo:hi]),
                             _steps(carry[2], chunk_cols, deltas[2][lo:hi]))
                            if limits_change else (carry[1][None, :], carry[2][None, :]))
            following = float(all_t[mine[hi]]) if hi < len(mine) else max(end, float(t[-1]))
            dt = np.diff(np.concatenate([t, [following]]))
            if lo:  # the carried row's interval was counted in the chunk before
                dt[0] = 0.0
            carry, carry_t = np.stack([use[-1], limit[-1], lends[-1]]), float(t[-1])
            borrowed = np.where(borrows, np.maximum(use - limit, 0.0), 0.0)
            pooled = borrowed.sum(axis=1)
            busy = pooled > 0  # only instants when someone borrows attribute anything
            if not busy.any():
                continue
            borrowed, pooled = borrowed[busy], pooled[busy]
            lendable = np.maximum((limit if limit.shape[0] == 1 else limit[busy]) - use[busy], 0.0) * \
                (lends if lends.shape[0] == 1 else lends[busy])
            supplied = policy.supplied(lendable, pooled)
            # einsum, not ``@``: a threaded BLAS spins its threads on a matrix this thin (about 9x the CPU)
            total += np.einsum("kl,kb->lb", supplied * (dt[busy] / pooled)[:, None], borrowed, optimize=False)
        for i, j in zip(*np.nonzero(total > 1e-9), strict=True):
            lender, borrower = shares[members[i]], shares[members[j]]
            if i != j:
                flows.append(Flow(lender.share, borrower.share, lender.instance_type, float(total[i, j]) / HOUR))
    return flows


def _steps(first: np.ndarray, cols: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """A quantity's value per share after each entry of a chunk, the carried row (``first``) before them."""
    values = np.zeros((len(cols) + 1, len(first)))
    values[0] = first
    values[np.arange(1, len(cols) + 1), cols] = deltas
    return np.cumsum(values, axis=0, out=values)


def _deltas(cols: np.ndarray, values: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Per entry, its new value minus its column's value before it (``start`` before the first); 0 where NaN."""
    given = np.flatnonzero(~np.isnan(values))
    out = np.zeros(len(values))
    if not len(given):
        return out
    by_column = given[np.argsort(cols[given], kind="stable")]  # chronological within each column
    column, value = cols[by_column], values[by_column]
    previous = np.empty_like(value)
    previous[1:] = value[:-1]
    first = np.ones(len(column), dtype=bool)
    first[1:] = column[1:] != column[:-1]
    previous[first] = start[column[first]]
    out[by_column] = value - previous
    return out
