"""The engine's edge cases: time limits vs the scheduling pass, protected victims, waiting and running reasons,
disabled queues and shares."""

from __future__ import annotations

from pathlib import Path

from policy_engine.foundation.model import JobStateTimeLimitAction
from policy_engine.simulation.core.jobs import CAPACITY_INSUFFICIENT as CAPACITY
from policy_engine.simulation.core.jobs import MISCONFIG_ENVIRONMENT, MISCONFIG_QUOTA
from tests.builders import job, share, statuses
from tests.builders import simulate as run
from tests.builders import simulated_topology as topology

TOPOLOGY = Path(__file__).parents[3] / "topologies" / "example.yaml"


def test_a_head_placeable_when_its_time_limit_expires_is_placed_not_terminated():
    # a1 ends at 600, exactly when a2 has waited 600 s: a2 is not RUNNABLE *longer than* the limit
    topo = topology(2, share("A", 1, "RESERVE"), time_limit=600)
    result = run(topo, [job("a1", "A", duration=600), job("a2", "A", duration=100)])
    assert statuses(result) == {"a1": "SUCCEEDED", "a2": "SUCCEEDED"}
    assert result.job("a2").started_at == 600


def test_a_head_still_blocked_when_its_time_limit_expires_is_terminated():
    topo = topology(2, share("A", 1, "RESERVE"), time_limit=600)
    result = run(topo, [job("a1", "A", duration=601), job("a2", "A", duration=100)])
    assert result.job("a2").status == "FAILED"
    assert result.job("a2").reason == ("Terminated by JobStateTimeLimit action due to reason: "
                                       "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY")
    assert result.job("a2").finished_at == 600


def test_a_capacity_head_is_not_terminated_by_a_misconfiguration_action():
    topo = topology(2, share("A", 1, "RESERVE"), time_limit=600, reasons=(MISCONFIG_QUOTA, MISCONFIG_ENVIRONMENT))
    result = run(topo, [job("a1", "A", duration=5000), job("a2", "A", duration=100)])
    assert statuses(result) == {"a1": "SUCCEEDED", "a2": "SUCCEEDED"}
    assert result.job("a2").started_at == 5000


def test_a_misconfigured_head_is_terminated_only_by_the_action_naming_its_reason():
    # a 3-instance job on a RESERVE share of 2: QUOTA_MANAGEMENT_LIMIT_EXCEEDED, never ENVIRONMENT_MAX_RESOURCE
    jobs = [job("big", "A", instances=3, duration=100), job("small", "A", at=1, duration=100)]
    other = run(topology(4, share("A", 2, "RESERVE"), time_limit=600, reasons=(MISCONFIG_ENVIRONMENT, CAPACITY)), jobs)
    assert statuses(other) == {"big": "RUNNABLE", "small": "RUNNABLE"}
    matching = run(topology(4, share("A", 2, "RESERVE"), time_limit=600, reasons=(MISCONFIG_QUOTA,)), jobs)
    assert matching.job("big").status == "FAILED" and matching.job("big").finished_at == 600
    assert matching.job("big").reason == f"Terminated by JobStateTimeLimit action due to reason: {MISCONFIG_QUOTA}"
    assert matching.job("small").started_at == 600


def test_the_clock_starts_when_the_job_becomes_the_head_and_the_shortest_matching_action_applies():
    quota = topology(4, share("A", 2, "RESERVE"), time_limit=600, reasons=(MISCONFIG_QUOTA,))
    actions = (*quota.job_queues[0].job_state_time_limit_actions,
               JobStateTimeLimitAction(max_time_seconds=900, reason=MISCONFIG_QUOTA),
               JobStateTimeLimitAction(max_time_seconds=700, reason=CAPACITY))
    topo = quota.model_copy(update={"job_queues": (quota.job_queues[0].model_copy(
        update={"job_state_time_limit_actions": actions}),)})
    # "big" only becomes the head at 1000, when the higher-priority "first" starts
    jobs = [job("blocker", "A", instances=2, duration=1000), job("first", "A", priority=5, instances=2, at=1,
                                                                   duration=100),
            job("big", "A", instances=3, at=2)]
    result = run(topo, jobs)
    assert result.job("first").status == "FAILED"  # a capacity head for 700 s: the CAPACITY action
    assert result.job("first").finished_at == 701
    assert result.job("big").status == "FAILED" and result.job("big").finished_at == 701 + 600


def _newest_borrower_protected():
    # b2 (placed at 10, borrowed) is the rule's victim for a1 at 10.5: the most recently started
    topo = topology(2, share("A", 1, "LEND"), share("B", 1, "LEND_AND_BORROW", borrow_limit=-1))
    return topo, [job("b1", "B", duration=1000), job("b2", "B", at=10, duration=1000),
                  job("a1", "A", at=10.5, duration=1000)]


def test_a_protected_rule_victim_is_waited_for_not_replaced_by_another():
    topo, jobs = _newest_borrower_protected()
    during = run(topo, jobs, until=10.5, min_runtime=1.0)
    assert statuses(during) == {"b1": "RUNNING", "b2": "RUNNING", "a1": "RUNNABLE"}
    assert during.summary["preemptions"] == 0
    assert "b2" in during.job("a1").reason and "protected until 11" in during.job("a1").reason
    after = run(topo, jobs, until=11, min_runtime=1.0)
    assert statuses(after) == {"b1": "RUNNING", "b2": "RUNNABLE", "a1": "RUNNING"}
    assert after.job("b1").preemptions == 0


