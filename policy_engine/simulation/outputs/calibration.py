"""Observed against simulated, per share: the simulator checked against what really happened.

A workload from ``batch-quota history`` carries what AWS did with each job (``observed_*``
columns). Beside the simulated figures, per share: jobs compared, wait p50/p95/mean
observed (``observed_start - submit_at``) and simulated, and preemptions of both. Only
jobs with an observed start are compared, so both sides cover the same jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from policy_engine.simulation.core.jobs import Observed
from policy_engine.simulation.outputs.metrics import percentile
from policy_engine.simulation.outputs.results import SimulationResult


@dataclass(frozen=True)
class ShareCalibration:
    share: str
    jobs: int
    observed_wait_p50: float
    observed_wait_p95: float
    observed_wait_mean: float
    simulated_wait_p50: float
    simulated_wait_p95: float
    simulated_wait_mean: float
    observed_preemptions: int
    simulated_preemptions: int

    def to_json(self) -> dict:
        return asdict(self)


def calibrate(result: SimulationResult, observed: Mapping[str, Observed]) -> list[ShareCalibration]:
    """One row per share that has jobs with an observed start, in the order shares first appear."""
    by_share: dict[str, tuple[list[float], list[float], list[int], list[int]]] = {}
    for record in result.jobs:
        seen = observed.get(record.name)
        if seen is None or seen.start is None:
            continue
        waits_o, waits_s, pre_o, pre_s = by_share.setdefault(record.share, ([], [], [], []))
        waits_o.append(max(0.0, seen.start - record.submitted_at))
        waits_s.append(record.wait_seconds)
        pre_o.append(seen.preemptions or 0)
        pre_s.append(record.preemptions)
    rows = []
    for share, (waits_o, waits_s, pre_o, pre_s) in by_share.items():
        waits_o.sort()
        waits_s.sort()
        rows.append(ShareCalibration(
            share, len(waits_o), percentile(waits_o, 0.5), percentile(waits_o, 0.95), sum(waits_o) / len(waits_o),
            percentile(waits_s, 0.5), percentile(waits_s, 0.95), sum(waits_s) / len(waits_s), sum(pre_o), sum(pre_s)))
    return rows
