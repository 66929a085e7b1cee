"""Why a training plan sat idle: one hand-built run per cause, the precedence as a policy object, and the property
that the causes add up to the idle total (docs/training_plans.md, "Why a plan was idle")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.simulation.results.plan_account import account
from policy_engine.simulation.results.plan_idle import ORDERS, IdleCause, IdleOrder, register_order
from tests.builders import job, share, simulate
from tests.policy_engine.simulation.test_training_plans import HOUR, P5, pjob, plan_topology

A, B = "q/A", "q/B"


def idle_hours(result, topology, order="quota-first", window=0):
    plans = account(result, topology, order)
    assert plans is not None
    figures = plans.window("plan", window)
    return {cause: round(seconds / HOUR, 6) for cause, seconds in figures.by_cause.items() if seconds}, figures


def test_without_jobs_the_window_is_idle_because_no_plan_job_waits_and_its_last_30_minutes_are_unusable():
    """"From 30 minutes before a reserved capacity's end SageMaker terminates its running instances": 4 x 0.5 h
    of a 4-instance window are idle whatever waits; the rest because no job names the plan."""
    topology = plan_topology(8, share("A", 4, instance_type=P5))
    hours, figures = idle_hours(simulate(topology, []), topology)
    assert hours == {IdleCause.LAST_30_MINUTES: 2.0, IdleCause.NO_PLAN_JOB_WAITING: 38.0}
    assert figures.idle == figures.paid == 40 * HOUR


def test_a_plan_job_held_by_its_shares_quota_names_the_share():
    """A's own job holds its whole limit until 12 h: A's plan job, the head of its line, waits at A's limit while
    the plan's 4 instances sit idle."""
    topology = plan_topology(8, share("A", 4, instance_type=P5))
    jobs = [job("own", "A", 4, at=9 * HOUR, duration=3 * HOUR, instance_type=P5), pjob("p", "A", at=10 * HOUR)]
    hours, figures = idle_hours(simulate(topology, jobs), topology)
    assert hours == {IdleCause.LAST_30_MINUTES: 2.0, IdleCause.SHARE_QUOTA: 8.0, IdleCause.NO_PLAN_JOB_WAITING: 26.0}
    assert figures.by_share[IdleCause.SHARE_QUOTA] == {A: 8 * HOUR}
    assert figures.waited == {"p": (A, 2 * HOUR)}


def test_plan_jobs_behind_a_head_that_does_not_use_the_plan():
    """Submitted first, A's job without a plan heads the line until it runs at 12 h; then the plan job heads it
    and waits at A's limit for an hour."""
    topology = plan_topology(8, share("A", 4, instance_type=P5))
    jobs = [job("own", "A", 4, at=9 * HOUR, duration=3 * HOUR, instance_type=P5),
            job("head", "A", 4, at=9.5 * HOUR, duration=HOUR, instance_type=P5), pjob("p", "A", at=10 * HOUR)]
    hours, figures = idle_hours(simulate(topology, jobs), topology)
    assert hours == {IdleCause.LAST_30_MINUTES: 2.0, IdleCause.BEHIND_OTHER_HEAD: 8.0, IdleCause.SHARE_QUOTA: 4.0,
                     IdleCause.NO_PLAN_JOB_WAITING: 22.0}
    assert figures.by_share[IdleCause.BEHIND_OTHER_HEAD] == {A: 8 * HOUR}


def test_a_plan_job_larger_than_the_free_plan_instances():
    """A 2-instance plan job runs on the window; a 4-instance one, dispatched, waits SCHEDULED for 4 free
    instances ("It starts only on a free instance of an Active window"): 2 instances idle for it."""
    topology = plan_topology(12, share("A", 8, instance_type=P5))
    jobs = [pjob("small", "A", 2, at=10 * HOUR, duration=2 * HOUR), pjob("big", "A", 4, at=10.5 * HOUR)]
    hours, figures = idle_hours(simulate(topology, jobs), topology)
    assert hours == {IdleCause.LAST_30_MINUTES: 2.0, IdleCause.NO_PLAN_JOB_WAITING: 1.0 + 26.0,
                     IdleCause.LARGER_THAN_FREE: 3.0}
    assert figures.by_share[IdleCause.LARGER_THAN_FREE] == {A: 3 * HOUR}
    assert figures.waited == {"big": (A, 1.5 * HOUR)}


