"""Training plans at their edges, as AWS documents them (docs/training_plans.md): a plan with no window left, and a
job pending 2 days for its plan."""

from __future__ import annotations

import pytest

from policy_engine.foundation import limits
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.settings import PlanEnd, SimulationSettings
from tests.builders import job, share, simulate
from tests.policy_engine.simulation.test_training_plans import HOUR, LEAD, P5, events_of, first, pjob, plan_topology

DAY = 86400.0
PENDING = limits.PLAN_PENDING_SECONDS


def test_a_job_naming_an_expired_plan_fails_when_it_would_be_dispatched_holding_nothing():
    """SageMaker: "The training plan must be in the Scheduled or Active status to be used by a training job." The
    job fails at the instant it would be dispatched; meanwhile nothing of its share's quota is held, and a plain job
    of the same share runs at once (before: it sat SCHEDULED 2 days holding 4 instances)."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 0, 2 * HOUR),))
    jobs = [pjob("late", "A", at=3 * HOUR), job("plain", "A", 4, at=3 * HOUR + 1, instance_type=P5)]
    engine, seen = events_of(topology, jobs)
    assert [(now, after) for now, who, after, _ in seen if who == "late"] == [
        (3 * HOUR, "SUBMITTED"), (3 * HOUR, "RUNNABLE"), (3 * HOUR, "FAILED")]
    result = build_result(engine)
    assert result.job("late").reason == "ValidationException: training plan plan has no window left (Expired)"
    assert result.job("late").attempts == ()  # never on capacity
    assert first(seen, "plain", "RUNNING") == 3 * HOUR + 1


def test_the_last_windows_cutoff_counts_not_its_end():
    """"No window left" is no window whose cutoff (its end minus 30 minutes) is still ahead: in the last 30 minutes
    the plan is still Active, but no job may start on it."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 0, 2 * HOUR),))
    result = simulate(topology, [pjob("edge", "A", at=2 * HOUR - LEAD)])
    assert result.job("edge").reason == ("ValidationException: training plan plan has no window left (Active, in "
                                         "its last window's final 30 minutes)")
    assert result.job("edge").finished_at == 2 * HOUR - LEAD


def test_its_line_and_its_shares_quota_apply_as_to_any_job():
    """It fails where it would be dispatched: behind a running job of its share at the limit, it waits its turn."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 0, 2 * HOUR),))
    jobs = [job("busy", "A", 4, at=3 * HOUR, duration=HOUR, instance_type=P5), pjob("late", "A", at=3 * HOUR + 1)]
    late = simulate(topology, jobs).job("late")
    assert (late.status, late.finished_at) == ("FAILED", 4 * HOUR)


def test_under_hold_it_fails_at_submission_or_when_the_last_cutoff_passes_while_it_waits():
    """``plan_dispatch: hold`` keeps a plan job out of its line until a window opens: with no window left it fails
    at submission, and a held job fails when its plan's last cutoff passes (before, it waited forever)."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, HOUR, 3 * HOUR),))
    jobs = [job("hog", "A", 4, at=HOUR, duration=10 * HOUR, instance_type=P5, training_plan="plan"),
            pjob("waits", "A", at=HOUR + 60), pjob("expired", "A", at=4 * HOUR)]
    engine, _ = events_of(topology, jobs, plan_dispatch="hold")
    result = build_result(engine)
    assert result.job("expired").finished_at == 4 * HOUR and result.job("expired").status == "FAILED"
    # "waits" joined A's line at the window's opening, A at its limit: RUNNABLE in line, it fails when dispatched
    # after the hog is cut at the cutoff and fails for good (its attempts used)
    cutoff = 3 * HOUR - LEAD
    assert result.job("waits").finished_at == cutoff and result.job("waits").status == "FAILED"
    assert "no window left" in result.job("waits").reason


def test_a_held_job_whose_plans_last_cutoff_passes_fails_then():
    topology = plan_topology(8, share("A", 8, "RESERVE", instance_type=P5), windows=((4, HOUR, 3 * HOUR),))
    settings = SimulationSettings(plan_dispatch="hold", plan_window_end="preempt")  # type: ignore[arg-type]
    hog = job("hog", "A", 4, at=HOUR, duration=10 * HOUR, instance_type=P5, training_plan="plan",
              preemption_retries=0)
    # the hog is cut at the cutoff and requeued as a preemption: under hold, with no window left, it fails at once
    engine = Engine(topology, [hog], settings=settings)
    engine.run()
    record = build_result(engine).job("hog")
    assert (record.status, record.finished_at) == ("FAILED", 3 * HOUR - LEAD)


