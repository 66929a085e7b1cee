"""A job's wait (``JobRecord.wait_seconds``) is its time RUNNABLE: submission to placement, plus every requeue to
the next placement, up to the report time if never placed again; never its SCHEDULED time for a plan's window.

Hand-built runs with the seconds worked out; the property over random scenarios is in ``test_wait_causes.py``.
"""

from __future__ import annotations

import pytest

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core.jobs import AttemptRecord, Status, runnable_seconds
from policy_engine.simulation.results.calibration import first_start_wait
from policy_engine.simulation.results.wait_causes import attribute
from tests.builders import job, share
from tests.builders import simulate as run
from tests.builders import simulated_topology as topology
from tests.policy_engine.reports.walkthrough import walkthrough
from tests.policy_engine.simulation.test_plan_edges import DAY, PENDING
from tests.policy_engine.simulation.test_training_plans import HOUR, P5, pjob, plan_topology


def test_a_reclaimed_job_waits_again_until_it_is_placed_again():
    """AWS's walkthrough: med borrows at 0 and is reclaimed at 100, then RUNNABLE until low ends at 3800; high is
    preempted in-share by low at 200 and RUNNABLE until qs2's job ends at 3700 (it had reclaimed QS2's instance)."""
    _, result = walkthrough()
    waits = {record.name: record.wait_seconds for record in result.jobs}
    assert waits == {"qs1_job_high": 3500.0, "qs1_job_med": 3700.0, "qs1_job_low": 200.0, "qs2_job_1": 0.0}
    # the first placement alone is still there to read (what a history observes): the first attempt's start
    assert {record.name: first_start_wait(record) for record in result.jobs} == {
        "qs1_job_high": 0.0, "qs1_job_med": 0.0, "qs1_job_low": 200.0, "qs2_job_1": 0.0}
    # the share tables' figures are read from the same waits
    [qs1] = [m for m in result.shares if m.share.endswith("QS1")]
    assert (qs1.wait_p50, qs1.wait_max) == (3500.0, 3700.0)


def test_a_failed_attempt_requeues_the_job_and_its_wait_goes_on():
    topo = topology(1, share("A", 1))
    jobs = [job("flaky", "A", duration=100, attempts=2, failures=1, fail_after=10.0),
            job("next", "A", priority=5, at=5, duration=50)]
    result = run(topo, jobs)
    # flaky fails at 10, next (higher priority, waiting since 5) runs 10-60, flaky runs again at 60: 50 s RUNNABLE
    assert result.job("flaky").wait_seconds == 50.0
    assert result.job("next").wait_seconds == 5.0


def test_a_job_never_placed_again_waits_until_the_report_time_or_its_end():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW", borrow_limit=100), share("L", 1, "LEND"))
    jobs = [job("a1", "A", duration=500), job("a2", "A", duration=500), job("l", "L", at=100, duration=1000)]
    result = run(topo, jobs, until=300)
    # a2 borrowed L's instance at 0, was reclaimed at 100, and still waits at 300
    assert (result.job("a2").status, result.job("a2").wait_seconds) == ("RUNNABLE", 200.0)
    never = run(topology(1, share("A", 1)), [job("hog", "A", duration=1000), job("never", "A", at=10)], until=400)
    assert never.job("never").wait_seconds == 390.0


