"""``serve`` answers SageMaker's ListTrainingPlans and DescribeTrainingPlan (JSON 1.1 by ``X-Amz-Target``) on the
Batch port, from the topology's plans, with live counts; every other SageMaker operation is refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.foundation.model import (
    JobQueue,
    QuotaShare,
    ReservedCapacity,
    ServiceEnvironment,
    Topology,
    TrainingPlan,
)
from tests.policy_engine.adapters.endpoint.conftest import SIGNED, client, error_of, payload

P5 = "ml.p5.48xlarge"
HOUR = 3600.0
ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/night"


def plans_topology() -> Topology:
    shares = tuple(QuotaShare(name=name, capacity={P5: 4}, strategy="LEND_AND_BORROW") for name in ("A", "B"))
    night = TrainingPlan(name="night", instance_type=P5, reserved_capacities=(
        ReservedCapacity(instances=4, start=HOUR, end=3 * HOUR, availability_zone="us-east-1a"),
        ReservedCapacity(instances=2, start=5 * HOUR, end=6 * HOUR + 1800)))
    later = TrainingPlan(name="later", instance_type=P5, arn=ARN.replace("night", "later"), upfront_fee=1234.5,
                         currency="USD",
                         reserved_capacities=(ReservedCapacity(instances=1, start=10 * HOUR, end=11 * HOUR),))
    return Topology(service_environments=(ServiceEnvironment(name="gpu", capacity={P5: 8}),),
                    job_queues=(JobQueue(name="training", service_environment="gpu", shares=shares),),
                    training_plans=(night, later))


@pytest.fixture
def plans_endpoint():
    with start_in_thread(Service(Options(speed=0), plans_topology())) as running:
        yield running


def sagemaker(endpoint):
    return boto3.client("sagemaker", endpoint_url=endpoint.url, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=Config(retries={"max_attempts": 1, "mode": "standard"}))


def _valid(method: str, response: dict) -> None:
    """The response is what the sagemaker model says: botocore's Stubber refuses a response that breaks the
    operation's output shape (required members, types)."""
    offline = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    Stubber(offline).add_response(method, {k: v for k, v in response.items() if k != "ResponseMetadata"})


def test_describe_serves_the_plan_with_its_windows_as_the_model_shapes_them(plans_endpoint):
    api = sagemaker(plans_endpoint)
    origin = plans_endpoint.service.origin_ms / 1000
    plan = api.describe_training_plan(TrainingPlanName="night")
    _valid("describe_training_plan", plan)
    assert plan["TrainingPlanArn"] == ARN and plan["Status"] == "Scheduled"  # before its first window
    assert plan["TotalInstanceCount"] == 6 and plan["AvailableInstanceCount"] == 0 and plan["InUseInstanceCount"] == 0
    assert (plan["DurationHours"], plan["DurationMinutes"]) == (3, 30)  # 2 h + 1 h 30 min, the paid time
    assert plan["StartTime"] == datetime.fromtimestamp(origin + HOUR, UTC)
    assert plan["EndTime"] == datetime.fromtimestamp(origin + 6 * HOUR + 1800, UTC)
    assert plan["TargetResources"] == ["training-job"]
    first, second = plan["ReservedCapacitySummaries"]
    assert (first["InstanceType"], first["TotalInstanceCount"], first["Status"], first["AvailabilityZone"]) == (
        P5, 4, "Scheduled", "us-east-1a")
    assert (second["DurationHours"], second["DurationMinutes"]) == (1, 30) and "AvailabilityZone" not in second
    assert api.describe_training_plan(TrainingPlanName=ARN)["TrainingPlanName"] == "night"  # by ARN too


def test_describe_serves_the_plans_upfront_fee_and_import_reads_it_back(plans_endpoint):
    """A plan whose topology states its fee is described with ``UpfrontFee`` (a string) and ``CurrencyCode``; the
    importer reads it back as the same number (the round trip ``import`` makes against ``serve``)."""
    from policy_engine.adapters.aws.training_plans import plan_data

    api = sagemaker(plans_endpoint)
    later = api.describe_training_plan(TrainingPlanName="later")
    _valid("describe_training_plan", later)
    assert (later["UpfrontFee"], later["CurrencyCode"]) == ("1234.5", "USD")
    assert (plan_data(later)["upfront_fee"], plan_data(later)["currency"]) == (1234.5, "USD")
    assert "UpfrontFee" not in api.describe_training_plan(TrainingPlanName="night")  # none stated: none served


