"""What plans' hazards cost in a run: reserved hours in-share preemption threw away, and the quota SCHEDULED plan
jobs held the night before, with the jobs that waited meanwhile and each plan job's ``plan_hold_seconds``."""

from __future__ import annotations

from policy_engine.simulation.results.plan_account import account
from tests.builders import job, share, simulate
from tests.policy_engine.simulation.test_training_plans import HOUR, P5, pjob, plan_topology


def test_in_share_preemption_of_a_plan_job_throws_away_reserved_hours():
    """A higher-priority job of A preempts A's plan job an hour into its run: without checkpoints the hour on 4
    reserved instances is lost; with a 40-minute checkpoint, 20 minutes of it."""
    topology = plan_topology(8, share("A", 4, in_share_preemption=True, instance_type=P5))
    for interval, lost in ((None, 4 * HOUR), (2400.0, 4 * 1200.0)):
        jobs = [pjob("p", "A", at=10 * HOUR, duration=3 * HOUR, priority=1, checkpoint_interval=interval),
                job("urgent", "A", 4, priority=9, at=11 * HOUR, duration=HOUR, instance_type=P5)]
        plans = account(simulate(topology, jobs), topology)
        assert plans is not None
        [loss] = plans.hazards.preemption
        assert (loss.plan, loss.share, loss.in_share, loss.reclaim) == ("plan", "q/A", lost, 0.0)
        assert (loss.in_share_preemptions, loss.reclaim_preemptions, loss.jobs) == (1, 0, {"p": 1})


def test_a_cut_at_the_windows_end_is_not_a_preemption_loss():
    """Under ``plan_window_end: preempt`` the cut counts as a preemption in the job's record, but the work it
    lost is the window's cut, not in-share preemption."""
    topology = plan_topology(8, share("A", 4, in_share_preemption=True, instance_type=P5))
    result = simulate(topology, [pjob("long", "A", at=18 * HOUR, duration=4 * HOUR)], plan_window_end="preempt")
    assert result.job("long").preemptions == 1
    plans = account(result, topology)
    assert plans is not None and plans.hazards.preemption == []


def test_the_night_before_quota_held_and_the_jobs_that_waited_for_it():
    """docs/training_plans.md: "jobs submitted the night before a window block their share's other work all
    night". The plan job holds A's 4 from 0 to 10 h; A's job without a plan waits from 60 s until the plan job
    is done at 11 h, 10 h - 60 s of it while the quota was held."""
    topology = plan_topology(8, share("A", 4, instance_type=P5), share("B", 4, instance_type=P5))
    result = simulate(topology, [pjob("night", "A"), job("day", "A", 4, at=60, instance_type=P5),
                                 job("b", "B", 4, at=60, instance_type=P5)])
    plans = account(result, topology)
    assert plans is not None
    [held] = plans.hazards.held
    assert (held.plan, held.share, held.quota_seconds, held.hold_seconds, held.jobs_held) == (
        "plan", "q/A", 4 * 10 * HOUR, 10 * HOUR, 1)
    assert held.waited == {"day": 10 * HOUR - 60} and held.waited_jobs == 1
    assert plans.plan_hold == [10 * HOUR, None, None]  # per record: a plan job's SCHEDULED wait; none without a plan
    assert result.job("night").wait_seconds == 0  # it is not wait time: it was placed (SCHEDULED) at once