def test_a_capacity_retry_waits_runnable_and_the_plan_hold_is_not_wait():
    """Dispatched at 0 for a window 3 days away, the plan job holds its quota SCHEDULED (``plan_hold_seconds``),
    is requeued after 2 days pending (a capacity retry), waits RUNNABLE an hour behind a higher-priority job, and
    is dispatched again: its wait is that hour alone."""
    topology_ = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 3 * DAY, 4 * DAY),))
    jobs = [pjob("early", "A", attempts=1), job("busy", "A", 4, priority=5, at=HOUR, duration=HOUR, instance_type=P5)]
    result = run(topology_, jobs)
    early = result.job("early")
    assert (early.status, early.capacity_retries, early.started_at) == ("SUCCEEDED", 1, 3 * DAY)
    assert early.wait_seconds == HOUR
    assert result.plans is not None
    held = sum(hold.end - hold.start for plan in result.plans.plans for hold in plan.holds if hold.job == "early")
    assert held == PENDING + (3 * DAY - PENDING - HOUR)  # SCHEDULED: 0 to 2 days, then 2 days + 1 h to 3 days
    assert result.job("busy").wait_seconds == PENDING - HOUR  # behind early's hold of A's whole quota


def test_the_causes_add_up_to_the_jobs_waits_per_share():
    scenario, result = walkthrough()
    waits = attribute(result, scenario.topology)
    for item in waits.shares:
        key = (item.share, item.instance_type)
        jobs = sum(r.wait_seconds for r in result.jobs if (r.share, r.instance_type) == key)
        assert sum(item.by_cause.values()) == pytest.approx(jobs, rel=1e-9), item
    assert sum(item.wait_seconds for item in waits.shares) == 3500 + 3700 + 200


@pytest.mark.parametrize(("ended", "status", "attempt_start", "finished_at", "expected"), [
    ((), Status.SUCCEEDED, 30.0, 90.0, 20.0),  # placed at 30, submitted at 10
    ((), Status.RUNNABLE, 0.0, None, 90.0),  # still waiting at the report time (100)
    ((), Status.FAILED, 0.0, 40.0, 30.0),  # terminated (or refused) at 40 while it waited
    ((AttemptRecord(20.0, 50.0, "preempted", True),), Status.RUNNING, 70.0, None, 30.0),  # 10-20 and 50-70
    ((AttemptRecord(20.0, 50.0, "preempted", True),), Status.RUNNABLE, 0.0, None, 60.0),  # 10-20 and 50-100
    ((AttemptRecord(20.0, 50.0, "failed", False),), Status.FAILED, 0.0, 50.0, 10.0),  # failed for good at 50
])
def test_runnable_seconds_sums_the_stretches_between_attempts(ended, status, attempt_start, finished_at, expected):
    assert runnable_seconds(10.0, ended, status, attempt_start, finished_at, 100.0) == expected


def test_on_a_generated_fortnight_of_the_example_company_the_causes_equal_the_waits_per_share():
    """The example company (examples/profiles: eight teams, two instance types, reclaims and early failures) drawn
    for two weeks: before, a share's causes came to up to 1.054x its jobs' waits (they charged requeues the waits left
    out); now each share's causes equal its waits within 1e-6."""
    from dataclasses import replace
    from pathlib import Path

    from policy_engine.inputs.loading import load_topology
    from policy_engine.simulation.profiles.loading import load_profile
    from policy_engine.simulation.profiles.workload import ProfileWorkload
    from policy_engine.simulation.results.records import simulate
    from policy_engine.simulation.settings import SimulationSettings

    examples = Path(__file__).resolve().parents[4] / "examples" / "profiles"
    company = load_topology(examples / "company.yaml")
    jobs, _ = ProfileWorkload(load_profile(examples / "teams.yaml", company), 14.0, 3, {}, None).jobs(company)
    result = simulate(company, jobs, settings=replace(SimulationSettings(), usage_log=True))
    waits = attribute(result, company)
    requeued = 0.0
    for item in waits.shares:
        key = (item.share, item.instance_type)
        total = sum(r.wait_seconds for r in result.jobs if (r.share, r.instance_type) == key)
        assert sum(item.by_cause.values()) == pytest.approx(total, rel=1e-6, abs=1e-9), item
        requeued += item.by_cause.get(Cause.REQUEUED_AFTER_PREEMPTION, 0.0)
    assert requeued > 3600  # the fortnight does requeue jobs: the equality is not the old one by chance
