"""Cost and chargeback (``results.costs``, ``results.lending``, ``results.capacity_hours``) against hand-computed runs.

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
from policy_engine.simulation.results.costs import Convention, cost_report, run_costs
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
    return {(s.share, s.instance_type): s for s in report.shares}


def test_the_ledger_and_the_idle_breakdown_match_the_hand_computation():
    topology, result = _run()
    report = run_costs(result, topology)
    rows = _rows(report)
    a, b = rows[("q/A", G5)], rows[("q/B", G5)]
    assert (a.hours.own, a.hours.borrowed, a.lent, a.hours.limit, a.idle) == pytest.approx((4, 2, 0, 6, 2))
    assert (b.hours.own, b.hours.borrowed, b.lent, b.hours.limit, b.idle) == pytest.approx((0, 0, 2, 3, 1))
    assert (rows[("q/A", P4D)].hours.own, rows[("q/B", P4D)].hours.own) == pytest.approx((3, 1))
    g5, p4d = report.environments
    assert (g5.hours.capacity, g5.hours.used, g5.hours.idle) == pytest.approx((12, 6, 6))
    assert (g5.reserved_idle, g5.lendable_idle, g5.outside_shares) == pytest.approx((0, 3, 3))
    assert (p4d.hours.capacity, p4d.hours.used, p4d.reserved_idle, p4d.lendable_idle, p4d.outside_shares) == \
        pytest.approx((6, 4, 0, 2, 0))
    assert [(f.lender, f.borrower, f.instance_type) for f in report.flows] == [("q/B", "q/A", G5)]
    assert report.flows[0].instance_hours == pytest.approx(2)


def test_usage_convention_priced_by_hand():
    topology, result = _run()
    report = run_costs(result, topology, PRICES, Convention.USAGE)
    # A: g5 (4 own + 2 borrowed) x 2 $ + p4d 3 x 10 $ = 42; B: p4d 1 x 10 $ - 2 lent x 2 $ = 6
    assert {share: (charged, credited, net) for share, _, charged, credited, net in report.chargeback()} == \
        {"q/A": (42, 0, 42), "q/B": (10, 4, 6)}  # whole hours at whole rates: exact
    assert (report.total, report.used, report.idle) == pytest.approx((12 * 2 + 6 * 10, 6 * 2 + 4 * 10, 6 * 2 + 2 * 10))
    # the shares' bills add up to own use (A 8 + 30, B 10 = 48); idle (32) and the lent credit (4) are the platform's
    assert report.charged_to_shares == pytest.approx(48)
    assert report.not_charged == pytest.approx(report.idle + 4)
    assert report.share_net("q/B") == pytest.approx(6)
    assert report.flow_amount(report.flows[0]) == pytest.approx(4)


def test_limit_convention_priced_by_hand():
    topology, result = _run()
    report = run_costs(result, topology, PRICES, Convention.LIMIT)
    # A: g5 (6 limit + 2 borrowed) x 2 + p4d 3 x 10 = 46; B: g5 (3 limit - 2 lent) x 2 + p4d 3 x 10 = 32
    assert {share: net for share, _, _, _, net in report.chargeback()} == pytest.approx({"q/A": 46, "q/B": 32})
    # per type, as diff --scenario and compare price each share's row: the report's convention, not USAGE
    assert report.nets() == pytest.approx({("q/A", G5): 16, ("q/A", P4D): 30, ("q/B", G5): 2, ("q/B", P4D): 30})
    # the bills add up to the limits' cost (g5 3 x 3 h x 2 + p4d 2 x 3 h x 10 = 78); the rest is capacity in no
    # share's limit: 1 g5 for 3 h
    assert report.charged_to_shares == pytest.approx(78)
    assert report.not_charged == pytest.approx(3 * 2)


def test_without_prices_every_figure_is_instance_hours_per_type():
    topology, result = _run()
    report = run_costs(result, topology)
    assert report.unit == "instance-hours"
    assert report.chargeback() == [("q/A", G5, 6, 0, 6), ("q/B", G5, 0, 2, -2), ("q/A", P4D, 3, 0, 3),
                                   ("q/B", P4D, 1, 0, 1)]
    document = report.to_json()
    assert document["total"] is None  # instance-hours of two types are not added up
    assert {row["instance_type"]: row["total"] for row in document["by_instance_type"]} == {G5: 12, P4D: 6}
    assert all(row["cost"] is None for row in document["shares"])
    priced = run_costs(result, topology, PRICES).to_json()
    assert priced["total"] == 84 and priced["unit"] == "USD"
    assert priced["shares"][1]["cost"]["credited"] == 4


def test_a_reserve_shares_idle_limit_is_reserved_idle():
    topology, result = _run("RESERVE", a1_instances=2)  # B reserves; A cannot borrow, runs 2 on g5
    report = run_costs(result, topology, PRICES)
    g5 = report.environments[0]
    assert (g5.reserved_idle, g5.lendable_idle, g5.outside_shares) == pytest.approx((3, 2, 3))
    assert report.flows == ()


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
    assert {s.share: s.lent for s in ordered.shares} == pytest.approx({"q/A": 0, "q/L1": 1, "q/L2": 1})


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

    assert parallel.hours == sequential(topology, jobs, (), settings).hours
    report = cost_report(parallel.hours, topology, PRICES)
    assert report.total == pytest.approx(3 * 2 * 2 + 2 * 2 * 10)


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
    assert report.environments[0].hours.capacity == pytest.approx(13.5)
    assert report.environments[0].outside_shares == pytest.approx(1 * 1 + 0 * 0.5 + 1 * 1.5)
