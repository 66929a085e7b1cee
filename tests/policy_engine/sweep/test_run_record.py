"""A sweep's run is a frozen ``RunRecord`` until its edges: it pickles whole (Dask), writes exactly the JSON keys,
and an invalid or failed candidate keeps its reason in typed fields."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import pytest

from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.sweep.evaluate import evaluate
from policy_engine.sweep.grammar import parse_vary
from policy_engine.sweep.grid import Candidate
from policy_engine.sweep.run_record import RUN_KEYS, RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.samples import resample

SCENARIO = str(Path(__file__).parents[3] / "scenarios" / "borrow-and-reclaim.yaml")
VARY = ["training/research.borrow_limit=0,200", "training/vision.capacity.ml.p4d.24xlarge=3"]


def _evaluated(values: dict[str, object], workloads: int = 0) -> RunRecord:
    scenario = load_scenario(SCENARIO)
    axes = parse_vary(VARY, scenario.topology)
    samples = resample(scenario.jobs, workloads, seed=1) if workloads else ()
    return evaluate(scenario, axes, Candidate(7, dict(values)), workloads=samples)


def test_an_ok_run_is_a_frozen_record_that_pickles_and_writes_exactly_the_json_keys():
    record = _evaluated({"training/research.borrow_limit": 200, "training/vision.capacity.ml.p4d.24xlarge": 2})
    assert record.status is RunStatus.OK and record.index == 7 and record.error == "" and record.costs
    assert record.summary["jobs"] == len(load_scenario(SCENARIO).jobs) and record.shares and not record.samples
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.status = RunStatus.ERROR  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(record)) == record  # what a Dask worker sends back
    document = json.loads(json.dumps(record.to_json(None)))
    assert tuple(document) == RUN_KEYS and document["status"] == "ok" and document["costs"] is None
    assert document["summary"] == record.summary and document["shares"] == list(record.shares)


def test_an_invalid_candidate_keeps_its_findings_and_no_figures():
    # vision's limit 3 puts the environment's 8 instances past their owners: check refuses it (BQ201)
    record = _evaluated({"training/research.borrow_limit": 0, "training/vision.capacity.ml.p4d.24xlarge": 3})
    assert record.status is RunStatus.INVALID and record.summary == {} and record.shares == ()
    assert record.costs is None and any(f["rule"] == "BQ201" for f in record.errors())


def test_a_failed_candidate_is_an_error_record_with_what_raised():
    record = _evaluated({"training/research.borrow_limit": 0, "training/nobody.capacity.ml.p4d.24xlarge": 2})
    assert record.status is RunStatus.ERROR and record.error.startswith("KeyError: ")
    assert record.summary == {} and record.to_json(None)["error"] == record.error


def test_with_workload_samples_the_record_holds_the_mean_and_each_samples_figures():
    record = _evaluated({"training/research.borrow_limit": 200, "training/vision.capacity.ml.p4d.24xlarge": 2},
                        workloads=3)
    assert record.status is RunStatus.OK and len(record.samples) == 3
    waits = [sample.summary["wait_p95"] for sample in record.samples]
    assert record.summary["wait_p95"] == pytest.approx(sum(waits) / 3)
    # each sample keeps its bill ledger (a bill objective prices each sample), not its targets
    assert all(sample.costs is not None and sample.targets == () for sample in record.samples)
