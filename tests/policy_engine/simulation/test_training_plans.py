"""Training plans in the simulator: one test per documented behaviour (docs/training_plans.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.foundation import limits
from policy_engine.foundation.model import ReservedCapacity, Topology, TrainingPlan
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.jobs import Status
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.simulation.settings import SimulationSettings
from tests.builders import job, share, simulate, simulated_topology, statuses

P5 = "ml.p5.48xlarge"
HOUR = 3600.0
LEAD = limits.PLAN_TERMINATION_LEAD_SECONDS


def plan_topology(environment: int, *shares, windows=((4, 10 * HOUR, 20 * HOUR),), name="plan") -> Topology:
    topology = simulated_topology(environment, *shares, instance_type=P5)
    arn = f"arn:aws:sagemaker:us-east-1:123456789012:training-plan/{name}"
    plan = TrainingPlan(name=name, instance_type=P5, arn=arn,
                        reserved_capacities=tuple(ReservedCapacity(instances=n, start=s, end=e) for n, s, e in windows))
    return topology.model_copy(update={"training_plans": (plan,)})


def pjob(name, share_name, instances=4, at=0.0, duration=HOUR, **extra):
    return job(name, share_name, instances, at=at, duration=duration, instance_type=P5, training_plan="plan", **extra)


def events_of(topology, jobs, until=None, **settings):
    engine = Engine(topology, jobs, settings=SimulationSettings(**settings))
    seen: list[tuple[float, str, str, str]] = []
    engine.on_transition = lambda now, j, before, after, reason: seen.append((now, j.spec.name, after, reason))
    engine.run(until)
    return engine, seen


def first(seen, name, status):
    return next(now for now, who, after, _ in seen if who == name and after == status)


def test_a_plan_job_dispatched_before_its_window_sits_scheduled_holding_its_shares_quota():
    """The hazard: submitted the night before, it holds A's whole limit, and A's other job waits until it runs."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), share("B", 4, "RESERVE", instance_type=P5))
    engine, seen = events_of(topology, [pjob("night", "A"), job("day", "A", 4, at=60, instance_type=P5)], until=HOUR)
    night, day = engine.by_name["night"], engine.by_name["day"]
    assert night.status is Status.SCHEDULED and day.status is Status.RUNNABLE
    assert engine.by_name["night"].share.used == 4  # its quota, held
    assert "PLAN: SCHEDULED, waiting for a free instance" in build_result(engine).job("night").reason
    engine.run()
    assert first(seen, "night", "RUNNING") == 10 * HOUR  # the window opens
    assert first(seen, "day", "RUNNING") == 11 * HOUR  # only when it is done
    figures = build_result(engine).plans
    assert figures is not None and figures.plans[0].held_quota == {"q/A": 10 * HOUR * 4}


def test_hold_keeps_a_plan_job_runnable_and_out_of_its_line_until_its_window():
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5))
    engine, seen = events_of(topology, [pjob("night", "A"), job("day", "A", 4, at=60, instance_type=P5)],
                             plan_dispatch="hold")
    assert first(seen, "day", "RUNNING") == 60  # nothing holds A's quota
    held = next(reason for _, who, after, reason in seen if who == "night" and after == "RUNNABLE")
    assert held == "PLAN: held RUNNABLE until training plan plan has an Active window"
    assert "SCHEDULED" not in [after for now, who, after, _ in seen if who == "night" and now < 10 * HOUR]
    assert first(seen, "night", "SCHEDULED") == first(seen, "night", "RUNNING") == 10 * HOUR
    assert engine.plans is not None and engine.plans.report(engine.now).plans[0].held_quota == {}


def test_a_held_job_shows_its_reason_and_can_be_terminated():
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5))
    hold = SimulationSettings(plan_dispatch="hold")  # type: ignore[arg-type]
    engine = Engine(topology, [pjob("night", "A")], settings=hold)
    engine.run(HOUR)
    reason = build_result(engine).job("night").reason
    assert reason == "PLAN: held RUNNABLE until training plan plan has an Active window"
    engine.terminate(engine.by_name["night"], "no longer needed")
    engine.run()
    assert engine.by_name["night"].status is Status.FAILED and engine.by_name["night"].started_at is None


