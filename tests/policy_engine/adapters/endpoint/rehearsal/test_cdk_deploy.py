"""The deploy rehearsal with the pinned CDK CLI: ``cdk deploy``, ``cdk diff`` and ``cdk destroy`` of the project's
own app, of an app that moves a share, and of ``examples/hand_built/app.py`` (with ``QuotaMonitoring``) against
``serve``, unmodified, with only environment variables set; every state asserted through the Batch API (boto3
over HTTP).

The cloud assemblies are synthesized once (in parallel) and deployed with ``--app DIR``, which skips synthesis."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from policy_engine.adapters.endpoint.base.status_reasons import SHARE_DELETED
from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from tests.policy_engine.adapters.endpoint.conftest import payload

ROOT = Path(__file__).resolve().parents[5]
CLI = ROOT / "node_modules" / ".bin" / "cdk"
MOVING_APP = Path(__file__).with_name("moving_app.py")

pytestmark = pytest.mark.skipif(not CLI.exists() and not os.environ.get("CI"),
                                reason="needs the pinned CDK CLI (make test installs it; under CI a missing CLI fails)")


def _environment(url: str | None = None) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "AWS_ACCESS_KEY_ID": "rehearsal", "AWS_SECRET_ACCESS_KEY": "rehearsal", "AWS_REGION": "us-east-1",
           "AWS_DEFAULT_REGION": "us-east-1", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20,22,24",
           "CDK_DISABLE_VERSION_CHECK": "1"}
    for name in [k for k in env if k.startswith("AWS_ENDPOINT_URL") or k in ("AWS_PROFILE", "AWS_SESSION_TOKEN")]:
        del env[name]
    if url is not None:
        env["AWS_ENDPOINT_URL"] = url  # the one variable that points every service at the rehearsal
    return env


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def assemblies(tmp_path_factory):
    """The cloud assemblies, synthesized in this process (one jsii kernel, the apps' own ``main``/``build``) with
    cdk.json's context, as ``cdk synth`` would write them: the default app, the moving app before and after, the
    hand-built app."""
    from aws_cdk import App

    out = tmp_path_factory.mktemp("assemblies")
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    default_app, moving, hand_built = (_load(ROOT / "app.py", "rehearsed_app"), _load(MOVING_APP, "moving_app"),
                                       _load(ROOT / "examples" / "hand_built" / "app.py", "hand_built_app"))
    default_app.main(App(outdir=str(out / "default"), context=context))
    moving.build(before := App(outdir=str(out / "before"), context=context))
    before.synth()
    moving.build(after := App(outdir=str(out / "after"), context={**context, "moved": "1"}))
    after.synth()
    hand_built.build(built := App(outdir=str(out / "hand_built"), context=context))
    built.synth()
    return {name: out / name for name in ("default", "before", "after", "hand_built")}


@pytest.fixture()
def rehearsal():
    endpoint = start_in_thread(Service(Options(speed=0)))
    try:
        yield endpoint
    finally:
        endpoint.stop()


def cdk(endpoint, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(CLI), *args], cwd=ROOT, env=_environment(endpoint.url), capture_output=True,
                            text=True, timeout=300)
    if check:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def clients(endpoint):
    def make(service: str):
        return boto3.client(service, endpoint_url=endpoint.url, region_name="us-east-1",
                            aws_access_key_id="rehearsal", aws_secret_access_key="rehearsal")

    return make("batch"), make("cloudformation")


def nothing_left(batch) -> None:
    assert batch.describe_service_environments()["serviceEnvironments"] == []
    assert batch.describe_job_queues()["jobQueues"] == []
    assert batch.list_scheduling_policies()["schedulingPolicies"] == []


def test_the_default_app_deploys_runs_jobs_and_is_destroyed(rehearsal, assemblies):
    cdk(rehearsal, "deploy", "--app", str(assemblies["default"]), "--require-approval", "never")
    batch, cloudformation = clients(rehearsal)
    stack = cloudformation.describe_stacks(StackName="BatchQuota")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    outputs = {o["OutputValue"] for o in stack["Outputs"]}
    assert "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/QS1" in outputs  # GetAtt resolved
    queue = batch.describe_job_queues(jobQueues=["training"])["jobQueues"][0]
    assert (queue["status"], queue["state"]) == ("VALID", "ENABLED")
    environment = queue["serviceEnvironmentOrder"][0]["serviceEnvironment"]
    assert environment == "arn:aws:batch:us-east-1:123456789012:service-environment/gpu-env"  # the endpoint's ARN
    shares = batch.list_quota_shares(jobQueue="training")["quotaShares"]
    assert sorted((s["quotaShareName"], s["status"]) for s in shares) == [("QS1", "VALID"), ("QS2", "VALID"),
                                                                            ("QS3", "VALID")]
    job = batch.submit_service_job(jobName="j", jobQueue="training", quotaShareName="QS1",
                                   serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
    assert batch.describe_service_job(jobId=job)["status"] == "RUNNING"
    rehearsal.advance(3600)
    assert batch.describe_service_job(jobId=job)["status"] == "SUCCEEDED"
    again = cdk(rehearsal, "deploy", "--app", str(assemblies["default"]), "--require-approval", "never")
    assert "no changes" in (again.stdout + again.stderr)  # a second deploy of the same app changes nothing
    cdk(rehearsal, "destroy", "--app", str(assemblies["default"]), "--force")
    nothing_left(batch)
    with pytest.raises(ClientError, match="does not exist"):
        cloudformation.describe_stacks(StackName="BatchQuota")


def test_an_update_changes_a_limit_in_place_and_replaces_a_moved_share_ending_its_jobs(rehearsal, assemblies):
    cdk(rehearsal, "deploy", "--app", str(assemblies["before"]), "--require-approval", "never")
    batch, cloudformation = clients(rehearsal)
    old_arn = "arn:aws:batch:us-east-1:123456789012:job-queue/day/quota-share/batch"
    running = batch.submit_service_job(jobName="moved", jobQueue="day", quotaShareName="batch",
                                       serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
    kept = batch.submit_service_job(jobName="kept", jobQueue="day", quotaShareName="research",
                                    serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
    assert batch.describe_service_job(jobId=running)["status"] == "RUNNING"

    diff = cdk(rehearsal, "diff", "--app", str(assemblies["after"]))
    text = diff.stdout + diff.stderr
    moved_line = next(line for line in text.splitlines() if "AWS::Batch::QuotaShare" in line and "Batch" in line
                      and "Research" not in line)
    assert moved_line.rstrip().endswith("replace"), text
    assert "JobQueue (requires replacement)" in text
    research_line = next(line for line in text.splitlines() if "Research" in line and "QuotaShare" in line)
    assert "replace" not in research_line  # the limit changes in place
    assert cloudformation.list_change_sets(StackName="Rehearsal")["Summaries"] == []  # diff's change set is gone

    cdk(rehearsal, "deploy", "--app", str(assemblies["after"]), "--require-approval", "never")
    research = batch.describe_quota_share(
        quotaShareArn="arn:aws:batch:us-east-1:123456789012:job-queue/day/quota-share/research")
    assert research["capacityLimits"] == [{"maxCapacity": 3, "capacityUnit": "ml.g5.xlarge"}]  # in place: same ARN
    moved = batch.describe_quota_share(
        quotaShareArn="arn:aws:batch:us-east-1:123456789012:job-queue/night/quota-share/batch")
    assert (moved["status"], moved["state"]) == ("VALID", "ENABLED")
    with pytest.raises(ClientError, match="does not exist"):
        batch.describe_quota_share(quotaShareArn=old_arn)
    ended = batch.describe_service_job(jobId=running)
    assert (ended["status"], ended["statusReason"]) == ("FAILED", SHARE_DELETED)
    assert batch.describe_service_job(jobId=kept)["status"] == "RUNNING"  # an in-place change stops nothing
    statuses = [(e["LogicalResourceId"], e["ResourceStatus"])
                for e in reversed(cloudformation.describe_stack_events(StackName="Rehearsal")["StackEvents"])]
    update = statuses[max(i for i, s in enumerate(statuses) if s == ("Rehearsal", "UPDATE_IN_PROGRESS")):]
    moved_id = next(logical for logical, _ in update if logical.startswith("Batch"))
    # the new share first, the old one deleted at cleanup, after every other change
    assert update.index((moved_id, "UPDATE_COMPLETE")) < update.index(("Rehearsal",
                                                                        "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS"))
    assert update.index(("Rehearsal", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")) < update.index(
        (moved_id, "DELETE_COMPLETE"))

    cdk(rehearsal, "destroy", "--app", str(assemblies["after"]), "--force")
    nothing_left(batch)
    events = [(e["LogicalResourceId"], e["ResourceStatus"])
              for e in reversed(cloudformation.describe_stack_events(StackName=cloudformation.list_stacks()[
                  "StackSummaries"][0]["StackId"])["StackEvents"]) if e["ResourceStatus"] == "DELETE_COMPLETE"]
    order = [logical for logical, _ in events]

    def deleted(prefix: str, *not_prefix: str) -> int:
        return next(i for i, x in enumerate(order) if x.startswith(prefix) and not x.startswith(not_prefix))

    # reverse dependency order: a share before its queue, a queue before its policy and its environment
    for queue in ("Day", "Night"):
        at = deleted(queue, f"{queue}Env", f"{queue}SchedulingPolicy")
        assert at < deleted(f"{queue}SchedulingPolicy") and at < deleted(f"{queue}Env")
    assert deleted("Research") < deleted("Day", "DayEnv", "DaySchedulingPolicy")
    assert max(deleted("Batch"), deleted("Spare")) < deleted("Night", "NightEnv", "NightSchedulingPolicy")

def test_a_deploy_the_endpoint_refuses_fails_with_its_reason_and_rolls_back(rehearsal, assemblies):
    batch, cloudformation = clients(rehearsal)
    batch.create_service_environment(serviceEnvironmentName="night-env", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                     capacityLimits=[{"maxCapacity": 1, "capacityUnit": "ml.g5.xlarge"}])
    result = cdk(rehearsal, "deploy", "--app", str(assemblies["before"]), "--require-approval", "never", check=False)
    assert result.returncode != 0
    events = cloudformation.describe_stack_events(StackName="Rehearsal")["StackEvents"]
    failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert len(failed) == 1 and failed[0]["ResourceType"] == "AWS::Batch::ServiceEnvironment"
    assert "Service environment night-env already exists" in failed[0]["ResourceStatusReason"]
    assert "HandlerErrorCode: InvalidRequest" in failed[0]["ResourceStatusReason"]
    assert cloudformation.describe_stacks(StackName="Rehearsal")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    # what the deploy created is gone; the environment it did not create is untouched
    assert [e["serviceEnvironmentName"] for e in batch.describe_service_environments()["serviceEnvironments"]] == [
        "night-env"]
    assert batch.describe_job_queues()["jobQueues"] == []


def test_the_hand_built_app_with_monitoring_delivers_the_endpoints_events_to_its_log_group(rehearsal, assemblies):
    cdk(rehearsal, "deploy", "--app", str(assemblies["hand_built"]), "--all", "--require-approval", "never")
    batch, cloudformation = clients(rehearsal)
    assert {s["StackName"]: s["StackStatus"] for s in cloudformation.describe_stacks()["Stacks"]} == {
        "GpuCapacity": "CREATE_COMPLETE", "TrainingQueue": "CREATE_COMPLETE"}
    job = batch.submit_service_job(jobName="watched", jobQueue="training", quotaShareName="research",
                                   serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
    logs = boto3.client("logs", endpoint_url=rehearsal.url, region_name="us-east-1",
                        aws_access_key_id="rehearsal", aws_secret_access_key="rehearsal")
    group = next(g["logGroupName"] for g in logs.describe_log_groups()["logGroups"]
                 if g["logGroupName"].startswith("/aws/events/"))
    delivered = [json.loads(e["message"]) for e in logs.filter_log_events(logGroupName=group)["events"]]
    assert delivered and {e["detail-type"] for e in delivered} == {"Batch Service Job State Change"}
    assert {e["detail"]["jobId"] for e in delivered} == {job}
    assert [e["detail"]["status"] for e in delivered][-1] == "RUNNING"
    state = rehearsal.control("GET", "stacks")
    resources = {r["type"]: r["run"] for s in state["stacks"] for r in s["resources"]}
    assert resources["AWS::Lambda::Function"] is False and resources["AWS::CloudWatch::Alarm"] is False
    assert resources["AWS::Events::Rule"] is True and resources["AWS::Batch::QuotaShare"] is True
    stored = cloudformation.describe_stack_resources(StackName="TrainingQueue")["StackResources"]
    function = next(r for r in stored if r["ResourceType"] == "AWS::Lambda::Function")
    assert "not run" in function["ResourceStatusReason"]
    cdk(rehearsal, "destroy", "--app", str(assemblies["hand_built"]), "--all", "--force")
    nothing_left(batch)


def test_cdk_bootstrap_works_against_the_rehearsal_and_a_deploy_follows(rehearsal, assemblies):
    """The account reads as bootstrapped from the start; ``cdk bootstrap`` deploys the CLI's own bootstrap template
    (S3, IAM, ECR, KMS, SSM: stored, the bucket and the version parameter served)."""
    cdk(rehearsal, "bootstrap", "aws://123456789012/us-east-1")
    _, cloudformation = clients(rehearsal)
    toolkit = cloudformation.describe_stacks(StackName="CDKToolkit")["Stacks"][0]
    assert toolkit["StackStatus"] == "CREATE_COMPLETE"
    outputs = {o["OutputKey"]: o["OutputValue"] for o in toolkit["Outputs"]}
    assert outputs["BucketName"] == "cdk-hnb659fds-assets-123456789012-us-east-1"
    ssm = boto3.client("ssm", endpoint_url=rehearsal.url, region_name="us-east-1",
                       aws_access_key_id="rehearsal", aws_secret_access_key="rehearsal")
    assert ssm.get_parameter(Name="/cdk-bootstrap/hnb659fds/version")["Parameter"]["Value"] == \
        outputs["BootstrapVersion"]
    cdk(rehearsal, "deploy", "--app", str(assemblies["default"]), "--require-approval", "never")
    assert cloudformation.describe_stacks(StackName="BatchQuota")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
