"""Why a training plan sat idle: one hand-built run per cause, the precedence as a policy object, and the property
that the causes add up to the idle total (docs/training_plans.md, "Why a plan was idle")."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policy_engine.simulation.results.plan_account import account
from policy_engine.simulation.results.plan_idle import ORDERS, IdleCause, IdleOrder, register_order
from policy_engine.simulation.results.plan_lines import read_lines
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


def test_a_window_of_30_minutes_has_no_active_part_and_is_idle_for_its_last_30_minutes():
    """"From 30 minutes before a reserved capacity's end SageMaker terminates its running instances": a 30-minute
    window never starts a job, so all of it is its last 30 minutes, even while a plan job waits across it (A's
    own job holds A's limit until 12 h); the next window gives the plan job its instances."""
    topology = plan_topology(8, share("A", 4, instance_type=P5),
                             windows=((4, 10 * HOUR, 10.5 * HOUR), (4, 12 * HOUR, 20 * HOUR)))
    jobs = [job("own", "A", 4, at=9 * HOUR, duration=3 * HOUR, instance_type=P5), pjob("p", "A", at=9.5 * HOUR)]
    hours, figures = idle_hours(simulate(topology, jobs), topology)
    assert hours == {IdleCause.LAST_30_MINUTES: 2.0}
    assert figures.idle == figures.paid
    later, _ = idle_hours(simulate(topology, jobs), topology, window=1)
    assert later == {IdleCause.LAST_30_MINUTES: 2.0, IdleCause.NO_PLAN_JOB_WAITING: 26.0}


WORKLOADS = (st.lists(st.tuples(st.sampled_from("AB"), st.integers(1, 4), st.integers(0, 30), st.integers(1, 10),
                                st.booleans(), st.integers(1, 3)), max_size=12),
             st.sampled_from(sorted(ORDERS)), st.sampled_from(["dispatch", "hold"]))


def _run(specs, dispatch):
    topology = plan_topology(8, share("A", 4, "LEND_AND_BORROW", borrow_limit=50, in_share_preemption=True,
                                      instance_type=P5), share("B", 4, "LEND", instance_type=P5),
                             windows=((4, 2 * HOUR, 6 * HOUR), (3, 8 * HOUR, 12 * HOUR)))
    jobs = [(pjob if on_plan else lambda *a, **k: job(*a, instance_type=P5, **k))(
        f"j{index}", team, size, at=at * 1800.0, duration=hours * 1800.0, priority=priority)
        for index, (team, size, at, hours, on_plan, priority) in enumerate(specs)]
    return topology, simulate(topology, jobs, plan_dispatch=dispatch)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*WORKLOADS)
def test_the_causes_add_up_to_the_idle_total(specs, order, dispatch):
    """Whatever the workload, each window's idle instance-seconds are charged once: the causes sum to the idle
    total, each is >= 0, and the shares named add up to their cause."""
    topology, result = _run(specs, dispatch)
    plans = account(result, topology, order)
    assert plans is not None
    for window in plans.idle["plan"]:
        assert all(seconds >= 0 for seconds in window.by_cause.values())
        assert sum(window.by_cause.values()) == pytest.approx(window.idle, abs=1e-6)
        for cause, shares in window.by_share.items():
            assert sum(shares.values()) == pytest.approx(window.by_cause[cause], abs=1e-6)


def _charged_instant_by_instant(result, topology, order):
    """The definitions of docs/training_plans.md applied at each piece of each window on its own (the oracle):
    per window, {cause: instance-seconds} and {cause: {share: instance-seconds}}."""
    lines = read_lines(result, topology).lines
    out = []
    for plan in result.plans.plans:
        for window in plan.windows:
            lo, hi = window.start, window.cutoff
            by_cause = {IdleCause.LAST_30_MINUTES: window.instances * (window.end - hi)}
            by_share: dict = {}
            cuts = {lo, hi} | {t for u in window.uses for t in (u.start, u.end)} | {
                t for h in plan.holds for t in (h.start, h.end)} | {
                t for line in lines.values() for s in (*line.stays, *line.stretches) for t in (s.start, s.end)}
            cuts = sorted(t for t in cuts if lo <= t <= hi)
            for start, end in pairwise(cuts):
                at = (start + end) / 2
                idle = window.instances - sum(u.instances for u in window.uses if u.start <= at < u.end)
                if idle <= 0:
                    continue
                holding = {}
                for share_id, line in ((key[0], line) for key, line in lines.items()):
                    waiting = [s for s in line.stretches if s.start <= at < s.end]
                    if any(s.plan == plan.name for s in waiting):
                        head = min(waiting, key=lambda s: s.rank)
                        used = sum(s.instances for s in line.stays if s.start <= at < s.end)
                        cause = (IdleCause.BEHIND_OTHER_HEAD if head.plan != plan.name else IdleCause.SHARE_QUOTA
                                 if used + head.instances > line.limit else IdleCause.BATCH_CAPACITY)
                        holding.setdefault(cause, []).append(share_id)
                    if any(h.share == share_id and h.start <= at < h.end for h in plan.holds):
                        holding.setdefault(IdleCause.LARGER_THAN_FREE, []).append(share_id)
                cause = next((c for c in ORDERS[order].order if c in holding), IdleCause.NO_PLAN_JOB_WAITING)
                seconds = idle * (end - start)
                by_cause[cause] = by_cause.get(cause, 0.0) + seconds
                for share_id in holding.get(cause, ()):
                    shares = by_share.setdefault(cause, {})
                    shares[share_id] = shares.get(share_id, 0.0) + seconds / len(holding[cause])
            out.append((by_cause, by_share))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*WORKLOADS)
def test_the_attribution_agrees_with_the_definitions_applied_instant_by_instant(specs, order, dispatch):
    """The attribution cuts each window once and sums over arrays; the same definitions applied to each piece on
    its own charge the same instance-seconds to the same causes and shares."""
    topology, result = _run(specs, dispatch)
    plans = account(result, topology, order)
    assert plans is not None
    found = [window for windows in plans.idle.values() for window in windows]
    for window, (by_cause, by_share) in zip(found, _charged_instant_by_instant(result, topology, order), strict=True):
        assert {c: s for c, s in window.by_cause.items() if s} == pytest.approx(
            {c: s for c, s in by_cause.items() if s})
        assert window.by_share.keys() == by_share.keys()
        for cause, shares in by_share.items():
            assert window.by_share[cause] == pytest.approx(shares)
