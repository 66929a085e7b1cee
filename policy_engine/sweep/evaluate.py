"""Evaluate one candidate: ``check`` its topology, then simulate it when no rule found an error.

Runs on a Dask worker (or in-process): it takes the shared scenario and returns a picklable ``RunRecord``
(the object of the sweep's JSON ``runs`` list plus its grid index).
``summary`` and ``shares`` are built exactly as ``simulate --format json`` builds them.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.findings import finding_to_dict
from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.model import Topology
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.billable import Period
from policy_engine.simulation.results.costs import ledgers, mean_ledgers
from policy_engine.simulation.results.numbers import plain
from policy_engine.simulation.results.records import SimulationResult, simulate
from policy_engine.simulation.results.targets import evaluate_targets
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.sweep.candidate import variant
from policy_engine.sweep.grammar import Axis
from policy_engine.sweep.grid import Candidate
from policy_engine.sweep.guarantee_policy import GuaranteePolicy
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.samples import mean_record


def targets_json(topology: Topology, result: SimulationResult) -> list[JsonObject]:
    """The topology's targets judged on the run (``simulate --format json``'s ``targets``)."""
    return plain([target.to_json() for target in evaluate_targets(topology, result)])


def simulation_json(result: SimulationResult) -> tuple[JsonObject, list[JsonObject]]:
    """``summary`` and ``shares`` of ``simulate --format json`` (``SimulationResult.write_json``)."""
    return plain(result.summary), plain([metrics.to_json() for metrics in result.shares])


#: Candidates that differ only in settings or workload share a topology: check it once per worker.
_CHECKED: OrderedDict[str, tuple[bool, list[JsonObject]]] = OrderedDict()
_CHECK_CACHE_SIZE = 64
_LOCK = threading.Lock()


def checked(topology: Topology) -> tuple[bool, list[JsonObject]]:
    """``(ok, findings as check --format json)`` of ``topology``, remembered for the last few topologies."""
    key = topology.model_dump_json()
    with _LOCK:  # a worker may run several tasks in threads
        if key in _CHECKED:
            _CHECKED.move_to_end(key)
            return _CHECKED[key]
    report = check_topology(topology)
    answer = (report.ok, [finding_to_dict(finding) for finding in report.findings])
    with _LOCK:
        _CHECKED[key] = answer
        if len(_CHECKED) > _CHECK_CACHE_SIZE:
            _CHECKED.popitem(last=False)
    return answer


def evaluate(scenario: Scenario, axes: Sequence[Axis], candidate: Candidate,
             guarantees: GuaranteePolicy = GuaranteePolicy.KEEP,
             workloads: Sequence[Sequence[JobSpec]] = (), period: Period | None = None) -> RunRecord:
    """The run record of one candidate; never raises (a failure is recorded as status ``error``).

    With ``workloads`` (``samples.resample``), the candidate runs once on each instead of the scenario's
    own jobs, and the record holds their mean (``samples.mean_record``)."""
    record = RunRecord(index=candidate.index, values=dict(candidate.values))
    try:
        with gc_paused():  # building the candidate's workload and results allocates in bulk (about 15 % faster)
            chosen = variant(scenario, axes, candidate.values, guarantees)
            ok, findings = checked(chosen.topology)
            record = replace(record, findings=tuple(copy.deepcopy(findings)))
            if not ok:
                return replace(record, status=RunStatus.INVALID)
            if not workloads:
                result = simulate(chosen.topology, chosen.jobs, chosen.updates, chosen.settings, live=scenario.live)
                summary, shares = simulation_json(result)
                # one step at a time, as a failure part-way leaves the record (status error, figures so far)
                record = replace(record, summary=summary, shares=tuple(shares))
                record = replace(record, costs=ledgers(result, period) or None)  # priced when read (cost_metrics)
                return replace(record, targets=tuple(targets_json(chosen.topology, result)))
            runs, kept = [], []
            for jobs in workloads:
                sample = variant(replace(scenario, jobs=list(jobs)), axes, candidate.values, guarantees)
                result = simulate(sample.topology, sample.jobs, sample.updates, sample.settings, live=scenario.live)
                summary, shares = simulation_json(result)
                kept.append(ledgers(result, period))
                runs.append(replace(record, summary=summary, shares=tuple(shares), costs=kept[-1] or None,
                                    targets=tuple(targets_json(sample.topology, result))))
            return replace(mean_record(runs), costs=mean_ledgers([k for k in kept if k]) or None)
    except Exception as error:  # one bad candidate must not end a sweep of thousands
        return replace(record, status=RunStatus.ERROR, error=f"{type(error).__name__}: {error}")
