"""What a simulation hands to reports: per-job records, per-attempt segments, metrics.

Everything a timeline or utilisation chart needs is here, so reports never re-run
the simulation. ``to_json()`` is the ``--format json`` shape (docs/simulator.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, TextIO

from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.jobs import FINAL, AttemptRecord, Job
from policy_engine.simulation.metrics import ShareMetrics, share_metrics, summary
from policy_engine.simulation.numbers import as_number, plain
from policy_engine.simulation.reasons import reason as job_reason
from policy_engine.simulation.usage import UsageLog

if TYPE_CHECKING:
    from policy_engine.simulation.capacity import ShareCapacity
    from policy_engine.simulation.engine import Engine


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
    wait_seconds: float
    preemptions: int
    attempts: tuple[AttemptRecord, ...]

    def to_json(self) -> dict:
        """The job object of ``--format json`` (exactly the documented keys)."""
        return {
            "name": self.name,
            "share": self.share,
            "status": self.status,
            "preemptions": self.preemptions,
            "reason": self.reason,
            "submitted_at": as_number(self.submitted_at),
            "started_at": as_number(self.started_at),
            "finished_at": as_number(self.finished_at),
            "wait_seconds": as_number(self.wait_seconds),
        }


#: One utilisation sample: (time, share, instance type, own use, borrowed, lent, idle not lent).
UtilisationSample = tuple[float, str, str, int, int, float, float]


@dataclass(frozen=True)
class SimulationResult:
    time: float
    jobs: list[JobRecord]
    shares: list[ShareMetrics]
    summary: dict
    #: Only with ``SimulationSettings(utilisation_series=True)``; sorted by time.
    utilisation: list[UtilisationSample] | None = field(default=None)
    #: Only with ``SimulationSettings(usage_log=True)``: every usage change, for the HTML report's aggregates.
    usage: UsageLog | None = field(default=None)

    def job(self, name: str) -> JobRecord:
        return next(record for record in self.jobs if record.name == name)

    def to_json(self) -> dict:
        return {
            "time": as_number(self.time),
            "jobs": [record.to_json() for record in self.jobs],
            "shares": plain([metrics.to_json() for metrics in self.shares]),
            "summary": plain(self.summary),
        }

    def write_json(self, handle: TextIO, extra: dict | None = None) -> None:
        """Write ``json.dumps(self.to_json())`` job by job: a million jobs never sit in memory twice.

        ``extra`` keys (e.g. observed vs simulated figures) are added after ``summary``.
        """
        handle.write(f'{{"time": {json.dumps(as_number(self.time), allow_nan=False)}, "jobs": [')
        for index, record in enumerate(self.jobs):
            handle.write((", " if index else "") + json.dumps(record.to_json(), allow_nan=False))
        handle.write(f'], "shares": {json.dumps(plain([m.to_json() for m in self.shares]), allow_nan=False)}, '
                     f'"summary": {json.dumps(plain(self.summary), allow_nan=False)}')
        for key, value in (extra or {}).items():
            handle.write(f", {json.dumps(key)}: {json.dumps(plain(value), allow_nan=False)}")
        handle.write("}")


_new = tuple.__new__  # JobRecord from one tuple, without _make's checks: a million times


def job_record(engine: Engine, job: Job) -> JobRecord:
    spec = job.spec
    status = job.status
    attempts = job.attempts()
    end_of_wait = job.placed_at
    if end_of_wait is None:
        end_of_wait = job.finished_at if job.finished_at is not None else engine.now
    reason = job.reason if status in FINAL else job_reason(engine, job)
    return _new(JobRecord, (spec.name, spec.share, spec.instance_type, spec.instances, job.priority, status.value,
                            reason, spec.submit_at, job.started_at, job.finished_at, end_of_wait - spec.submit_at,
                            job.preemptions, attempts))


def build_result(engine: Engine) -> SimulationResult:
    """Snapshot the engine at its clock: jobs not yet submitted are left out."""
    with gc_paused():
        return _build(engine)


def _build(engine: Engine) -> SimulationResult:
    records = []
    waits: dict[ShareCapacity, list[float]] = {}
    for job in engine.submitted_jobs():
        record = job_record(engine, job)
        records.append(record)
        waits.setdefault(job.share, []).append(record.wait_seconds)
    shares = share_metrics(engine, waits)
    series = None
    if engine.settings.utilisation_series:
        series = sorted((s for pool in engine.pools for s in pool.series or ()), key=lambda sample: sample[0])
    return SimulationResult(engine.now, records, shares, summary(engine, records, shares), series, engine.usage)
