"""The report's aggregates: what each bin, box and lane says, checked against the run itself.

The walkthrough follows AWS's worked example (scenarios/walkthrough.yaml): high runs on QS1's
own instance and med on QS2's lent one; QS2's job reclaims it; raising low above high makes
in-share preemption swap them. Larger random runs check conservation: the bins hold exactly the
instance-seconds and waiting-seconds of the run, and lending always equals borrowing.
"""

from __future__ import annotations

import numpy as np
import pytest

from policy_engine.simulation import simulate
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.results import aggregates as agg
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.settings import SimulationSettings
from policy_engine.simulation.topology_changes import ShareUpdate
from tests.builders import job, share
from tests.builders import simulate as run
from tests.builders import simulated_topology as topology
from tests.policy_engine.reports.walkthrough import step_times, walkthrough

GPU = "ml.g5.xlarge"


def _series(aggregates, share_id):
    return next(s for s in aggregates.series if s.share == share_id)


def _at(aggregates, series, time):
    index = int(np.searchsorted(aggregates.edges, time, side="right") - 1)
    return {m: float(getattr(series, m)[index]) for m in (*agg.METRICS, "depth")}


def test_usage_bins_follow_the_three_steps_of_the_walkthrough():
    scenario, result = walkthrough()
    reclaim, update = step_times(scenario)
    aggregates = agg.aggregate(result, bins=int(result.time))  # one-second bins: every step is visible
    qs1, qs2, qs3 = (_series(aggregates, f"training/{name}") for name in ("QS1", "QS2", "QS3"))
    middle = reclaim / 2
    assert _at(aggregates, qs1, middle) == {"own": 1, "borrowed": 1, "lent": 0, "idle": 0, "depth": 1}
    assert _at(aggregates, qs2, middle) == {"own": 0, "borrowed": 0, "lent": 1, "idle": 0, "depth": 0}
    after = _at(aggregates, qs2, update + 2)
    assert after == {"own": 1, "borrowed": 0, "lent": 0, "idle": 0, "depth": 0}
    assert all(value == 0 for value in qs3.own) and all(value == 1 for value in qs3.idle)  # RESERVE, no jobs
    assert qs1.preemptions.sum() == 2 and qs2.preemptions.sum() == 0


def test_own_lent_and_idle_add_up_to_the_limit_in_every_bin():
    _, result = walkthrough()
    for series in agg.aggregate(result).series:
        assert np.allclose(series.own + series.lent + series.idle, series.limit)


def test_lanes_show_own_versus_borrowed_and_preemptions():
    scenario, result = walkthrough()
    reclaim, update = step_times(scenario)
    lanes = agg.lanes(result, "training/QS1", None)
    assert (lanes.jobs, lanes.matched) == (3, 3)
    ran = {}
    for row in lanes.rows:
        if row["state"] != "waiting":
            ran.setdefault(row["job"].split()[0], []).append((row["start"], row["end"], row["state"], row["outcome"]))
    assert ran["qs1_job_high"][0] == (0, update, "own", "preempted")
    assert ran["qs1_job_med"][0] == (0, reclaim, "borrowed", "preempted")
    assert ran["qs1_job_low"][0][:3] == (update, ran["qs1_job_low"][0][1], "own")
    window = agg.lanes(result, None, (reclaim + 1, reclaim + 2), limit=1)
    assert window.jobs == 1 and window.matched > 1  # left out, and counted


def _random_run(seed: int):
    rng = np.random.default_rng(seed)
    topo = topology(6, share("A", 2, "LEND_AND_BORROW", borrow_limit=200, in_share_preemption=True),
                    share("B", 2, "LEND"), share("C", 2, "RESERVE"), share("D", 1, "LEND", state="DISABLED"),
                    time_limit=300)
    jobs = [job(f"j{i}", str(rng.choice(["A", "B", "C", "D"])), instances=int(rng.choice([1, 1, 2])),
                priority=int(rng.integers(0, 4)), at=float(rng.integers(0, 2000)), duration=float(rng.integers(1, 900)))
            for i in range(150)]
    return run(topo, jobs, usage_log=True)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bins_hold_exactly_the_instance_seconds_and_waiting_seconds_of_the_run(seed):
    result = _random_run(seed)
    aggregates = agg.aggregate(result, bins=37)
    width = np.diff(aggregates.edges)
    for metrics in result.shares:
        series = _series(aggregates, metrics.share)
        assert (series.own * width).sum() == pytest.approx(metrics.mean_own * result.time, rel=1e-4)  # metrics round
        assert (series.borrowed * width).sum() == pytest.approx(metrics.mean_borrowed * result.time, rel=1e-4)
        assert (series.lent * width).sum() == pytest.approx(metrics.mean_lent * result.time, rel=1e-4)
    lent = sum(s.lent for s in aggregates.series)
    borrowed = sum(s.borrowed for s in aggregates.series)
    assert np.allclose(lent, borrowed)  # one pool: every borrowed instance is some lender's
    waited = 0.0
    for record in result.jobs:  # every stay in the line: before and between attempts, and until terminated
        since = record.submitted_at
        for attempt in record.attempts:
            waited += attempt.start - since
            since = attempt.end
        if record.status == "FAILED" and record.finished_at > since:
            waited += record.finished_at - since
    assert any("JobStateTimeLimit" in r.reason for r in result.jobs)  # terminated while waiting
    assert any(r.reason.startswith("REJECTED") for r in result.jobs)
    depth = sum((s.depth * width).sum() for s in aggregates.series)
    assert depth == pytest.approx(waited)
    assert sum(s.preemptions.sum() for s in aggregates.series) == result.summary["preemptions"]


