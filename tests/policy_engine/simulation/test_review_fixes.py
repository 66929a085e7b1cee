"""Regression tests for the simulator defects found in review (issue 4), one per defect."""

from __future__ import annotations

from tests.policy_engine.simulation.builders import job, run, share, statuses, topology


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
    assert result.job("a2").reason == "TERMINATED: stuck (jobStateTimeLimitActions)"
    assert result.job("a2").finished_at == 600
