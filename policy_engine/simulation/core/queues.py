"""Waiting lines: one per share and instance type, ordered by priority then submission.

A binary heap keyed ``(-priority, submitted, seq)``; a priority update pushes a new
entry and the old one is skipped when it surfaces (lazy invalidation), so every
operation stays O(log n) even with a million waiting jobs.

With backfill the line keeps its jobs in one such heap per distinct job size instead:
"the first job in line order that fits in k instances" is then the smallest top among the
heaps of sizes <= k, found in O(sizes + log n) instead of a scan of the line, and the head
is the smallest top of all (one heap operation per job, as without the index). The sizes a
share can ever run are bounded by its reach, so that is O(log n).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from policy_engine.simulation.core.jobs import Job, Status

if TYPE_CHECKING:
    from policy_engine.simulation.core.capacity import ShareCapacity

_RUNNABLE: Final = Status.RUNNABLE
#: ``(-priority, submitted, seq, version, job)``: line order, then the version that tells a stale entry
Entry = tuple[int, float, int, int, Job]


def _top(heap: list[Entry]) -> Entry | None:
    """The heap's first live entry (stale entries surfacing on top are dropped)."""
    while heap:
        entry = heap[0]
        job = entry[4]
        if job.status is _RUNNABLE and job.version == entry[3]:
            return entry
        heapq.heappop(heap)
    return None


def _second(heap: list[Entry]) -> Entry | None:
    """The live entry after the (live) top: the smaller child of the root when both children are live,
    which is the common case; otherwise the top is taken out for the look and put back."""
    size = len(heap)
    if size >= 3:
        left, right = heap[1], heap[2]
        if (left[4].status is _RUNNABLE and left[4].version == left[3]
                and right[4].status is _RUNNABLE and right[4].version == right[3]):
            return left if left < right else right
    elif size == 2:
        child = heap[1]
        return child if child[4].status is _RUNNABLE and child[4].version == child[3] else None
    else:
        return None
    held = heapq.heappop(heap)
    entry = _top(heap)
    heapq.heappush(heap, held)
    return entry


class Line:
    """The jobs of one share waiting for one instance type; ``first`` is its head (``None`` when empty).

    The head is kept up to date by every change of the line (the only way a waiting job leaves it,
    changes priority or joins it), so the scheduling steps read it as an attribute, many times per job.
    """

    __slots__ = ("_by_size", "_deep", "_first_entry", "_heap", "_key", "_sizes", "first", "waiting")

    def __init__(self, indexed: bool, deep: dict[ShareCapacity, None], key: ShareCapacity) -> None:
        self._heap: list[Entry] = []  # every entry, unless ``indexed``
        self.waiting = 0
        #: the head and its entry, always on top of its heap (stale entries above it are dropped)
        self.first: Job | None = None
        self._first_entry: Entry | None = None
        #: size -> heap of the entries of that size, instead of ``_heap`` (only when ``indexed``: backfill asks
        #: by size)
        self._by_size: dict[int, list[Entry]] | None = {} if indexed else None
        self._sizes: list[int] = []  # the keys of ``_by_size``, ascending
        #: ``deep[key]`` is set while two or more jobs wait (someone behind the head: backfill looks here)
        self._deep, self._key = deep, key

    def _index(self, by_size: dict[int, list[Entry]], entry: Entry) -> None:
        # misconfigured jobs too: a topology update can make them runnable (and one never fits while it is not)
        size = entry[4].spec.instances
        heap = by_size.get(size)
        if heap is None:
            heap = by_size[size] = []
            self._sizes.append(size)
            self._sizes.sort()
        heapq.heappush(heap, entry)

    def _settle(self) -> None:
        """The head left or changed: the first live entry is the head (stale entries on top are dropped)."""
        by_size = self._by_size
        if by_size is not None:  # the smallest live top of the size heaps (a handful)
            best = None
            for size in self._sizes:
                entry = _top(by_size[size])
                if entry is not None and (best is None or entry < best):
                    best = entry
            self._first_entry = best
            self.first = None if best is None else best[4]
            return
        heap = self._heap
        while heap:
            entry = heap[0]
            job = entry[4]
            if job.status is _RUNNABLE and job.version == entry[3]:
                self._first_entry = entry
                self.first = job
                return
            heapq.heappop(heap)
        self._first_entry = None
        self.first = None

    def push(self, job: Job) -> bool:
        """Add a RUNNABLE job (new, retried or preempted: it keeps its submission time); whether it is the head now."""
        job.version += 1
        entry = (-job.priority, job.spec.submit_at, job.seq, job.version, job)
        self.waiting += 1
        by_size = self._by_size
        if by_size is None:
            heapq.heappush(self._heap, entry)
        else:
            self._index(by_size, entry)
            if self.waiting >= 2:
                self._deep[self._key] = None
        top = self._first_entry
        if top is None or entry < top:
            self._first_entry = entry
            self.first = job
            return True
        return False

    def reprioritise(self, job: Job) -> None:
        """Re-key a waiting job after ``UpdateServiceJob``; its old entry becomes stale."""
        was_first = job is self.first
        job.version += 1
        entry = (-job.priority, job.spec.submit_at, job.seq, job.version, job)
        if self._by_size is None:
            heapq.heappush(self._heap, entry)
        else:
            self._index(self._by_size, entry)
        top = self._first_entry
        if was_first:
            self._settle()  # its old entry on top is stale
        elif top is None or entry < top:
            self._first_entry = entry
            self.first = job

    def pop_head(self) -> Job:
        """Remove the head (it is being placed or terminated)."""
        job = self.first
        assert job is not None
        self.pop_known_head()
        return job

    def pop_known_head(self) -> None:
        """Remove the head (its entry is on top of its heap)."""
        by_size = self._by_size
        if by_size is None:
            heapq.heappop(self._heap)
        else:
            head = self.first
            assert head is not None
            heapq.heappop(by_size[head.spec.instances])
            if self.waiting == 2:
                del self._deep[self._key]  # nobody behind the head any more
        self.waiting -= 1
        self._settle()

    def _left(self) -> None:
        """One job fewer waits; with one left, nobody is behind the head for backfill."""
        self.waiting -= 1
        if self.waiting == 1 and self._by_size is not None:
            del self._deep[self._key]

    def first_fitting(self, most: int, skip: Job | None) -> Job | None:
        """The first job in line order, other than ``skip``, of at most ``most`` instances (indexed lines only)."""
        by_size = self._by_size
        if by_size is None:
            raise ValueError("first_fitting needs a line indexed by size (backfill)")
        best = None
        for size in self._sizes:
            if size > most:
                break
            heap = by_size[size]
            entry = _top(heap)
            if entry is None:
                continue
            if entry[4] is skip:  # the next one of this size
                entry = _second(heap)
                if entry is None:
                    continue
            if best is None or entry < best:
                best = entry
        return None if best is None else best[4]

    def in_order(self) -> Iterator[Job]:
        """Waiting jobs in line order (O(n log n); for reports, not the hot path)."""
        by_size = self._by_size
        entries = self._heap if by_size is None else [entry for heap in by_size.values() for entry in heap]
        for entry in sorted(entries):
            job = entry[4]
            if job.status is _RUNNABLE and job.version == entry[3]:
                yield job

    def remove(self, job: Job) -> None:
        """Take a waiting job out of the line from anywhere (backfill placement, termination)."""
        job.version += 1  # its entry is now stale
        self._left()
        if job is self.first:
            self._settle()

    def __len__(self) -> int:
        return self.waiting
