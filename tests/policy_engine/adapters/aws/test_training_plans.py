"""Training plans read with SageMaker's ListTrainingPlans and DescribeTrainingPlan (botocore's Stubber checks every
request and response against the installed sagemaker model): import, drift and their errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.adapters.aws.clients import Api
from policy_engine.adapters.aws.training_plans import read_plans
from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.inputs.loading import load_topology, topology_from_data
from tests.policy_engine.adapters.aws.fake_account import ACCOUNT, REGION, FakeAccount, topology_template

P5 = "ml.p5.48xlarge"
START = datetime(2026, 12, 3, 22, tzinfo=UTC)


def plan_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-plan/{name}"


def capacity(index: int, instances: int, start: datetime, hours: int, instance_type: str = P5,
             kind: str = "Instance", zone: str | None = "us-east-1a") -> dict:
    out = {"ReservedCapacityArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:reserved-capacity/rc-{index}",
           "ReservedCapacityType": kind, "InstanceType": instance_type, "TotalInstanceCount": instances,
           "Status": "Scheduled", "DurationHours": hours, "DurationMinutes": 0, "StartTime": start,
           "EndTime": start + timedelta(hours=hours)}
    if zone:
        out["AvailabilityZone"] = zone
    return out


def summary(name: str, capacities: list[dict], status: str = "Scheduled", targets=("training-job",)) -> dict:
    return {"TrainingPlanArn": plan_arn(name), "TrainingPlanName": name, "Status": status,
            "StartTime": capacities[0]["StartTime"], "EndTime": capacities[-1]["EndTime"],
            "TotalInstanceCount": sum(c["TotalInstanceCount"] for c in capacities), "AvailableInstanceCount": 0,
            "InUseInstanceCount": 0, "TargetResources": list(targets), "ReservedCapacitySummaries": capacities}


NIGHT = summary("night", [capacity(1, 4, START, 8), capacity(2, 2, START + timedelta(days=1), 8, zone=None)])
EXPIRED = summary("old", [capacity(3, 4, START - timedelta(days=30), 8)], status="Expired")
HYPERPOD = summary("cluster", [capacity(4, 4, START, 8)], targets=("hyperpod-cluster",))
ULTRA = summary("ultra", [capacity(5, 2, START, 8, "ml.p6e-gb200.36xlarge", "UltraServer")])


def stub_plans(stubber, summaries: list[dict], page_size: int | None = None) -> None:
    """ListTrainingPlans (in pages of ``page_size``), then DescribeTrainingPlan for each plan that is read."""
    pages = [summaries[i:i + page_size] for i in range(0, len(summaries), page_size)] if page_size else [summaries]
    for index, page in enumerate(pages):
        response = {"TrainingPlanSummaries": page} | ({"NextToken": str(index + 1)} if index + 1 < len(pages) else {})
        stubber.add_response("list_training_plans", response, {"NextToken": str(index)} if index else {})
    for plan in sorted(summaries, key=lambda s: s["TrainingPlanName"]):
        if plan in (EXPIRED, HYPERPOD, ULTRA):
            continue
        stubber.add_response("describe_training_plan", plan | {"UnhealthyInstanceCount": 0},
                             {"TrainingPlanName": plan["TrainingPlanName"]})


def test_read_plans_lists_describes_and_skips_what_holds_no_training_capacity(plans_stubbed):
    client, stubber = plans_stubbed
    stub_plans(stubber, [NIGHT, EXPIRED, HYPERPOD, ULTRA], page_size=2)
    api = Api(client)
    read = read_plans(api)
    assert not read.errors and api.calls == {"ListTrainingPlans": 2, "DescribeTrainingPlan": 1}
    assert dict(read.skipped) == {"old": "status Expired: it holds no capacity any more",
                                  "cluster": "targets hyperpod-cluster, not training-job",
                                  "ultra": "reserved as UltraServers, which batch-quota does not model"}
    assert read.plans == [{"name": "night", "arn": plan_arn("night"), "instance_type": P5, "reserved_capacities": [
        {"instances": 4, "start": "2026-12-03T22:00:00Z", "end": "2026-12-04T06:00:00Z",
         "availability_zone": "us-east-1a"},
        {"instances": 2, "start": "2026-12-04T22:00:00Z", "end": "2026-12-05T06:00:00Z"}]}]
    plan = topology_from_data({"training_plans": read.plans}, "account").training_plans[0]
    assert plan.reserved_capacities[0].start == START and plan.arn == plan_arn("night")


def test_the_upfront_fee_is_read_as_a_decimal_with_its_currency_and_a_non_number_refused(plans_stubbed):
    client, stubber = plans_stubbed
    paid = NIGHT | {"UpfrontFee": "164505.60", "CurrencyCode": "USD"}
    stub_plans(stubber, [paid])
    read = read_plans(Api(client))
    assert not read.errors
    assert (read.plans[0]["upfront_fee"], read.plans[0]["currency"]) == (164505.6, "USD")
    plan = topology_from_data({"training_plans": read.plans}, "account").training_plans[0]
    assert (plan.upfront_fee, plan.currency) == (164505.6, "USD")
    client, stubber = plans_stubbed
    for text in ("about 160k", "NaN", "-5"):
        stub_plans(stubber, [NIGHT | {"UpfrontFee": text, "CurrencyCode": "USD"}])
        read = read_plans(Api(client))
        assert read.plans == [] and len(read.errors) == 1
        assert read.errors[0].line.startswith(f"DescribeTrainingPlan (training plan night): its UpfrontFee {text!r} "
                                              "is not"), read.errors[0].line


def test_a_plan_of_several_instance_types_is_an_error_naming_it(plans_stubbed):
    client, stubber = plans_stubbed
    mixed = summary("mixed", [capacity(1, 4, START, 8), capacity(2, 2, START + timedelta(days=1), 8,
                                                                    "ml.p4d.24xlarge")])
    stub_plans(stubber, [mixed])
    read = read_plans(Api(client))
    assert [e.line for e in read.errors] == [
        "DescribeTrainingPlan (training plan mixed): its reserved capacities name 2 instance types "
        "(ml.p4d.24xlarge, ml.p5.48xlarge); a topology plan has one"]


def _account() -> FakeAccount:
    return FakeAccount.from_template(topology_template(example_topology()), stack_name="QuotaStack")


def test_import_writes_the_plans_and_counts_their_calls(stubbed, plans_stubbed, tmp_path):
    _, batch_stubber = stubbed
    _, stubber = plans_stubbed
    _account().stub_import(batch_stubber)
    stub_plans(stubber, [NIGHT, EXPIRED])
    out = tmp_path / "account.yaml"
    result = CliRunner().invoke(main, ["import", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "skipped training plan old: status Expired: it holds no capacity any more" in result.stderr
    assert "imported 1 job queue(s), 3 quota share(s), 1 training plan(s) in 9 API call(s)" in result.stderr
    plans = yaml.safe_load(out.read_text())["training_plans"]
    assert [p["name"] for p in plans] == ["night"] and plans[0]["reserved_capacities"][0]["start"] == (
        "2026-12-03T22:00:00Z")
    assert load_topology(out).training_plans[0].instance_type == P5


def test_import_fails_in_one_line_when_plans_cannot_be_read(stubbed, plans_stubbed):
    _, batch_stubber = stubbed
    _, stubber = plans_stubbed
    _account().stub_import(batch_stubber)
    stubber.add_client_error("list_training_plans", "AccessDeniedException", "not authorized", http_status_code=403)
    result = CliRunner().invoke(main, ["import"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "error: ListTrainingPlans (every training plan): access denied (AccessDeniedException): not authorized "
        "(see `batch-quota iam-policy`)")


def test_no_training_plans_makes_no_sagemaker_call(stubbed, plans_stubbed):
    _, batch_stubber = stubbed
    _account().stub_import(batch_stubber)
    result = CliRunner().invoke(main, ["import", "--no-training-plans"])
    assert result.exit_code == 0 and "training_plans" not in result.stdout


def test_a_batch_endpoint_without_a_sagemaker_one_is_said_not_guessed(stubbed, monkeypatch):
    _, batch_stubber = stubbed
    _account().stub_import(batch_stubber)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", "http://127.0.0.1:9")
    monkeypatch.delenv("AWS_ENDPOINT_URL_SAGEMAKER", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    result = CliRunner().invoke(main, ["import"])
    assert result.exit_code == 0
    assert ("note: training plans not read: AWS_ENDPOINT_URL_BATCH is set and AWS_ENDPOINT_URL_SAGEMAKER is not"
            in result.stderr)


def _desired(tmp_path, plans: list[dict]):
    data = example_topology().model_dump(mode="json", exclude_defaults=True)
    data["training_plans"] = plans
    path = tmp_path / "desired.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(("plans", "lines"), [
    ([{"name": "night", "instance_type": P5, "reserved_capacities": [
        {"instances": 4, "start": "2026-12-03T22:00:00Z", "end": "2026-12-04T06:00:00Z"},
        {"instances": 2, "start": "2026-12-04T22:00:00Z", "end": "2026-12-05T06:00:00Z"}]}], []),
    ([{"name": "night", "instance_type": P5, "reserved_capacities": [  # in seconds: compared by length
        {"instances": 4, "start": 0, "end": 28800}, {"instances": 2, "start": 86400, "end": 115200}]}], []),
    ([{"name": "night", "instance_type": P5, "reserved_capacities": [
        {"instances": 8, "start": "2026-12-03T22:00:00Z", "end": "2026-12-04T06:00:00Z"},
        {"instances": 2, "start": "2026-12-04T22:00:00Z", "end": "2026-12-05T06:00:00Z"}]},
      {"name": "spare", "instance_type": P5, "reserved_capacities": [{"instances": 1, "start": 0, "end": 60}]}],
     ["training_plans[night].reserved_capacities: topology", "training_plans[spare]: missing from the account"]),
    ([], ["training_plans[night]: in the account, not in the topology"]),
])
def test_drift_compares_plans_with_list_training_plans(stubbed, plans_stubbed, tmp_path, plans, lines):
    _, batch_stubber = stubbed
    _, stubber = plans_stubbed
    _account().stub_import(batch_stubber, ["training"])
    stub_plans(stubber, [NIGHT])
    result = CliRunner().invoke(main, ["drift", str(_desired(tmp_path, plans))])
    assert result.exit_code == (1 if lines else 0), result.output
    for line in lines:
        assert line in result.stdout
    if not lines:
        assert "no drift" in result.stdout


def test_the_plans_a_history_used_are_described_by_name_whatever_their_status_and_the_rest_said(plans_stubbed):
    """``history --scenario`` describes each plan its jobs named (by the name in the ARN): an Expired plan still
    replays the windows the jobs met; a deleted plan, a denied call and an UltraServer plan are skipped with why."""
    from policy_engine.adapters.aws.training_plans import describe_used_plans, plan_name_of

    client, stubber = plans_stubbed
    # one call per plan, in ARN order
    stubber.add_client_error("describe_training_plan", "ResourceNotFound", "Training plan gone does not exist", 400,
                             expected_params={"TrainingPlanName": "gone"})
    stubber.add_response("describe_training_plan", NIGHT | {"UnhealthyInstanceCount": 0}, {"TrainingPlanName": "night"})
    stubber.add_response("describe_training_plan", EXPIRED | {"UnhealthyInstanceCount": 0}, {"TrainingPlanName": "old"})
    stubber.add_client_error("describe_training_plan", "AccessDeniedException", "not authorized", 403,
                             expected_params={"TrainingPlanName": "secret"})
    stubber.add_response("describe_training_plan", ULTRA | {"UnhealthyInstanceCount": 0}, {"TrainingPlanName": "ultra"})
    arns = [plan_arn(name) for name in ("ultra", "night", "secret", "old", "gone")]
    read = describe_used_plans(Api(client), arns)
    assert [plan["name"] for plan in read.plans] == ["night", "old"] and not read.errors
    assert read.plans[1]["reserved_capacities"][0]["start"] == "2026-11-03T22:00:00Z"  # Expired: its past window
    skipped = dict(read.skipped)
    assert list(skipped) == [plan_arn("gone"), plan_arn("secret"), plan_arn("ultra")]
    assert "ResourceNotFound" in skipped[plan_arn("gone")] and "DescribeTrainingPlan (training plan gone)" in \
        skipped[plan_arn("gone")]
    assert "access denied" in skipped[plan_arn("secret")]
    assert skipped[plan_arn("ultra")] == "reserved as UltraServers, which batch-quota does not model"
    assert plan_name_of(plan_arn("night")) == "night" and plan_name_of("night") == "night"
