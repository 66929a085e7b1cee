"""AWS's three-step example, asserted job by job after each step, as the command and as the scenario file."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.cli.commands.walkthrough import replay

SCENARIO = Path(__file__).parents[4] / "scenarios" / "walkthrough.yaml"

EXPECTED = {
    # step 1: high on QS1's own instance, med borrows QS2's, low waits (QS3 reserves its own)
    0: {"qs1_job_high": "RUNNING", "qs1_job_med": "RUNNING", "qs1_job_low": "RUNNABLE"},
    # step 2: QS2 reclaims its instance: qs2_job_1 runs, med back to RUNNABLE
    100: {"qs1_job_high": "RUNNING", "qs1_job_med": "RUNNABLE", "qs1_job_low": "RUNNABLE", "qs2_job_1": "RUNNING"},
    # step 3: low raised to 4 preempts high inside QS1
    200: {"qs1_job_high": "RUNNABLE", "qs1_job_med": "RUNNABLE", "qs1_job_low": "RUNNING", "qs2_job_1": "RUNNING"},
}


def test_each_step_matches_aws_example():
    for time, _title, _expected, result in replay():
        assert {j.name: j.status for j in result.jobs} == EXPECTED[time], time
    step1, step2, step3 = (snapshot[3] for snapshot in replay())
    assert step1.job("qs1_job_med").attempts[-1].borrowed
    assert not step1.job("qs1_job_high").attempts[-1].borrowed
    # own capacity while QS1 is above its limit because med borrows: said truthfully, not "above its limit"
    assert step1.job("qs1_job_high").reason == (
        "on own capacity (training/QS1 uses 2 of its limit 1 ml.g5.xlarge: 1 borrowed by other jobs)")
    assert step2.job("qs1_job_med").preemptions == 1
    assert step2.job("qs1_job_med").attempts[0].outcome == "preempted"
    assert step3.job("qs1_job_high").preemptions == 1
    assert step3.job("qs1_job_med").reason.startswith("BLOCKED: behind head job qs1_job_high")


def test_scenario_file_replays_the_same_states():
    runner = CliRunner()
    for time, states in EXPECTED.items():
        out = runner.invoke(main, ["simulate", str(SCENARIO), "--until", str(time), "--format", "json"])
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        assert {j["name"]: j["status"] for j in data["jobs"]} == states


def test_walkthrough_command_prints_every_step():
    out = CliRunner().invoke(main, ["walkthrough"])
    assert out.exit_code == 0, out.output
    for marker in ("Step 1", "Step 2", "Step 3", "qs2_job_1", "preempt"):
        assert marker in out.output
