"""Chart data from the walkthrough: who ran where, on own or borrowed capacity, and when preempted.

Expected values follow AWS's worked example (step by step in scenarios/walkthrough.yaml):
high runs on QS1's own instance and med on QS2's borrowed one; QS2's job reclaims med's
instance; raising low above high makes in-share preemption swap them.
"""

from __future__ import annotations

import pytest

from policy_engine.reports.chart_data import timelines, utilisation
from policy_engine.simulation import simulate
from tests.policy_engine.reports.walkthrough import step_times, walkthrough

GPU = "ml.g5.xlarge"


def test_one_lane_per_job_grouped_by_share():
    _, result = walkthrough()
    lanes = timelines(result)
    assert {share: [lane.job for lane in share_lanes] for share, share_lanes in lanes.items()} == {
        "training/QS1": ["qs1_job_high", "qs1_job_med", "qs1_job_low"],
        "training/QS2": ["qs2_job_1"],
    }


def test_segments_show_own_versus_borrowed_and_preemption_marks():
    scenario, result = walkthrough()
    reclaim, update = step_times(scenario)
    lanes = {lane.job: lane for lane in timelines(result)["training/QS1"]}
    high, med, low = lanes["qs1_job_high"], lanes["qs1_job_med"], lanes["qs1_job_low"]
    # step 1: high on QS1's own instance, med on QS2's lent one, low waits
    assert (high.segments[0].start, high.segments[0].borrowed) == (0, False)
    assert (med.segments[0].start, med.segments[0].borrowed) == (0, True)
    # step 2: QS2's job takes its instance back from med
    assert med.preempted_at[0] == reclaim and med.segments[0].end == reclaim
    # step 3: low (now priority 4) preempts high inside QS1 and starts on QS1's own instance
    assert high.preempted_at[0] == update
    assert (low.segments[0].start, low.segments[0].borrowed) == (update, False)
    assert low.preempted_at == ()
    qs2 = timelines(result)["training/QS2"][0]
    assert (qs2.segments[0].start, qs2.segments[0].borrowed) == (reclaim, False)


def test_utilisation_stacks_follow_the_three_steps():
    scenario, result = walkthrough()
    reclaim, update = step_times(scenario)
    series = utilisation(result, scenario.topology)
    qs1, qs2, qs3 = (series[(f"training/{name}", GPU)] for name in ("QS1", "QS2", "QS3"))
    before_reclaim, after_update = reclaim / 2, (update + 1)
    assert qs1.at(before_reclaim) == {"own": 1, "borrowed": 1, "lent": 0, "idle": 0}
    assert qs2.at(before_reclaim) == {"own": 0, "borrowed": 0, "lent": 1, "idle": 0}  # QS2's instance is lent to QS1
    assert qs1.at(after_update)["borrowed"] == 0 and qs2.at(after_update) == {"own": 1, "borrowed": 0, "lent": 0,
                                                                               "idle": 0}
    assert all(qs3.at(t) == {"own": 0, "borrowed": 0, "lent": 0, "idle": 1} for t in qs3.times)  # RESERVE, no jobs
    assert qs1.times[0] == 0 and qs1.times[-1] == result.time


def test_own_lent_and_idle_always_add_up_to_the_limit():
    scenario, result = walkthrough()
    for one in utilisation(result, scenario.topology).values():
        for own, lent, idle in zip(one.own, one.lent, one.idle, strict=True):
            assert own + lent + idle == pytest.approx(one.limit)


def test_utilisation_needs_the_series():
    scenario, _ = walkthrough()
    plain = simulate(scenario.topology, scenario.jobs, scenario.updates)
    with pytest.raises(ValueError, match="utilisation_series"):
        utilisation(plain, scenario.topology)