def test_status_follows_the_clock_and_returns_to_scheduled_between_windows(plans_endpoint):
    api = sagemaker(plans_endpoint)
    seen = []
    for at in (HOUR, 4 * HOUR, 5 * HOUR, 7 * HOUR):
        plans_endpoint.advance(at - plans_endpoint.clock())
        plan = api.describe_training_plan(TrainingPlanName="night")
        seen.append((plan["Status"], [c["Status"] for c in plan["ReservedCapacitySummaries"]],
                     plan["AvailableInstanceCount"]))
    assert seen == [("Active", ["Active", "Scheduled"], 4), ("Scheduled", ["Expired", "Scheduled"], 0),
                    ("Active", ["Expired", "Active"], 2), ("Expired", ["Expired", "Expired"], 0)]


def test_in_use_and_available_are_live_from_the_plans_running_jobs(plans_endpoint):
    api, batch = sagemaker(plans_endpoint), client(plans_endpoint)
    plans_endpoint.advance(HOUR)
    request = json.loads(payload(P5, count=3))
    request["ResourceConfig"]["TrainingPlanArn"] = ARN
    batch.submit_service_job(jobName="planned", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                             serviceRequestPayload=json.dumps(request), quotaShareName="A")
    batch.submit_service_job(jobName="on-demand", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                             serviceRequestPayload=payload(P5, count=2), quotaShareName="B")
    plan = api.describe_training_plan(TrainingPlanName="night")
    assert (plan["InUseInstanceCount"], plan["AvailableInstanceCount"]) == (3, 1)  # the on-demand job uses none
    listed = api.list_training_plans(Filters=[{"Name": "Status", "Value": "Active"}])["TrainingPlanSummaries"]
    assert [(s["TrainingPlanName"], s["InUseInstanceCount"]) for s in listed] == [("night", 3)]


def _plan_job(batch, name: str, count: int, share: str = "A", plan: str = ARN) -> str:
    request = json.loads(payload(P5, count=count))
    request["ResourceConfig"]["TrainingPlanArn"] = plan
    return batch.submit_service_job(jobName=name, jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                                    serviceRequestPayload=json.dumps(request), quotaShareName=share)["jobId"]


def test_a_plan_job_submitted_before_its_window_waits_scheduled_then_runs_in_it(plans_endpoint):
    """The simulator's plan semantics through the API: dispatched before the window, the job holds its share's
    quota SCHEDULED (``plan_dispatch: dispatch``), starts when the window opens, and is counted in use then."""
    api, batch = sagemaker(plans_endpoint), client(plans_endpoint)
    job = _plan_job(batch, "early", 4)
    assert batch.describe_service_job(jobId=job)["status"] == "SCHEDULED"
    assert api.describe_training_plan(TrainingPlanName="night")["InUseInstanceCount"] == 0
    usage = batch.get_job_queue_snapshot(jobQueue="training")["queueUtilization"]["quotaShareUtilization"]
    assert usage["topCapacityUtilization"][0]["capacityUsage"][0]["quantity"] == 4  # quota held while it waits
    plans_endpoint.advance(HOUR + 1)
    assert batch.describe_service_job(jobId=job)["status"] == "RUNNING"
    plan = api.describe_training_plan(TrainingPlanName="night")
    assert (plan["InUseInstanceCount"], plan["AvailableInstanceCount"]) == (4, 0)
    plans_endpoint.advance(2 * HOUR)  # past the window's end: SageMaker ended the attempt 30 minutes before it
    described = batch.describe_service_job(jobId=job)
    assert described["status"] != "RUNNING" and api.describe_training_plan(
        TrainingPlanName="night")["InUseInstanceCount"] == 0


def test_a_job_naming_an_unknown_plan_or_another_type_is_refused(plans_endpoint):
    batch = client(plans_endpoint)
    request = json.loads(payload(P5))
    request["ResourceConfig"]["TrainingPlanArn"] = ARN.replace("night", "nope")
    code, status, message = error_of(batch.submit_service_job, jobName="j", jobQueue="training",
                                     serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=json.dumps(request),
                                     quotaShareName="A")
    assert (code, status) == ("ClientException", 400) and "names no training plan of this account" in message
    request = json.loads(payload("ml.p4d.24xlarge"))
    request["ResourceConfig"]["TrainingPlanArn"] = ARN
    code, _, message = error_of(batch.submit_service_job, jobName="j", jobQueue="training",
                                serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=json.dumps(request),
                                quotaShareName="A")
    assert code == "ClientException" and "reserves ml.p5.48xlarge" in message


