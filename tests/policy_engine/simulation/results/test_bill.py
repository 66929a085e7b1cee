"""The bill (``outputs.billable``, ``outputs.costs``): what AWS charges, against hand-computed runs.

AWS bills a training job's RUNNING time per instance (every attempt, preempted ones included) and a training plan's
upfront fee once; limits nobody used cost nothing (docs/costs.md). Each case is worked out in its docstring.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from policy_engine.foundation.model import (
    JobQueue,
    QuotaShare,
    ReservedCapacity,
    ServiceEnvironment,
    Topology,
    TrainingPlan,
)
from policy_engine.inputs.prices import Prices
from policy_engine.simulation.results.billable import Period, billable
from policy_engine.simulation.results.costs import Convention, run_costs
from tests.builders import job, simulate
from tests.policy_engine.simulation.test_properties import PROPERTY_SETTINGS, TYPES, contended, scenarios

G5, P4D = "ml.g5.xlarge", "ml.p4d.24xlarge"
PRICES = Prices("USD", {G5: 2.0, P4D: 10.0})
HOUR = 3600.0


def _two_shares(env: dict[str, int], a: dict[str, int], b: dict[str, int], plans=(), b_strategy="LEND") -> Topology:
    return Topology(service_environments=(ServiceEnvironment(name="env", capacity=env),),
                    job_queues=(JobQueue(name="q", service_environment="env", shares=(
                        QuotaShare(name="A", capacity=a, strategy="LEND_AND_BORROW"),
                        QuotaShare(name="B", capacity=b, strategy=b_strategy))),),
                    training_plans=tuple(plans))


def _bills(report) -> dict[str, float]:
    return {s.share: s.bill.total for s in report.shares}


def test_a_borrower_pays_only_its_own_job_time_and_idle_limits_cost_nothing():
    """env 4 g5 + 2 p4d; A (L&B: 2 g5, 1 p4d) runs a1 3 g5 x 2 h (one borrowed from B) and a2 1 p4d x 3 h; B (LEND:
    1 g5, 1 p4d) runs b1 1 p4d x 1 h. A: 6 g5-h x 2 + 3 p4d-h x 10 = 42 (2 of its g5-h borrowed: still its own
    bill); B: 10. The bill is 52: the capacity's 84 over the 3 h run is no money spent."""
    topology = _two_shares({G5: 4, P4D: 2}, {G5: 2, P4D: 1}, {G5: 1, P4D: 1})
    jobs = [job("a1", "A", 3, duration=2 * HOUR, instance_type=G5), job("b1", "B", 1, instance_type=P4D),
            job("a2", "A", 1, duration=3 * HOUR, instance_type=P4D)]
    report = run_costs(simulate(topology, jobs, usage_log=True), topology, PRICES)
    assert _bills(report) == pytest.approx({"q/A": 42, "q/B": 10})
    assert report.bill.total == pytest.approx(52) and report.bill.plans == 0
    assert report.waste.total == 0
    rows = {(r.share, r.instance_type): r for r in report.ledger.shares}
    # a1 was placed borrowing: all of its 6 instance-hours are on an attempt placed above A's limit
    assert (rows[("q/A", G5)].on_demand, rows[("q/A", G5)].borrowing) == pytest.approx((6, 6))
    # the lending table stays capacity, in instance-hours, never money
    assert [(f.lender, f.borrower, f.instance_hours) for f in report.flows] == [("q/B", "q/A", pytest.approx(2))]
    assert report.to_json()["capacity"]["flows"][0] == {"lender": "q/B", "borrower": "q/A", "instance_type": G5,
                                                        "instance_hours": 2}


def test_scheduled_and_starting_time_is_never_billed():
    """A 10-minute startup: the job holds its quota from 0 but runs (and is billed) from 600 s to 1 h 600 s."""
    topology = _two_shares({G5: 2}, {G5: 1}, {G5: 1})
    result = simulate(topology, [job("a", "A", 1, instance_type=G5)], startup_delay=600)
    report = run_costs(result, topology, PRICES)
    assert report.bill.on_demand == pytest.approx(2.0)  # 1 instance-hour at 2, not the 1 h 10 m it held quota
    assert result.hours.shares[0].own == pytest.approx(1 + 600 / HOUR)


