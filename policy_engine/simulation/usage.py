"""A compact log of every change of a share's usage, for reports at a million jobs.

Three typed arrays (time, share number, instances used after the change): 16 bytes per
change, against a tuple per share per change for ``utilisation_series``; ``columns`` reads them
as numpy arrays without a copy. A share changed twice at one instant (a job ends, the next starts)
has one entry there, where it first changed, with its use as the instant ends: a change that lasts
no time is no step of its use over time, and a heavy million-job run logs half as many. Own use,
borrowed, lent and idle over time are derived from it afterwards (``reports.aggregates``),
in bulk, instead of being sampled in the event loop.
"""

from __future__ import annotations

import math
from array import array
from typing import Any, NamedTuple

import numpy as np


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


#: Changes kept in the log's lists before they are moved into its arrays (``UsageLog.spill``): few, so that their
#: floats' memory stays in the cache and is used again (at 65,536 the allocations cost what the lists saved).
SPILL_AT = 1_024


def _extended(column: array[Any], values: list[Any]) -> array[Any]:
    """``column`` with ``values`` appended: in place, or in a copy while a reader holds a view of it (``columns``
    gives numpy views, and an array they look at cannot grow); their view stays as it was."""
    try:
        column.fromlist(values)
    except BufferError:
        column = array(column.typecode, column)
        column.fromlist(values)
    return column


class UsageLog:
    __slots__ = ("_logged", "_times", "_used", "_who", "limit_changes", "pending_times", "pending_used",
                 "pending_who", "shares", "spill_at")

    def __init__(self, shares: list[LoggedShare]):
        self.shares = shares
        self._times = array("d")
        self._who = array("i")  # a share number and a count of instances: a C int (4 bytes) holds them
        self._used = array("i")
        #: the latest changes, in lists the compiled engine appends to itself (``Pool.keep_log``): three list appends
        #: cost it a few nanoseconds, a call into this class and three array appends about 100 (0.2 s at a million
        #: jobs); moved into the arrays every ``spill_at`` changes and before any is read
        self.pending_times: list[float] = []
        self.pending_who: list[int] = []
        self.pending_used: list[int] = []
        self.spill_at = SPILL_AT
        #: per share number, when ``record`` last logged it and where in the pending lists
        self._logged: dict[int, tuple[float, int]] = {}
        #: Rare (one per share per ``update_share``): own limits in force after ``LoggedShare.limit``.
        self.limit_changes: list[LimitChange] = []

    def record(self, time: float, number: int, used: int) -> None:
        """A change of share ``number``'s use at ``time`` (as ``Pool.change`` logs it, for logs made by hand): its
        second change at one instant overwrites the first's use, so that the log has one entry per share and
        instant, where it first changed (a change that lasts no time is no step of its use over time)."""
        at = self._logged.get(number, (math.nan, -1))
        pending = self.pending_times
        if at[0] == time and at[1] < len(pending) and self.pending_who[at[1]] == number:
            self.pending_used[at[1]] = used
            return
        if len(pending) >= self.spill_at and pending[-1] != time:  # between instants only
            self.spill()
        self._logged[number] = (time, len(pending))
        pending.append(time)
        self.pending_who.append(number)
        self.pending_used.append(used)

    def spill(self) -> None:
        """The pending changes moved into the arrays (``fromlist``: in bulk; the lists emptied in place, as the
        engine holds them)."""
        if self.pending_times:
            self._times = _extended(self._times, self.pending_times)
            self._who = _extended(self._who, self.pending_who)
            self._used = _extended(self._used, self.pending_used)
            self.pending_times.clear()
            self.pending_who.clear()
            self.pending_used.clear()

    @property
    def times(self) -> array[float]:
        """Every change's time (the pending ones moved in first); ``who`` and ``used`` alike. Set, a column is
        replaced (the pending changes moved in first)."""
        self.spill()
        return self._times

    @times.setter
    def times(self, column: array[float]) -> None:
        self.spill()
        self._times = column

    @property
    def who(self) -> array[int]:
        self.spill()
        return self._who

    @who.setter
    def who(self, column: array[int]) -> None:
        self.spill()
        self._who = column

    @property
    def used(self) -> array[int]:
        self.spill()
        return self._used

    @used.setter
    def used(self, column: array[int]) -> None:
        self.spill()
        self._used = column

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        """Unpickled: also a log pickled before its changes were kept pending (its columns named ``times``, ``who``
        and ``used``, nothing pending)."""
        _, slots = state
        self.pending_times, self.pending_who, self.pending_used = [], [], []
        self.spill_at, self._logged = SPILL_AT, {}
        for name, value in slots.items():
            setattr(self, {"times": "_times", "who": "_who", "used": "_used"}.get(name, name), value)

    def record_limit(self, time: float, number: int, limit: int, lends: bool) -> None:
        self.limit_changes.append(LimitChange(time, number, limit, lends))

    def __len__(self) -> int:
        return len(self._times) + len(self.pending_times)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Times, share numbers and instances used after each change, as numpy arrays over the log's own memory."""
        self.spill()
        if not self._times:
            return np.empty(0, dtype=np.float64), np.empty(0, dtype=np.intc), np.empty(0, dtype=np.intc)
        return (np.frombuffer(self._times, dtype=np.float64), np.frombuffer(self._who, dtype=np.intc),
                np.frombuffer(self._used, dtype=np.intc))


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
        merged.who.extend(array("i", (number + offset for number in log.who)))
        merged.used.extend(log.used)
        merged.limit_changes.extend(change._replace(number=change.number + offset) for change in log.limit_changes)
    return merged
