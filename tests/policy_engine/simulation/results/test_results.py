"""The results object reports draw from: metrics integrals and the optional utilisation series."""

from __future__ import annotations

import io
import json

import pytest

from tests.builders import job, share
from tests.builders import simulate as run
from tests.builders import simulated_topology as topology


def test_time_weighted_metrics_of_a_borrow_then_reclaim():
    # A borrows L's instance from 0 to 100 (reclaimed), L uses it from 100 to 200
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A", duration=200), job("a2", "A", duration=1000, preemption_retries=0),
            job("l", "L", at=100, duration=100)]
    result = run(topo, jobs, until=200)
    a, lender = result.shares
    assert a.mean_borrowed == pytest.approx(0.5)  # 1 instance for 100 of 200 s
    assert a.own_utilisation == pytest.approx(1.0)
    assert lender.mean_lent == pytest.approx(0.5)
    assert lender.own_utilisation == pytest.approx(0.5)
    assert result.summary["cluster_utilisation"] == pytest.approx(1.0)
    assert a.preemptions == 1 and a.instance_hours_lost == pytest.approx(100 / 3600, abs=1e-6)


def test_utilisation_series_is_off_by_default_and_samples_every_change():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A", duration=50), job("a2", "A", duration=50)]
    assert run(topo, jobs).utilisation is None
    series = run(topo, jobs, utilisation_series=True).utilisation
    at_zero = {sample[1]: sample for sample in series if sample[0] == 0}
    assert at_zero["q/A"][3:5] == (1, 1)  # own 1, borrowed 1
    assert at_zero["q/L"][5] == 1  # lent 1
    final = {sample[1]: sample for sample in series if sample[0] == 50}
    assert final["q/A"][3:5] == (0, 0) and final["q/L"][5] == 0
    assert [s[0] for s in series] == sorted(s[0] for s in series)


def test_streamed_json_is_exactly_the_json_of_to_json():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    result = run(topo, [job("a1", "A"), job("a2", "A"), job("l", "L", at=10)], until=20)
    out = io.StringIO()
    result.write_json(out)
    assert out.getvalue() == json.dumps(result.to_json())


def test_a_finished_jobs_record_keeps_its_priority_at_build_time_and_pickles_as_values():
    # a finished job's record is read from the job when asked for: only its priority can still change
    # (UpdateServiceJob applies to a finished job too), and the record must not see that change
    import pickle

    from policy_engine.simulation.core.engine import Engine, PriorityUpdate, SimulationSettings
    from policy_engine.simulation.results.records import RecordColumns, build_result

    topo = topology(1, share("A", 1))
    jobs = [job("done", "A", duration=100), job("waits", "A", duration=500)]
    engine = Engine(topo, jobs, [PriorityUpdate(300, "done", 7), PriorityUpdate(300, "waits", 4)],
                    SimulationSettings())
    engine.run(until=50)
    waiting = build_result(engine)
    engine.run(until=200)
    early = build_result(engine)
    engine.run()
    late = build_result(engine)
    assert [(r.name, r.status, r.priority) for r in early.jobs] == [("done", "SUCCEEDED", 1), ("waits", "RUNNING", 1)]
    assert [(r.name, r.status, r.priority) for r in late.jobs] == [("done", "SUCCEEDED", 7), ("waits", "SUCCEEDED", 4)]
    assert waiting.job("waits").status == "RUNNABLE" and waiting.job("waits").started_at is None
    assert early.job("waits").finished_at is None and late.job("waits").finished_at == 600
    for records in (waiting.jobs, early.jobs, late.jobs):
        pickled = pickle.dumps(records)
        assert b"ShareCapacity" not in pickled and b"Engine" not in pickled  # values, not the engine's objects
        copy = pickle.loads(pickled)
        assert isinstance(copy, RecordColumns) and copy == list(records)
        assert list(copy.statuses()) == list(records.statuses()) and list(copy.waits()) == list(records.waits())
    assert late.jobs[-1] == late.jobs[1] and late.jobs[-2:] == list(late.jobs)
    with pytest.raises(IndexError):
        late.jobs[2]


def test_job_records_are_a_snapshot_that_reads_like_a_list():
    # A borrows L's idle instance and is reclaimed at 100 when L's job arrives; a record built at 50
    # keeps what was true at 50 while the engine runs on
    import pickle

    from policy_engine.simulation.core.engine import Engine, SimulationSettings
    from policy_engine.simulation.core.jobs import AttemptRecord
    from policy_engine.simulation.results.records import build_result

    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A", duration=200), job("a2", "A", duration=300), job("l", "L", at=100, duration=100)]
    engine = Engine(topo, jobs, settings=SimulationSettings())
    engine.run(until=50)
    early = build_result(engine)
    engine.run()
    late = build_result(engine)
    a2_early = early.jobs[1]
    assert (a2_early.status, a2_early.finished_at, a2_early.attempts) == (
        "RUNNING", None, (AttemptRecord(0, None, "running", True, 0.0),))
    a2 = late.job("a2")
    assert a2.status == "SUCCEEDED" and a2.preemptions == 1
    # reclaimed at 100 with no checkpoint: all 300 s again once a1 frees A's own instance at 200
    assert a2.attempts == (AttemptRecord(0, 100, "preempted", True, 0.0),
                           AttemptRecord(200, 500, "succeeded", False, 200.0))
    assert [r.name for r in early.jobs] == ["a1", "a2"]  # l not yet submitted at 50
    listed = list(late.jobs)
    assert late.jobs == listed and late.jobs[1:] == listed[1:] and late.jobs[-1] == listed[-1]
    assert late.jobs != listed[:-1] and len(late.jobs) == 3
    assert pickle.loads(pickle.dumps(late.jobs)) == listed  # results cross processes (sweeps on Dask)
    assert late.summary["by_status"] == {"SUCCEEDED": 3} and early.summary["by_status"] == {"RUNNING": 2}
