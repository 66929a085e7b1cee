"""Targets as sweep and tune constraints: a candidate that misses one is infeasible (ranked last by sweep, never
recommended by tune), and tune's nearest miss names the target and the margin in its unit."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.samples import mean_targets
from policy_engine.sweep.target_constraints import target_constraints

SCENARIO = """topology:
  service_environments: [{name: env, capacity: {ml.g5.xlarge: 4}}]
  job_queues:
    - name: q
      service_environment: env
      shares:
        - {name: A, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW, borrow_limit: 0}
        - {name: B, capacity: {ml.g5.xlarge: 3}, strategy: LEND}
  targets: [{share: A, wait_p95: %s}]
jobs:
%s
"""


def _scenario(tmp_path: Path, goal: str) -> Path:
    jobs = "\n".join(f"  - {{name: a{i}, share: A, instance_type: ml.g5.xlarge, submit_at: 0, duration: 3600}}"
                     for i in range(3))
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO % (goal, jobs))
    return path


def test_sweep_ranks_a_candidate_that_misses_a_target_last_and_says_so(tmp_path):
    # A's three one-hour jobs: with borrow_limit 0 they run one after another (p95 wait 2 h), with 200 at once
    path = _scenario(tmp_path, "30m")
    out = CliRunner().invoke(main, ["sweep", str(path), "--vary", "A.borrow_limit=0,200", "--workers", "1",
                                    "--quiet", "--maximize", "max(wait_p95)"])
    assert out.exit_code == 0, out.output
    rows = [line for line in out.output.splitlines() if line.startswith("│")]
    assert "200" in rows[0] and "all met" in rows[0]  # the larger wait p95 ranks first, but only if feasible
    assert "0 " in rows[1] and "1 of 1 missed" in rows[1]
    assert "1 ok run(s) miss a target" in out.output
    assert "#1 targets: 1 of 1 met" in out.output  # the first run's targets with their margins, not only a count
    data = json.loads(CliRunner().invoke(main, ["sweep", str(path), "--vary", "A.borrow_limit=0,200", "--workers",
                                                "1", "--quiet", "--format", "json"]).output)
    assert [[t["met"] for t in run["targets"]] for run in data["runs"]] == [[False], [True]]


def test_tune_never_recommends_a_candidate_that_misses_a_target(tmp_path):
    path = _scenario(tmp_path, "30m")
    out = CliRunner().invoke(main, ["tune", str(path), "--vary", "A.borrow_limit=0,200", "--workers", "1", "--quiet",
                                    "--budget", "2", "--maximize", "max(wait_p95)", "--min-gain", "0"])
    assert out.exit_code == 0, out.output
    # maximizing the wait would pick borrow_limit 0 (2 h), which misses the target: 200 is the only feasible one
    assert "recommended: q/A.borrow_limit=200" in out.output
    # each cell: the figure, and whether it holds by how much (not a bare holds / violated)
    assert "constraint target q/A wait p95 <= 30m 00s │ 2h 00m: violated by 1h 30m │ 0s: holds, 30m 00s to spare" \
        in out.output


def test_tune_names_the_missed_target_and_its_margin(tmp_path):
    path = _scenario(tmp_path, "10m")  # even borrowing, the jobs start after the 60 s startup: p95 ~ 0; 2 h without
    out = CliRunner().invoke(main, ["tune", str(path), "--vary", "A.borrow_limit=0,50", "--workers", "1", "--quiet",
                                    "--budget", "2"])
    assert out.exit_code == 1, out.output
    assert "target q/A wait p95 <= 10m 00s missed by" in out.output
    assert "missed by 1h 50m" in out.output  # borrow_limit 50 of 1 instance is still 1: the third waits 2 h


def test_constraints_are_one_per_criterion_and_read_the_worst_type():
    scenario = load_scenario(Path(__file__).parents[3] / "scenarios" / "borrow-and-reclaim.yaml")
    from policy_engine.foundation.model import Target

    topology = scenario.topology.model_copy(update={"targets": (
        Target(share="research", wait_p95="1h", min_utilisation=0.5),)})
    constraints = target_constraints(topology)
    assert [c.text for c in constraints] == ["target training/research wait p95 <= 1h 00m",
                                             "target training/research own utilisation >= 50%"]
    record = RunRecord(index=0, values={}, targets=(
        {"target": 0, "criterion": "min_utilisation", "instance_type": "x", "margin": 0.1, "actual": 0.6,
         "met": True},
        {"target": 0, "criterion": "min_utilisation", "instance_type": "y", "margin": -0.2, "actual": 0.3,
         "met": False}))
    assert constraints[1].violation(record) == 0.2 and not constraints[1].holds(record)
    assert constraints[1].verdict(record) == "30.0%: violated by 20.0 points"  # the worst type's figure
    assert constraints[1].shown is not None and constraints[1].shown(0.2) == "20.0 points"
    assert not constraints[0].holds(RunRecord(index=0, values={}, status=RunStatus.INVALID))


def test_over_workload_samples_a_target_is_judged_on_the_mean_figure():
    runs = [RunRecord(index=0, values={}, targets=({"target": 0, "criterion": "wait_p95", "instance_type": None,
                                                    "goal": 100, "actual": a, "jobs": 2, "met": a <= 100,
                                                    "margin": 100 - a},)) for a in (50, 170)]
    (mean,) = mean_targets(runs)
    assert (mean["actual"], mean["margin"], mean["met"]) == (110, -10, False)


def test_tune_writes_the_targets_back_as_durations_people_write(tmp_path):
    path = _scenario(tmp_path, "90m")
    best = tmp_path / "best.yaml"
    out = CliRunner().invoke(main, ["tune", str(path), "--vary", "A.borrow_limit=0,200", "--workers", "1", "--quiet",
                                    "--budget", "2", "--min-gain", "0", "-o", str(best)])
    assert out.exit_code == 0, out.output
    written = yaml.safe_load(best.read_text())
    assert written["targets"] == [{"share": "A", "wait_p95": "90m"}]  # not 5400.0
    checked = CliRunner().invoke(main, ["check", str(best)])
    assert checked.exit_code == 0, checked.output