def test_a_plan_job_within_its_limit_waiting_for_the_environment():
    """B's job without a plan fills the environment until 12 h; A's plan job is within A's limit and waits for
    Batch's capacity."""
    topology = plan_topology(4, share("A", 4, instance_type=P5), share("B", 4, instance_type=P5))
    topology = topology.model_copy(update={"allow_oversubscription": True})
    jobs = [job("other", "B", 4, at=9 * HOUR, duration=3 * HOUR, instance_type=P5), pjob("p", "A", at=10 * HOUR)]
    hours, figures = idle_hours(simulate(topology, jobs), topology)
    assert hours == {IdleCause.LAST_30_MINUTES: 2.0, IdleCause.BATCH_CAPACITY: 8.0,
                     IdleCause.NO_PLAN_JOB_WAITING: 26.0}
    assert figures.by_share[IdleCause.BATCH_CAPACITY] == {A: 8 * HOUR}


def _both_at_once():
    """A's plan job waits at A's limit while B's large plan job waits for free instances: two causes hold."""
    topology = plan_topology(16, share("A", 4, instance_type=P5), share("B", 8, instance_type=P5))
    jobs = [job("own", "A", 4, at=9 * HOUR, duration=3 * HOUR, instance_type=P5), pjob("pa", "A", 2, at=10 * HOUR),
            pjob("small", "B", 2, at=10 * HOUR, duration=2 * HOUR), pjob("big", "B", 4, at=10 * HOUR)]
    return topology, simulate(topology, jobs)


def test_the_precedence_is_a_policy_object_that_must_rank_every_cause():
    topology, result = _both_at_once()
    quota, _ = idle_hours(result, topology, "quota-first")
    size, _ = idle_hours(result, topology, "size-first")
    assert quota[IdleCause.SHARE_QUOTA] > 0 and IdleCause.LARGER_THAN_FREE not in quota
    assert size[IdleCause.LARGER_THAN_FREE] == quota[IdleCause.SHARE_QUOTA]
    assert IdleCause.SHARE_QUOTA not in size
    assert sum(quota.values()) == pytest.approx(sum(size.values()))
    with pytest.raises(ValueError, match="must rank every IdleCause"):
        register_order(IdleOrder("short", (IdleCause.LAST_30_MINUTES,), "misses causes"))
    assert "short" not in ORDERS


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from("AB"), st.integers(1, 4), st.integers(0, 30), st.integers(1, 10),
                          st.booleans(), st.integers(1, 3)), max_size=12),
       st.sampled_from(sorted(ORDERS)), st.sampled_from(["dispatch", "hold"]))
def test_the_causes_add_up_to_the_idle_total(specs, order, dispatch):
    """Whatever the workload, each window's idle instance-seconds are charged once: the causes sum to the idle
    total, each is >= 0, and the shares named add up to their cause."""
    topology = plan_topology(8, share("A", 4, "LEND_AND_BORROW", borrow_limit=50, in_share_preemption=True,
                                      instance_type=P5), share("B", 4, "LEND", instance_type=P5),
                             windows=((4, 2 * HOUR, 6 * HOUR), (3, 8 * HOUR, 12 * HOUR)))
    jobs = [(pjob if on_plan else lambda *a, **k: job(*a, instance_type=P5, **k))(
        f"j{index}", team, size, at=at * 1800.0, duration=hours * 1800.0, priority=priority)
        for index, (team, size, at, hours, on_plan, priority) in enumerate(specs)]
    result = simulate(topology, jobs, plan_dispatch=dispatch)
    plans = account(result, topology, order)
    assert plans is not None
    for window in plans.idle["plan"]:
        assert all(seconds >= 0 for seconds in window.by_cause.values())
        assert sum(window.by_cause.values()) == pytest.approx(window.idle, abs=1e-6)
        for cause, shares in window.by_share.items():
            assert sum(shares.values()) == pytest.approx(window.by_cause[cause], abs=1e-6)
