"""Drive a sweep: candidates in, run records out, through an executor, a results dataset and a progress bar.

Runs finished by an earlier, interrupted sweep (``--resume``) are not submitted again. Results are
keyed by candidate, so a run Dask had to repeat (a worker lost after it finished) is kept once.
Part files are written every ``flush_runs`` results or ``flush_seconds``, and on interruption, so an
interrupted sweep loses at most the runs in flight.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.results.billable import Period
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.sweep.common_window import over_common_window
from policy_engine.sweep.dataset import ResultsDataset
from policy_engine.sweep.evaluate import evaluate
from policy_engine.sweep.executor import Executor
from policy_engine.sweep.grammar import Axis
from policy_engine.sweep.grid import Candidate
from policy_engine.sweep.guarantee_policy import GuaranteePolicy
from policy_engine.sweep.run_record import RunRecord

Progress = Callable[[int, int], None]  # (runs done, runs in all)


@dataclass(frozen=True)
class SweepInput:
    """What every task needs, scattered to each worker once."""

    scenario: Scenario
    axes: tuple[Axis, ...]
    guarantees: GuaranteePolicy = GuaranteePolicy.KEEP
    #: ``tune --workload-samples``: the resampled workloads every candidate runs on (else the scenario's jobs).
    workloads: tuple[tuple[JobSpec, ...], ...] = ()
    #: ``--period``: what each run's bill covers (default the whole workload)
    period: Period = field(default_factory=Period)


def run_task(shared: SweepInput, candidate: Candidate) -> RunRecord:
    """One Dask task: evaluate ``candidate`` against the scattered scenario."""
    return evaluate(shared.scenario, shared.axes, candidate, shared.guarantees, shared.workloads, shared.period)


def scenario_digest(scenario: Scenario) -> str:
    """What ``--resume`` compares: the loaded topology, workload, actions, settings and live jobs (not file names)."""
    digest = hashlib.sha256(scenario.topology.model_dump_json().encode())
    for part in (scenario.jobs, scenario.updates, (scenario.settings,), sorted(scenario.live.items())):
        for item in part:
            digest.update(repr(item).encode())
    return digest.hexdigest()


def run_sweep(scenario: Scenario, axes: Sequence[Axis], candidates: Iterable[Candidate], executor: Executor,
              dataset: ResultsDataset | None = None, progress: Progress | None = None, total: int | None = None,
              on_result: Callable[[RunRecord], None] | None = None, flush_runs: int = 64,
              flush_seconds: float = 2.0, period: Period | None = None,
              guarantees: GuaranteePolicy = GuaranteePolicy.KEEP) -> list[RunRecord]:
    """Every candidate's run record, sorted by grid index, its time-weighted figures over the latest end among
    them (``common_window``); ``dataset`` (if any) gets them in part files as they ran."""
    done: dict[str, RunRecord] = dict(dataset.written) if dataset is not None else {}
    todo = [candidate for candidate in candidates if candidate.key not in done]
    keep = {candidate.key for candidate in todo} | set(done)
    count = len(todo) + sum(1 for key in done if key in keep)
    total = total if total is not None else count
    finished = count - len(todo)
    if progress:
        progress(finished, total)
    batch: list[tuple[str, RunRecord]] = []
    last_flush = time.monotonic()

    def flush() -> None:
        nonlocal last_flush
        if dataset is not None and batch:
            dataset.append(batch)
        batch.clear()
        last_flush = time.monotonic()

    shared = SweepInput(scenario, tuple(axes), guarantees, period=period or Period())
    keys = {candidate.index: candidate.key for candidate in todo}
    try:
        for record in executor.map(run_task, shared, todo):
            key = keys[record.index]
            if key in done:
                continue  # a repeated run: the first result stands
            done[key] = record
            batch.append((key, record))
            finished += 1
            if on_result:
                on_result(record)
            if progress:
                progress(finished, total)
            if len(batch) >= flush_runs or time.monotonic() - last_flush >= flush_seconds:
                flush()
    finally:
        flush()
    # the dataset keeps each run as it ran; what is read from here is over the sweep's window (``common_window``)
    return over_common_window(sorted((record for key, record in done.items() if key in keep), key=lambda r: r.index))
