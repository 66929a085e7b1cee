"""The scheduling steps (own capacity, borrowing, reclaim, in-share preemption, backfill) and the job life
cycle around them (retries, checkpoints, delays, time limits), one test each on the smallest topology
that shows it."""

from __future__ import annotations

import pytest

from policy_engine.foundation.model import QuotaShare
from policy_engine.simulation.core.jobs import MISCONFIG_ENVIRONMENT, MISCONFIG_QUOTA
from policy_engine.simulation.core.preemption import POLICIES
from tests.builders import GPU, job, share, statuses
from tests.builders import simulate as run
from tests.builders import simulated_topology as topology


def usage(result, name: str) -> int:
    return next(s.in_use for s in result.shares if s.share.endswith("/" + name))


def test_borrow_limit_bounds_a_lend_and_borrow_share():
    # ceiling = floor(2 x 1.5) = 3 although the lender has 6 idle
    topo = topology(8, share("A", 2, "LEND_AND_BORROW", borrow_limit=50), share("L", 6, "LEND"))
    result = run(topo, [job(f"a{i}", "A") for i in range(5)], until=0)
    assert usage(result, "A") == 3
    assert list(statuses(result).values()).count("RUNNING") == 3
    assert "at its ceiling (3/3" in result.job("a3").reason


def test_unlimited_borrow_takes_all_lendable_idle_capacity():
    topo = topology(8, share("A", 2, "LEND_AND_BORROW", borrow_limit=-1), share("L", 6, "LEND"))
    result = run(topo, [job(f"a{i}", "A") for i in range(10)], until=0)
    assert usage(result, "A") == 8


def test_reserve_never_lends_its_idle_capacity():
    topo = topology(3, share("A", 1, "LEND_AND_BORROW"), share("R", 2, "RESERVE"))
    result = run(topo, [job("a1", "A"), job("a2", "A")], until=0)
    assert statuses(result) == {"a1": "RUNNING", "a2": "RUNNABLE"}
    assert "0 lendable" in result.job("a2").reason


