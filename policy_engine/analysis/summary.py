"""Per-share summary: what each team can count on, how far it can burst, and who can preempt whom.

Derived from the same borrow graph and definitions the guarantee rules use, so the table a
team reads and the checks that fail a deploy never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.guarantees import guaranteed_capacity


@dataclass(frozen=True)
class ShareSummary:
    """One share at a glance; capacities are ``instance type -> instances``."""

    share: str
    strategy: str
    limit: dict[str, int]
    #: Always reachable by reclaim (``guarantees.guaranteed_capacity``); equals ``limit`` unless oversubscribed.
    guaranteed: dict[str, int]
    #: Reachable when every other share is idle (``BorrowGraph.max_burst``).
    max_burst: dict[str, int]
    #: Who may take capacity back from it: lenders it can borrow from, and itself with in-share preemption.
    preempted_by: tuple[str, ...]
    #: Whom it may preempt: borrowers of its lent capacity, and itself with in-share preemption.
    may_preempt: tuple[str, ...]
    #: The same two per instance type of its limit (a lender of p4d never reclaims its g5): the per-type rows.
    preempted_by_type: dict[str, tuple[str, ...]] = field(default_factory=dict)
    may_preempt_type: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready data; built by hand because ``dataclasses.asdict`` deep-copies (0.3 s at 1,000 shares)."""
        return {
            "share": self.share,
            "strategy": self.strategy,
            "limit": dict(self.limit),
            "guaranteed": dict(self.guaranteed),
            "max_burst": dict(self.max_burst),
            "preempted_by": list(self.preempted_by),
            "may_preempt": list(self.may_preempt),
        }


def summarize(graph: BorrowGraph, node: str) -> ShareSummary:
    share = graph.share(node)
    itself = (node,) if share.in_share_preemption else ()
    lenders = tuple(lender for lender in graph.lenders(node) if graph.can_flow(lender, node))
    borrowers = tuple(borrower for borrower in graph.borrowers(node) if graph.can_flow(node, borrower))
    return ShareSummary(
        share=node,
        strategy=share.strategy,
        limit=dict(share.capacity),
        guaranteed={t: guaranteed_capacity(graph, node, t) for t in share.capacity},
        max_burst={t: graph.max_burst(node, t) for t in share.capacity},
        preempted_by=lenders + itself,
        may_preempt=borrowers + itself,
        preempted_by_type={t: tuple(lender for lender in graph.lenders(node, t) if graph.can_flow(lender, node, t))
                           + itself for t in share.capacity},
        may_preempt_type={t: tuple(b for b in graph.borrowers(node, t) if graph.can_flow(node, b, t)) + itself
                          for t in share.capacity},
    )


def summarize_all(graph: BorrowGraph) -> dict[str, ShareSummary]:
    """``QUEUE/SHARE -> ShareSummary`` for every share, in declaration order."""
    return {node: summarize(graph, node) for node in graph.shares()}