def test_a_reclaim_that_discards_an_hour_of_a_two_instance_job_is_billed_and_counted_as_waste():
    """env 4 g5; A (L&B, 2) runs two 2-instance jobs from 0 (5 h and 3 h), one on B's idle 2; at 1 h B (LEND, 2)
    submits a 1 h job: the borrowed job is reclaimed after 1 h RUNNING (no checkpoint: 2 instance-hours lost) and
    runs again when B is done. Whichever of A's jobs is the victim, A is billed 10 + 6 + 2 = 18 instance-hours
    (36 USD, 4 of them waste) and B 2 (4 USD)."""
    topology = _two_shares({G5: 4}, {G5: 2}, {G5: 2})
    jobs = [job("a0", "A", 2, duration=5 * HOUR, instance_type=G5), job("a1", "A", 2, duration=3 * HOUR,
                                                                        instance_type=G5),
            job("b1", "B", 2, at=HOUR, instance_type=G5)]
    result = simulate(topology, jobs)
    assert sum(record.preemptions for record in result.jobs) == 1
    report = run_costs(result, topology, PRICES)
    assert _bills(report) == pytest.approx({"q/A": 36, "q/B": 4})
    assert report.waste.preempted_attempts == pytest.approx(4)
    assert {s.share: s.waste.preempted_attempts for s in report.shares} == pytest.approx({"q/A": 4, "q/B": 0})
    # with checkpoints every 20 minutes only the work since the last one is lost: none at exactly 1 h
    kept = simulate(topology, [j._replace(checkpoint_interval=1200.0) for j in jobs])
    assert run_costs(kept, topology, PRICES).waste.preempted_attempts == pytest.approx(0)


def _plan_run(idle_to: str = "use", owners: tuple[str, ...] = (), fee: float = 960.0, used: bool = True):
    """A plan of 2 p4d for 2 days (96 reserved instance-hours, fee 960: 10 per instance-hour). A's plan job uses 2 for
    12 h (24), B's 1 for 12 h (12): used 36, idle 60. A also runs 1 p4d on-demand for 1 h (10 USD)."""
    plan = TrainingPlan(name="plan", instance_type=P4D, upfront_fee=fee, shares=owners, idle_to=idle_to,
                        reserved_capacities=(ReservedCapacity(instances=2, start=0, end=48 * HOUR),))
    topology = _two_shares({P4D: 5}, {P4D: 3}, {P4D: 2}, (plan,), b_strategy="RESERVE")
    jobs = [job("od", "A", 1, instance_type=P4D)]
    if used:
        jobs += [job("pa", "A", 2, duration=12 * HOUR, instance_type=P4D, training_plan="plan"),
                 job("pb", "B", 1, at=12 * HOUR, duration=12 * HOUR, instance_type=P4D, training_plan="plan")]
    return topology, simulate(topology, jobs, usage_log=True)


@pytest.mark.parametrize(("idle_to", "owners", "expected"), [
    ("use", (), {"q/A": 10 + 240 + 400, "q/B": 120 + 200}),  # idle 600 by use, 24 : 12
    ("owners", ("A",), {"q/A": 10 + 240 + 600, "q/B": 120}),  # idle 600 to the owner
    ("equal", (), {"q/A": 10 + 240 + 300, "q/B": 120 + 300}),  # idle 600 equally to the shares with a p4d limit
])
def test_a_plan_with_idle_days_is_paid_once_its_jobs_not_billed_again_idle_as_waste(idle_to, owners, expected):
    topology, result = _plan_run(idle_to, owners)
    report = run_costs(result, topology, PRICES)
    assert report.bill.on_demand == pytest.approx(10)  # the plan jobs' 36 instance-hours are not billed per hour
    assert report.bill.plans == pytest.approx(960)
    assert report.waste.plan_idle == pytest.approx(600)
    assert _bills(report) == pytest.approx(expected)
    assert report.bill.total == pytest.approx(970) and report.unallocated == pytest.approx(0)
    plan = report.to_json()["plans"][0]
    assert plan["instance_hours"] == {"reserved": 96, "used": 36, "idle": 60, "cut": 0}


