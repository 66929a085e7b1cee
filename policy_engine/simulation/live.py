"""A simulation that starts from a live queue: the scheduler's invariants must already hold at time 0.

A snapshot can break them (a capacity cut leaves more running than the environment has,
a lowered limit leaves a share above its ceiling, borrowed capacity nobody lends); the
simulator reports each such problem instead of silently fixing it, so nobody trusts a
continuation of a state the scheduler could never have reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from policy_engine.foundation.model import Topology
from policy_engine.simulation.core.capacity import build_pools
from policy_engine.simulation.core.jobs import JobSpec, LiveState


class LiveStateError(ValueError):
    """The jobs on capacity at time 0 break the scheduler's invariants; ``problems`` has one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


def live_state_problems(topology: Topology, jobs: Sequence[JobSpec], live: Mapping[str, LiveState]) -> list[str]:
    """Every invariant the live jobs break: environment capacity, share ceilings, lendable capacity."""
    pools = build_pools(topology)
    shares = {(s.share_id, s.instance_type): s for pool in pools for s in pool.shares}
    for spec in jobs:
        if spec.name in live:
            share = shares.get((spec.share, spec.instance_type))
            if share is not None:
                share.pool.adjust(share, spec.instances)
    problems = []
    seen_envs = set()
    for pool in pools:
        kind = pool.instance_type
        env = pool.env
        if id(env) not in seen_envs and env.used > env.capacity:
            seen_envs.add(id(env))
            problems.append(f"{env.used} {kind} on capacity, above the service environment's {env.capacity} "
                            "(capacity cut below what runs?)")
        for share in pool.shares:
            if not share.used:
                continue
            if not share.borrows and share.used > share.limit:
                problems.append(f"{share.share_id} uses {share.used} {kind}, above its limit {share.limit} "
                                f"({share.model.strategy} cannot borrow)")
            elif share.ceiling is not None and share.used > share.ceiling:
                problems.append(f"{share.share_id} uses {share.used} {kind}, above its ceiling {share.ceiling} "
                                f"(limit {share.limit} with borrowLimit {share.model.effective_borrow_limit}%)")
        if pool.borrowed > pool.lender_idle:
            queue = pool.shares[0].queue.name
            problems.append(f"{pool.borrowed} {kind} borrowed in job queue {queue}, "
                            f"but lenders leave only {pool.lender_idle} idle")
    return problems