def test_a_lender_short_of_reclaimable_capacity_says_how_much_is_reclaimable():
    topo = topology(3, share("A", 3, "LEND"), share("B", 2, "LEND_AND_BORROW", borrow_limit=-1))
    jobs = [job(f"b{i}", "B") for i in range(3)] + [job("a1", "A", instances=3, at=20)]
    reason = run(topo, jobs, until=20).job("a1").reason
    assert reason == ("CAPACITY: q/A needs 3 ml.g5.xlarge within its limit (0/3 used); "
                      "0 idle, only 1 reclaimable from shares above their limits")


def test_a_head_waiting_for_a_job_borrowed_at_the_same_instant_says_so():
    # bor borrows at 10 (FIFO ignores priority); hi's in-share + reclaim victims are low and bor,
    # and bor is protected for min_runtime: hi is not "at its limit", it waits for bor
    topo = topology(3, share("S0", 2, "LEND", in_share_preemption=True),
                    share("S1", 1, "LEND_AND_BORROW", borrow_limit=200))
    jobs = [job("low", "S0", priority=1, duration=100), job("hi", "S0", priority=5, instances=2, at=10),
            job("bor", "S1", priority=0, instances=2, at=10)]
    reason = run(topo, jobs, until=10, min_runtime=1.0).job("hi").reason
    assert "at its limit" not in reason
    assert reason == ("CAPACITY: q/S0 (LEND, cannot borrow) uses 1 of its limit 2 ml.g5.xlarge; needs 2, 1 left; "
                      "preemption waits for bor (placed at 10, protected until 11 by min_runtime)")
    assert statuses(run(topo, jobs, until=11, min_runtime=1.0)) == {"low": "RUNNABLE", "hi": "RUNNING",
                                                                    "bor": "RUNNABLE"}


def test_without_min_runtime_a_job_borrowed_in_a_pass_is_taken_by_the_next_pass_of_the_same_instant():
    # the same instant as above, min_runtime 0 (the default): bor borrows in the pass at 10 (step 3 comes
    # before in-share preemption), so that pass spares it; the pool's next pass, still at 10, preempts it
    topo = topology(3, share("S0", 2, "LEND", in_share_preemption=True),
                    share("S1", 1, "LEND_AND_BORROW", borrow_limit=200))
    jobs = [job("low", "S0", priority=1, duration=100), job("hi", "S0", priority=5, instances=2, at=10),
            job("bor", "S1", priority=0, instances=2, at=10)]
    at_once = run(topo, jobs, until=10)
    assert statuses(at_once) == {"low": "RUNNABLE", "hi": "RUNNING", "bor": "RUNNABLE"}
    assert at_once.job("hi").started_at == 10 and at_once.job("bor").preemptions == 1
    # and a borrower placed by an earlier instant's pass is reclaimed at once
    topo, jobs = _newest_borrower_protected()
    assert statuses(run(topo, jobs, until=10.5)) == {"b1": "RUNNING", "b2": "RUNNABLE", "a1": "RUNNING"}


def test_a_share_at_its_limit_says_so():
    result = run(topology(2, share("A", 1, "RESERVE")), [job("a1", "A"), job("a2", "A")], until=0)
    assert result.job("a2").reason == "CAPACITY: q/A (RESERVE, cannot borrow) at its limit (1/1 ml.g5.xlarge); needs 1"


def test_a_disabled_job_queue_is_named_when_it_rejects_a_job():
    topo = topology(2, share("A", 1, "LEND"), share("D", 1, "LEND", state="DISABLED"))
    topo = topo.model_copy(update={"job_queues": (topo.job_queues[0].model_copy(update={"state": "DISABLED"}),)})
    result = run(topo, [job("a", "A"), job("d", "D")])
    assert result.job("a").reason == "REJECTED: job queue q is DISABLED"
    assert result.job("d").reason == "REJECTED: job queue q is DISABLED"


def test_a_disabled_share_of_an_enabled_queue_is_named():
    result = run(topology(2, share("A", 1, "LEND"), share("D", 1, "LEND", state="DISABLED")), [job("d", "D")])
    assert result.job("d").reason == "REJECTED: quota share q/D is DISABLED"


def test_a_running_reason_follows_its_shares_usage_after_placement():
    topo = topology(2, share("A", 1, "LEND"), share("B", 1, "LEND_AND_BORROW", borrow_limit=-1))
    jobs = [job("b1", "B", duration=10), job("b2", "B", duration=100)]
    both = run(topo, jobs, until=5)
    assert both.job("b1").reason == "on own capacity (q/B uses 2 of its limit 1 ml.g5.xlarge: 1 borrowed by other jobs)"
    assert both.job("b2").reason == "on borrowed capacity (q/B 2/1 ml.g5.xlarge, above its limit)"
    later = run(topo, jobs, until=50)
    assert later.job("b2").reason == "placed on borrowed capacity; q/B 1/1 ml.g5.xlarge, within its limit now"


def test_the_blocked_head_scenario_is_terminated_with_aws_wording():
    from policy_engine.simulation.scenarios.workload import load_scenario

    scenario = load_scenario(TOPOLOGY.parents[1] / "scenarios" / "blocked-head.yaml")
    result = run(scenario.topology, scenario.jobs)
    assert result.job("too-big").reason == f"Terminated by JobStateTimeLimit action due to reason: {MISCONFIG_QUOTA}"
    assert result.job("too-big").finished_at == 600
    assert statuses(result)["small-1"] == statuses(result)["small-2"] == "SUCCEEDED"