def test_a_plan_nobody_used_is_unallocated_under_use():
    topology, result = _plan_run(used=False)
    report = run_costs(result, topology, PRICES)
    assert report.bill.total == pytest.approx(970) and report.unallocated == pytest.approx(960)
    assert sum(_bills(report).values()) + report.unallocated == pytest.approx(report.bill.total)


def test_the_period_cuts_an_attempt_in_two_and_prorates_the_plan_fee():
    """A's on-demand job runs 0-1 h; the plan job pa 0-12 h. Over 30 min to 6 h: 0.5 on-demand instance-hours (5 USD);
    the plan reserved 2 x 5.5 = 11 of its 96 instance-hours inside it: fee 110, of which pa used 2 x 5.5 = 11."""
    topology, result = _plan_run()
    report = run_costs(result, topology, PRICES, period=Period(1800, 6 * HOUR))
    assert report.bill.on_demand == pytest.approx(5)
    assert report.bill.plans == pytest.approx(110)
    assert report.waste.plan_idle == pytest.approx(0)
    assert _bills(report) == pytest.approx({"q/A": 115, "q/B": 0})
    assert report.to_json()["period"] == {"start": 1800, "end": 6 * HOUR}
    # the two halves of the attempt add up to the whole
    halves = [billable(result, Period(start, end)).shares for start, end in ((0, 1800), (1800, 48 * HOUR))]
    assert sum(row.on_demand for part in halves for row in part) == pytest.approx(1.0)


def test_two_designs_of_one_workload_without_preemption_bill_the_same():
    """One workload on a tight and a roomy design: waits and the runs' lengths differ, the bill does not."""
    jobs = [job(f"j{i}", "A" if i % 2 else "B", 1, at=i * 300, duration=HOUR + i * 60, instance_type=G5)
            for i in range(8)]
    tight = _two_shares({G5: 2}, {G5: 1}, {G5: 1}, b_strategy="RESERVE")
    roomy = _two_shares({G5: 8}, {G5: 4}, {G5: 4}, b_strategy="RESERVE")
    runs = [simulate(topology, jobs) for topology in (tight, roomy)]
    assert runs[0].time > runs[1].time and all(r.status == "SUCCEEDED" for run in runs for r in run.jobs)
    bills = [run_costs(run, topology, PRICES) for run, topology in zip(runs, (tight, roomy), strict=True)]
    assert bills[0].bill.total == pytest.approx(bills[1].bill.total)
    assert _bills(bills[0]) == pytest.approx(_bills(bills[1]))


def test_the_budget_view_is_the_limit_times_the_rate_over_the_period():
    """A's limit 2 g5 + 1 p4d over the 3 h run: 2 x 2 x 3 + 10 x 3 = 42 of budget; it spent 12 + 30 = 42: 100 %."""
    topology = _two_shares({G5: 4, P4D: 2}, {G5: 2, P4D: 1}, {G5: 1, P4D: 1})
    jobs = [job("a1", "A", 2, duration=3 * HOUR, instance_type=G5), job("a2", "A", 1, duration=3 * HOUR,
                                                                        instance_type=P4D)]
    report = run_costs(simulate(topology, jobs), topology, PRICES, Convention.LIMIT)
    a = next(s for s in report.shares if s.share == "q/A")
    assert (a.budget, a.bill.total, a.budget_use) == pytest.approx((42, 42, 1.0))
    assert report.to_json()["shares"][0]["budget"] == {"max_spend": 42, "use": 1}


