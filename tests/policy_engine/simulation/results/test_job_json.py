"""``simulate --format json``'s jobs written from columns (``results.job_json``): byte for byte ``json.dumps`` of each
record's ``to_json()``, whatever the values and whichever way the records are kept."""

from __future__ import annotations

import io
import json
import math
import pickle
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.simulation.core.engine import Engine, SimulationSettings
from policy_engine.simulation.core.jobs import AttemptRecord
from policy_engine.simulation.results import job_json
from policy_engine.simulation.results.numbers import plain
from policy_engine.simulation.results.records import JobRecord, build_result, json_chunks
from tests.builders import job, share, simulated_topology
from tests.policy_engine.simulation.test_properties import PROPERTY_SETTINGS, scenarios


def _expected(result, job_fields=None) -> str:
    """What ``write_json`` wrote before it wrote columns: one ``json.dumps`` per job's dict."""
    document = result.to_json()
    for key, values in (job_fields or {}).items():
        for entry, value in zip(document["jobs"], values, strict=True):
            entry[key] = plain(value)  # a number as ``results.numbers`` writes it (600.0 as 600)
    return json.dumps(document)


def _written(result, job_fields=None) -> str:
    out = io.StringIO()
    result.write_json(out, None, job_fields)
    return out.getvalue()


@PROPERTY_SETTINGS
@given(scenarios(), st.sampled_from([None, 25.0, 1e-5]))
def test_the_jobs_are_written_as_json_dumps_writes_them_from_every_kind_of_records(scenario, until):
    topology, jobs, updates, sim_settings = scenario
    engine = Engine(topology, jobs, updates, sim_settings)
    engine.run(until)
    result = build_result(engine)  # jobs still waiting or running at ``until``: their fields copied at build time
    causes = [None if n % 3 else "behind_head" for n in range(len(result.jobs))]
    for records in (result.jobs, pickle.loads(pickle.dumps(result)).jobs, list(result.jobs)):
        again = replace(result, jobs=records)
        assert _written(again) == _expected(again)
        assert _written(again, {"wait_cause": causes}) == _expected(again, {"wait_cause": causes})
        # a column of numbers and nulls (``plan_hold_seconds``): integral floats as ints, the rest as Python writes them
        holds = [None if n % 4 == 0 else [600.0, 1.5, 1e-05, 3][n % 4 - 1] for n in range(len(result.jobs))]
        assert _written(again, {"plan_hold_seconds": holds}) == _expected(again, {"plan_hold_seconds": holds})


def _record(name="j", submitted=0.0, started=None, finished=None, wait=0.0, preemptions=0, reason="") -> JobRecord:
    return JobRecord(name, "q/A", "ml.g5.xlarge", 1, 0, "SUCCEEDED", reason, submitted, started, finished, wait,
                     preemptions, (AttemptRecord(0.0, 1.0, "succeeded", False),))


def _result_of(records):
    """A result whose jobs are ``records`` (a plain list, as after a merge of parallel runs)."""
    engine = Engine(simulated_topology(1, share("A", 1)), [], (), SimulationSettings())
    engine.run()
    return replace(build_result(engine), jobs=records)


def test_numbers_in_every_form_python_writes_them():
    # exponent forms below 1e-4 (Python writes 5e-05, orjson would write 0.00005), integral floats as ints,
    # huge ones exactly, numpy numbers and bools as json.dumps writes them, and names that need escaping
    values = [0.0, -0.0, 5e-05, 1.5e-7, 1e-4, 0.1, 600.0, 1693.081, 123456789012345.6, 2.0**53 - 1, -3.25]
    records = [_record(f"j{n} \"é\" \u2028\\", submitted=value, started=value if n % 2 else None,
                       finished=float(n), wait=value, preemptions=n) for n, value in enumerate(values)]
    result = _result_of(records)
    assert _written(result) == _expected(result)
    assert '"submitted_at": 5e-05' in _written(result) and '"submitted_at": 600,' in _written(result)
    # beside values of other types (written one by one)
    records.append(_record("numpy", submitted=np.float64(600.0), started=np.float64(1.5), wait=np.float64(3.0),
                           preemptions=True, reason="Essential container exited"))
    records.append(_record("ints", submitted=7, started=2**60, finished=True, wait=1))
    records.append(_record("huge", submitted=2.0**53, started=1e300, finished=-(2.0**70), wait=2.0**63))
    result = _result_of(records)
    assert _written(result) == _expected(result)


def test_each_job_carries_its_instance_type_instances_and_plan_from_every_kind_of_records():
    engine = Engine(simulated_topology(4, share("A", 4)), [job(f"j{n}", "A", at=n, duration=10) for n in range(5)], (),
                    SimulationSettings())
    engine.run()
    columns = list(pickle.loads(pickle.dumps(build_result(engine))).jobs._columns)  # a worker's records
    kinds = [("ml.g5.xlarge", 1, None), ("ml.p5.48xlarge", 4, "p5-plan"), ("ml.p4d.24xlarge", 2, "plan \"2\"")]
    columns[0] = [spec._replace(instance_type=kind[0], instances=kind[1], training_plan=kind[2])
                  for spec, kind in zip(columns[0], kinds * 2, strict=False)]
    records = type(pickle.loads(pickle.dumps(build_result(engine))).jobs)(tuple(columns))
    for jobs in (records, list(records)):
        result = _result_of(jobs)
        assert _written(result) == _expected(result)
        written = json.loads(_written(result))["jobs"]
        assert [(j["instance_type"], j["instances"], j["training_plan"]) for j in written] == (kinds * 2)[:5]


def test_a_value_json_refuses_is_refused_as_json_dumps_refuses_it():
    for bad in (math.inf, math.nan):
        with pytest.raises(ValueError, match="Out of range float"):
            _written(_result_of([_record(wait=bad)]))


@pytest.mark.parametrize("pickled", [False, True])
def test_jobs_in_several_chunks_are_written_whole(pickled):
    topology = simulated_topology(1, share("A", 1))
    engine = Engine(topology, [job(f"j{n}", "A", at=n / 3, duration=10) for n in range(10)], (), SimulationSettings())
    engine.run(30.0)  # a few still waiting: their fields are copied, in the middle of a chunk
    result = build_result(engine)
    records = pickle.loads(pickle.dumps(result)).jobs if pickled else result.jobs
    causes = [f"cause {n % 4}" for n in range(10)]
    out = io.StringIO()
    job_json.write_jobs(out, json_chunks(records, 3), {"wait_cause": causes})
    expected = json.dumps([{**record.to_json(), "wait_cause": cause}
                           for record, cause in zip(records, causes, strict=True)])
    assert "[" + out.getvalue() + "]" == expected
