"""Guarantees: each declared promise is proven, or refuted with a counterexample.

The definitions and the proofs live in ``policy_engine.guarantees``; these rules only
turn refutations into findings on ``guarantees[i] (QUEUE/SHARE)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from policy_engine.findings import Severity
from policy_engine.graph import BorrowGraph
from policy_engine.guarantees import Refutation, preemption_risks, refute_burst_capacity, refute_min_capacity
from policy_engine.model import Guarantee, share_id
from policy_engine.rules.base import Context, Problem, rule
from policy_engine.rules.objects import guarantee_object


def _refuted(context: Context, prove: Callable[[BorrowGraph, str, Guarantee], list[Refutation]]) -> Iterator[Problem]:
    for index, guarantee in enumerate(context.topology.guarantees):
        matches = context.topology.resolve_share(guarantee.share)
        if len(matches) != 1:
            continue  # unresolved or ambiguous: BQ001 reports it
        for refutation in prove(context.graph, share_id(*matches[0]), guarantee):
            yield Problem(guarantee_object(index, guarantee), refutation.message, refutation.hint,
                          counterexample=refutation.counterexample)


@rule("BQ401", Severity.ERROR, "min_capacity is reachable by reclaim")
def min_capacity_holds(context: Context) -> Iterator[Problem]:
    """A promised ``min_capacity`` must be at most ``min(limit, environment - sum of the other shares' limits)``
    per instance type: what a head job of the share can always get back by reclaim while every other share
    holds up to its own limit. Counterexample: the other shares' usage that leaves too little."""
    yield from _refuted(context, lambda g, node, gu: refute_min_capacity(g, node, gu.min_capacity or {}))


@rule("BQ402", Severity.ERROR, "burst_capacity is reachable when every other share is idle")
def burst_capacity_holds(context: Context) -> Iterator[Problem]:
    """A promised ``burst_capacity`` must be at most the max burst: ``min(ceiling, own limit + max-flow from the
    lenders, environment capacity)``. Counterexample: every other share idle and the most the share reaches."""
    yield from _refuted(context, lambda g, node, gu: refute_burst_capacity(g, node, gu.burst_capacity or {}))


@rule("BQ403", Severity.ERROR, "never_preempted holds")
def never_preempted_holds(context: Context) -> Iterator[Problem]:
    """``never_preempted: true`` holds only when in-share preemption is off and the share can never hold borrowed
    capacity (not LEND_AND_BORROW, or nothing can flow to it). Counterexample: the usage in which a job of
    the share is preempted (by a higher-priority job of its own, or by a lender reclaiming)."""
    yield from _refuted(context, lambda g, node, gu: preemption_risks(g, node) if gu.never_preempted else [])
