"""Which cause a waiting second is charged to when several hold at once: an order, as a policy object.

AWS documents no such attribution, so the choice is ours and swappable, as the victim policy is
(``core.preemption.POLICIES``): the attribution (``wait_causes``) works out every cause that held
for a job at a second (where it stood in its line, what its head lacked, and the facts beside it:
misconfigured, requeued after a preemption, waiting for a time-limit action that ended it) and the
order picks one. ``simulate --wait-attribution`` and ``explain --wait-attribution`` read ``ORDERS``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from policy_engine.simulation.causes import WAIT_CAUSES, Cause


class AttributionOrder(NamedTuple):
    """``order``: the waiting causes, most telling first; a second goes to the first one that holds."""

    name: str
    order: tuple[Cause, ...]
    #: one line for ``--help`` and docs
    summary: str

    def choose(self, holding: Collection[Cause]) -> Cause:
        """The cause a second is charged to among those ``holding`` (never empty)."""
        for cause in self.order:
            if cause in holding:
                return cause
        raise ValueError(f"attribution order {self.name!r} ranks none of {sorted(holding)}")


ORDERS: dict[str, AttributionOrder] = {}
DEFAULT_ORDER = "root-cause"


def register_order(order: AttributionOrder) -> AttributionOrder:
    """Add an order users can name; it must rank every waiting cause (a second always has one)."""
    missing = [cause.value for cause in WAIT_CAUSES if cause not in order.order]
    if missing:
        raise ValueError(f"attribution order {order.name!r} does not rank {', '.join(missing)}")
    ORDERS[order.name] = order
    return order


register_order(AttributionOrder(
    "root-cause",
    (Cause.MISCONFIGURED, Cause.TIME_LIMIT_ACTION_PENDING, Cause.REQUEUED_AFTER_PREEMPTION, Cause.BEHIND_HEAD,
     Cause.WAITING_FOR_RECLAIM, Cause.ENVIRONMENT_FULL, Cause.LENDABLE_TAKEN, Cause.NOTHING_LENDABLE,
     Cause.SHARE_AT_LIMIT),
    "what made the job wait at all: misconfigured, a time-limit action that ended it, a preemption that "
    "sent it back, then its place in line and what its head lacked (the default)"))

register_order(AttributionOrder(
    "line-state",
    (Cause.BEHIND_HEAD, Cause.MISCONFIGURED, Cause.WAITING_FOR_RECLAIM, Cause.ENVIRONMENT_FULL,
     Cause.LENDABLE_TAKEN, Cause.NOTHING_LENDABLE, Cause.SHARE_AT_LIMIT, Cause.TIME_LIMIT_ACTION_PENDING,
     Cause.REQUEUED_AFTER_PREEMPTION),
    "where the job stood at that second: behind its head, or what it lacked as the head, whatever sent it "
    "there (a requeued job's wait goes to its line's state)"))
