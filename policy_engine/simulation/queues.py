"""Waiting lines: one per share and instance type, ordered by priority then submission.

A binary heap keyed ``(-priority, submitted, seq)``; a priority update pushes a new
entry and the old one is skipped when it surfaces (lazy invalidation), so every
operation stays O(log n) even with a million waiting jobs.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from policy_engine.simulation.jobs import Job, Status


class Line:
    """The jobs of one share waiting for one instance type."""

    __slots__ = ("_heap", "waiting")

    def __init__(self) -> None:
        self._heap: list[tuple[int, float, int, int, Job]] = []
        self.waiting = 0

    def push(self, job: Job) -> None:
        """Add a RUNNABLE job (new, retried or preempted: it keeps its submission time)."""
        job.version += 1
        heapq.heappush(self._heap, (-job.priority, job.spec.submit_at, job.seq, job.version, job))
        self.waiting += 1

    def reprioritise(self, job: Job) -> None:
        """Re-key a waiting job after ``UpdateServiceJob``; its old entry becomes stale."""
        job.version += 1
        heapq.heappush(self._heap, (-job.priority, job.spec.submit_at, job.seq, job.version, job))

    def head(self) -> Job | None:
        heap = self._heap
        while heap:
            entry = heap[0]
            job = entry[4]
            if job.status is Status.RUNNABLE and job.version == entry[3]:
                return job
            heapq.heappop(heap)
        return None

    def pop_head(self) -> Job:
        """Remove the head (it is being placed or terminated)."""
        job = self.head()
        assert job is not None
        heapq.heappop(self._heap)
        self.waiting -= 1
        return job

    def pop_known_head(self) -> None:
        """Remove the head just returned by ``head()`` (no stale entry can be on top of it)."""
        heapq.heappop(self._heap)
        self.waiting -= 1

    def in_order(self) -> Iterator[Job]:
        """Waiting jobs in line order (O(n log n); for backfill and reports, not the hot path)."""
        for entry in sorted(self._heap):
            job = entry[4]
            if job.status is Status.RUNNABLE and job.version == entry[3]:
                yield job

    def remove(self, job: Job) -> None:
        """Take a waiting job out of the line from anywhere (backfill placement)."""
        job.version += 1  # its entry is now stale
        self.waiting -= 1

    def __len__(self) -> int:
        return self.waiting
