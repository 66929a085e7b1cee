"""Time-weighted figures over a comparison's window (``results.window``): recomputed after the run from its
ledger, they are what ``simulate --until`` measures, and a hand-computed case."""

from __future__ import annotations

import pytest

from policy_engine.simulation.results.targets import Criterion, TargetResult
from policy_engine.simulation.results.window import WINDOW_KEY, common_window, widened_result, widened_targets
from tests.builders import job, share, simulate, topology

P4, G5 = "ml.p4d.24xlarge", "ml.g5.xlarge"
HOUR = 3600.0


def _topology(p4d_limit: int):
    return topology(share("a", p4d_limit, instance_type=P4), share("b", 2, instance_type=G5),
                    environment={P4: 2, G5: 2}, queue="q")


def _jobs():
    # four one-hour p4d jobs (in a row on one instance, two at a time on two) and one g5 hour
    return [*(job(f"p{i}", "a", instance_type=P4) for i in range(4)), job("g", "b", instance_type=G5)]


def test_hand_computed_window():
    result = simulate(_topology(2), _jobs())
    assert result.time == 2 * HOUR
    wide = widened_result(result, 4 * HOUR)
    types = wide.summary["instance_types"]
    # g5: 1 instance-hour used of 2 instances x 4 h; p4d: 4 of 2 x 4
    assert types[G5]["utilisation"] == 0.125
    assert types[G5]["capacity_instance_hours"] == 8.0
    assert types[G5]["idle_instance_hours"] == 7.0
    assert types[P4]["utilisation"] == 0.5
    assert wide.summary["cluster_utilisation"] == round(5 / 16, 6)
    assert wide.summary[WINDOW_KEY] == 4 * HOUR
    by_share = {m.share.split("/")[-1]: m for m in wide.shares}
    assert by_share["b"].own_utilisation == 0.125  # 1 h of a 2-instance limit over 4 h
    assert by_share["b"].mean_own == 0.25
    assert by_share["a"].own_utilisation == 0.5
    assert by_share["a"].mean_own == 1.0
    # what is not time-weighted stays the run's own
    assert wide.time == result.time and wide.hours == result.hours
    assert [m.wait_p95 for m in wide.shares] == [m.wait_p95 for m in result.shares]
    assert [m.preemptions for m in wide.shares] == [m.preemptions for m in result.shares]


def test_window_equals_simulate_until():
    """Widening a finished run to W gives what running it with ``until=W`` gives (idle after the end is idle)."""
    result = simulate(_topology(2), _jobs())
    window = 7.5 * HOUR
    wide, until = widened_result(result, window), simulate(_topology(2), _jobs(), until=window)
    assert until.time == window
    for mine, theirs in zip(wide.shares, until.shares, strict=True):
        for figure in ("own_utilisation", "mean_own", "mean_borrowed", "mean_lent"):
            assert getattr(mine, figure) == pytest.approx(getattr(theirs, figure), abs=1e-6), figure
    assert wide.summary["cluster_utilisation"] == pytest.approx(until.summary["cluster_utilisation"], abs=1e-6)
    for instance_type, figures in until.summary["instance_types"].items():
        for figure, value in figures.items():
            assert wide.summary["instance_types"][instance_type][figure] == pytest.approx(value, abs=1e-6), figure


def test_runs_ending_at_different_times_agree_on_an_untouched_type():
    slow, fast = simulate(_topology(1), _jobs()), simulate(_topology(2), _jobs())
    assert slow.time == 4 * HOUR and fast.time == 2 * HOUR
    # over their own ends the g5 figure differs, though g5 ran the same hour in both
    assert slow.summary["instance_types"][G5]["utilisation"] != fast.summary["instance_types"][G5]["utilisation"]
    window = common_window((slow.time, fast.time))
    slow, fast = widened_result(slow, window), widened_result(fast, window)
    assert slow.summary["instance_types"][G5] == fast.summary["instance_types"][G5]
    assert [m for m in slow.shares if m.instance_type == G5] == [m for m in fast.shares if m.instance_type == G5]


def test_min_utilisation_targets_are_judged_over_the_window():
    result = simulate(_topology(2), _jobs())
    wide = widened_result(result, 4 * HOUR)
    targets = [TargetResult(0, m.share, m.instance_type, Criterion.MIN_UTILISATION, 0.2, m.own_utilisation, m.jobs)
               for m in result.shares]
    targets.append(TargetResult(1, result.shares[0].share, None, Criterion.WAIT_P95, 60.0, 0.0, 4))
    judged = widened_targets(targets, wide.shares)
    assert [t.actual for t in judged[:2]] == [0.5, 0.125] and [t.met for t in judged[:2]] == [True, False]
    assert [t.actual for t in targets[:2]] == [1.0, 0.25]  # over the run's own 2 h, g5's target was met
    assert judged[2] == targets[2]  # a wait is not time-weighted


def test_a_window_shorter_than_the_run_is_refused():
    result = simulate(_topology(1), _jobs())
    with pytest.raises(ValueError, match="shorter than the run"):
        widened_result(result, HOUR)
