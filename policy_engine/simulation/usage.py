"""A compact log of every change of a share's usage, for reports at a million jobs.

Three typed arrays (time, share number, instances used after the change): about 20 bytes
per change, against a tuple per share per change for ``utilisation_series``. Own use,
borrowed, lent and idle over time are derived from it afterwards (``reports.aggregates``),
in bulk, instead of being sampled in the event loop.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple


class LoggedShare(NamedTuple):
    """What the log's share number stands for."""

    share: str
    instance_type: str
    limit: int
    lends: bool
    pool: int


class LimitChange(NamedTuple):
    """From ``time`` on, the share numbered ``number`` has this own ``limit`` and ``lends`` (a topology change)."""

    time: float
    number: int
    limit: int
    lends: bool


class UsageLog:
    __slots__ = ("limit_changes", "shares", "times", "used", "who")

    def __init__(self, shares: list[LoggedShare]):
        self.shares = shares
        self.times = array("d")
        self.who = array("q")
        self.used = array("q")
        #: Rare (one per share per ``update_share``): own limits in force after ``LoggedShare.limit``.
        self.limit_changes: list[LimitChange] = []

    def record(self, time: float, number: int, used: int) -> None:
        self.times.append(time)
        self.who.append(number)
        self.used.append(used)

    def record_limit(self, time: float, number: int, limit: int, lends: bool) -> None:
        self.limit_changes.append(LimitChange(time, number, limit, lends))

    def __len__(self) -> int:
        return len(self.times)


def merge_logs(logs: list[UsageLog | None]) -> UsageLog:
    """One log from the logs of runs over disjoint parts of a topology (``--workers``): numbers and pools offset."""
    shares: list[LoggedShare] = []
    merged = UsageLog(shares)
    pools = 0
    for log in logs:
        if log is None:
            continue
        offset = len(shares)
        shares.extend(share._replace(pool=share.pool + pools) for share in log.shares)
        pools += max((share.pool for share in log.shares), default=-1) + 1
        merged.times.extend(log.times)
        merged.who.extend(array("q", (number + offset for number in log.who)))
        merged.used.extend(log.used)
        merged.limit_changes.extend(change._replace(number=change.number + offset) for change in log.limit_changes)
    return merged
