"""What a simulation hands to reports: per-job records, per-attempt segments, metrics.

Everything a timeline or utilisation chart needs is here, so reports never re-run
the simulation. ``to_json()`` is the ``--format json`` shape (docs/simulator.md).
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO, overload

import numpy as np

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.core.jobs import (
    ACTIVE,
    FINAL,
    SUCCEEDED,
    AttemptRecord,
    Job,
    JobSpec,
    Status,
    attempts,
    waits_of,
)
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.reasons import reason as job_reason
from policy_engine.simulation.results.capacity_hours import CapacityHours, capacity_hours
from policy_engine.simulation.results.job_json import CHUNK, write_jobs
from policy_engine.simulation.results.job_json import KEYS as JSON_KEYS
from policy_engine.simulation.results.metrics import ShareMetrics, share_metrics, summary
from policy_engine.simulation.results.numbers import as_number, plain
from policy_engine.simulation.usage import UsageLog

if TYPE_CHECKING:
    from typing import SupportsFloat

    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.core.capacity import ShareCapacity, UtilisationSample
    from policy_engine.simulation.core.jobs import LiveState
    from policy_engine.simulation.plan_windows import PlanReport
    from policy_engine.simulation.settings import Action, SimulationSettings
    from policy_engine.simulation.view import EngineView


class JobRecord(NamedTuple):
    name: str
    share: str
    instance_type: str
    instances: int
    priority: int
    status: str
    reason: str
    submitted_at: float
    started_at: float | None
    finished_at: float | None
    #: its time RUNNABLE (``core.jobs.runnable_seconds``): submission to its first placement, plus every requeue
    #: (after a preemption, a failed attempt or a capacity retry) to the next placement, plus, if it never ran
    #: again, to its end or the report time. Not its SCHEDULED time waiting for a plan's window (placed: that is
    #: ``plan_hold_seconds``). Until this release it ran to the first placement only (README, "Changelog").
    wait_seconds: float
    preemptions: int
    attempts: tuple[AttemptRecord, ...]
    #: the training plan it ran on (``None``: on-demand, billed per instance-second RUNNING; ``outputs.billable``)
    training_plan: str | None = None
    #: seconds between its checkpoints (``None``: none): what a preempted attempt loses is read from it
    checkpoint_interval: float | None = None
    #: times its plan's 2 days pending ended and it was requeued without spending an attempt (``plan_pending_end:
    #: requeue``); in ``--format json`` for a topology with training plans
    capacity_retries: int = 0

    def to_json(self) -> JsonObject:
        """The job object of ``--format json`` (exactly the documented keys)."""
        return {
            "name": self.name,
            "share": self.share,
            "instance_type": self.instance_type,
            "instances": self.instances,
            "training_plan": self.training_plan,
            "status": self.status,
            "preemptions": self.preemptions,
            "reason": self.reason,
            "submitted_at": as_number(self.submitted_at),
            "started_at": as_number(self.started_at),
            "finished_at": as_number(self.finished_at),
            "wait_seconds": as_number(self.wait_seconds),
        }


@dataclass(frozen=True)
class SimulationResult:
    time: float
    jobs: Sequence[JobRecord]  # a ``JobRecords`` from the engine; a list after a merge
    shares: list[ShareMetrics]
    #: cluster-wide figures, as ``simulate --format json``'s ``summary`` (docs/simulator.md)
    summary: JsonObject
    #: Only with ``SimulationSettings(utilisation_series=True)``; sorted by time.
    utilisation: list[UtilisationSample] | None = field(default=None)
    #: Only with ``SimulationSettings(usage_log=True)``: every usage change, for the HTML report's aggregates.
    usage: UsageLog | None = field(default=None)
    #: What the run did with its training plans (``plan_windows.PlanReport``); ``None`` without plans.
    plans: PlanReport | None = field(default=None)
    #: Instance-hours per share and per environment (what costs are priced from); every built result has it.
    hours: CapacityHours | None = field(default=None)

    def job(self, name: str) -> JobRecord:
        return next(record for record in self.jobs if record.name == name)

    def to_json(self) -> JsonObject:
        return {
            "time": as_number(self.time),
            "jobs": [record.to_json() for record in self.jobs],
            "shares": plain([metrics.to_json() for metrics in self.shares]),
            "summary": plain(self.summary),
        }

    def write_json(self, handle: TextIO, extra: JsonObject | None = None,
                   job_fields: dict[str, Sequence[object]] | None = None) -> None:
        """Write ``json.dumps(self.to_json())``, the jobs a chunk at a time from columns (``job_json``): a million
        jobs never sit in memory twice.

        ``extra`` keys (e.g. observed vs simulated figures) are added after ``summary``; ``job_fields``, one value
        per job for each key (e.g. the cause it waited longest for), to each job's object.
        """
        handle.write(f'{{"time": {json.dumps(as_number(self.time), allow_nan=False)}, "jobs": [')
        write_jobs(handle, json_chunks(self.jobs, CHUNK), job_fields or {})
        handle.write(f'], "shares": {json.dumps(plain([m.to_json() for m in self.shares]), allow_nan=False)}, '
                     f'"summary": {json.dumps(plain(self.summary), allow_nan=False)}')
        for key, value in (extra or {}).items():
            handle.write(f", {json.dumps(key)}: {json.dumps(plain(value), allow_nan=False)}")
        handle.write("}")


_new = tuple.__new__  # JobRecord from one tuple, without _make's checks: a million times
#: How many values ``_record`` builds a record from.
_FIELDS = 13


def _record(spec: JobSpec, priority: int, status: Status, reason: str, started_at: float | None,
            finished_at: float | None, wait: float, preemptions: int, ended: tuple[AttemptRecord, ...],
            attempt_start: float, borrowed: bool, run_started: float | None = None,
            capacity_retries: int = 0) -> JobRecord:
    return _new(JobRecord, (spec.name, spec.share, spec.instance_type, spec.instances, priority, status.value,
                            reason, spec.submit_at, started_at, finished_at, wait, preemptions,
                            attempts(ended, status, attempt_start, finished_at, borrowed, run_started),
                            spec.training_plan, spec.checkpoint_interval, capacity_retries))


#: A job's timeline: what its record's attempts are built from (``jobs.attempts``), without its reason's wording or
#: its wait: ``(spec, priority, status, finished_at, ended attempts, last attempt's start, placed borrowed)``. What
#: ``results.wait_causes`` reads, a third of the cost of building records at a million jobs.
Timeline = tuple[JobSpec, int, Status, "float | None", tuple[AttemptRecord, ...], float, bool]

_spec, _finished_at, _segments, _attempt_start, _borrowed = (
    attrgetter(name) for name in ("spec", "finished_at", "segments", "attempt_start", "placed_borrowed"))


def _from_record(record: JobRecord) -> Timeline:
    """A record's timeline: its attempts split back into the ended ones and the last (``jobs.attempts``). Its spec
    carries what a record keeps (a record has no duration: 0) as the engine's types (a record built by hand may
    hold numpy numbers)."""
    spec = JobSpec(record.name, record.share, record.instance_type, int(record.instances), int(record.priority),
                   float(record.submitted_at), 0.0)
    ended, start, borrowed, status = record.attempts, 0.0, False, Status(record.status)
    if ended and (status is Status.SUCCEEDED or status in ACTIVE):
        ended, start, borrowed = ended[:-1], ended[-1].start, ended[-1].borrowed
    return spec, int(record.priority), status, record.finished_at, ended, start, borrowed


def _open_timeline(fields: tuple[Any, ...]) -> Timeline:
    """The timeline of an open job, from the fields ``_record`` builds its record from."""
    return fields[0], fields[1], fields[2], fields[5], fields[8], fields[9], fields[10]


def job_timelines(jobs: Sequence[JobRecord]) -> Iterator[Timeline]:
    """Each job's ``Timeline``, in order: read from the columns of a result's records, else from each record."""
    if isinstance(jobs, JobRecords):
        return jobs.timelines()
    if isinstance(jobs, RecordColumns):
        columns = jobs._columns
        return zip(columns[0], columns[1], columns[2], columns[5], columns[8], columns[9], columns[10], strict=True)
    return map(_from_record, jobs)


def json_chunks(jobs: Sequence[JobRecord], size: int) -> Iterator[Mapping[str, Sequence[Any]]]:
    """The fields of ``JobRecord.to_json`` as columns, ``size`` jobs at a time: from a result's columns, else from
    each record."""
    if isinstance(jobs, RecordColumns):
        return jobs.json_chunks(size)
    return ({key: list(map(getter, jobs[begin:begin + size])) for key, getter in _RECORD_FIELDS}
            for begin in range(0, len(jobs), size))


_RECORD_FIELDS = tuple((key, attrgetter(key)) for key in JSON_KEYS)  # a record's fields are named as its keys
_name, _share, _submit_at, _preemptions, _reason, _started_at = (
    attrgetter(name) for name in ("name", "share", "submit_at", "preemptions", "reason", "started_at"))
_instance_type, _instances, _training_plan = (
    attrgetter(name) for name in ("instance_type", "instances", "training_plan"))


#: What the bill reads of a job: ``(share, instance type, instances, training plan, checkpoint interval, attempts)``;
#: each attempt an ``AttemptRecord`` or a plain tuple of its five fields, in its order (read by position).
AttemptRow = tuple[str, str, int, "str | None", "float | None", tuple[tuple[Any, ...], ...]]


def attempt_rows(jobs: Sequence[JobRecord]) -> Iterator[AttemptRow]:
    """Each job's ``AttemptRow``, in order: from the engine's jobs or a result's columns without building records
    (their reasons' wording is not needed), else from each record."""
    if isinstance(jobs, JobRecords):
        return jobs.attempt_rows()
    if isinstance(jobs, RecordColumns):
        return (_attempt_row(row[0], attempts(row[8], row[2], row[9], row[5], row[10], row[11]))
                for row in zip(*jobs._columns, strict=True))
    return ((r.share, r.instance_type, r.instances, r.training_plan, r.checkpoint_interval, r.attempts) for r in jobs)


def _attempt_row(spec: JobSpec, ended: tuple[AttemptRecord, ...]) -> AttemptRow:
    return spec.share, spec.instance_type, spec.instances, spec.training_plan, spec.checkpoint_interval, ended


def job_waits(jobs: Sequence[JobRecord]) -> np.ndarray:
    """Each job's ``wait_seconds``, in order: the column of a result's records, else read from each record."""
    if isinstance(jobs, RecordColumns):
        return np.asarray(jobs.waits(), dtype=np.float64)
    return np.fromiter((record.wait_seconds for record in jobs), dtype=np.float64, count=len(jobs))


class RecordColumns(Sequence[JobRecord]):
    """Job records kept as one column per field; a ``JobRecord`` and its attempts are built when read.

    What a pickled ``JobRecords`` becomes (a Dask worker's result): the values alone, not the engine.
    Reads like a list of records, and equals one with the same records.
    """

    __slots__ = ("_columns",)

    def __init__(self, columns: tuple[Sequence[Any], ...]) -> None:
        self._columns = columns

    def statuses(self) -> Sequence[Status]:
        return self._columns[2]

    def waits(self) -> Sequence[float]:
        return self._columns[6]

    def __len__(self) -> int:
        return len(self._columns[0])

    def outcomes(self) -> Iterator[tuple[str, str, float, int]]:
        """``(share, instance type, wait seconds, preemptions)`` per job, without building its record."""
        return ((spec.share, spec.instance_type, wait, preemptions)
                for spec, wait, preemptions in zip(self._columns[0], self._columns[6], self._columns[7], strict=True))

    def __iter__(self) -> Iterator[JobRecord]:
        return map(_record, *self._columns)

    def json_chunks(self, size: int) -> Iterator[Mapping[str, Sequence[Any]]]:
        """``json_chunks`` from the columns (a record's status is its value's text, as a ``Status`` is written)."""
        specs, _, statuses, reasons, started, finished, waits, preemptions = self._columns[:8]
        for begin in range(0, len(self), size):
            part = slice(begin, begin + size)
            chunk = specs[part]
            yield {"name": list(map(_name, chunk)), "share": list(map(_share, chunk)),
                   "instance_type": list(map(_instance_type, chunk)), "instances": list(map(_instances, chunk)),
                   "training_plan": list(map(_training_plan, chunk)), "status": statuses[part],
                   "preemptions": preemptions[part], "reason": reasons[part],
                   "submitted_at": list(map(_submit_at, chunk)), "started_at": started[part],
                   "finished_at": finished[part], "wait_seconds": waits[part]}

    @overload
    def __getitem__(self, index: int) -> JobRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[JobRecord]: ...

    def __getitem__(self, index: int | slice) -> JobRecord | list[JobRecord]:
        if isinstance(index, slice):
            return list(map(_record, *(column[index] for column in self._columns)))
        return _record(*(column[index] for column in self._columns))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking and compared by content, as a list

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} jobs)"


