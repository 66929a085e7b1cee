"""Observed against simulated, per share: the simulator checked against what really happened.

A workload from ``batch-quota history`` carries what AWS did with each job (``observed_*``
columns). Beside the simulated figures, per share: jobs compared, the wait to the first start
p50/p95/mean observed (``observed_start - submit_at``: a history records only a job's first
start, not its time RUNNABLE after a requeue) and simulated (``first_start_wait``, the same
span: not ``wait_seconds``, which adds every requeue), and preemptions of both (only
jobs with an observed start, so both sides cover the same jobs); and how many of the
share's observed jobs *agree*: the same status, end time (to the millisecond a history
writes) and preemption count. A replay of the history of ``batch-quota serve`` agrees on
every job; against AWS the disagreements show where the model differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.core.jobs import Observed
from policy_engine.simulation.results.metrics import percentile
from policy_engine.simulation.results.records import JobRecord, SimulationResult


@dataclass(frozen=True)
class ShareCalibration:
    share: str
    jobs: int
    observed_first_start_wait_p50: float
    observed_first_start_wait_p95: float
    observed_first_start_wait_mean: float
    simulated_first_start_wait_p50: float
    simulated_first_start_wait_p95: float
    simulated_first_start_wait_mean: float
    observed_preemptions: int
    simulated_preemptions: int
    #: Jobs of the share with an observed status, and how many of them agree (status, end, preemptions).
    observed_jobs: int = 0
    agreeing: int = 0

    def to_json(self) -> JsonObject:
        return asdict(self)


#: End times agree within this many seconds (a history writes milliseconds).
END_TOLERANCE = 0.0005
#: Observed statuses the simulator names otherwise (it has no PENDING: such a job waits, RUNNABLE).
_SIMULATED_AS = {"PENDING": "RUNNABLE"}


def agrees(record: JobRecord, seen: Observed) -> bool:
    """The same status, end time and preemption count as observed."""
    status = _SIMULATED_AS.get(seen.status or "", seen.status)
    if status != record.status or (seen.preemptions or 0) != record.preemptions:
        return False
    if seen.end is None or record.finished_at is None:
        return seen.end is None and record.finished_at is None
    return abs(seen.end - record.finished_at) <= END_TOLERANCE


def first_start_wait(record: JobRecord) -> float:
    """Submission to the job's first placement (to its end, or the report time, if never placed): what a history's
    ``observed_start`` measures. ``wait_seconds`` is more: every requeue's time RUNNABLE too."""
    if not record.attempts:
        return record.wait_seconds
    return max(0.0, record.attempts[0].start - record.submitted_at)  # a live job was placed before time 0


def calibrate(result: SimulationResult, observed: Mapping[str, Observed]) -> list[ShareCalibration]:
    """One row per share that has observed jobs, in the order shares first appear."""
    by_share: dict[str, tuple[list[float], list[float], list[int], list[int], list[bool]]] = {}
    for record in result.jobs:
        seen = observed.get(record.name)
        if seen is None:
            continue
        waits_o, waits_s, pre_o, pre_s, agreement = by_share.setdefault(record.share, ([], [], [], [], []))
        agreement.append(agrees(record, seen))
        if seen.start is None:
            continue
        waits_o.append(max(0.0, seen.start - record.submitted_at))
        waits_s.append(first_start_wait(record))
        pre_o.append(seen.preemptions or 0)
        pre_s.append(record.preemptions)
    rows = []
    for share, (waits_o, waits_s, pre_o, pre_s, agreement) in by_share.items():
        waits_o.sort()
        waits_s.sort()
        count = len(waits_o) or 1  # a share none of whose jobs started: its waits are 0
        rows.append(ShareCalibration(
            share, len(waits_o), percentile(waits_o, 0.5) if waits_o else 0.0,
            percentile(waits_o, 0.95) if waits_o else 0.0, sum(waits_o) / count,
            percentile(waits_s, 0.5) if waits_s else 0.0, percentile(waits_s, 0.95) if waits_s else 0.0,
            sum(waits_s) / count, sum(pre_o), sum(pre_s), len(agreement), sum(agreement)))
    return rows
