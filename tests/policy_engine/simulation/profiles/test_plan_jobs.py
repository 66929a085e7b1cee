"""Plan jobs in workload profiles: ``generate`` draws them, ``fit`` recovers them, the round trip keeps them.

SageMaker: "The training plan must be in the Scheduled or Active status to be used by a training job", and from 30
minutes before a reserved capacity's end it terminates the instances (docs/training_plans.md): a job's window is
the first whose cutoff (end - 30 min) is ahead of its submission. The timings are the profile's design
(docs/workloads.md, "Plan jobs").
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.loading import load_topology
from policy_engine.simulation.inputs.generate import share_reach
from policy_engine.simulation.profiles.fitting import fit_profile, read_columns
from policy_engine.simulation.profiles.loading import load_profile
from policy_engine.simulation.profiles.plan_timing import ClockWindow, PlanClock, classify, default_origin
from policy_engine.simulation.profiles.sampling import Columns, draw_workload
from policy_engine.simulation.profiles.spec import Night, PlanTiming
from policy_engine.simulation.scenarios.workload import load_scenario

TOPOLOGY = """\
service_environments:
  - name: gpu
    capacity: {ml.p5.48xlarge: 24, ml.g5.12xlarge: 32}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.p5.48xlarge: 8, ml.g5.12xlarge: 8}, strategy: LEND_AND_BORROW}
      - {name: speech, capacity: {ml.p5.48xlarge: 8, ml.g5.12xlarge: 8}, strategy: LEND_AND_BORROW}
      - {name: research, capacity: {ml.g5.12xlarge: 16}, strategy: LEND_AND_BORROW}
training_plans:
  - name: p5-plan            # dated windows: generated second 0 is the Monday before the first (2026-12-07)
    arn: arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-plan
    instance_type: ml.p5.48xlarge
    reserved_capacities:
      - {instances: 8, start: 2026-12-08T08:00:00Z, end: 2026-12-10T08:00:00Z}
      - {instances: 8, start: 2026-12-15T08:00:00Z, end: 2026-12-17T08:00:00Z}
      - {instances: 8, start: 2026-12-22T08:00:00Z, end: 2026-12-24T08:00:00Z}
      - {instances: 8, start: 2026-12-29T08:00:00Z, end: 2026-12-31T08:00:00Z}
  - name: g5-plan            # windows in seconds from second 0
    instance_type: ml.g5.12xlarge
    reserved_capacities:
      - {instances: 4, start: 345600, end: 604800}
      - {instances: 8, start: 1209600, end: 1468800}
      - {instances: 8, start: 2073600, end: 2332800}
"""
SOURCE = """\
shares:
  vision:
    jobs_per_day: 40
    sizes: {1: 0.6, 2: 0.4}
    run_time: {law: {distribution: lognormal, median: 3600, sigma: 1.0}}
    training_plans:
      p5-plan:
        fraction: 0.12
        timing: {before_window: 0.3, night_before: 0.4, inside_window: 0.3}
        lead: {law: {distribution: lognormal, median: 86400, sigma: 0.5}}
        sizes: {4: 0.5, 8: 0.5}
        run_time: {law: {distribution: lognormal, median: 14400, sigma: 0.5}}
  speech:
    jobs_per_day: 30
    training_plans:
      p5-plan: {fraction: 0.08, timing: inside_window, sizes: {2: 1}}
  research:
    jobs_per_day: 30
    sizes: {1: 0.7, 2: 0.3}
    run_time: {law: {distribution: exponential, mean: 1800}}
    training_plans:
      g5-plan:
        fraction: 0.15
        timing: {night_before: 0.5, inside_window: 0.5}
        sizes: {2: 0.5, 4: 0.5}
        run_time: {law: {distribution: exponential, mean: 7200}}
