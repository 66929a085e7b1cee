"""What a candidate does to a declared guarantee when its share's limit moves (``tune --guarantee-policy``).

``keep`` (the default) leaves every promise as declared: a candidate that cannot keep it is invalid
(its refuted guarantee is a check error). ``follow`` lowers each promise of a share whose limit moved to
what the candidate proves (min(declared, proven): ``guarantees.guaranteed_capacity`` for
``min_capacity``, the maximum burst for ``burst_capacity``; ``never_preempted`` only if still proven).
``drop`` removes the guarantees of shares whose limit moved. Either is a promise change, which
``tune`` prints and ``diff`` fails on by default: a team's promise needs review.
"""

from __future__ import annotations

from enum import Enum

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.guarantees import guaranteed_capacity, refute
from policy_engine.foundation.model import Guarantee, Topology, share_id


class GuaranteePolicy(Enum):
    KEEP = "keep"
    FOLLOW = "follow"
    DROP = "drop"


def _moved(base: Topology, candidate: Topology) -> set[str]:
    """Shares whose limits differ between the scenario's topology and the candidate."""
    before = {share_id(q, s): dict(s.capacity) for q, s in base.shares()}
    return {node for q, s in candidate.shares() if before.get(node := share_id(q, s)) != dict(s.capacity)}


def _followed(guarantee: Guarantee, node: str, topology: Topology, graph: BorrowGraph) -> Guarantee | None:
    minimum = {t: min(n, guaranteed_capacity(graph, node, t)) for t, n in (guarantee.min_capacity or {}).items()}
    burst = {t: min(n, graph.max_burst(node, t)) for t, n in (guarantee.burst_capacity or {}).items()}
    never = guarantee.never_preempted and not any(
        r.property == "never_preempted" for r in refute(topology, graph, guarantee, node=node))
    minimum = {t: n for t, n in minimum.items() if n >= 1}  # a promise of 0 promises nothing (BQ404)
    burst = {t: n for t, n in burst.items() if n >= 1}
    if not (minimum or burst or never):
        return None
    return guarantee.model_copy(update={"min_capacity": minimum or None, "burst_capacity": burst or None,
                                        "never_preempted": never})


def apply(policy: GuaranteePolicy, base: Topology, candidate: Topology) -> Topology:
    """``candidate`` with its guarantees as ``policy`` says (unchanged for ``keep`` or when no limit moved)."""
    if policy is GuaranteePolicy.KEEP or not candidate.guarantees:
        return candidate
    moved = _moved(base, candidate)
    if not moved:
        return candidate
    graph = BorrowGraph(candidate) if policy is GuaranteePolicy.FOLLOW else None
    kept = []
    for guarantee in candidate.guarantees:
        node = candidate.find_share(guarantee.share).share_id
        if node is None or node not in moved:
            kept.append(guarantee)
        elif graph is not None and (followed := _followed(guarantee, node, candidate, graph)) is not None:
            kept.append(followed)
    return candidate.model_copy(update={"guarantees": tuple(kept)})
