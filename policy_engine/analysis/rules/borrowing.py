"""Borrow graph: borrowing that is configured but can never happen.

Built on ``policy_engine.analysis.borrow.graph.BorrowGraph`` (edges lender -> borrower per instance type).
"""

from __future__ import annotations

from collections.abc import Iterator

from policy_engine.analysis.rules.base import Context, RawFinding, rule
from policy_engine.analysis.rules.objects import share_ref
from policy_engine.foundation.findings import Severity


@rule("BQ301", Severity.WARNING, "A borrowing share has a possible lender")
def borrower_has_lender(context: Context) -> Iterator[RawFinding]:
    """A LEND_AND_BORROW share (with a borrow limit other than 0) should have, for each of its instance types,
    another share in its job queue that lends that type (LEND or LEND_AND_BORROW with a limit for it).
    Otherwise its borrowing is dead configuration and the team may expect a burst it never gets."""
    graph = context.graph
    for node in graph.shares():
        share = graph.share(node)
        if not share.borrows or share.effective_borrow_limit == 0:
            continue
        missing = [t for t in share.capacity if not graph.lenders(node, t)]
        if not missing:
            continue
        queue = graph.queue(node).name
        if len(missing) == len(share.capacity):
            message = f"can never borrow: no other share in job queue {queue} lends {', '.join(missing)}"
        else:
            message = f"cannot borrow {', '.join(missing)}: no other share in job queue {queue} lends it"
        yield RawFinding(share_ref(graph.queue(node), share), message,
                         "make another share of the queue LEND or LEND_AND_BORROW with these instance types, "
                         "or use strategy LEND if the share is not meant to borrow")


@rule("BQ302", Severity.WARNING, "A borrow limit is not larger than anything lendable")
def borrow_limit_reachable(context: Context) -> Iterator[RawFinding]:
    """A finite ``borrow_limit`` that allows more than the share's lenders could ever give (their limits, capped
    by the environment's room beside the share's own limit) promises a burst that cannot happen."""
    graph = context.graph
    for node in graph.shares():
        share = graph.share(node)
        for instance_type, limit in share.capacity.items():
            allowance = graph.borrow_allowance(node, instance_type)
            lenders = graph.lenders(node, instance_type)
            if allowance is None or allowance == 0 or not lenders or limit <= 0:
                continue
            room = graph.environment_room(node, instance_type)
            reachable = min(graph.lendable(node, instance_type), room)
            if allowance > reachable:
                given = ", ".join(f"{lender} {graph.limit(lender, instance_type)}" for lender in lenders)
                percent = -(-reachable * 100 // limit)
                yield RawFinding(
                    share_ref(graph.queue(node), share),
                    f"{instance_type}: borrow_limit {share.borrow_limit}% allows borrowing {allowance} but at most "
                    f"{reachable} can be lent (lenders: {given}; environment room {room})",
                    f"lower borrow_limit to {percent} or give the lenders more {instance_type}",
                )


@rule("BQ303", Severity.WARNING, "A borrow limit allows at least one instance")
def borrow_limit_rounds_to_zero(context: Context) -> Iterator[RawFinding]:
    """A LEND_AND_BORROW share may borrow ``floor(limit x borrow_limit / 100)`` instances of a type; a positive
    ``borrow_limit`` too small for one instance (limit 3, 33 % -> 0) means the share can never borrow that type,
    although its strategy says it does."""
    for queue, share in context.topology.shares():
        percent = share.effective_borrow_limit
        if not share.borrows or percent <= 0:
            continue
        for instance_type, limit in share.capacity.items():
            if limit > 0 and limit * percent // 100 == 0:
                needed = -(-100 // limit)
                yield RawFinding(share_ref(queue, share),
                                 f"{instance_type}: borrow_limit {percent}% of {limit} rounds down to 0 instances; "
                                 "the share can never borrow it",
                                 f"raise borrow_limit to at least {needed}, or use strategy LEND if it is not meant "
                                 "to borrow")


@rule("BQ304", Severity.INFO, "A LEND_AND_BORROW share states its borrow limit")
def borrow_limit_stated(context: Context) -> Iterator[RawFinding]:
    """A LEND_AND_BORROW share without ``borrow_limit`` may borrow without bound: AWS's default is -1,
    unlimited. Clients drop a limit they read as empty (the SageMaker notebook helper drops ``borrowLimit: 0``),
    so what a share may borrow is best written down; everything batch-quota writes states it (-1 when unset)."""
    for queue, share in context.topology.shares():
        if share.borrows and share.borrow_limit is None:
            yield RawFinding(share_ref(queue, share),
                             "borrow_limit is unset: AWS's default -1 lets the share borrow without limit",
                             "write borrow_limit: -1 if unlimited is meant, or the most it may borrow, in percent of "
                             "its limits (0: never)")