def test_capacity_of_no_share_is_never_used():
    topo = topology(10, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    result = run(topo, [job(f"a{i}", "A") for i in range(4)], until=0)
    assert usage(result, "A") == 2  # own 1 + L's 1; the 8 unowned instances stay idle


def test_lend_never_borrows():
    topo = topology(4, share("L", 1, "LEND"), share("M", 3, "LEND"))
    result = run(topo, [job("l1", "L"), job("l2", "L")], until=0)
    assert statuses(result) == {"l1": "RUNNING", "l2": "RUNNABLE"}


def test_fifo_among_borrowers_ignores_priority():
    # L's own job ends at 100 and frees one instance; B's head was submitted first, A's has higher priority
    topo = topology(3, share("A", 1, "LEND_AND_BORROW"), share("B", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a-own", "A"), job("b-own", "B"), job("l-own", "L", duration=100),
            job("b-extra", "B", priority=1, at=5), job("a-extra", "A", priority=9, at=10)]
    result = run(topo, jobs, until=100)
    assert result.job("b-extra").status == "RUNNING"
    assert result.job("a-extra").status == "RUNNABLE"


def test_a_borrowing_head_that_does_not_fit_does_not_hold_back_others():
    topo = topology(3, share("A", 1, "LEND_AND_BORROW"), share("B", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a-own", "A"), job("b-own", "B"), job("l-own", "L", duration=100),
            job("b-big", "B", instances=2, at=5), job("a-small", "A", at=10)]
    result = run(topo, jobs, until=100)
    assert result.job("b-big").status == "RUNNABLE"
    assert result.job("a-small").status == "RUNNING"


def test_reclaim_preempts_a_minimal_victim_set():
    # B borrows x (1 instance, priority 1) and y (2 instances, priority 2); L needs 3 of its 4 back at t=100.
    # Lowest priority first takes x, then y; x was not needed once y is out, so only y is preempted.
    topo = topology(6, share("B", 2, "LEND_AND_BORROW"), share("L", 4, "LEND"))
    jobs = [job("z", "B", instances=2, priority=9), job("y", "B", instances=2, priority=2),
            job("x", "B", instances=1, priority=1), job("l", "L", instances=3, at=100)]
    result = run(topo, jobs, until=100)
    assert statuses(result) == {"z": "RUNNING", "y": "RUNNABLE", "x": "RUNNING", "l": "RUNNING"}
    assert result.summary["preemptions"] == 1


def test_second_victim_policy_chooses_differently():
    # fewest instances first: x (1) then y (2); x is needed too, so both go
    topo = topology(6, share("B", 2, "LEND_AND_BORROW"), share("L", 4, "LEND"))
    jobs = [job("z", "B", instances=2, priority=9), job("y", "B", instances=2, priority=1),
            job("x", "B", instances=1, priority=5), job("l", "L", instances=2, at=100)]
    default = run(topo, jobs, until=100)
    fewest = run(topo, jobs, until=100, victim_policy="fewest-instances")
    assert default.job("y").status == "RUNNABLE" and default.job("x").status == "RUNNING"
    assert fewest.job("x").status == "RUNNABLE" and fewest.job("l").status == "RUNNING"


class ClosestSizeFirst:
    """A policy that needs the preemptor: victims of the preemptor's size first (no more capacity than it needs)."""

    name = "closest-size"

    def key(self, victim, preemptor) -> tuple:
        return (abs(victim.spec.instances - preemptor.spec.instances), victim.priority, -victim.start_order)


def test_a_victim_policy_orders_by_the_preempting_job(monkeypatch):
    # y (1 instance) then x (2) fill the share at the same priority; h (1 instance, priority 5) preempts in-share.
    # The default takes the newest, x (2 instances for a 1-instance head); ordering by h's size takes y.
    monkeypatch.setitem(POLICIES, ClosestSizeFirst.name, ClosestSizeFirst())
    topo = topology(3, share("A", 3, "RESERVE", in_share_preemption=True))
    jobs = [job("y", "A", instances=1, priority=1), job("x", "A", instances=2, priority=1, at=1),
            job("h", "A", instances=1, priority=5, at=100)]
    default = run(topo, jobs, until=100)
    closest = run(topo, jobs, until=100, victim_policy=ClosestSizeFirst.name)
    assert statuses(default) == {"x": "RUNNABLE", "y": "RUNNING", "h": "RUNNING"}
    assert statuses(closest) == {"x": "RUNNING", "y": "RUNNABLE", "h": "RUNNING"}


def test_no_partial_preemption_when_all_candidates_are_not_enough():
    # oversubscribed: the environment has 3, L owns 3 and B owns 2; B runs 3 (one borrowed).
    # L's job of 3 could only get 1 back (B may not be pushed below its limit twice): nothing is preempted.
    topo = topology(3, share("B", 2, "LEND_AND_BORROW"), share("L", 3, "LEND"), oversubscribed=True)
    jobs = [job(f"b{i}", "B") for i in range(3)] + [job("l", "L", instances=3, at=100)]
    result = run(topo, jobs, until=100)
    assert result.summary["preemptions"] == 0
    assert result.job("l").status == "RUNNABLE"
    assert all(result.job(f"b{i}").status == "RUNNING" for i in range(3))


def test_victims_only_from_shares_above_their_limit():
    topo = topology(4, share("A", 2, "LEND_AND_BORROW"), share("L", 2, "LEND"))
    jobs = [job("a1", "A"), job("a2", "A"), job("a3", "A"), job("l1", "L", at=50), job("l2", "L", at=100)]
    result = run(topo, jobs, until=100)
    # l1 fits in L's idle instance; l2 reclaims a3 (A above its limit) and A's own two keep running
    assert statuses(result) == {"a1": "RUNNING", "a2": "RUNNING", "a3": "RUNNABLE", "l1": "RUNNING", "l2": "RUNNING"}


def test_equal_priority_never_preempts_in_share():
    topo = topology(1, share("A", 1, "RESERVE", in_share_preemption=True))
    same = run(topo, [job("first", "A", priority=5), job("second", "A", priority=5, at=10)], until=10)
    higher = run(topo, [job("first", "A", priority=5), job("second", "A", priority=6, at=10)], until=10)
    assert statuses(same) == {"first": "RUNNING", "second": "RUNNABLE"}
    assert statuses(higher) == {"first": "RUNNABLE", "second": "RUNNING"}


def test_in_share_preemption_off_means_the_job_waits():
    topo = topology(1, share("A", 1, "RESERVE", in_share_preemption=False))
    result = run(topo, [job("first", "A", priority=1), job("urgent", "A", priority=9, at=10)], until=10)
    assert statuses(result) == {"first": "RUNNING", "urgent": "RUNNABLE"}


def test_lowering_a_running_job_makes_it_a_victim():
    topo = topology(1, share("A", 1, "RESERVE", in_share_preemption=True))
    jobs = [job("runner", "A", priority=5), job("waiter", "A", priority=3, at=10)]
    result = run(topo, jobs, updates=[(20, "runner", 1)], until=20)
    assert statuses(result) == {"runner": "RUNNABLE", "waiter": "RUNNING"}


def test_preemption_retries_exhausted_fails_the_job():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A"), job("a2", "A", preemption_retries=0), job("l", "L", at=100)]
    result = run(topo, jobs, until=100)
    assert result.job("a2").status == "FAILED"
    assert "preemptionRetriesBeforeTermination (0)" in result.job("a2").reason


def test_preemption_retries_allow_that_many_preemptions():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A"), job("a2", "A", preemption_retries=1), job("l", "L", at=100, duration=50)]
    result = run(topo, jobs)
    assert result.job("a2").status == "SUCCEEDED"
    assert result.job("a2").preemptions == 1


@pytest.mark.parametrize(
    ("instances", "strategy", "borrow_limit", "reason"),
    [
        (5, "LEND_AND_BORROW", -1, MISCONFIG_ENVIRONMENT),  # larger than the environment (4)
        (2, "LEND", None, MISCONFIG_QUOTA),  # larger than a LEND share's limit
        (4, "LEND_AND_BORROW", 100, MISCONFIG_QUOTA),  # ceiling floor(2 x 2) = 4, but only 2 + 1 lendable
    ],
)
def test_misconfigured_jobs_stay_runnable_and_block_the_line(instances, strategy, borrow_limit, reason):
    topo = topology(4, share("A", 1 if strategy == "LEND" else 2, strategy, borrow_limit=borrow_limit),
                    share("L", 1, "LEND"), share("R", 1, "RESERVE"))
    jobs = [job("big", "A", instances=instances, priority=9), job("small", "A", at=1)]
    result = run(topo, jobs)
    assert result.job("big").status == "RUNNABLE"
    assert result.job("big").reason == reason
    assert result.job("small").status == "RUNNABLE"
    assert result.job("small").reason.startswith("BLOCKED: behind head job big")


def test_time_limit_action_terminates_a_stuck_head():
    topo = topology(2, share("A", 2, "LEND"), time_limit=600)
    jobs = [job("big", "A", instances=3, priority=9), job("small", "A", at=10, duration=100)]
    result = run(topo, jobs)
    assert result.job("big").status == "FAILED"
    assert result.job("big").finished_at == 600
    assert result.job("big").reason == ("Terminated by JobStateTimeLimit action due to reason: "
                                        "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE")
    assert result.job("small").started_at == 600 and result.job("small").status == "SUCCEEDED"


def test_disabled_share_rejects_submissions():
    topo = topology(2, share("A", 1, "LEND", state="DISABLED"), share("B", 1, "LEND"))
    result = run(topo, [job("a", "A"), job("b", "B")])
    assert result.job("a").status == "FAILED" and "DISABLED" in result.job("a").reason
    assert result.job("b").status == "SUCCEEDED"


def test_failures_are_retried_up_to_attempts():
    topo = topology(1, share("A", 1, "LEND"))
    retried = run(topo, [job("j", "A", duration=100, attempts=2, failures=1, fail_after=30)])
    exhausted = run(topo, [job("j", "A", duration=100, attempts=2, failures=2, fail_after=30)])
    assert retried.job("j").status == "SUCCEEDED" and retried.job("j").finished_at == 130
    assert [a.outcome for a in retried.job("j").attempts] == ["failed", "succeeded"]
    assert exhausted.job("j").status == "FAILED" and exhausted.job("j").finished_at == 60


def test_preempted_job_restarts_from_its_last_checkpoint():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A", duration=10_000), job("a2", "A", duration=1000, checkpoint_interval=100),
            job("l", "L", at=350, duration=100)]
    result = run(topo, jobs)
    # 350 s done, 300 kept: 700 s left when it restarts at 450
    assert result.job("a2").finished_at == 450 + 700
    assert result.shares[0].instance_hours_lost == pytest.approx(50 / 3600, abs=1e-6)


def test_startup_and_preemption_delays():
    topo = topology(2, share("A", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    jobs = [job("a1", "A"), job("a2", "A", duration=100), job("l", "L", at=50, duration=100)]
    result = run(topo, jobs, startup_delay=10, preemption_delay=20)
    assert result.job("a1").started_at == 10
    assert result.job("l").started_at == 50 + 20 + 10  # waits for the victim to stop, then starts up


def test_backfill_lets_jobs_pass_a_blocked_head():
    topo = topology(4, share("A", 2, "LEND_AND_BORROW", borrow_limit=100), share("L", 2, "LEND"))
    jobs = [job("running", "A", instances=2), job("l", "L", instances=1),
            job("big", "A", instances=2, priority=9, at=1), job("small", "A", instances=1, at=2)]
    strict = run(topo, jobs, until=2)
    backfilled = run(topo, jobs, until=2, backfill=True)
    assert statuses(strict)["small"] == "RUNNABLE" and strict.job("small").reason.startswith("BLOCKED")
    assert statuses(backfilled)["small"] == "RUNNING" and statuses(backfilled)["big"] == "RUNNABLE"


def test_in_share_preemption_combines_with_reclaim_in_one_minimal_set():
    # A runs x (priority 1); B borrows one of A's instances. A's urgent job needs both of A's instances:
    # it preempts x inside A and takes back the instance B borrowed, together; B's own two keep running.
    topo = topology(4, share("A", 2, "LEND_AND_BORROW", in_share_preemption=True), share("B", 2, "LEND_AND_BORROW"))
    jobs = [job("x", "A", priority=1), job("b1", "B"), job("b2", "B"), job("b3", "B", at=1),
            job("urgent", "A", instances=2, priority=9, at=100)]
    result = run(topo, jobs, until=100)
    assert statuses(result) == {"x": "RUNNABLE", "b1": "RUNNING", "b2": "RUNNING", "b3": "RUNNABLE",
                                "urgent": "RUNNING"}
    assert result.summary["preemptions"] == 2


def test_a_borrowing_head_displaced_by_a_priority_update_borrows_when_it_is_head_again():
    # found by the property tests: big (misconfigured) is raised above wide, then lowered back;
    # wide must still borrow once the lender's job ends
    topo = topology(2, share("L", 1, "LEND"), share("B", 1, "LEND_AND_BORROW"))
    jobs = [job("lender", "L", duration=10), job("wide", "B", instances=2, priority=0),
            job("big", "B", instances=3, priority=0, at=1)]
    result = run(topo, jobs, updates=[(1, "big", 1), (2, "big", 0)])
    assert result.job("wide").status == "SUCCEEDED" and result.job("wide").started_at == 10
    assert result.job("big").reason.startswith("MISCONFIGURATION")


def test_lines_of_different_instance_types_are_independent():
    two_types = QuotaShare(name="A", capacity={"ml.g5.xlarge": 1, "ml.p4d.24xlarge": 1}, strategy="RESERVE")
    topo = topology(1, two_types)
    topo = topo.model_copy(update={"service_environments": (
        topo.service_environments[0].model_copy(update={"capacity": {"ml.g5.xlarge": 1, "ml.p4d.24xlarge": 1}}),)})
    jobs = [job("g5-running", "A"), job("g5-waiting", "A", at=1, priority=9),
            job("p4d", "A", instance_type="ml.p4d.24xlarge", at=2)]
    result = run(topo, jobs, until=2)
    assert statuses(result) == {"g5-running": "RUNNING", "g5-waiting": "RUNNABLE", "p4d": "RUNNING"}


def _victims_topology(own: int):
    """S3 borrows everything it runs from lender S4; S1 and S2 reserve theirs; one environment of 4."""
    from policy_engine.foundation.model import JobQueue, ServiceEnvironment, Topology

    shares = (share("S1", own), share("S2", 1), share("S3", 0, "LEND_AND_BORROW", borrow_limit=-1),
              share("S4", 3, "LEND"))
    return Topology(service_environments=(ServiceEnvironment(name="env", capacity={GPU: 4}),),
                    job_queues=(JobQueue(name="q", service_environment="env", shares=shares),),
                    allow_oversubscription=True)


@pytest.mark.parametrize("backfill", [False, True])
def test_a_head_waiting_for_protected_victims_looks_again_when_a_job_joins_its_line(backfill):
    # at 12 head H of S1 needs 2 of S3's borrowed instances: its victim set is {p1}, protected until 18
    # (min_runtime 10). At 14 J takes the last idle instance and J2 joins S1's line behind H: H looks
    # again, and the set is now {q2}, unprotected, so q2 is preempted at 14 (not when p1's protection ends)
    from policy_engine.simulation.core.jobs import AttemptRecord

    jobs = [job("q2", "S3", 2, at=0, duration=100), job("p1", "S3", 1, priority=0, at=8, duration=100),
            job("H", "S1", 2, priority=0, at=12, duration=100), job("J2", "S1", 1, priority=0, at=14, duration=100),
            job("J", "S2", 1, priority=0, at=14, duration=100)]
    result = run(_victims_topology(2), jobs, min_runtime=10.0, backfill=backfill)
    assert result.job("q2").attempts[0] == AttemptRecord(0, 14, "preempted", True, 0.0)
    assert (result.job("H").started_at, result.job("J2").started_at) == (14, 114)


def test_a_backfill_placement_makes_a_head_waiting_for_victims_look_again():
    # as above without J: at 14 backfill places J2 behind H on S1's third instance, taking the last idle
    # one; H looks again and preempts the unprotected q2 at once
    from policy_engine.simulation.core.jobs import AttemptRecord

    jobs = [job("q2", "S3", 2, at=0, duration=100), job("p1", "S3", 1, priority=0, at=8, duration=100),
            job("H", "S1", 2, priority=0, at=12, duration=100), job("J2", "S1", 1, priority=0, at=14, duration=100)]
    result = run(_victims_topology(3), jobs, min_runtime=10.0, backfill=True)
    assert result.job("q2").attempts[0] == AttemptRecord(0, 14, "preempted", True, 0.0)
    assert result.job("H").started_at == 14
