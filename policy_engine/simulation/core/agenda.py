"""The scheduling state of one pool: which heads to look at, in which step, and which wait for capacity.

Each step has its own heap of heads (own capacity, reclaim, in-share preemption ordered by
priority; borrowing a persistent FIFO by submission time). Entries are never removed in place:
an entry whose job is no longer the head of its line is skipped when it surfaces.
"""

from __future__ import annotations

from policy_engine.simulation.core.capacity import Pool, ShareCapacity
from policy_engine.simulation.core.jobs import Job

#: A head in a priority-ordered step: ``(-priority, submitted, seq, job, share)``.
HeadEntry = tuple[int, float, int, Job, ShareCapacity]
#: A borrowing head, first come first served: ``(submitted, seq, job, share)``.
BorrowEntry = tuple[float, int, Job, ShareCapacity]


class Agenda:
    """Which heads of one pool's lines may be placed by which step, and which wait for capacity."""

    __slots__ = ("borrow", "borrow_member", "deep", "dirty", "fill_from", "fresh", "own", "pool", "position",
                 "preempt", "preempt_member", "protected", "reclaim", "settled", "waiting")

    def __init__(self, pool: Pool):
        self.pool = pool
        #: lines whose head may have changed: classified again before the next step
        self.dirty: dict[ShareCapacity, None] = {}
        self.own: list[HeadEntry] = []
        self.reclaim: list[HeadEntry] = []
        self.borrow: list[BorrowEntry] = []  # persistent: a head keeps its place while it waits
        self.borrow_member: dict[ShareCapacity, Job] = {}
        self.preempt: list[HeadEntry] = []
        self.preempt_member: dict[ShareCapacity, Job] = {}
        self.waiting: dict[ShareCapacity, None] = {}  # heads that failed reclaim / in-share preemption
        #: of those, heads whose victims were found but not all preemptible yet (``min_runtime``): a placement
        #: since may change which set their search takes, so a change to their line makes them look again
        self.protected: dict[ShareCapacity, None] = {}
        #: lines with a job behind the head (set by the line, dropped by backfill): backfill's candidates
        self.deep = pool.deep
        self.position = {share: index for index, share in enumerate(pool.shares)}
        #: backfill found nothing, and since then no capacity was freed and no job joined a line of the pool:
        #: placements only take capacity, so it would find nothing again
        self.settled = False
        #: lines a job joined (behind its head) since backfill settled: only their new jobs could fit now
        self.fresh: dict[ShareCapacity, None] = {}
        #: pool position where backfill resumes: the lines before it had nothing that fits, and only placements
        #: happened since (0 again whenever ``settled`` is reset)
        self.fill_from = 0

    def retry_waiting(self) -> None:
        """Heads that failed reclaim or in-share preemption look again: capacity or the victims changed."""
        if self.waiting:
            self.dirty.update(self.waiting)
            self.waiting.clear()
            self.protected.clear()