class JobRecords(RecordColumns):
    """The job records of a result: the engine's values at build time.

    A finished job (SUCCEEDED or FAILED) never changes again but for its priority (``UpdateServiceJob``
    still applies), so its record is read from the job itself when asked for, with the priority and
    status kept here; only jobs still waiting or on capacity are copied now (at the end of a run, none).
    A million records cost a few references each until read.
    """

    __slots__ = ("_jobs", "_open")

    def __init__(self, engine: EngineView, jobs: Sequence[Job]) -> None:
        now = engine.now
        statuses = [job.status for job in jobs]
        waits = array("d", waits_of(jobs if isinstance(jobs, list) else list(jobs), statuses, now))
        self._jobs = jobs
        # a job still waiting or running: its fields now, and its reason worked out from the engine at this instant
        self._open = {index: (job.spec, job.priority, job.status, job_reason(engine, job), job.started_at,
                              job.finished_at, waits[index], job.preemptions, job.segments, job.attempt_start,
                              job.placed_borrowed, job.run_started, job.capacity_retries)
                      for index, job in enumerate(jobs) if job.status not in FINAL}
        super().__init__(([job.priority for job in jobs], statuses, waits))

    def statuses(self) -> Sequence[Status]:
        return self._columns[1]

    def waits(self) -> Sequence[float]:
        return self._columns[2]

    def __len__(self) -> int:
        return len(self._jobs)

    def outcomes(self) -> Iterator[tuple[str, str, float, int]]:
        return ((job.spec.share, job.spec.instance_type, wait, job.preemptions)
                for job, wait in zip(self._jobs, self._columns[2], strict=True))

    def _fields(self, index: int, job: Job, priority: int, status: Status, wait: float) -> tuple[Any, ...]:
        """What ``_record`` builds the job's record from."""
        fields = self._open.get(index) if self._open else None
        if fields is not None:
            return fields
        return (job.spec, priority, status, job.reason, job.started_at, job.finished_at, wait, job.preemptions,
                job.segments, job.attempt_start, job.placed_borrowed, job.run_started, job.capacity_retries)

    def finished(self) -> bool:
        """Whether every job had finished at build time (then each job's fields are its own)."""
        return not self._open

    def engine_columns(self) -> tuple[list[Job], list[int], list[Status]]:
        """The jobs, and their priorities and statuses at build time (``wait_sweep.read_jobs``)."""
        jobs, priorities, statuses = self._jobs, self._columns[0], self._columns[1]
        return (jobs if isinstance(jobs, list) else list(jobs),
                priorities if isinstance(priorities, list) else list(priorities),
                statuses if isinstance(statuses, list) else list(statuses))

    def timelines(self) -> Iterator[Timeline]:
        """What ``job_timelines`` gives, from the jobs (a finished one's fields are its own) and the open ones."""
        jobs = self._jobs
        rows = zip(map(_spec, jobs), self._columns[0], self._columns[1], map(_finished_at, jobs),
                   map(_segments, jobs), map(_attempt_start, jobs), map(_borrowed, jobs), strict=True)
        if not self._open:
            return rows
        return (row if index not in self._open else _open_timeline(self._open[index]) for index, row in enumerate(rows))

    def json_chunks(self, size: int) -> Iterator[Mapping[str, Sequence[Any]]]:
        """``json_chunks`` read from the jobs (a finished job's fields are its own), the open ones from their copy."""
        jobs, statuses, waits = self._jobs, self._columns[1], self._columns[2]
        opened = sorted(self._open)
        for begin in range(0, len(jobs), size):
            chunk = jobs[begin:begin + size]
            specs = list(map(_spec, chunk))
            columns: dict[str, list[Any]] = {
                "name": list(map(_name, specs)), "share": list(map(_share, specs)),
                "instance_type": list(map(_instance_type, specs)), "instances": list(map(_instances, specs)),
                "training_plan": list(map(_training_plan, specs)), "status": list(statuses[begin:begin + size]),
                "preemptions": list(map(_preemptions, chunk)),
                "reason": list(map(_reason, chunk)), "submitted_at": list(map(_submit_at, specs)),
                "started_at": list(map(_started_at, chunk)), "finished_at": list(map(_finished_at, chunk)),
                "wait_seconds": list(waits[begin:begin + size])}
            for index in opened[bisect_left(opened, begin):bisect_left(opened, begin + size)]:
                fields, at = self._open[index], index - begin
                (columns["status"][at], columns["reason"][at], columns["started_at"][at], columns["finished_at"][at],
                 columns["wait_seconds"][at], columns["preemptions"][at]) = (
                    fields[2], fields[3], fields[4], fields[5], fields[6], fields[7])
            yield columns

    def attempt_rows(self) -> Iterator[AttemptRow]:
        """What ``attempt_rows`` gives, read from the jobs (an open one's fields as they were at build time)."""
        succeeded = Status.SUCCEEDED
        for index, (job, status) in enumerate(zip(self._jobs, self._columns[1], strict=True)):
            fields = self._open.get(index) if self._open else None
            spec = job.spec
            if fields is None and status is succeeded and not job.segments:  # most jobs: one attempt, no record
                yield (spec.share, spec.instance_type, spec.instances, spec.training_plan, spec.checkpoint_interval,
                       ((job.attempt_start, job.finished_at, SUCCEEDED, job.placed_borrowed, job.run_started),))
                continue
            if fields is None:
                ended = attempts(job.segments, status, job.attempt_start, job.finished_at, job.placed_borrowed,
                                 job.run_started)
            else:
                ended = attempts(fields[8], fields[2], fields[9], fields[5], fields[10], fields[11])
            yield _attempt_row(spec, ended)

    def _read(self, index: int, job: Job, priority: int, status: Status, wait: float) -> JobRecord:
        return _record(*self._fields(index, job, priority, status, wait))

    def __iter__(self) -> Iterator[JobRecord]:
        return map(self._read, range(len(self._jobs)), self._jobs, *self._columns)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[position] for position in range(len(self._jobs))[index]]
        position = range(len(self._jobs))[index]  # negative indexes and IndexError as a list's
        return self._read(position, self._jobs[position], *(column[position] for column in self._columns))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its values (``RecordColumns``): a job refers to its share, its pool and so the whole engine."""
        rows = map(self._fields, range(len(self._jobs)), self._jobs, *self._columns)
        return RecordColumns, (tuple(map(list, zip(*rows, strict=True))) or ((),) * _FIELDS,)


def build_result(engine: EngineView) -> SimulationResult:
    """Snapshot the engine at its clock: jobs not yet submitted are left out."""
    with gc_paused():
        return _build(engine)


def _build(engine: EngineView) -> SimulationResult:
    jobs = list(engine.submitted_jobs())
    records = JobRecords(engine, jobs)
    waits: defaultdict[ShareCapacity, list[float]] = defaultdict(list)  # no empty list made per job
    for job, wait in zip(jobs, records.waits(), strict=True):
        waits[job.share].append(wait)
    shares = share_metrics(engine, waits)
    series = None
    if engine.settings.utilisation_series:
        series = sorted((s for pool in engine.pools for s in pool.series or ()), key=lambda sample: sample[0])
    plans = engine.plans.report(engine.now) if engine.plans is not None else None
    figures = summary(engine, records.statuses(), records.waits(), shares)
    if plans is not None:  # reserved instance-hours paid and not used (what ``sweep``/``tune`` can minimise)
        figures["plan_idle_hours"] = plans.idle_seconds / 3600
    return SimulationResult(engine.now, records, shares, figures, series, engine.usage, plans=plans,
                            hours=capacity_hours(engine))


def simulate(
    topology: Topology,
    jobs: Sequence[JobSpec],
    updates: Sequence[Action] = (),
    settings: SimulationSettings | None = None,
    until: SupportsFloat | None = None,
    live: Mapping[str, LiveState] | None = None,
) -> SimulationResult:
    """Run a whole simulation and return its ``SimulationResult`` (the engine, then ``build_result``)."""
    from policy_engine.simulation.core.engine import Engine

    engine = Engine(topology, jobs, updates, settings, live)
    engine.run(until)
    return build_result(engine)
