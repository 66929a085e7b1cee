"""A live queue's figures per quota share and instance type, from a bounded number of read-only Batch calls.

Used by ``batch-quota top`` and meant for a monitoring Lambda as well: it needs boto3 and the
standard library only (no pydantic, numpy or YAML; a test checks that importing it loads none).

Per read at most: 1 ``GetJobQueueSnapshot``; 1 ``ListQuotaShares`` (its answer is kept
``share_ttl`` seconds: limits change rarely); 1 ``ListServiceJobs`` page of RUNNABLE jobs per
share that has one (the count is capped at a page: ``waiting_capped``); 1 ``DescribeServiceJob``
per share's head job; 1 ``ListServiceJobs`` page of the queue's SCHEDULED jobs and 1
``DescribeServiceJob`` per SCHEDULED job not seen at the previous read (whether its payload names a
training plan, kept while it stays SCHEDULED). Own use is usage up to the share's limit, borrowed the
rest, less the instances of SCHEDULED plan jobs (``plan_held``: quota held for a training plan's window,
not in use; counted against the share's own part first); lent capacity is the pool's borrowed capacity
attributed to lenders in proportion to their idle capacity, as the simulator attributes it
(docs/simulator.md), in whole instances (``largest_remainder``: at one instant an instance is lent or not).
A ``serve`` endpoint marks its answers with ``CLOCK_HEADER``: its times are its simulated clock's.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from policy_engine.adapters.aws.clients import Api

#: Jobs per ListServiceJobs page (AWS's maximum): a share's waiting count is exact up to this.
PAGE = 100
#: Seconds a ListQuotaShares answer is reused.
SHARE_TTL_SECONDS = 60.0
#: Jobs of the front of the queue kept.
FRONT_SIZE = 10
#: The window of ``preemptions`` (seconds).
PREEMPTION_WINDOW_SECONDS = 3600.0
#: Shares that lend their idle capacity (borrowers' use above their limit comes from these).
LENDING = ("LEND", "LEND_AND_BORROW")
#: The response header ``batch-quota serve`` adds to every answer, valued ``SIMULATED``: the snapshot's
#: ``lastUpdatedAt`` is then the endpoint's simulated clock, not the account's.
CLOCK_HEADER, SIMULATED = "x-batch-quota-clock", "simulated"
_STARTED = "Batch Service Job Preemption Started"
_STATE_CHANGE = "Batch Service Job State Change"


@dataclass(frozen=True)
class HeadJob:
    """The first RUNNABLE job of a share, as DescribeServiceJob shows it."""

    job_id: str
    name: str
    priority: int | None
    instance_type: str | None
    age_seconds: float | None
    reason: str


@dataclass(frozen=True)
class ShareRow:
    """One share's figures for one instance type; ``preemptions`` is ``None`` where no events are available."""

    share: str
    instance_type: str
    strategy: str
    state: str
    limit: int
    used: int
    own: int
    borrowed: int
    #: whole instances of its idle limit borrowers use now (the reader's ``lent_split``)
    lent: int
    waiting: int
    waiting_capped: bool
    head: HeadJob | None
    preemptions: int | None
    #: of ``used``, the instances SCHEDULED plan jobs hold while they wait for their plan's window (or a free
    #: instance of it): quota held for the plan, not in use (``own`` and ``borrowed`` leave them out)
    plan_held: int = 0


@dataclass(frozen=True)
class FrontJob:
    """A job at the front of the queue; ``name`` and ``share`` when a listing of this read showed the job."""

    position: int
    job_id: str
    name: str | None
    share: str | None
    waiting_seconds: float | None


@dataclass(frozen=True)
class TypeTotals:
    """One instance type over every share of the queue."""

    instance_type: str
    limit: int
    used: int
    own: int
    borrowed: int
    lent: int
    waiting: int
    waiting_capped: bool
    preemptions: int | None
    plan_held: int = 0