def test_list_sorts_filters_and_pages(plans_endpoint):
    api = sagemaker(plans_endpoint)
    names = [s["TrainingPlanName"] for s in api.list_training_plans()["TrainingPlanSummaries"]]
    assert names == ["later", "night"]  # StartTime, newest first
    ascending = api.list_training_plans(SortBy="TrainingPlanName", SortOrder="Ascending")["TrainingPlanSummaries"]
    assert [s["TrainingPlanName"] for s in ascending] == ["later", "night"]
    pages = list(api.get_paginator("list_training_plans").paginate(SortBy="StartTime", SortOrder="Ascending",
                                                                    PaginationConfig={"PageSize": 1}))
    assert [[s["TrainingPlanName"] for s in p["TrainingPlanSummaries"]] for p in pages] == [["night"], ["later"]]
    origin = plans_endpoint.service.origin_ms / 1000
    after = api.list_training_plans(StartTimeAfter=datetime.fromtimestamp(origin + HOUR, UTC))  # strictly after
    assert [s["TrainingPlanName"] for s in after["TrainingPlanSummaries"]] == ["later"]
    before = api.list_training_plans(StartTimeBefore=datetime.fromtimestamp(origin, UTC) + timedelta(hours=2))
    assert [s["TrainingPlanName"] for s in before["TrainingPlanSummaries"]] == ["night"]
    _valid("list_training_plans", api.list_training_plans())


def test_errors_are_sagemakers(plans_endpoint):
    api = sagemaker(plans_endpoint)
    assert error_of(api.describe_training_plan, TrainingPlanName="missing")[:2] == ("ResourceNotFound", 400)
    code, status, message = error_of(api.describe_training_plan, TrainingPlanName="bad_name")
    assert (code, status) == ("ValidationException", 400) and "regular expression pattern" in message
    code, _, message = error_of(api.list_training_plans, MaxResults=101)
    assert code == "ValidationException" and "less than or equal to 100" in message
    code, _, message = error_of(api.list_training_plans, Filters=[{"Name": "Color", "Value": "x"}])
    assert code == "ValidationException" and "enum value set: [Status]" in message
    assert error_of(api.list_training_plans, NextToken="nonsense")[0] == "ValidationException"


