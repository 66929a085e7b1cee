"""Service-job records as the API reports them, and the indexes that page ListServiceJobs in O(log n + page).

A record is what AWS keeps for a job (name, ARN, payload, tags, timestamps, attempts);
the scheduling state lives in the simulator's ``Job``. Lists are newest first: every
index (by queue, share and status, and by job name) holds job sequence numbers in
ascending order, and a page is a slice read backwards from the token (the sequence
number to continue below), so no filter scans the queue.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from policy_engine.foundation import limits

#: Most recent preempted attempts kept per job (``preemptionSummary.recentPreemptedAttempts``).
RECENT_PREEMPTIONS = limits.RECENT_PREEMPTED_ATTEMPTS.at_most
#: States a job never leaves.
FINAL = ("SUCCEEDED", "FAILED")
#: States in which a job holds capacity.
ACTIVE = ("SCHEDULED", "STARTING", "RUNNING")


class _AttemptBase(TypedDict):
    startedAt: float
    #: the SageMaker training job ARN of this attempt
    resource: str


class Attempt(_AttemptBase, total=False):
    """One attempt in simulated seconds; ``stoppedAt`` and ``statusReason`` once it ended."""

    stoppedAt: float
    statusReason: str


#: An index key: ``(queue,)``, ``(queue, share)`` or ``(queue, share or None, status)``.
IndexKey = tuple[str] | tuple[str, str] | tuple[str, str | None, str]


@dataclass(slots=True, eq=False)
class ServiceJob:
    """One submitted service job, complete from submission on; ``slots``: a hundred thousand must stay cheap.

    The request's fields never change (but ``priority``); the rest mirrors the engine as the job moves.
    """

    id: str
    arn: str
    name: str
    queue: str
    share: str
    #: ``serviceRequestPayload`` as submitted (a JSON text)
    payload: str
    tags: dict[str, str]
    retry: dict[str, Any] | None
    preemption_config: dict[str, Any] | None
    timeout: dict[str, Any] | None
    priority: int
    instance_type: str
    instances: int
    training_name: str
    client_token: str | None
    #: position in submission order: the job's key in every list index
    seq: int
    #: simulated seconds at submission
    created: float
    #: simulated run time (seconds) of every attempt
    duration: float
    preemption_retries: int | None
    #: the name of the training plan ``ResourceConfig.TrainingPlanArn`` names, if any
    training_plan: str | None = None
    #: ``StoppingCondition.MaxRuntimeSeconds``: how long a plan job may wait pending for its plan
    max_runtime: int | None = None
    initial_priority: int = field(init=False)
    status: str = "SUBMITTED"
    reason: str = ""
    scheduled: float | None = None
    started: float | None = None
    stopped: float | None = None
    attempts: list[Attempt] = field(default_factory=list)
    #: the most recent preempted attempts (``RECENT_PREEMPTIONS``), and how many there were in all
    preempted: list[Attempt] = field(default_factory=list)
    preempted_count: int = 0
    terminated: bool = False

    def __post_init__(self) -> None:
        self.initial_priority = self.priority


class JobIndex:
    """Records by id and by sequence; sorted sequence lists per (queue[, share][, status])."""

    def __init__(self) -> None:
        self.records: list[ServiceJob] = []
        self.by_id: dict[str, ServiceJob] = {}
        self.by_token: dict[tuple[str, str], ServiceJob] = {}
        self.lists: defaultdict[IndexKey, list[int]] = defaultdict(list)
        #: queue -> lower-case job name -> sequence numbers (ascending); names sorted on demand for prefixes
        self.names: defaultdict[str, dict[str, list[int]]] = defaultdict(dict)
        self._sorted_names: dict[str, list[str]] = {}
        #: (queue, share or None) -> its RUNNABLE jobs as ``(-priority, seq)``, ascending: scheduling order, so
        #: the front of a queue or share (GetJobQueueSnapshot) is a slice, not a pass over every waiting job
        self.waiting: defaultdict[tuple[str, str | None], list[tuple[int, int]]] = defaultdict(list)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def next_seq(self) -> int:
        """The sequence number the next added record must carry."""
        return len(self.records)

    def add(self, record: ServiceJob) -> None:
        if record.seq != len(self.records):
            raise ValueError(f"job {record.id} has sequence number {record.seq}, expected {len(self.records)}")
        self.records.append(record)
        self.by_id[record.id] = record
        if record.client_token:
            self.by_token[(record.queue, record.client_token)] = record
        lists = self.lists
        lists[(record.queue,)].append(record.seq)
        lists[(record.queue, record.share)].append(record.seq)
        self._enter(record, record.status)
        names = self.names[record.queue]
        lower = record.name.lower()
        if lower not in names:
            names[lower] = []
            self._sorted_names.pop(record.queue, None)
        names[lower].append(record.seq)

    def _enter(self, record: ServiceJob, status: str) -> None:
        lists = self.lists
        for key in ((record.queue, None, status), (record.queue, record.share, status)):
            seqs = lists[key]
            if not seqs or seqs[-1] < record.seq:
                seqs.append(record.seq)
            else:
                insort(seqs, record.seq)
        if status == "RUNNABLE":
            entry = (-record.priority, record.seq)
            for queue_key in ((record.queue, None), (record.queue, record.share)):
                insort(self.waiting[queue_key], entry)

    def _leave(self, record: ServiceJob, status: str) -> None:
        lists = self.lists
        for key in ((record.queue, None, status), (record.queue, record.share, status)):
            seqs = lists[key]
            at = bisect_left(seqs, record.seq)
            if at < len(seqs) and seqs[at] == record.seq:
                del seqs[at]
        if status == "RUNNABLE":
            entry = (-record.priority, record.seq)
            for queue_key in ((record.queue, None), (record.queue, record.share)):
                order = self.waiting[queue_key]
                at = bisect_left(order, entry)
                if at < len(order) and order[at] == entry:
                    del order[at]

    def reprioritise(self, record: ServiceJob, priority: int) -> None:
        """A new ``schedulingPriority``: a waiting job moves in its queue's and share's order."""
        if record.status == "RUNNABLE":
            self._leave(record, record.status)
            record.priority = priority
            self._enter(record, record.status)
        else:
            record.priority = priority

    def front(self, queue: str, share: str | None, size: int) -> list[ServiceJob]:
        """The first ``size`` RUNNABLE jobs of the queue (or of one share) in scheduling order: priority, then
        submission."""
        records = self.records
        return [records[seq] for _, seq in self.waiting.get((queue, share), ())[:size]]

    def move(self, record: ServiceJob, status: str) -> None:
        if status == record.status:
            return
        self._leave(record, record.status)
        record.status = status
        self._enter(record, status)

    def named(self, queue: str, pattern: str) -> list[int]:
        """Sequence numbers (ascending) of the queue's jobs whose name matches ``JOB_NAME``'s rule: case-insensitive,
        a trailing ``*`` matches a prefix."""
        names = self.names.get(queue, {})
        text = pattern.lower()
        if not text.endswith("*"):
            return names.get(text, [])
        prefix = text[:-1]
        ordered = self._sorted_names.get(queue)
        if ordered is None:
            ordered = self._sorted_names[queue] = sorted(names)
        found: list[int] = []
        for name in ordered[bisect_left(ordered, prefix):]:
            if not name.startswith(prefix):
                break
            found += names[name]
        found.sort()
        return found

    def drop_queue(self, queue: str) -> None:
        """Forget a deleted queue's jobs in the list indexes (a new queue of the same name starts empty);
        the records stay reachable by id, as AWS keeps describing jobs for a while."""
        for key in [key for key in self.lists if key[0] == queue]:
            del self.lists[key]
        for waiting_key in [waiting_key for waiting_key in self.waiting if waiting_key[0] == queue]:
            del self.waiting[waiting_key]
        self.names.pop(queue, None)
        self._sorted_names.pop(queue, None)

    def page(self, key: IndexKey | list[int], below: int | None, size: int, floor: int = 0,
             ) -> tuple[list[ServiceJob], int | None]:
        """Up to ``size`` records of index ``key`` (or of a list of sequence numbers), newest first, with
        ``floor <= seq < below``; and the next token (the last record's sequence number, when more remain)."""
        seqs: Sequence[int] = key if isinstance(key, list) else self.lists.get(key, ())
        end = len(seqs) if below is None else bisect_left(seqs, below)
        start = max(end - size, bisect_left(seqs, floor) if floor else 0)
        records = self.records
        found = [records[seqs[at]] for at in range(end - 1, start - 1, -1)]
        more = start > (bisect_left(seqs, floor) if floor else 0)
        return found, (found[-1].seq if more and found else None)

    def first_created_after(self, key: IndexKey, created: float, strictly: bool) -> int:
        """The smallest sequence number in index ``key`` created after (or at, unless ``strictly``) ``created``;
        creation times grow with sequence numbers, so this is a binary search."""
        seqs: Sequence[int] = self.lists.get(key, ())
        records = self.records
        low, high = 0, len(seqs)
        while low < high:
            middle = (low + high) // 2
            value = records[seqs[middle]].created
            if value > created or (not strictly and value == created):
                high = middle
            else:
                low = middle + 1
        return seqs[low] if low < len(seqs) else len(records)