def test_a_plan_job_waits_scheduled_while_its_window_is_full_and_starts_when_an_instance_frees():
    topology = plan_topology(8, share("A", 8, "RESERVE", instance_type=P5))
    _, seen = events_of(topology, [pjob("one", "A", at=10 * HOUR), pjob("two", "A", at=10 * HOUR)])
    assert first(seen, "two", "SCHEDULED") == 10 * HOUR  # dispatched: quota and environment allow it
    assert first(seen, "two", "RUNNING") == 11 * HOUR  # the window's 4 instances free when "one" ends


def test_jobs_without_a_plan_never_use_plan_instances():
    """A full environment of non-plan jobs leaves the plan's instances free for plan jobs; they only count against
    Batch's limits (the environment and the shares)."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), share("B", 4, "RESERVE", instance_type=P5))
    engine, seen = events_of(topology, [job("plain", "B", 4, at=10 * HOUR, instance_type=P5), pjob("p", "A",
                                                                                                   at=10 * HOUR)])
    assert first(seen, "p", "RUNNING") == first(seen, "plain", "RUNNING") == 10 * HOUR
    window = build_result(engine).plans.plans[0].windows[0]  # type: ignore[union-attr]
    assert window.peak == 4 and set(window.shares) == {"q/A"}


def test_running_attempts_end_30_minutes_before_the_window_ends_and_retry_under_the_retry_strategy():
    windows = ((4, 0, 2 * HOUR), (4, 4 * HOUR, 8 * HOUR))
    topology = plan_topology(4, share("A", 4, "RESERVE", instance_type=P5), windows=windows)
    engine, seen = events_of(topology, [pjob("long", "A", duration=3 * HOUR, attempts=2, checkpoint_interval=600)])
    cut_at = 2 * HOUR - LEAD
    assert (cut_at, "long", "RUNNABLE", "CapacityError: the reserved capacity of training plan plan (window 0) "
            "ended; SageMaker terminated the instances") in seen
    assert first(seen, "long", "SCHEDULED") == 0
    # it is dispatched again at once, waits SCHEDULED for the next window, and keeps its checkpointed 1.5 h
    assert [s for now, who, s, _ in seen if who == "long" and now >= cut_at][:3] == ["RUNNABLE", "SCHEDULED",
                                                                                     "STARTING"]
    done = engine.by_name["long"]
    assert done.status is Status.SUCCEEDED and done.finished_at == 4 * HOUR + 1.5 * HOUR
    assert done.preemptions == 0 and done.attempts_failed == 1


def test_a_cut_with_its_retries_exhausted_fails_and_the_preempt_policy_counts_a_preemption():
    topology = plan_topology(4, share("A", 4, "RESERVE", instance_type=P5), windows=((4, 0, 2 * HOUR),))
    result = simulate(topology, [pjob("long", "A", duration=3 * HOUR)])
    assert statuses(result) == {"long": "FAILED"}
    assert result.job("long").reason.startswith("CapacityError: the reserved capacity of training plan plan")
    preempted = simulate(topology, [pjob("long", "A", duration=3 * HOUR, preemption_retries=0)],
                         plan_window_end="preempt")
    assert preempted.job("long").preemptions == 1 and statuses(preempted) == {"long": "FAILED"}
    failed = simulate(topology, [pjob("long", "A", duration=3 * HOUR, attempts=3)], plan_window_end="fail")
    assert statuses(failed) == {"long": "FAILED"}  # at once, whatever the retry strategy


def test_a_job_pending_2_days_fails_with_insufficient_capacity_and_max_runtime_ends_it_sooner():
    topology = plan_topology(8, share("A", 8, "RESERVE", instance_type=P5), windows=((4, 0, 10 * 86400),))
    jobs = [pjob("hog", "A", duration=5 * 86400), pjob("late", "A", at=60)]
    result = simulate(topology, jobs)
    late = result.job("late")
    assert late.status == "FAILED" and late.finished_at == 60 + limits.PLAN_PENDING_SECONDS
    assert late.reason == "InsufficientCapacityError: no instance of training plan plan for 2 days pending"
    short = simulate(topology, [jobs[0], pjob("late", "A", at=60, max_runtime=7200)]).job("late")
    assert short.finished_at == 60 + 7200
    assert short.reason == ("MaxRuntimeExceeded: pending for training plan plan longer than "
                            "StoppingCondition.MaxRuntimeSeconds (7200)")
    retried = simulate(topology, [jobs[0], pjob("late", "A", at=60, attempts=2)], plan_pending_end="retry")
    assert retried.job("late").finished_at == 60 + 2 * limits.PLAN_PENDING_SECONDS  # a second attempt, dispatched


def test_a_scheduled_plan_job_is_preemptible():
    """Waiting SCHEDULED it holds borrowed capacity; the lender's own job reclaims it."""
    topology = plan_topology(4, share("A", 2, "LEND_AND_BORROW", instance_type=P5),
                             share("B", 2, "LEND", instance_type=P5))
    engine, seen = events_of(topology, [pjob("early", "A"), job("owner", "B", 2, at=HOUR, instance_type=P5)])
    assert first(seen, "owner", "RUNNING") == HOUR
    assert any(who == "early" and after == "RUNNABLE" and reason.startswith("preempted (reclaim)")
               for _, who, after, reason in seen)
    assert engine.by_name["early"].preemptions == 1