def test_other_sagemaker_operations_are_unknown_operations(plans_endpoint):
    api = sagemaker(plans_endpoint)
    code, status, message = error_of(api.list_training_jobs)
    assert (code, status) == ("UnknownOperationException", 400)
    assert "ListTrainingJobs is not supported by batch-quota serve" in message
    request = urllib.request.Request(plans_endpoint.url, data=b"{}", method="POST",
                                     headers={"X-Amz-Target": "SageMaker.NoSuchThing", **SIGNED,
                                              "Content-Type": "application/x-amz-json-1.1"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400
    assert json.loads(caught.value.read()) == {"__type": "UnknownOperationException",
                                               "message": "Unknown SageMaker operation NoSuchThing"}


@pytest.mark.parametrize("body", [b"[1]", b"{", b"[" * 5000 + b"]" * 5000])
def test_a_bad_body_is_a_client_error_and_the_server_carries_on(plans_endpoint, body):
    request = urllib.request.Request(plans_endpoint.url, data=body, method="POST",
                                     headers={"X-Amz-Target": "SageMaker.ListTrainingPlans", **SIGNED})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400 and json.loads(caught.value.read())["__type"] == "SerializationException"
    assert sagemaker(plans_endpoint).list_training_plans()["TrainingPlanSummaries"]


def test_an_account_without_plans_lists_none(endpoint):
    assert sagemaker(endpoint).list_training_plans()["TrainingPlanSummaries"] == []
    with pytest.raises(ClientError):
        sagemaker(endpoint).describe_training_plan(TrainingPlanName="night")


def test_import_drift_and_snapshot_read_the_served_plans(plans_endpoint, monkeypatch, tmp_path):
    from click.testing import CliRunner

    from policy_engine.cli.app import main
    from policy_engine.inputs.loading import load_topology

    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", plans_endpoint.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", plans_endpoint.url)
    runner = CliRunner()
    imported = tmp_path / "account.yaml"
    result = runner.invoke(main, ["import", "-o", str(imported)])
    assert result.exit_code == 0, result.output
    assert "2 training plan(s)" in result.stderr
    plans = {p.name: p for p in load_topology(imported).training_plans}
    origin = datetime.fromtimestamp(plans_endpoint.service.origin_ms / 1000, UTC)
    night = plans["night"]
    assert night.arn == ARN and [c.instances for c in night.reserved_capacities] == [4, 2]
    assert night.reserved_capacities[0].start_seconds(origin) == HOUR
    assert night.reserved_capacities[0].availability_zone == "us-east-1a"
    assert runner.invoke(main, ["drift", str(imported)]).exit_code == 0
    plans_endpoint.advance(HOUR + 60)
    request = json.loads(payload(P5, count=2))
    request["ResourceConfig"]["TrainingPlanArn"] = ARN
    client(plans_endpoint).submit_service_job(jobName="planned", jobQueue="training",
                                              serviceJobType="SAGEMAKER_TRAINING",
                                              serviceRequestPayload=json.dumps(request), quotaShareName="A")
    snapshot = tmp_path / "now.yaml"
    from policy_engine.cli.commands import snapshot as snapshot_command

    # the served account's now is its simulated clock (AWS's is the wall clock the command reads)
    monkeypatch.setattr(snapshot_command, "now_ms", lambda: plans_endpoint.service.ms(plans_endpoint.clock()))
    result = runner.invoke(main, ["snapshot", "--queue", "training", "-o", str(snapshot)])
    assert result.exit_code == 0, result.output
    import yaml

    scenario = yaml.safe_load(snapshot.read_text())
    (job,) = scenario["jobs"]
    assert job["training_plan"] == "night"
    windows = {p["name"]: p["reserved_capacities"] for p in scenario["topology"]["training_plans"]}
    assert windows["night"][0]["start"] == pytest.approx(-60, abs=1)  # seconds from the snapshot


def test_the_export_replays_the_plan_jobs_as_the_simulator_ran_them(plans_endpoint, tmp_path):
    """``/_batch-quota/export`` carries each job's plan and the account's start: the replay has the same states."""
    import yaml

    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.results.records import build_result
    from policy_engine.simulation.scenarios.workload import load_scenario

    batch = client(plans_endpoint)
    ids = {"early": _plan_job(batch, "early", 4)}
    plans_endpoint.advance(600)
    ids["second"] = _plan_job(batch, "second", 2, share="B")
    plans_endpoint.advance(HOUR)
    ids["late"] = _plan_job(batch, "late", 1, share="B")
    plans_endpoint.advance(3 * HOUR)
    exported = plans_endpoint.export()
    jobs = {job["name"]: job for job in exported["scenario"]["jobs"]}
    assert jobs["early"]["training_plan"] == "night" and "start" in exported["scenario"]
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(exported["scenario"]), encoding="utf-8")
    scenario = load_scenario(path)
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
    engine.run(until=exported["time"])
    replayed = {job.name: job.status for job in build_result(engine).jobs}
    served = {name: batch.describe_service_job(jobId=job)["status"] for name, job in ids.items()}
    assert replayed == served
    early = [(e["time"], e["to"]) for e in exported["events"] if e["job"] == "early"]
    assert (0, "SCHEDULED") in early and (HOUR, "RUNNING") in early  # it waited for its window, then ran


def test_plans_and_plan_jobs_survive_a_restart_with_state(tmp_path):
    from policy_engine.adapters.endpoint.store import Store

    path = tmp_path / "state.db"
    with start_in_thread(Service(Options(speed=0), plans_topology(), Store(path))) as running:
        job = _plan_job(client(running), "early", 3)
        running.advance(HOUR + 10)
        before = sagemaker(running).describe_training_plan(TrainingPlanName="night")
    with start_in_thread(Service(Options(speed=0), None, Store(path))) as running:
        after = sagemaker(running).describe_training_plan(TrainingPlanName="night")
        assert client(running).describe_service_job(jobId=job)["status"] == "RUNNING"
    assert {k: v for k, v in after.items() if k != "ResponseMetadata"} == {
        k: v for k, v in before.items() if k != "ResponseMetadata"}
    assert after["InUseInstanceCount"] == 3
