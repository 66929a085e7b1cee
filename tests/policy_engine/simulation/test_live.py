"""The engine's live hooks (``batch-quota serve``): submit, update, terminate at the clock; adopt on a new topology."""

from __future__ import annotations

from policy_engine.inputs.examples import INSTANCE_TYPE, example_topology
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.jobs import JobSpec, Status


def spec(name: str, share: str, priority: int = 0, at: float = 0.0, duration: float = 100.0) -> JobSpec:
    return JobSpec(name, f"training/{share}", INSTANCE_TYPE, 1, priority, at, duration)


def test_live_inputs_give_what_the_same_workload_gives_in_one_run():
    jobs = [spec("a", "QS1", 1), spec("b", "QS1", 2), spec("c", "QS2", 1, at=30), spec("d", "QS1", 3, at=30)]
    batch = Engine(example_topology(), jobs)
    batch.run(until=50)
    live = Engine(example_topology(), [])
    for job in jobs:
        live.run(job.submit_at)
        live.submit(job)
        live.run(job.submit_at)
    live.run(50)
    assert {j.spec.name: (j.status, j.preemptions) for j in live.jobs} == {
        j.spec.name: (j.status, j.preemptions) for j in batch.jobs}


def test_jobs_by_name_are_one_mapping_kept_up_to_date_by_submit():
    # compiled (mypyc), a functools.cached_property built the mapping again at every read: each ``serve``
    # submission then cost time in proportion to the jobs before it
    engine = Engine(example_topology(), [spec("a", "QS1")])
    by_name = engine.by_name
    engine.submit(spec("b", "QS1"))
    assert engine.by_name is by_name and list(by_name) == ["a", "b"]


def test_terminate_frees_capacity_for_the_next_job_at_once():
    engine = Engine(example_topology(), [])
    first, second = engine.submit(spec("first", "QS3")), engine.submit(spec("second", "QS3"))
    engine.run(0)
    assert (first.status, second.status) == (Status.RUNNING, Status.RUNNABLE)
    engine.run(10)
    engine.terminate(first, "by test")
    engine.run(10)
    assert (first.status, first.reason, second.status) == (Status.FAILED, "by test", Status.RUNNING)
    third = engine.submit(spec("third", "QS3", at=10))
    engine.run(10)
    engine.terminate(third, "waiting, by test")  # a waiting job leaves its line
    engine.run(200)
    assert (third.status, second.status) == (Status.FAILED, Status.SUCCEEDED)


def test_priority_update_at_the_clock_preempts_in_share():
    engine = Engine(example_topology(), [])
    for name, priority in (("high", 3), ("med", 2), ("low", 1)):
        engine.submit(spec(name, "QS1", priority))
    engine.run(5)
    engine.update_priority_now("low", 4)
    engine.run(5)
    assert engine.by_name["low"].status is Status.RUNNING and engine.by_name["med"].status is Status.RUNNABLE


def test_adopt_keeps_running_jobs_finish_times_and_waiting_order():
    old = Engine(example_topology(), [])
    for name, priority in (("high", 3), ("med", 2), ("low", 1), ("lower", 0)):
        old.submit(spec(name, "QS1", priority))
    old.run(40)
    new = Engine(example_topology(), [])
    new.now = old.now
    for job in sorted(old.jobs, key=lambda j: j.seq):
        assert new.adopt(job) is not None
    new.run(40)
    assert [j.status for j in new.jobs] == [Status.RUNNING, Status.RUNNING, Status.RUNNABLE, Status.RUNNABLE]
    new.run(100)  # placed at 0 for 100 s: they finish at 100, not 140
    assert [j.status for j in new.jobs[:2]] == [Status.SUCCEEDED, Status.SUCCEEDED]
    assert [j.status for j in new.jobs[2:]] == [Status.RUNNING, Status.RUNNING]
    assert new.jobs[2].started_at == 100


def test_adopt_keeps_a_scheduled_job_waiting_for_its_preemption_delay():
    from policy_engine.simulation.core.engine import SimulationSettings

    settings = SimulationSettings(preemption_delay=20)
    old = Engine(example_topology(), [], settings=settings)
    old.submit(spec("med", "QS1", 2, duration=1000))
    old.submit(spec("high", "QS1", 3, duration=1000))
    old.run(50)
    old.submit(spec("qs2", "QS2", 1, at=50))
    old.run(50)
    assert old.by_name["qs2"].status is Status.SCHEDULED
    new = Engine(example_topology(), [], settings=settings)
    new.now = old.now
    advances = old.pending_advances()
    assert advances == {"qs2": 70}
    for job in sorted(old.jobs, key=lambda j: j.seq):
        new.adopt(job, advances.get(job.spec.name))
    new.run(69)
    assert new.by_name["qs2"].status is Status.SCHEDULED
    new.run(70)
    assert new.by_name["qs2"].status is Status.RUNNING
    assert new.by_name["qs2"].started_at == 70