def test_figures_per_window_and_share():
    """4 instances for 10 h: 40 paid; A uses 4 x 1 h, B 4 x 2 h; 28 idle; B's 9.5 h job is cut after 2 h."""
    topology = plan_topology(8, share("A", 4, "RESERVE", instance_type=P5), share("B", 4, "RESERVE", instance_type=P5))
    result = simulate(topology, [pjob("a", "A", at=10 * HOUR), pjob("b", "B", at=17.5 * HOUR, duration=9.5 * HOUR)])
    assert result.plans is not None
    window = result.plans.plans[0].windows[0]
    assert (window.paid, window.used, window.idle) == (40 * HOUR, 4 * HOUR + 4 * 2 * HOUR, 28 * HOUR)
    assert window.shares["q/B"].cut_jobs == 1 and window.shares["q/B"].cut_seconds == 4 * 2 * HOUR
    assert window.cutoff == 20 * HOUR - LEAD and result.plans.idle_seconds == 28 * HOUR


TWO_WINDOWS_THREE_TEAMS = """\
service_environments:
  - {name: gpu, capacity: {ml.p5.48xlarge: 12}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.p5.48xlarge: 4}, strategy: RESERVE}
      - {name: speech, capacity: {ml.p5.48xlarge: 4}, strategy: RESERVE}
      - {name: search, capacity: {ml.p5.48xlarge: 4}, strategy: RESERVE}
training_plans:
  - name: p5-plan
    arn: arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-plan
    instance_type: ml.p5.48xlarge
    reserved_capacities:
      - {instances: 4, start: 2026-12-01T08:00:00Z, end: 2026-12-01T12:00:00Z}
      - {instances: 6, start: 2026-12-02T08:00:00Z, end: 2026-12-02T12:00:00Z}
"""

TWO_WINDOWS_JOBS = """\
name,share,instances,submit_at,duration,training_plan,attempts,checkpoint_interval
v-night,vision,4,0,7200,p5-plan,2,
s-day,speech,2,28800,3600,arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-plan,1,
v-plain,vision,4,3600,3600,,1,
q-long,search,4,30000,18000,p5-plan,2,3600
s-next,speech,2,100000,7200,p5-plan,1,
"""