@dataclass(frozen=True)
class QueueFigures:
    """One read of a queue: ``taken_at_ms`` is the snapshot's time (the account's clock, or ``serve``'s)."""

    queue: str
    taken_at_ms: int
    rows: tuple[ShareRow, ...]
    front: tuple[FrontJob, ...]
    totals: tuple[TypeTotals, ...]
    #: operation -> calls made by this read
    calls: dict[str, int]
    #: ``taken_at_ms`` is ``serve``'s simulated clock (its answers carry ``CLOCK_HEADER``), not the account's
    simulated_clock: bool = False


#: How a type's lent instances are split among its lending shares: ``(idle instances per lender, instances
#: lent in all) -> whole instances per lender``. AWS does not say whose idle capacity a borrower takes.
LentSplit = Callable[[Mapping[str, int], int], dict[str, int]]


def largest_remainder(idle: Mapping[str, int], lent: int) -> dict[str, int]:
    """``lent`` instances split in proportion to each lender's idle ones, in whole instances: each gets the whole
    part of its share, then the instances left go one each to the largest fractions (ties: by name).
    They add up to ``lent`` (at most the idle ones) and none passes its idle instances."""
    total = sum(idle.values())
    lent = min(lent, total)
    if not lent:
        return dict.fromkeys(idle, 0)
    whole = {name: amount * lent // total for name, amount in idle.items()}
    left = lent - sum(whole.values())
    by_fraction = sorted(idle, key=lambda name: (-(idle[name] * lent % total), name))
    for name in by_fraction[:left]:
        whole[name] += 1
    return whole


class QueueReader:
    """Reads ``queue``'s figures through ``api``; keeps the share list ``share_ttl`` seconds between reads.
    ``lent_split`` splits a type's lent instances among its lenders (``largest_remainder``)."""

    def __init__(self, api: Api, queue: str, share_ttl: float = SHARE_TTL_SECONDS,
                 clock: Callable[[], float] = time.monotonic, front_size: int = FRONT_SIZE, workers: int = 8,
                 lent_split: LentSplit | None = None) -> None:
        self.api = api
        self.lent_split = lent_split or largest_remainder
        #: calls in flight at once (botocore clients are thread-safe; ``ClientOptions.workers`` sizes the pool)
        self.workers = workers
        self.queue = queue
        self.share_ttl = share_ttl
        self.front_size = front_size
        self._clock = clock
        self._shares: list[dict[str, Any]] | None = None
        self._shares_read_at = 0.0
        #: SCHEDULED jobs of the last read -> the training plan ARN their payload names (``None``: none)
        self._plans: dict[str, str | None] = {}

    def shares(self) -> list[dict[str, Any]]:
        """The queue's quota shares (``ListQuotaShares``), read again after ``share_ttl`` seconds."""
        now = self._clock()
        if self._shares is None or now - self._shares_read_at >= self.share_ttl:
            shares: list[dict[str, Any]] = []
            for page in self.api.pages("ListQuotaShares", f"quota shares of job queue {self.queue}",
                                       jobQueue=self.queue):
                shares += page.get("quotaShares", [])
            self._shares = sorted(shares, key=lambda s: s["quotaShareName"])
            self._shares_read_at = now
        return self._shares

    def read(self, preemptions: Callable[[int], Mapping[tuple[str, str], int]] | None = None) -> QueueFigures:
        """One read. ``preemptions(now_ms)`` gives preemptions per (share, instance type) in the window before
        ``now_ms``; without it the rows' ``preemptions`` are ``None``."""
        before = Counter(self.api.calls)
        snapshot = self.api.call("GetJobQueueSnapshot", f"job queue {self.queue}", jobQueue=self.queue)
        shares = self.shares()
        now_ms = int(snapshot.get("queueUtilization", {}).get("lastUpdatedAt")
                     or snapshot.get("frontOfQueue", {}).get("lastUpdatedAt") or time.time() * 1000)
        usage = _share_usage(snapshot)
        heads = {name: jobs[0]["jobArn"] for name, jobs in
                 (snapshot.get("frontOfQuotaShares", {}).get("quotaShares") or {}).items() if jobs}
        # the pages and the heads' descriptions do not depend on each other: ``workers`` calls in flight at once
        pages, head_jobs = self._pages_and_heads(sorted(heads), heads, now_ms)
        waiting: dict[str, Counter[str]] = {}
        capped: dict[str, bool] = {}
        known: dict[str, tuple[str | None, str | None]] = {}  # job ARN -> (name, share), from the listings
        for share, page in pages.items():
            counts: Counter[str] = Counter()
            for summary in page.get("jobSummaryList", []):
                known[summary["jobArn"]] = (summary.get("jobName", ""), share)
                for item in summary.get("capacityUsage") or [{"capacityUnit": "?"}]:
                    counts[item["capacityUnit"]] += 1
            waiting[share] = counts
            capped[share] = bool(page.get("nextToken"))
        for share, head in head_jobs.items():
            known.setdefault(heads[share], (head.name, share))
        counted = dict(preemptions(now_ms)) if preemptions is not None else None
        rows = _rows(shares, usage, waiting, capped, head_jobs, counted, self._plan_held(), self.lent_split)
        front = []
        for position, job in enumerate(snapshot.get("frontOfQueue", {}).get("jobs", [])[:self.front_size], 1):
            name, job_share = known.get(job["jobArn"], (None, None))
            front.append(FrontJob(position, _job_id(job["jobArn"]), name, job_share,
                                  _age(now_ms, job.get("earliestTimeAtPosition"))))
        calls = {op: n for op, n in (Counter(self.api.calls) - before).items() if n}
        headers = (snapshot.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
        return QueueFigures(self.queue, now_ms, rows, tuple(front), _totals(rows), calls,
                            headers.get(CLOCK_HEADER) == SIMULATED)

    def _pages_and_heads(self, shares: list[str], heads: Mapping[str, str], now_ms: int
                         ) -> tuple[dict[str, dict[str, Any]], dict[str, HeadJob]]:
        def page(share: str) -> dict[str, Any]:
            return self.api.call("ListServiceJobs", f"RUNNABLE jobs of quota share {share}", jobQueue=self.queue,
                                 jobStatus="RUNNABLE", maxResults=PAGE,
                                 filters=[{"name": "QUOTA_SHARE_NAME", "values": [share]}])

        if self.workers <= 1 or len(shares) <= 1:
            return ({share: page(share) for share in shares},
                    {share: self._head(heads[share], now_ms) for share in shares})
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(self.workers) as pool:
            pages = {share: pool.submit(page, share) for share in shares}
            described = {share: pool.submit(self._head, heads[share], now_ms) for share in shares}
            return ({share: future.result() for share, future in pages.items()},
                    {share: future.result() for share, future in described.items()})

    def _plan_held(self) -> Counter[tuple[str, str]]:
        """Instances of SCHEDULED plan jobs per (share, instance type): one page of the queue's SCHEDULED jobs, and
        each one's payload read once (a job's ``ResourceConfig.TrainingPlanArn`` never changes)."""
        page = self.api.call("ListServiceJobs", f"SCHEDULED jobs of job queue {self.queue}", jobQueue=self.queue,
                             jobStatus="SCHEDULED", maxResults=PAGE)
        held: Counter[tuple[str, str]] = Counter()
        plans: dict[str, str | None] = {}
        for summary in page.get("jobSummaryList", []):
            arn = summary["jobArn"]
            plan = self._plans[arn] if arn in self._plans else self._plan_of(arn)
            plans[arn] = plan
            if plan is not None:
                for item in summary.get("capacityUsage") or []:
                    held[(summary.get("quotaShareName", ""), item["capacityUnit"])] += round(item["quantity"])
        self._plans = plans
        return held

    def _plan_of(self, arn: str) -> str | None:
        job = self.api.call("DescribeServiceJob", f"service job {arn}", jobId=_job_id(arn))
        try:
            plan = json.loads(job.get("serviceRequestPayload") or "{}").get("ResourceConfig", {}).get("TrainingPlanArn")
        except (ValueError, AttributeError):
            return None
        return plan if isinstance(plan, str) and plan else None

    def _head(self, arn: str, now_ms: int) -> HeadJob:
        job = self.api.call("DescribeServiceJob", f"service job {arn}", jobId=_job_id(arn))
        usage = job.get("capacityUsage") or []
        return HeadJob(job.get("jobId", _job_id(arn)), job.get("jobName", ""), job.get("schedulingPriority"),
                       usage[0]["capacityUnit"] if usage else None, _age(now_ms, job.get("createdAt")),
                       job.get("statusReason", ""))


def _job_id(arn: str) -> str:
    return arn.rsplit("/", 1)[-1]


def _age(now_ms: int, since_ms: Any) -> float | None:
    if not isinstance(since_ms, int | float) or not since_ms:
        return None
    return max(0.0, (now_ms - since_ms) / 1000)


def _share_usage(snapshot: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """share -> instance type -> instances in use, from the snapshot's utilisation."""
    utilisation = snapshot.get("queueUtilization", {}).get("quotaShareUtilization", {})
    return {entry["quotaShareName"]: {item["capacityUnit"]: round(item["quantity"])
                                      for item in entry.get("capacityUsage", [])}
            for entry in utilisation.get("topCapacityUtilization", [])}


def _rows(shares: list[dict[str, Any]], usage: dict[str, dict[str, int]], waiting: dict[str, Counter[str]],
          capped: dict[str, bool], heads: dict[str, HeadJob], preemptions: dict[tuple[str, str], int] | None,
          plan_held: Counter[tuple[str, str]] | None = None, lent_split: LentSplit = largest_remainder
          ) -> tuple[ShareRow, ...]:
    entries = []
    for share in shares:
        name = share["quotaShareName"]
        strategy = (share.get("resourceSharingConfiguration") or {}).get("strategy", "?")
        limits = {item["capacityUnit"]: int(item["maxCapacity"]) for item in share.get("capacityLimits", [])}
        for unit in usage.get(name, {}):
            limits.setdefault(unit, 0)  # in use without a limit for it: shown, not hidden
        for unit, limit in limits.items():
            used = usage.get(name, {}).get(unit, 0)
            entries.append((name, unit, strategy, share.get("state", "?"), limit, used))
    borrowed: Counter[str] = Counter()
    lender_idle: dict[str, dict[str, int]] = {}
    for name, unit, strategy, _, limit, used in entries:
        borrowed[unit] += max(0, used - limit)
        if strategy in LENDING:
            lender_idle.setdefault(unit, {})[name] = max(0, limit - used)
    lent_now = {unit: lent_split(idle, borrowed[unit]) for unit, idle in lender_idle.items()}
    rows = []
    for name, unit, strategy, state, limit, used in entries:
        lent = lent_now.get(unit, {}).get(name, 0)
        head = heads.get(name)
        if head is not None and head.instance_type not in (None, unit):
            head = None  # shown on the row of its own instance type
        own, above = min(used, limit), max(0, used - limit)
        held = min(used, (plan_held or Counter())[(name, unit)])
        held_own = min(held, own)  # held for a plan: out of the share's own part first, then the borrowed
        rows.append(ShareRow(name, unit, strategy, state, limit, used, own - held_own, above - (held - held_own),
                             lent, waiting.get(name, Counter())[unit], capped.get(name, False), head,
                             None if preemptions is None else preemptions.get((name, unit), 0), held))
    return tuple(rows)


def _totals(rows: tuple[ShareRow, ...]) -> tuple[TypeTotals, ...]:
    out = []
    for unit in sorted({row.instance_type for row in rows}):
        of = [row for row in rows if row.instance_type == unit]
        counts = [row.preemptions for row in of]
        out.append(TypeTotals(unit, sum(r.limit for r in of), sum(r.used for r in of), sum(r.own for r in of),
                              sum(r.borrowed for r in of), sum(r.lent for r in of),
                              sum(r.waiting for r in of), any(r.waiting_capped for r in of),
                              None if None in counts else sum(c for c in counts if c is not None),
                              sum(r.plan_held for r in of)))
    return tuple(out)


#: The most an events file is read in one refresh; the rest is read at the next ones.
READ_CHUNK = 16 * 1024 * 1024
#: The longest line an event may be; a longer one is counted as unreadable and skipped.
MAX_LINE = 1024 * 1024


class EventsFileError(Exception):
    """The events file cannot be followed (a FIFO, a device, a folder): one line, exit 2."""


@dataclass
class PreemptionLog:
    """Preemptions read from a JSON Lines file of EventBridge events (``serve --events``, or an archive of the
    account's events), read incrementally: each ``counts`` call reads only what was appended since."""

    path: str
    _offset: int = 0
    _jobs: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # job ARN -> (queue ARN, share, type)
    _started: list[tuple[int, str]] = field(default_factory=list)  # (epoch ms, job ARN)
    #: lines that are not JSON, or a State Change / Preemption Started event without the fields read
    unreadable: int = 0

    def read(self) -> None:
        """What was appended since the last read, as every input is read (``input_files.open_input``: a regular
        file only, never a FIFO or ``/dev/zero``), at most ``READ_CHUNK`` bytes a call and ``MAX_LINE`` a line."""
        from datetime import datetime

        from policy_engine.inputs import input_files

        try:
            handle = input_files.open_input(self.path, input_files.EVENTS)
        except input_files.InputFileError as error:
            if not os.path.lexists(self.path):
                return  # not written yet: no preemptions so far
            raise EventsFileError(str(error)) from None
        with handle:
            size = os.fstat(handle.fileno()).st_size
            if size < self._offset:  # truncated (a new serve run): start over
                self._offset, self._jobs, self._started, self.unreadable = 0, {}, [], 0
            handle.seek(self._offset)
            data = handle.read(READ_CHUNK)
        complete = data.rfind(b"\n") + 1  # a line still being written is read next time
        if not complete and len(data) >= MAX_LINE:  # one line longer than any event: skipped, counted
            self.unreadable += 1
            self._offset += len(data)
            return
        self._offset += complete
        for line in data[:complete].splitlines():
            if len(line) > MAX_LINE:
                self.unreadable += 1
                continue
            try:
                event = json.loads(line)
                kind, detail = event["detail-type"], event["detail"]
                if kind == _STATE_CHANGE:
                    usage = detail.get("capacityUsage") or [{"capacityUnit": "?"}]
                    self._jobs[detail["jobArn"]] = (detail["jobQueue"], detail["quotaShareName"],
                                                    usage[0]["capacityUnit"])
                elif kind == _STARTED:
                    at = datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S%z")
                    self._started.append((int(at.timestamp() * 1000), detail["preemptedJobArn"]))
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):  # deep nesting too
                self.unreadable += 1

    def counts(self, queue: str, now_ms: int, window: float = PREEMPTION_WINDOW_SECONDS) -> dict[tuple[str, str], int]:
        """Preemptions Started in ``(now_ms - window, now_ms]`` of jobs of ``queue`` (name or ARN), per
        (share, instance type)."""
        self.read()
        since = now_ms - window * 1000
        out: Counter[tuple[str, str]] = Counter()
        for at, arn in self._started:
            job = self._jobs.get(arn)
            if job is not None and since < at <= now_ms and queue in (job[0], job[0].rsplit("/", 1)[-1]):
                out[(job[1], job[2])] += 1
        return dict(out)