def test_wait_boxes_and_the_worst_jobs():
    result = _random_run(4)
    aggregates = agg.aggregate(result)
    for box in aggregates.waits:
        waits = sorted(r.wait_seconds for r in result.jobs if r.share == box.share)
        assert (box.jobs, box.low, box.high) == (len(waits), waits[0], waits[-1])
        assert box.low <= box.p25 <= box.p50 <= box.p75 <= box.p95 <= box.high
    assert [w.p95 for w in aggregates.waits] == sorted((w.p95 for w in aggregates.waits), reverse=True)
    worst = agg.worst_waiting(result, 10)
    assert [r.wait_seconds for r in worst] == sorted((r.wait_seconds for r in result.jobs), reverse=True)[:10]


def test_aggregates_need_the_usage_log():
    scenario, _ = walkthrough()
    plain = simulate(scenario.topology, scenario.jobs, scenario.updates)
    with pytest.raises(ValueError, match="usage_log"):
        agg.aggregate(plain)


def test_a_run_where_nothing_ran_still_aggregates(tmp_path):
    from policy_engine.reports.page.html_report import write_report

    topo = topology(2, share("A", 1, "LEND", state="DISABLED"), share("B", 1, "LEND"))
    result = run(topo, [job("x", "A"), job("y", "A", at=5)], usage_log=True)
    aggregates = agg.aggregate(result)
    assert all(s.depth.sum() == 0 and s.own.sum() == 0 for s in aggregates.series)
    assert [r.name for r in aggregates.worst] == ["x", "y"]
    written = write_report(result, topo, tmp_path)
    assert "REJECTED: quota share q/A is DISABLED" in written[0].read_text()


def _changed_limits_run(seed: int):  # -> (topology, result)
    """A run whose limits change twice mid-run: A is cut below its use, B raised, then A raised again."""
    rng = np.random.default_rng(seed)
    topo = topology(6, share("A", 3, "LEND_AND_BORROW", borrow_limit=100), share("B", 2, "LEND"),
                    share("C", 1, "RESERVE"))
    jobs = [job(f"j{i}", str(rng.choice(["A", "B", "C"])), instances=int(rng.choice([1, 1, 2])),
                at=float(rng.integers(0, 2000)), duration=float(rng.integers(50, 700))) for i in range(120)]
    updates = [ShareUpdate(600, "q/A", {"capacity": {GPU: 1}}), ShareUpdate(600, "q/B", {"capacity": {GPU: 4}}),
               ShareUpdate(1500, "q/A", {"capacity": {GPU: 2}})]
    engine = Engine(topo, jobs, updates, SimulationSettings(usage_log=True))
    engine.run()
    return topo, build_result(engine)


@pytest.mark.parametrize("seed", [1, 2])
def test_own_borrowed_and_lent_follow_the_limit_in_force_after_a_mid_run_change(seed):
    _, result = _changed_limits_run(seed)
    aggregates = agg.aggregate(result, bins=50)
    width = np.diff(aggregates.edges)
    for metrics in result.shares:  # the engine integrates under the limit in force at each time
        series = _series(aggregates, metrics.share)
        assert (series.own * width).sum() == pytest.approx(metrics.mean_own * result.time, rel=1e-4)
        assert (series.borrowed * width).sum() == pytest.approx(metrics.mean_borrowed * result.time, rel=1e-4)
        assert (series.lent * width).sum() == pytest.approx(metrics.mean_lent * result.time, rel=1e-4)
    a, b = _series(aggregates, "q/A"), _series(aggregates, "q/B")
    in_force = {"q/A": lambda t: 3 if t < 600 else 1 if t < 1500 else 2, "q/B": lambda t: 2 if t < 600 else 4}
    for series in (a, b):
        for index, (start, end) in enumerate(zip(aggregates.edges[:-1], aggregates.edges[1:], strict=True)):
            if in_force[series.share](start) == in_force[series.share](end):  # bins inside one limit
                total = series.own[index] + series.lent[index] + series.idle[index]
                assert total == pytest.approx(in_force[series.share](start))
    assert np.allclose(sum(s.lent for s in aggregates.series), sum(s.borrowed for s in aggregates.series))
    assert (a.limit, a.later_limits, b.later_limits) == (3, ((600, 1), (1500, 2)), ((600, 4),))