def test_a_scheduled_job_waiting_when_the_last_cutoff_passes_fails_and_frees_its_quota():
    """A job SCHEDULED for a full window holds its share's quota; at the plan's last cutoff it fails and frees it."""
    topology = plan_topology(8, share("A", 8, "RESERVE", instance_type=P5), windows=((4, HOUR, 3 * HOUR),))
    jobs = [pjob("hog", "A", at=HOUR, duration=10 * HOUR), pjob("queued", "A", at=HOUR + 60),
            job("plain", "A", 8, at=HOUR + 120, instance_type=P5)]
    engine, seen = events_of(topology, jobs)
    cutoff = 3 * HOUR - LEAD
    result = build_result(engine)
    assert (result.job("queued").status, result.job("queued").finished_at) == ("FAILED", cutoff)
    assert first(seen, "plain", "RUNNING") == cutoff  # the quota both held is free at the cutoff


def test_a_plan_job_pending_2_days_is_requeued_without_spending_an_attempt_and_runs_when_the_window_opens():
    """SageMaker ends a job Pending 2 days with InsufficientCapacityError; AWS Batch: service jobs "automatically
    retry certain types of failures, such as insufficient capacity errors, without consuming your configured retry
    attempts". Submitted 3 days before its window, with one attempt, it runs (before: failed for good)."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 3 * DAY, 4 * DAY),))
    engine, seen = events_of(topology, [pjob("early", "A", attempts=1, preemption_retries=0)])
    record = build_result(engine).job("early")
    assert (record.status, record.started_at, record.capacity_retries, record.preemptions) == (
        "SUCCEEDED", 3 * DAY, 1, 0)
    requeued = [(now, after, reason) for now, who, after, reason in seen if who == "early" and after == "RUNNABLE"]
    assert requeued[-1] == (PENDING, "RUNNABLE", "InsufficientCapacityError: no instance of training plan plan for "
                            "2 days pending; retried without consuming an attempt")
    assert SimulationSettings().plan_pending_end is PlanEnd.REQUEUE  # the default


def test_requeue_is_for_the_2_day_error_only_not_max_runtime_exceeded():
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 3 * DAY, 4 * DAY),))
    record = simulate(topology, [pjob("short", "A", max_runtime=600)]).job("short")
    assert (record.status, record.finished_at, record.capacity_retries) == ("FAILED", 600, 0)
    assert record.reason.startswith("MaxRuntimeExceeded")


@pytest.mark.parametrize(("policy", "status", "preemptions"), [("retry", "FAILED", 0), ("fail", "FAILED", 0),
                                                                ("preempt", "SUCCEEDED", 1)])
def test_retry_preempt_and_fail_stay_settings(policy, status, preemptions):
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 3 * DAY, 4 * DAY),))
    record = simulate(topology, [pjob("early", "A", attempts=1)], plan_pending_end=policy).job("early")
    assert (record.status, record.preemptions, record.capacity_retries) == (status, preemptions, 0)


def test_a_windows_end_cannot_be_requeued():
    with pytest.raises(ValueError, match=r"unknown plan_window_end 'requeue' \(known: retry, preempt, fail\)"):
        SimulationSettings(plan_window_end="requeue")  # type: ignore[arg-type]


def _scenario(tmp_path, settings: str) -> str:
    (tmp_path / "topology.yaml").write_text(f"""\
service_environments: [{{name: gpu, capacity: {{{P5}: 8}}}}]
job_queues:
  - name: training
    service_environment: gpu
    shares: [{{name: A, capacity: {{{P5}: 4}}, strategy: RESERVE}}]
training_plans:
  - name: plan
    instance_type: {P5}
    reserved_capacities: [{{instances: 4, start: {3 * DAY}, end: {4 * DAY}}}]
""")
    (tmp_path / "scenario.yaml").write_text(f"""\
topology: topology.yaml
settings: {settings}
jobs:
  - {{name: early, share: A, instance_type: {P5}, instances: 4, submit_at: 0, duration: 3600, training_plan: plan}}
""")
    return str(tmp_path / "scenario.yaml")


def test_simulate_json_counts_capacity_retries_per_job(tmp_path):
    from click.testing import CliRunner

    from policy_engine.cli.app import main

    out = CliRunner().invoke(main, ["simulate", _scenario(tmp_path, "{}"), "--format", "json"])
    assert out.exit_code == 0, out.output
    import json

    (early,) = json.loads(out.stdout)["jobs"]
    assert (early["status"], early["capacity_retries"], early["started_at"]) == ("SUCCEEDED", 1, 3 * DAY)


def test_a_scenario_asking_to_requeue_a_windows_end_is_one_line_and_exit_2(tmp_path):
    from click.testing import CliRunner

    from policy_engine.cli.app import main

    out = CliRunner().invoke(main, ["simulate", _scenario(tmp_path, "{plan_window_end: requeue}")])
    assert out.exit_code == 2
    (line,) = out.output.strip().splitlines()
    assert "plan_window_end" in line and "requeue" in line and "known: retry, preempt, fail" in line, line