def test_two_windows_three_teams_worked_out_by_hand(tmp_path: Path):
    """Start 2026-12-01T00:00Z: window 0 is 08:00-12:00 (4 instances; 28800-43200 s, cut from 41400), window 1
    the next day 08:00-12:00 (6 instances; 115200-129600 s, cut from 127800).

    - vision ``v-night`` (4, 2 h) is dispatched at 0 and holds vision's 4 until 28800: ``v-plain`` (1 h, no plan),
      submitted at 3600, waits behind it and runs 36000-39600. v-night runs 28800-36000: 8 inst-h; held 4 x 28800 s.
    - speech ``s-day`` (2, 1 h, named by ARN) at 28800: the window's 4 are v-night's, so it waits SCHEDULED
      until 36000 and runs to 39600: 2 inst-h; held 2 x 2 h = 4.
    - search ``q-long`` (4, 5 h, checkpoints hourly) at 30000 waits SCHEDULED for v-night's and s-day's
      instances (s-day, first in line, took 2 of them at 36000: first fit): at 39600 all 4 are free; it runs until
      the cut at 41400 (0.5 h x 4 = 2 inst-h used, all lost: no checkpoint yet), is dispatched again (attempt 2
      of 2) and holds search's quota until window 1 opens at 115200. Window 1 cuts at 127800, 3.5 h later, short
      of its 5 h: cut again, FAILED; 4 x 3.5 = 14 inst-h used, 3 h kept by checkpoints, 4 x 0.5 = 2 lost.
      Held: 4 x (39600 - 30000) + 4 x (115200 - 41400) s.
    - speech ``s-next`` (2, 2 h) at 100000 waits until 115200 and runs to 122400 beside q-long (6 instances):
      4 inst-h; held 2 x 15200 s.

    Window 0 paid 16, used 8 + 2 + 2 = 12, idle 4; window 1 paid 24, used 14 + 4 = 18, idle 6.
    """
    (tmp_path / "topology.yaml").write_text(TWO_WINDOWS_THREE_TEAMS, encoding="utf-8")
    (tmp_path / "jobs.csv").write_text(TWO_WINDOWS_JOBS, encoding="utf-8")
    (tmp_path / "s.yaml").write_text("topology: topology.yaml\njobs: jobs.csv\nstart: 2026-12-01T00:00:00Z\n",
                                     encoding="utf-8")
    scenario = load_scenario(tmp_path / "s.yaml")
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
    engine.run()
    result = build_result(engine)
    assert statuses(result) == {"v-night": "SUCCEEDED", "s-day": "SUCCEEDED", "v-plain": "SUCCEEDED",
                                "q-long": "FAILED", "s-next": "SUCCEEDED"}
    assert result.job("v-plain").started_at == 36000 and result.job("s-day").started_at == 36000
    assert result.job("q-long").reason.startswith("CapacityError: the reserved capacity of training plan p5-plan "
                                                  "(window 1) ended")
    assert result.plans is not None
    (plan,) = result.plans.plans
    first_window, second = plan.windows
    assert (first_window.start, first_window.cutoff, second.start, second.cutoff) == (28800, 41400, 115200, 127800)
    used = {sid: use.used / HOUR for sid, use in first_window.shares.items()}
    assert used == {"training/vision": 8, "training/speech": 2, "training/search": 2}
    assert (first_window.paid / HOUR, first_window.idle / HOUR) == (16, 4)
    assert {sid: use.used / HOUR for sid, use in second.shares.items()} == {"training/search": 14,
                                                                            "training/speech": 4}
    assert (second.paid / HOUR, second.idle / HOUR) == (24, 6)
    assert (first_window.shares["training/search"].cut_seconds, second.shares["training/search"].cut_seconds) == (
        2 * HOUR, 2 * HOUR)
    assert plan.held_quota == {"training/vision": 4 * 28800, "training/speech": 2 * 7200 + 2 * 15200,
                               "training/search": 4 * (39600 - 30000) + 4 * (115200 - 41400)}


