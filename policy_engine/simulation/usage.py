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


class UsageLog:
    __slots__ = ("shares", "times", "used", "who")

    def __init__(self, shares: list[LoggedShare]):
        self.shares = shares
        self.times = array("d")
        self.who = array("q")
        self.used = array("q")

    def record(self, time: float, number: int, used: int) -> None:
        self.times.append(time)
        self.who.append(number)
        self.used.append(used)

    def __len__(self) -> int:
        return len(self.times)