@st.composite
def priced_plan_scenarios(draw):
    """The simulator's random scenarios (contended ones preempt in-share; several shares and types) with a priced
    training plan some jobs name, and a billing period or none."""
    topology, jobs, updates, chosen = draw(st.one_of(scenarios(), contended()))
    windows, start = [], draw(st.integers(0, 30))
    for _ in range(draw(st.integers(1, 2))):
        length = draw(st.sampled_from([1800, 1900, 2400, 7200]))
        windows.append(ReservedCapacity(instances=draw(st.integers(1, 4)), start=start, end=start + length))
        start += length + draw(st.integers(0, 60))
    shares = [s.name for s in topology.job_queues[0].shares]
    owners = tuple(draw(st.lists(st.sampled_from(shares), unique=True, max_size=2)))
    idle_to = draw(st.sampled_from(["use", "equal", *(["owners"] if owners else [])]))
    plan = TrainingPlan(name="plan", instance_type=TYPES[0], reserved_capacities=tuple(windows), shares=owners,
                        upfront_fee=draw(st.floats(0, 1e6)), idle_to=idle_to)
    topology = topology.model_copy(update={"training_plans": (plan,)})
    jobs = [j._replace(training_plan="plan") if j.instance_type == TYPES[0] and draw(st.booleans()) else j
            for j in jobs]
    period = draw(st.one_of(st.just(Period()), st.tuples(st.floats(0, 5000), st.floats(1, 5000)).map(
        lambda pair: Period(pair[0], pair[0] + pair[1]))))
    return topology, jobs, updates, chosen, period


@PROPERTY_SETTINGS
@given(priced_plan_scenarios())
def test_the_bill_is_the_shares_bills_plus_unallocated_plan_fees(scenario):
    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.results.records import build_result

    topology, jobs, updates, chosen, period = scenario
    engine = Engine(topology, jobs, updates, chosen)
    engine.run()
    report = run_costs(build_result(engine), topology, Prices("USD", {TYPES[0]: 3.0, TYPES[1]: 11.0}), period=period)
    assert report.bill.total == pytest.approx(sum(s.bill.total for s in report.shares) + report.unallocated,
                                              rel=1e-9, abs=1e-6)
    assert report.unallocated >= -1e-6 and report.waste.total <= report.bill.total + 1e-6
    event(f"preempted: {report.waste.preempted_attempts > 0}, plan used: {report.plans[0].hours.used_total > 0}, "
          f"unallocated: {report.unallocated > 1e-6}")
    assert all(s.bill.on_demand >= 0 and s.bill.plans >= -1e-9 for s in report.shares)


def test_the_ledger_read_from_the_engines_jobs_equals_the_one_read_from_records():
    """``attempt_rows`` reads a finished single-attempt job without building its record: the same ledger as from
    the records themselves (a merged result's list) and from pickled columns (a Dask worker's result)."""
    import pickle
    import random
    from dataclasses import replace

    rng = random.Random(3)
    topology = _two_shares({G5: 6, P4D: 3}, {G5: 2, P4D: 1}, {G5: 3, P4D: 2})
    jobs = [job(f"j{n}", rng.choice("AAAAB"), rng.randint(1, 3), priority=rng.randint(0, 3),
                at=rng.uniform(0, 5 * HOUR), duration=rng.uniform(600, 3 * HOUR), instance_type=rng.choice((G5, P4D)),
                checkpoint_interval=rng.choice((None, 900.0))) for n in range(60)]
    result = simulate(topology, jobs, startup_delay=120, until=6 * HOUR)
    assert sum(r.preemptions for r in result.jobs) > 0 and any(r.status == "RUNNING" for r in result.jobs)
    for period in (Period(), Period(HOUR, 4 * HOUR)):
        fast = billable(result, period)
        assert fast == billable(replace(result, jobs=list(result.jobs)), period)
        assert fast == billable(pickle.loads(pickle.dumps(result)), period)
