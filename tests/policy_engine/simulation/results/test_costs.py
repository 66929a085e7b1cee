"""The capacity flows beside the bill (``outputs.costs``, ``outputs.lending``, ``outputs.capacity_hours``) against
hand-computed runs (the bill itself: ``test_bill.py``).

The scenario of most tests, worked out by hand (no startup or preemption delay):

    environment: 4 x ml.g5.xlarge (2 $/h), 2 x ml.p4d.24xlarge (10 $/h)
    A  LEND_AND_BORROW  g5: 2, p4d: 1     a1: 3 x g5 for 2 h (2 own + 1 borrowed from B); a2: 1 x p4d for 3 h
    B  LEND             g5: 1, p4d: 1     b1: 1 x p4d for 1 h
    the run ends at 3 h.

    g5:  capacity 12 ih, A own 4, A borrowed 2 (B lent 2), used 6, idle 6 = lenders' idle 3 (A 2, B 1) + outside 3
    p4d: capacity 6 ih, A own 3, B own 1, used 4, idle 2 = lenders' idle 2 (B)
"""

from __future__ import annotations

import random

import pytest

from policy_engine.foundation.model import JobQueue, QuotaShare, ServiceEnvironment, Topology
from policy_engine.inputs.prices import Prices
from policy_engine.simulation.results.billable import billable
from policy_engine.simulation.results.costs import run_costs
from policy_engine.simulation.results.lending import ATTRIBUTIONS, lending_flows
from tests.builders import job, simulate

G5, P4D = "ml.g5.xlarge", "ml.p4d.24xlarge"
PRICES = Prices("USD", {G5: 2.0, P4D: 10.0})
HOUR = 3600


def _topology(b_strategy: str = "LEND") -> Topology:
    return Topology(service_environments=(ServiceEnvironment(name="env", capacity={G5: 4, P4D: 2}),),
                    job_queues=(JobQueue(name="q", service_environment="env", shares=(
                        QuotaShare(name="A", capacity={G5: 2, P4D: 1}, strategy="LEND_AND_BORROW"),
                        QuotaShare(name="B", capacity={G5: 1, P4D: 1}, strategy=b_strategy))),))


def _run(b_strategy: str = "LEND", a1_instances: int = 3):
    jobs = [job("a1", "A", a1_instances, duration=2 * HOUR, instance_type=G5),
            job("b1", "B", 1, duration=HOUR, instance_type=P4D),
            job("a2", "A", 1, duration=3 * HOUR, instance_type=P4D)]
    topology = _topology(b_strategy)
    return topology, simulate(topology, jobs, startup_delay=0, preemption_delay=0, usage_log=True)


def _rows(report):
    return {(c.share, c.instance_type): c for c in report.capacity}


def test_the_capacity_ledger_matches_the_hand_computation():
    """Capacity, never money: quota held per share (SCHEDULED, STARTING, RUNNING), lent and idle, in instance-hours."""
    topology, result = _run()
    report = run_costs(result, topology, PRICES)
    rows = _rows(report)
    a, b = rows[("q/A", G5)], rows[("q/B", G5)]
    assert (a.hours.own, a.hours.borrowed, a.lent, a.hours.limit, a.idle) == pytest.approx((4, 2, 0, 6, 2))
    assert (b.hours.own, b.hours.borrowed, b.lent, b.hours.limit, b.idle) == pytest.approx((0, 0, 2, 3, 1))
    assert (rows[("q/A", P4D)].hours.own, rows[("q/B", P4D)].hours.own) == pytest.approx((3, 1))
    assert [(f.lender, f.borrower, f.instance_type) for f in report.flows] == [("q/B", "q/A", G5)]
    assert report.flows[0].instance_hours == pytest.approx(2)
    capacity = report.to_json()["capacity"]
    assert capacity["unit"] == "instance-hours" and "cost" not in capacity["flows"][0]


def test_without_prices_the_bill_is_instance_hours_per_type_and_no_amount():
    topology, result = _run()
    document = run_costs(result, topology).to_json()
    assert document["unit"] == "instance-hours" and document["currency"] is None
    assert document["bill"] == {"on_demand": None, "plans": None, "total": None}  # two types are not added up
    assert {row["instance_type"]: row["instance_hours"]["on_demand"] for row in document["instance_types"]} == \
        {G5: 6, P4D: 4}
    priced = run_costs(result, topology, PRICES).to_json()
    assert priced["bill"] == {"on_demand": 52, "plans": 0, "total": 52} and priced["unit"] == "USD"


def test_topology_order_drains_the_first_lender_and_proportional_matches_the_engine():
    """Two lenders, one borrower: proportional splits by idle capacity (as the engine's lent figures do);
    topology-order takes everything from the lender listed first."""
    topology = Topology(service_environments=(ServiceEnvironment(name="env", capacity={G5: 6}),),
                        job_queues=(JobQueue(name="q", service_environment="env", shares=(
                            QuotaShare(name="A", capacity={G5: 2}, strategy="LEND_AND_BORROW"),
                            QuotaShare(name="L1", capacity={G5: 1}, strategy="LEND"),
                            QuotaShare(name="L2", capacity={G5: 3}, strategy="LEND"))),))
    result = simulate(topology, [job("a", "A", 4, duration=HOUR)], startup_delay=0, preemption_delay=0,
                      usage_log=True)
    proportional = {f.lender: f.instance_hours for f in run_costs(result, topology).flows}
    assert proportional == pytest.approx({"q/L1": 0.5, "q/L2": 1.5})  # 2 borrowed, idle 1 : 3
    engine = {(s.share): s.lent for s in result.hours.shares if s.lent}
    assert engine == pytest.approx(proportional)
    ordered = run_costs(result, topology, attribution="topology-order")
    assert {f.lender: f.instance_hours for f in ordered.flows} == pytest.approx({"q/L1": 1.0, "q/L2": 1.0})
    assert ordered.attribution == "topology-order"
    assert {c.share: c.lent for c in ordered.capacity} == pytest.approx({"q/A": 0, "q/L1": 1, "q/L2": 1})


