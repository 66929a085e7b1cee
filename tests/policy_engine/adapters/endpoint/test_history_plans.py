"""Plan jobs through ``history``: a served account's plan and on-demand jobs are exported with their plan
(``training_plan``, the payload's ``TrainingPlanArn``), ``history --scenario`` writes the plan into the topology
and ``simulate`` replays the plan jobs on it exactly; ``fit`` recovers the profile's ``training_plans`` part; a plan
SageMaker cannot describe is one note and its jobs replay on demand."""

from __future__ import annotations

import csv
import json

import pytest
import yaml
from botocore.stub import Stubber
from click.testing import CliRunner

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.cli.app import main
from policy_engine.cli.commands import aws_options as cli_options
from tests.policy_engine.adapters.aws.fake_account import sagemaker_client
from tests.policy_engine.adapters.endpoint.conftest import client, payload
from tests.policy_engine.adapters.endpoint.random_client import compare
from tests.policy_engine.adapters.endpoint.test_training_plans import ARN, HOUR, P5, plans_topology


@pytest.fixture
def served_plan_run(tmp_path):
    """Four plan jobs of share A (submitted before the plan's first window: SCHEDULED, holding A's quota, until it
    opens) and four on-demand jobs of share B, run to the end, then exported with ``history --scenario``."""
    with start_in_thread(Service(Options(speed=0), plans_topology())) as endpoint:
        batch = client(endpoint)
        for index in range(4):
            for name, share, plan in ((f"plan{index}", "A", ARN), (f"od{index}", "B", None)):
                request = json.loads(payload(P5, count=2))
                if plan is not None:
                    request["ResourceConfig"]["TrainingPlanArn"] = plan
                batch.submit_service_job(jobName=name, jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                                         serviceRequestPayload=json.dumps(request), quotaShareName=share,
                                         tags={"batch-quota:duration": "1800"})
        endpoint.advance(8 * HOUR)
        environment = {"AWS_ENDPOINT_URL_BATCH": endpoint.url, "AWS_ENDPOINT_URL_CLOUDTRAIL": endpoint.url,
                       "AWS_ENDPOINT_URL_SAGEMAKER": endpoint.url, "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

        def history(**env):
            return CliRunner(env=environment | env).invoke(main, [
                "history", "--queue", "training", "--since", "1d", "-o", str(tmp_path / "jobs.csv"), "--scenario",
                str(tmp_path / "replay.yaml")])

        yield history, tmp_path


def test_plan_jobs_are_exported_with_their_plan_and_replay_on_it_exactly(served_plan_run):
    history, folder = served_plan_run
    result = history()
    assert result.exit_code == 0, result.output
    assert "1 training plan(s)" in result.stderr and "note:" not in result.stderr
    with open(folder / "jobs.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["name"].split("-")[0]: row["training_plan"] for row in rows} == {
        **{f"plan{i}": ARN for i in range(4)}, **{f"od{i}": "" for i in range(4)}}
    # the plan jobs waited for the window (1 h after time 0): what the replay must reproduce
    assert {float(row["observed_start"]) for row in rows if row["training_plan"]} == {HOUR, 1.5 * HOUR}
    topology = yaml.safe_load((folder / "replay.topology.yaml").read_text(encoding="utf-8"))
    assert [(plan["name"], plan["arn"], len(plan["reserved_capacities"])) for plan in topology["training_plans"]] \
        == [("night", ARN, 2)]
    scenario = yaml.safe_load((folder / "replay.yaml").read_text(encoding="utf-8"))
    assert "on_demand_plans" not in scenario and scenario["start"].endswith("Z")  # plan windows are dates
    replayed = CliRunner().invoke(main, ["simulate", str(folder / "replay.yaml"), "--format", "json"])
    assert replayed.exit_code == 0, replayed.output
    simulated = json.loads(replayed.stdout)
    exported, agreeing, differences = compare(str(folder / "jobs.csv"), simulated)
    assert differences == [] and agreeing == exported == 8
    on_plan = {job["name"].split("-")[0]: job["training_plan"] for job in simulated["jobs"]}
    assert {name: plan for name, plan in on_plan.items() if name.startswith("plan")} == {
        f"plan{i}": "night" for i in range(4)}
    assert {plan for name, plan in on_plan.items() if name.startswith("od")} == {None}
    assert sum((job["plan_hold_seconds"] or 0) > 0 for job in simulated["jobs"]) == 4  # SCHEDULED for the window


def test_fit_on_the_history_recovers_the_plan_part_with_the_written_topology(served_plan_run):
    history, folder = served_plan_run
    assert history().exit_code == 0
    alone = CliRunner().invoke(main, ["fit", str(folder / "jobs.csv")])
    assert alone.exit_code == 2 and alone.stderr.count("\n") == 1
    assert "training_plan: 4 job(s) name a training plan; give --topology" in alone.stderr
    fitted = CliRunner().invoke(main, ["fit", str(folder / "jobs.csv"), "--topology",
                                       str(folder / "replay.topology.yaml"), "-o", str(folder / "profile.yaml")])
    assert fitted.exit_code == 0, fitted.output
    profile = yaml.safe_load((folder / "profile.yaml").read_text(encoding="utf-8"))
    plans = profile["shares"]["training/A"]["training_plans"]
    assert list(plans) == ["night"]  # the ARN read as the topology's plan name
    assert plans["night"]["fraction"] == 1.0 and plans["night"]["sizes"] == {2: 1.0}
    assert "training_plans" not in profile["shares"]["training/B"]


@pytest.mark.parametrize(("code", "message", "status"), [
    ("ResourceNotFound", "Training plan night does not exist", 400),
    ("AccessDeniedException", "not authorized to perform sagemaker:DescribeTrainingPlan", 403)])
def test_a_plan_that_cannot_be_described_is_one_note_and_its_jobs_replay_on_demand(served_plan_run, monkeypatch,
                                                                                    code, message, status):
    history, folder = served_plan_run
    sagemaker = sagemaker_client()
    stubber = Stubber(sagemaker)
    stubber.add_client_error("describe_training_plan", code, message, status,
                             expected_params={"TrainingPlanName": "night"})
    monkeypatch.setattr(cli_options, "sagemaker_factory", lambda options: sagemaker)
    with stubber:
        result = history()
        stubber.assert_no_pending_responses()
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and f"training plan {ARN} (job plan" in notes[0] and "and 3 more" in notes[0]
    assert code in notes[0] and "replay on demand" in notes[0]
    with open(folder / "jobs.csv", encoding="utf-8") as handle:
        assert sum(row["training_plan"] == ARN for row in csv.DictReader(handle)) == 4  # the record keeps the plan
    scenario = yaml.safe_load((folder / "replay.yaml").read_text(encoding="utf-8"))
    assert scenario["on_demand_plans"] == [ARN] and "start" not in scenario
    assert "training_plans" not in yaml.safe_load((folder / "replay.topology.yaml").read_text(encoding="utf-8"))
    replayed = CliRunner().invoke(main, ["simulate", str(folder / "replay.yaml"), "--format", "json"])
    assert replayed.exit_code == 0, replayed.output
    assert replayed.stderr.strip().splitlines()[-1] == (
        f"note: 4 job(s) name training plan {ARN}, run on demand (the scenario's on_demand_plans: its plan is not in "
        "the topology)")
    simulated = json.loads(replayed.stdout)
    _, agreeing, differences = compare(str(folder / "jobs.csv"), simulated)
    assert agreeing == 4 and len(differences) == 4  # on demand, the plan jobs no longer wait for the window
    assert all(name.startswith("plan") for name in (line.split(":")[0] for line in differences))


def test_without_a_sagemaker_endpoint_beside_the_batch_one_the_plan_is_one_note_not_a_call_to_aws(served_plan_run):
    history, folder = served_plan_run
    result = history(AWS_ENDPOINT_URL_SAGEMAKER=None)
    assert result.exit_code == 0, result.output
    (note,) = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert f"training plan {ARN} (job plan" in note and "AWS_ENDPOINT_URL_SAGEMAKER is not" in note
    assert yaml.safe_load((folder / "replay.yaml").read_text(encoding="utf-8"))["on_demand_plans"] == [ARN]
    assert CliRunner().invoke(main, ["simulate", str(folder / "replay.yaml")]).exit_code == 0


def test_on_demand_plans_naming_a_plan_of_the_topology_or_not_a_list_is_one_line(tmp_path):
    from policy_engine.foundation.model import Topology
    from policy_engine.inputs import safe_yaml

    topology = plans_topology()
    (tmp_path / "topology.yaml").write_text(safe_yaml.dump(Topology.model_validate(topology).model_dump(
        mode="json", exclude_none=True)))
    for value, expected in ((["night"], "on_demand_plans[0]: night is training plan night of the topology: its jobs "
                                        "run on it (remove it here)"),
                            ("night", "on_demand_plans: must be a list of plan names or ARNs, got 'night'")):
        (tmp_path / "s.yaml").write_text(safe_yaml.dump({"topology": "topology.yaml", "jobs": [],
                                                        "start": "2026-12-07T00:00:00Z", "on_demand_plans": value}))
        result = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
        assert result.exit_code == 2
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"error: {tmp_path / 's.yaml'}:") and line.endswith(f": {expected}"), line