@pytest.mark.parametrize(("cell", "message"), [
    ("nope", "jobs[v-night].training_plan: no training plan 'nope' in the topology (known: p5-plan)"),
    ("arn:aws:sagemaker:us-east-1:123456789012:training-plan/other",
     "jobs[v-night].training_plan: no training plan 'arn:aws:sagemaker:us-east-1:123456789012:training-plan/other' "
     "in the topology (known: p5-plan)"),
])
def test_an_unknown_plan_is_one_line_and_exit_2(tmp_path: Path, cell, message):
    (tmp_path / "topology.yaml").write_text(TWO_WINDOWS_THREE_TEAMS, encoding="utf-8")
    (tmp_path / "jobs.csv").write_text(TWO_WINDOWS_JOBS.replace("p5-plan,2,\n", f"{cell},2,\n", 1), encoding="utf-8")
    (tmp_path / "s.yaml").write_text("topology: topology.yaml\njobs: jobs.csv\nstart: 2026-12-01T00:00:00Z\n",
                                     encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert out.output.splitlines() == [f"error: {tmp_path / 'jobs.csv'}:2: {message}"]


def test_a_plan_of_another_instance_type_and_dates_without_a_start_are_load_errors(tmp_path: Path):
    (tmp_path / "topology.yaml").write_text(TWO_WINDOWS_THREE_TEAMS.replace(
        "{name: gpu, capacity: {ml.p5.48xlarge: 12}}", "{name: gpu, capacity: {ml.p5.48xlarge: 12, ml.g5.xlarge: 2}}")
        .replace("{name: search, capacity: {ml.p5.48xlarge: 4}", "{name: search, capacity: {ml.g5.xlarge: 2}"),
        encoding="utf-8")
    (tmp_path / "s.yaml").write_text("topology: topology.yaml\njobs:\n"
                                     "  - {name: g, share: search, duration: 10, training_plan: p5-plan}\n",
                                     encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        f"error: {tmp_path / 's.yaml'}:1: topology: training plan p5-plan's windows are dates: give the scenario a "
        "start: (the ISO 8601 time its second 0 stands for), or write them in seconds",
        f"error: {tmp_path / 's.yaml'}:3: jobs[g].training_plan: plan p5-plan reserves ml.p5.48xlarge; the job runs "
        "on ml.g5.xlarge"]
    (tmp_path / "s.yaml").write_text("topology: topology.yaml\nstart: tomorrow\njobs: []\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2
    assert out.output.splitlines()[0] == (f"error: {tmp_path / 's.yaml'}:2: start: must be an ISO 8601 time with a "
                                          "time zone (2026-12-01T00:00:00Z), got 'tomorrow'")


def test_a_topology_without_plans_runs_no_plan_code():
    engine = Engine(simulated_topology(2, share("A", 2)), [job("a", "A")])
    assert engine.plans is None and engine._immediate


EXAMPLES = Path(__file__).parents[3] / "examples" / "training_plans"


def test_the_example_shows_the_night_before_hazard_and_hold_avoids_it():
    waits = {}
    for name in ("night-before.yaml", "hold.yaml"):
        scenario = load_scenario(EXAMPLES / name)
        engine = Engine(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
        engine.run()
        waits[name] = build_result(engine).job("v-plain").wait_seconds
    assert waits == {"night-before.yaml": 32400, "hold.yaml": 0}


def test_sweep_and_tune_can_minimise_plan_idle_hours():
    from policy_engine.sweep.evaluate import simulation_json
    from policy_engine.sweep.expressions import parse_expression
    from policy_engine.sweep.run_record import RunFigures

    scenario = load_scenario(EXAMPLES / "night-before.yaml")
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
    engine.run()
    summary, shares = simulation_json(build_result(engine))
    figures = RunFigures(summary=summary, shares=tuple(shares))
    assert parse_expression("plan_idle_hours", scenario.topology)(figures) == 8
    no_plans = simulated_topology(1, share("A"))
    plain = simulate(no_plans, [job("a", "A")])
    assert "plan_idle_hours" not in simulation_json(plain)[0]  # simulate's JSON summary, as it is
    assert parse_expression("plan_idle_hours", no_plans)(RunFigures(summary=simulation_json(plain)[0])) == 0
    out = CliRunner().invoke(main, ["sweep", str(EXAMPLES / "night-before.yaml"), "--vary",
                                    "settings.plan_dispatch=dispatch,hold", "--minimize", "plan_idle_hours",
                                    "--workers", "1", "--quiet", "--format", "json"])
    assert out.exit_code == 0, out.output
    import json

    runs = json.loads(out.stdout)["runs"]
    assert [(run["values"]["settings.plan_dispatch"], run["summary"]["plan_idle_hours"]) for run in runs] == [
        ("dispatch", 8), ("hold", 8)]


def test_the_pending_end_policy_decides_what_becomes_of_a_job_pending_too_long():
    topology = plan_topology(8, share("A", 8, "RESERVE", instance_type=P5), windows=((4, 0, 10 * 86400),))
    hog = pjob("hog", "A", duration=5 * 86400)
    preempted = simulate(topology, [hog, pjob("late", "A", at=60, max_runtime=600, preemption_retries=1)],
                         plan_pending_end="preempt").job("late")
    assert (preempted.status, preempted.preemptions, preempted.finished_at) == ("FAILED", 2, 60 + 2 * 600)
    failed = simulate(topology, [hog, pjob("late", "A", at=60, max_runtime=600, attempts=3)],
                      plan_pending_end="fail").job("late")
    assert (failed.status, failed.finished_at) == ("FAILED", 660)


def test_a_disabled_share_rejects_a_plan_job_even_under_hold():
    topology = plan_topology(4, share("A", 4, "RESERVE", instance_type=P5, state="DISABLED"))
    result = simulate(topology, [pjob("p", "A")], plan_dispatch="hold")
    assert result.job("p").status == "FAILED" and result.job("p").reason.startswith("REJECTED")


def test_a_pending_job_no_window_can_start_again_fails_whatever_the_pending_end_policy():
    """Found by the plan property test: under ``preempt`` without a preemption limit, a job pending after its
    plan's last window was requeued, pended and requeued forever (the run never ended); with a MaxRuntimeSeconds
    of 0 the same happened at one instant. Such a job fails."""
    topology = plan_topology(8, share("A", 8, "RESERVE", instance_type=P5), windows=((4, 0, 2 * HOUR),))
    hog = pjob("hog", "A", duration=HOUR)  # holds the window's 4 instances until it closes
    after_the_window = simulate(topology, [hog, pjob("late", "A", at=60, max_runtime=600)],
                                plan_pending_end="preempt").job("late")
    assert after_the_window.status == "FAILED"
    at_once = simulate(topology, [hog, pjob("zero", "A", at=60, max_runtime=0)],
                       plan_pending_end="preempt").job("zero")
    assert (at_once.status, at_once.finished_at) == ("FAILED", 60)


def test_a_priority_update_leaves_a_held_plan_job_out_of_its_line():
    """Found by the plan property test: under ``hold``, UpdateServiceJob on a held plan job put it in its line
    beside being held, and the line's head and the share's counts went wrong."""
    from policy_engine.simulation.core.engine import PriorityUpdate

    topology = plan_topology(8, share("A", 8, "RESERVE", instance_type=P5), windows=((4, HOUR, 2 * HOUR),))
    jobs = [pjob("held", "A", at=0, duration=600), job("free", "A", 1, at=0, duration=HOUR, instance_type=P5)]
    engine = Engine(topology, jobs, [PriorityUpdate(60, "held", 5)], SimulationSettings(plan_dispatch="hold"))
    engine.run(120)
    held = engine.by_name["held"]
    assert held.status is Status.RUNNABLE and engine.plans is not None and engine.plans.pending(held)
    engine.run()
    assert (held.status, held.priority, held.started_at) == (Status.SUCCEEDED, 5, HOUR)  # when its window opened