@pytest.mark.parametrize("seed", range(4))
def test_proportional_flows_add_up_to_the_engines_lent_and_borrowed_figures(seed):
    """On random runs (preemptions, several borrowers and lenders): per lender the flows are the engine's lent
    instance-hours, per borrower its borrowed ones, whatever the chunking of the log."""
    rng = random.Random(seed)
    strategies = ["LEND_AND_BORROW", "LEND", "LEND_AND_BORROW", "LEND", "RESERVE"]
    shares = tuple(QuotaShare(name=f"S{i}", capacity={G5: rng.randint(1, 3)}, strategy=strategy)
                   for i, strategy in enumerate(strategies))
    topology = Topology(service_environments=(ServiceEnvironment(name="env", capacity={G5: 14}),),
                        job_queues=(JobQueue(name="q", service_environment="env", shares=shares),))
    jobs = [job(f"j{n}", f"S{rng.randrange(5)}", rng.randint(1, 4), priority=rng.randint(0, 3),
                at=rng.uniform(0, 20 * HOUR), duration=rng.uniform(600, 4 * HOUR)) for n in range(300)]
    result = simulate(topology, jobs, startup_delay=0, preemption_delay=0, usage_log=True)
    borrowers = {(s.share, s.instance_type): s.strategy == "LEND_AND_BORROW" for s in result.hours.shares}
    for chunk in (None, 256):
        if chunk is not None:
            import policy_engine.simulation.results.lending as lending

            previous, lending.CHUNK_CELLS = lending.CHUNK_CELLS, chunk  # several chunks of 256 entries x 5 shares
        try:
            flows = lending_flows(result.usage, result.time, borrowers, ATTRIBUTIONS["proportional"])
        finally:
            if chunk is not None:
                lending.CHUNK_CELLS = previous
        lent = {s.share: 0.0 for s in result.hours.shares}
        borrowed = dict(lent)
        for flow in flows:
            lent[flow.lender] += flow.instance_hours
            borrowed[flow.borrower] += flow.instance_hours
        assert sum(borrowed.values()) > 1  # the run did borrow
        assert lent == pytest.approx({s.share: s.lent for s in result.hours.shares}, abs=1e-6)
        assert borrowed == pytest.approx({s.share: s.borrowed for s in result.hours.shares}, abs=1e-6)


def test_the_ledger_of_a_parallel_run_equals_the_sequential_one():
    from policy_engine.simulation.core.jobs import JobSpec
    from policy_engine.simulation.scenarios.workload import Scenario
    from policy_engine.simulation.settings import SimulationSettings
    from policy_engine.sweep.executor import open_executor
    from policy_engine.sweep.split import simulate_parallel

    topology = Topology(service_environments=(ServiceEnvironment(name="e1", capacity={G5: 3}),
                                              ServiceEnvironment(name="e2", capacity={P4D: 2})),
                        job_queues=(JobQueue(name="q1", service_environment="e1", shares=(
                            QuotaShare(name="A", capacity={G5: 2}, strategy="LEND_AND_BORROW"),)),
                            JobQueue(name="q2", service_environment="e2", shares=(
                                QuotaShare(name="B", capacity={P4D: 2}, strategy="RESERVE"),))))
    jobs = [JobSpec("a", "q1/A", G5, 2, 1, 0.0, HOUR), JobSpec("b", "q2/B", P4D, 1, 1, 0.0, 2 * HOUR)]
    settings = SimulationSettings(startup_delay=0, preemption_delay=0)
    scenario = Scenario(topology=topology, jobs=jobs, settings=settings)
    with open_executor(None, 1) as executor:
        parallel = simulate_parallel(scenario, executor)
    from policy_engine.simulation.results.records import simulate as sequential

    alone = sequential(topology, jobs, (), settings)
    assert parallel.hours == alone.hours
    assert billable(parallel) == billable(alone)
    report = run_costs(parallel, topology, PRICES)
    assert report.bill.total == pytest.approx(2 * 1 * 2 + 1 * 2 * 10)  # RUNNING time only: no idle capacity


def test_flows_follow_a_limit_changed_mid_run():
    """B lends 1 g5, then 2 after an update at 1 h (and the environment grows): A borrows 1 for 2 h either way;
    B's limit counts 1 h x 1 + 2 h x 2, the environment 1.5 h x 4 + 1.5 h x 5."""
    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.results.records import build_result
    from policy_engine.simulation.settings import SimulationSettings
    from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate

    topology = _topology()
    jobs = [job("a1", "A", 3, duration=2 * HOUR, instance_type=G5),
            job("a2", "A", 1, duration=3 * HOUR, instance_type=P4D)]
    updates = [ShareUpdate(HOUR, "q/B", {"capacity": {G5: 2, P4D: 1}}),
               EnvironmentUpdate(1.5 * HOUR, "env", {G5: 5, P4D: 2})]
    engine = Engine(topology, jobs, updates, SimulationSettings(startup_delay=0, preemption_delay=0, usage_log=True))
    engine.run()
    result = build_result(engine)
    report = run_costs(result, topology)
    b = _rows(report)[("q/B", G5)]
    assert (b.hours.limit, b.lent, b.idle) == pytest.approx((5, 2, 3))
    assert [(f.lender, f.borrower, round(f.instance_hours, 9)) for f in report.flows] == [("q/B", "q/A", 2)]
    assert result.hours.environments[0].capacity == pytest.approx(13.5)