"""
DAYS = 30


@pytest.fixture
def plans(tmp_path: Path) -> Path:
    path = tmp_path / "plans.yaml"
    path.write_text(TOPOLOGY, encoding="utf-8")
    return path


def _per_plan(columns: Columns) -> dict[str, tuple[int, float]]:
    """Per plan: its jobs and the instance-hours they ask for (instances x run time)."""
    assert columns.training_plan is not None
    out = {}
    for plan in ("p5-plan", "g5-plan"):
        on = columns.training_plan == plan
        out[plan] = (int(on.sum()), float((columns.instances[on] * columns.duration[on]).sum() / 3600))
    return out


def _generate(tmp_path: Path, topology: Path, profile: Path, output: str, seed: int) -> Path:
    out = CliRunner().invoke(main, ["generate", str(topology), "--workload-profile", str(profile), "--days",
                                    str(DAYS), "-o", str(tmp_path / output), "--seed", str(seed),
                                    "--scenario", str(tmp_path / (output + ".yaml"))])
    assert out.exit_code == 0, out.output
    return tmp_path / output


def test_generate_fit_generate_keeps_each_plans_jobs_and_instance_hours_within_15_percent(tmp_path, plans):
    (tmp_path / "source.yaml").write_text(SOURCE, encoding="utf-8")
    month = _generate(tmp_path, plans, tmp_path / "source.yaml", "month.csv", 7)
    out = CliRunner().invoke(main, ["fit", str(month), "--topology", str(plans), "-o", str(tmp_path / "fit.yaml")])
    assert out.exit_code == 0, out.output
    topology = load_topology(plans)
    source = read_columns(month)
    truth = {plan: (int((source["training_plan"] == plan).sum()),
                    float((source["instances"] * source["duration"])[source["training_plan"] == plan].sum() / 3600))
             for plan in ("p5-plan", "g5-plan")}
    assert all(jobs >= 30 for jobs, _ in truth.values()), truth
    fitted = load_profile(tmp_path / "fit.yaml", topology)
    reach = share_reach(topology)
    again = [_per_plan(draw_workload(topology, fitted, DAYS, seed, reach)) for seed in range(100, 105)]
    for plan, (jobs, hours) in truth.items():
        assert np.mean([a[plan][0] for a in again]) == pytest.approx(jobs, rel=0.15), plan
        assert np.mean([a[plan][1] for a in again]) == pytest.approx(hours, rel=0.15), plan
    vision = fitted.shares["training/vision"]
    assert vision.training_plans is not None
    use = vision.training_plans["p5-plan"]
    assert use.fraction == pytest.approx(0.12, abs=0.03)
    assert set(use.timing) == set(PlanTiming) and use.lead is not None
    assert use.sizes == pytest.approx({4: 0.5, 8: 0.5}, abs=0.15)
    assert vision.sizes == pytest.approx({1: 0.6, 2: 0.4}, abs=0.05)  # off-plan jobs keep their own mix
    speech = fitted.shares["training/speech"].training_plans
    assert speech is not None and dict(speech["p5-plan"].timing) == {PlanTiming.INSIDE_WINDOW: 1.0}
    assert yaml.safe_load((tmp_path / "month.csv.yaml").read_text())["start"] == "2026-12-07T00:00:00Z"


def test_generated_plan_jobs_name_their_plan_fit_it_and_submit_as_their_timing_says(tmp_path, plans):
    (tmp_path / "source.yaml").write_text(SOURCE, encoding="utf-8")
    topology = load_topology(plans)
    origin = default_origin(topology, "UTC")
    assert origin is not None and origin.isoformat() == "2026-12-07T00:00:00+00:00"  # a Monday 00:00
    profile = load_profile(tmp_path / "source.yaml", topology)
    columns = draw_workload(topology, profile, DAYS, 3, share_reach(topology))
    assert columns.training_plan is not None
    speech = (columns.share == "training/speech") & (columns.training_plan == "p5-plan")
    starts = [86400 + 8 * 3600 + week * 7 * 86400 for week in range(4)]
    for at, size, kind in zip(columns.submit_at[speech], columns.instances[speech],
                              columns.instance_type[speech], strict=True):
        assert any(start <= at < start + 2 * 86400 - 1800 for start in starts), at  # inside_window, before cutoff
        assert size == 2 and kind == "ml.p5.48xlarge"
    research = columns.training_plan == "g5-plan"
    assert set(columns.instances[research].tolist()) <= {2, 4} and set(columns.instance_type[research]) == {
        "ml.g5.12xlarge"}
    off = columns.training_plan == None  # noqa: E711 (elementwise)
    assert off.sum() > 0.8 * len(columns)
    # the scenario generate writes simulates, its plan jobs on their plans
    month = _generate(tmp_path, plans, tmp_path / "source.yaml", "month.csv", 3)
    scenario = load_scenario(tmp_path / "month.csv.yaml")
    assert sum(1 for job in scenario.jobs if job.training_plan == "g5-plan") == int(research.sum())
    with month.open(encoding="utf-8") as handle:
        assert "training_plan" in next(csv.reader(handle))


def test_a_scenario_drawing_from_a_profile_draws_its_plan_jobs_from_its_start(tmp_path, plans):
    (tmp_path / "source.yaml").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(f"topology: {plans.name}\nstart: 2026-12-07T00:00:00Z\n"
                                     "workload: {profile: source.yaml, days: 30, seed: 3}\n", encoding="utf-8")
    scenario = load_scenario(tmp_path / "s.yaml")
    on_plan = [job for job in scenario.jobs if job.training_plan is not None]
    topology = load_topology(plans)
    drawn = draw_workload(topology, load_profile(tmp_path / "source.yaml", topology), 30, 3, share_reach(topology))
    assert drawn.training_plan is not None
    assert len(on_plan) == int((drawn.training_plan != None).sum()) > 0  # noqa: E711 (elementwise)


def test_a_submission_is_inside_its_window_the_night_before_or_a_lead_before_it():
    plan = PlanClock("p", "ml.p5.48xlarge", (ClockWindow(0, 4, 2 * 86400 + 8 * 3600, 3 * 86400 - 1800),))
    times = np.asarray([2 * 86400 + 9 * 3600,   # inside
                        2 * 86400 + 3 * 3600,   # 03:00 on the window's day: the night before
                        86400 + 20 * 3600,      # 20:00 the day before: the night before
                        86400 + 10 * 3600,      # 10:00 the day before: 22 h ahead
                        3 * 86400 - 1800,       # at the cutoff: no window left
                        3 * 86400 - 1801])      # a second before it: inside
    timed = classify(times, plan, Night())
    assert timed.timings == [PlanTiming.INSIDE_WINDOW, PlanTiming.NIGHT_BEFORE, PlanTiming.NIGHT_BEFORE,
                             PlanTiming.BEFORE_WINDOW, None, PlanTiming.INSIDE_WINDOW]
    assert timed.leads.tolist() == [22 * 3600]
    late_night = classify(times[1:3], plan, Night(from_hour=22, to_hour=2))
    assert late_night.timings == [PlanTiming.BEFORE_WINDOW, PlanTiming.BEFORE_WINDOW]


@pytest.mark.parametrize(("plan_use", "expected"), [
    ("{fraction: 1.5, timing: inside_window}", "fraction: input should be less than or equal to 1, got 1.5"),
    ("{fraction: 0.1, timing: whenever}", "'before_window', 'night_before' or 'inside_window'"),
    ("{fraction: 0.1, timing: {after_window: 1}}", "'before_window', 'night_before' or 'inside_window'"),
    ("{fraction: 0.1, timing: before_window}", "a before_window timing needs lead"),
    ("{fraction: 0.1, timing: inside_window, sizes: {16: 1}}", "size(s) 16 do not fit plan p5-plan, whose largest"),
    ("{fraction: 0.1, timing: inside_window, fractoin: 2}", "did you mean 'fraction'"),
    ("{fraction: 0.1, timing: inside_window, lead: {law: {distribution: exponential, mean: 60}}}",
     "lead is for a before_window timing"),
])
def test_a_bad_plan_field_is_one_line_naming_the_file_and_the_field(tmp_path, plans, plan_use, expected):
    profile = tmp_path / "bad.yaml"
    profile.write_text(f"shares:\n  vision:\n    jobs_per_day: 10\n    training_plans:\n      p5-plan: {plan_use}\n",
                       encoding="utf-8")
    out = CliRunner().invoke(main, ["generate", str(plans), "--workload-profile", str(profile), "--days", "1",
                                    "-o", str(tmp_path / "jobs.csv")])
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and str(profile) in lines[0] and "training_plans" in lines[0], out.output
    assert expected in lines[0], lines
    assert "Traceback" not in out.output


@pytest.mark.parametrize(("shares", "expected"), [
    ("  vision:\n    jobs_per_day: 10\n    training_plans: {nope: {fraction: 0.1, timing: inside_window}}\n",
     "no training plan 'nope' in the topology (known: p5-plan, g5-plan)"),
    ("  research:\n    jobs_per_day: 10\n    training_plans: {p5-plan: {fraction: 0.1, timing: inside_window}}\n",
     "plan p5-plan reserves ml.p5.48xlarge, for which training/research has no limit"),
    ("  vision:\n    jobs_per_day: 10\n    training_plans:\n      p5-plan: {fraction: 0.6, timing: inside_window}\n"
     "      g5-plan: {fraction: 0.6, timing: inside_window}\n", "fractions add up to 1.2; at most 1"),
    ("  vision:\n    jobs_per_day: 10\n    training_plans:\n      p5-plan: {fraction: 0.1, timing: inside_window}\n"
     "      arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-plan: {fraction: 0.1, timing: inside_window}\n",
     "names the same plan as 'p5-plan'"),
])
def test_a_plan_the_topology_cannot_give_the_share_is_one_line(tmp_path, plans, shares, expected):
    profile = tmp_path / "bad.yaml"
    profile.write_text("shares:\n" + shares, encoding="utf-8")
    out = CliRunner().invoke(main, ["generate", str(plans), "--workload-profile", str(profile), "--days", "1",
                                    "-o", str(tmp_path / "jobs.csv")])
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and expected in lines[0], out.output


def _history(tmp_path: Path, suffix: str) -> Path:
    """A small history with plan jobs (one by ARN-less name, one by a column fit does not use)."""
    rows = [{"name": f"j{i}", "share": "vision", "instance_type": "ml.p5.48xlarge", "instances": 4,
             "submit_at": 86400 + 8 * 3600 + i * 600, "duration": 3600, "training_plan": "p5-plan",
             "checkpoint_interval": 600} for i in range(40)]
    rows += [{"name": f"o{i}", "share": "vision", "instance_type": "ml.g5.12xlarge", "instances": 1,
              "submit_at": i * 3600, "duration": 1800, "checkpoint_interval": 600} for i in range(60)]
    path = tmp_path / f"history{suffix}"
    if suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_fit_reads_the_plan_column_and_says_which_columns_it_does_not_use(tmp_path, plans, suffix):
    history = _history(tmp_path, suffix)
    out = CliRunner().invoke(main, ["fit", str(history), "--topology", str(plans), "-o", str(tmp_path / "p.yaml"),
                                    "--format", "json"])
    assert out.exit_code == 0, out.output
    document = json.loads(out.output)
    use = document["profile"]["shares"]["training/vision"]["training_plans"]["p5-plan"]
    assert use["fraction"] == 0.4 and use["timing"] == {"inside_window": 1.0} and use["sizes"] == {"4": 1.0}
    assert any(note.startswith("column(s) not used by fit: name (job names); checkpoint_interval")
               for note in document["notes"]), document["notes"]
    assert document["profile"]["shares"]["training/vision"]["sizes"] == {"1": 1.0}  # the jobs off plans
    assert document["shares"]["training/vision"]["training_plans"]["p5-plan"]["jobs"] == 40
    written = yaml.safe_load((tmp_path / "p.yaml").read_text())
    assert written["shares"]["training/vision"]["training_plans"]["p5-plan"]["timing"] == {"inside_window": 1.0}


@pytest.mark.parametrize(("plan", "first_window"), [("p5-plan", 86400 + 8 * 3600), ("g5-plan", 345600)])
def test_fit_reads_plan_timing_from_absolute_submission_times_too(tmp_path, plans, plan, first_window):
    """With ``submitted_epoch_ms`` the dated windows are read on the same clock; windows in seconds count from the
    instant ``submit_at`` 0 stands for (read from the rows)."""
    origin_ms = 1_796_601_600_000  # 2026-12-07T00:00:00Z
    offsets = {"inside_window": 3600.0, "night_before": -5 * 3600.0, "before_window": -30 * 3600.0}
    rows = [{"name": f"{kind}{i}", "share": "vision" if plan == "p5-plan" else "research",
             "instance_type": "ml.p5.48xlarge" if plan == "p5-plan" else "ml.g5.12xlarge", "instances": 2,
             "submit_at": first_window + offset + i, "duration": 600, "training_plan": plan}
            for kind, offset in offsets.items() for i in range(10)]
    for row in rows:
        row["submitted_epoch_ms"] = int(origin_ms + row["submit_at"] * 1000)
    history = tmp_path / "epoch.jsonl"
    history.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = fit_profile(read_columns(history, load_topology(plans)), str(history), load_topology(plans))
    share = "training/vision" if plan == "p5-plan" else "training/research"
    uses = result.shares[share].profile.training_plans
    assert uses is not None and result.absolute_times
    assert {str(t.value): w for t, w in uses[plan].timing.items()} == pytest.approx(
        {"before_window": 1 / 3, "night_before": 1 / 3, "inside_window": 1 / 3}, abs=1e-3)
    assert uses[plan].lead is not None and uses[plan].lead.quantiles[0.5] == pytest.approx(30 * 3600 - 4.5, abs=1)


def test_fit_without_a_topology_or_with_an_unknown_plan_refuses_the_plan_column_in_one_line(tmp_path, plans):
    history = _history(tmp_path, ".csv")
    out = CliRunner().invoke(main, ["fit", str(history)])
    assert out.exit_code == 2
    assert out.output.splitlines() == [f"error: {history}: line 2: training_plan: 40 job(s) name a training plan; "
                                       "give --topology (its plans' windows say when each job was submitted relative "
                                       "to them)"]
    text = history.read_text().replace("p5-plan", "p9-plan")
    history.write_text(text)
    out = CliRunner().invoke(main, ["fit", str(history), "--topology", str(plans)])
    assert out.exit_code == 2
    assert out.output.splitlines() == [f"error: {history}: line 2: training_plan: no training plan 'p9-plan' in the "
                                       "topology (known: p5-plan, g5-plan) (39 more line(s) like it)"]


def test_fit_in_python_without_plan_jobs_writes_no_plan_fields(tmp_path, plans):
    history = _history(tmp_path, ".csv")
    columns = read_columns(history)
    columns.pop("training_plan")
    result = fit_profile(columns, str(history), load_topology(plans))
    assert result.shares["training/vision"].profile.training_plans is None
    assert result.shares["training/vision"].jobs == 100


def test_a_new_team_like_one_on_a_plan_needs_a_limit_for_the_plans_type(tmp_path, plans):
    (tmp_path / "vision.yaml").write_text(SOURCE.split("  speech:")[0], encoding="utf-8")
    out = CliRunner().invoke(main, ["generate", str(plans), "--workload-profile", str(tmp_path / "vision.yaml"),
                                    "--days", "1", "-o", str(tmp_path / "jobs.csv"), "--add-share", "research=vision"])
    assert out.exit_code == 2
    assert "research has no limit for ml.p5.48xlarge, which training/vision's profile submits to" in out.output


def test_fit_in_python_without_a_topology_says_its_plan_jobs_were_fitted_off_plans(tmp_path):
    history = _history(tmp_path, ".csv")
    result = fit_profile(read_columns(history), str(history))
    assert "40 job(s) name a training plan, fitted as jobs off plans: without a topology their plans' windows are " \
           "unknown" in result.notes


@pytest.mark.parametrize(("extra", "start"), [([], "2026-12-07T00:00:00Z"),
                                              (["--start", "2026-12-06T00:00:00+01:00"], "2026-12-06T00:00:00+01:00")])
def test_generate_writes_the_start_dated_plan_windows_count_from_so_the_scenario_loads(tmp_path, plans, extra, start):
    out = CliRunner().invoke(main, ["generate", str(plans), "--jobs", "5", "-o", str(tmp_path / "j.csv"),
                                    "--scenario", str(tmp_path / "s.yaml"), *extra])
    assert out.exit_code == 0, out.output
    assert yaml.safe_load((tmp_path / "s.yaml").read_text())["start"] == start
    assert len(load_scenario(tmp_path / "s.yaml").jobs) == 5


def test_generate_refuses_a_start_without_a_time_zone_in_one_line(tmp_path, plans):
    out = CliRunner().invoke(main, ["generate", str(plans), "--jobs", "5", "-o", str(tmp_path / "j.csv"),
                                    "--start", "2026-12-07T00:00:00"])
    assert out.exit_code == 2
    assert out.output.splitlines() == ["error: --start '2026-12-07T00:00:00': must be an ISO 8601 time with a time "
                                       "zone (2026-12-07T00:00:00Z)"]
