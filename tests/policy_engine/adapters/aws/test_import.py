"""``import`` from an account: calls, pagination, skipped queues, system tags, errors."""

from __future__ import annotations

import pytest
from botocore.stub import Stubber
from click.testing import CliRunner

from policy_engine.adapters.aws.account import read_account
from policy_engine.adapters.aws.clients import Api
from policy_engine.analysis.checks import check_topology
from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.inputs.loading import load_topology, topology_from_data
from tests.policy_engine.adapters.aws.fake_account import FakeAccount, arn, topology_template


@pytest.fixture(scope="module")
def account() -> FakeAccount:
    return FakeAccount.from_template(topology_template(example_topology()), stack_name="QuotaStack")


def test_import_reads_every_object_and_counts_calls(stubbed, account):
    client, stubber = stubbed
    expected_calls = account.stub_import(stubber)
    api = Api(client)
    read = read_account(api)
    stubber.assert_no_pending_responses()
    assert not read.errors and not read.skipped
    assert sum(api.calls.values()) == expected_calls == 7
    assert api.calls["ListTagsForResource"] == 3
    topology = topology_from_data(read.data, "account")
    assert topology.job_queues[0].shares == tuple(
        s.model_copy(update={"system_tags": topology.job_queues[0].shares[i].system_tags})
        for i, s in enumerate(example_topology().job_queues[0].shares))


def test_system_tags_become_system_tags_and_the_import_passes_check(stubbed, account):
    client, stubber = stubbed
    account.stub_import(stubber)
    topology = topology_from_data(read_account(Api(client)).data, "account")
    share = topology.job_queues[0].shares[0]
    assert share.system_tags["aws:cloudformation:stack-name"] == "QuotaStack"
    assert not any(key.startswith("aws:") for key in share.tags)
    assert topology.service_environments[0].system_tags["aws:cloudformation:stack-name"] == "QuotaStack"
    assert check_topology(topology).ok


def test_pages_of_queues_and_shares_are_all_read(stubbed, account):
    client, stubber = stubbed
    many = FakeAccount(environments=account.environments, policies=account.policies, shares=dict(account.shares),
                       tags=account.tags)
    many.queues = list(account.queues)
    # a second, ECS queue and a fair-share queue on the next pages: listed as skipped with their reasons
    many.queues.append({"jobQueueName": "cpu", "jobQueueArn": arn("job-queue", "cpu"), "state": "ENABLED",
                        "priority": 1, "computeEnvironmentOrder": [], "jobQueueType": "ECS", "status": "VALID"})
    many.queues.append({"jobQueueName": "fair", "jobQueueArn": arn("job-queue", "fair"), "state": "ENABLED",
                        "priority": 1, "computeEnvironmentOrder": [], "jobQueueType": "SAGEMAKER_TRAINING",
                        "status": "VALID", "schedulingPolicyArn": arn("scheduling-policy", "fair"),
                        "serviceEnvironmentOrder": account.queues[0]["serviceEnvironmentOrder"]})
    many.policies = [*account.policies, {"name": "fair", "arn": arn("scheduling-policy", "fair"),
                                         "fairsharePolicy": {"shareDecaySeconds": 3600}}]
    calls = many.stub_import(stubber, page_size=1, share_page_size=2)
    api = Api(client)
    read = read_account(api)
    stubber.assert_no_pending_responses()
    assert api.calls["DescribeJobQueues"] == 3 and api.calls["ListQuotaShares"] == 2
    assert sum(api.calls.values()) == calls
    assert [q["name"] for q in read.data["job_queues"]] == ["training"]
    assert len(read.data["job_queues"][0]["shares"]) == 3
    assert dict(read.skipped) == {"cpu": "job queue type ECS, not SAGEMAKER_TRAINING",
                                  "fair": "scheduling policy fair is a fair-share policy, not a quota-share one"}


def test_access_denied_names_the_call_and_the_share(stubbed, account):
    client, stubber = stubbed
    account.stub_import(stubber)
    # replace the last ListTagsForResource answer with AccessDenied
    stubber._queue.pop()
    share_arn = account.shares[account.queues[0]["jobQueueArn"]][-1]["quotaShareArn"]
    stubber.add_client_error("list_tags_for_resource", "AccessDeniedException", "User is not authorized",
                             http_status_code=403, expected_params={"resourceArn": share_arn})
    read = read_account(Api(client))
    assert [e.line for e in read.errors] == [
        "ListTagsForResource (quota share training/QS3): access denied (AccessDeniedException): "
        "User is not authorized (see `batch-quota iam-policy`)"]


def test_a_share_being_deleted_is_an_error_not_a_silent_skip(stubbed, account):
    client, stubber = stubbed
    broken = FakeAccount(environments=account.environments, policies=account.policies, queues=account.queues,
                         tags=account.tags, shares={k: [dict(s) for s in v] for k, v in account.shares.items()})
    broken.shares[account.queues[0]["jobQueueArn"]][1]["status"] = "DELETING"
    broken.stub_import(stubber)
    stubber._queue.remove(next(r for r in stubber._queue if r["operation_name"] == "ListTagsForResource"
                               and r["expected_params"]["resourceArn"].endswith("/QS2")))
    read = read_account(Api(client))
    assert [e.line for e in read.errors] == [
        "ListQuotaShares (quota share training/QS2): status DELETING; import it once it is VALID"]


def test_cli_writes_the_topology_and_reports_skips(stubbed, account, tmp_path):
    _client, stubber = stubbed
    account.stub_import(stubber)
    out = tmp_path / "imported.yaml"
    result = CliRunner().invoke(main, ["import", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "imported 1 job queue(s), 3 quota share(s), 0 training plan(s) in 8 API call(s)" in result.stderr
    loaded = load_topology(out)
    assert [s.name for s in loaded.job_queues[0].shares] == ["QS1", "QS2", "QS3"]
    assert "system_tags:" in out.read_text()
    assert CliRunner().invoke(main, ["check", str(out)]).exit_code == 0


def test_cli_a_queue_that_does_not_exist_is_exit_2(stubbed):
    _client, stubber = stubbed
    stubber.add_response("describe_job_queues", {"jobQueues": []}, {"jobQueues": ["nope"]})
    result = CliRunner().invoke(main, ["import", "--queue", "nope"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: DescribeJobQueues (job queue nope): no such job queue in Region us-east-1"


def test_cli_ctrl_c_leaves_no_partial_file(stubbed, account, tmp_path, monkeypatch):
    _client, stubber = stubbed
    out = tmp_path / "imported.yaml"
    out.write_text("# the previous import\n")
    account.stub_import(stubber)
    from policy_engine.foundation import output_files

    real = output_files.atomic_write

    def write_then_interrupt(path, newline=None):
        import contextlib

        @contextlib.contextmanager
        def wrapper():
            with real(path, newline) as handle:
                handle.write("half of it")
                raise KeyboardInterrupt
                yield handle

        return wrapper()

    monkeypatch.setattr("policy_engine.cli.commands.import_topology.atomic_write", write_then_interrupt)
    result = CliRunner().invoke(main, ["import", "-o", str(out)])
    assert result.exit_code == 130
    assert "interrupted: nothing was written" in result.stderr
    assert out.read_text() == "# the previous import\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imported.yaml"]


def test_stubber_keeps_validation_on(stubbed):
    """A response that breaks the botocore model is refused by the Stubber itself."""
    from botocore.exceptions import ParamValidationError

    _client, stubber = stubbed
    with pytest.raises(ParamValidationError):
        stubber.add_response("describe_job_queues", {"jobQueues": [{"jobQueueName": 3}]})
    assert isinstance(stubber, Stubber)


def test_an_invalid_queue_is_an_error_naming_its_reason(stubbed, account):
    client, stubber = stubbed
    broken = FakeAccount(environments=account.environments, policies=account.policies, tags=account.tags,
                         shares=account.shares, queues=[{**account.queues[0], "status": "INVALID",
                                                         "statusReason": "CLIENT_ERROR - scheduling policy invalid"}])
    stubber.add_response("describe_job_queues", {"jobQueues": broken.queues}, {})
    read = read_account(Api(client))
    assert [e.line for e in read.errors] == [
        "DescribeJobQueues (job queue training): status INVALID: CLIENT_ERROR - scheduling policy invalid; "
        "import it once it is VALID"]


def test_an_unreachable_endpoint_and_a_malformed_region_are_one_line():
    """No stub: the fixture points Batch at a closed loopback port, so the real client fails to connect."""
    runner = CliRunner()
    unreachable = runner.invoke(main, ["import", "--max-attempts", "1"])
    assert unreachable.exit_code == 2
    assert unreachable.stderr.startswith("error: DescribeJobQueues (every job queue): Could not connect to the "
                                         "endpoint URL")
    assert len(unreachable.stderr.splitlines()) == 1
    malformed = runner.invoke(main, ["import", "--region", "not a region"])
    assert malformed.exit_code == 2
    assert malformed.stderr.startswith("error: configuration (batch client): ")
    assert len(malformed.stderr.splitlines()) == 1


def test_cli_a_named_queue_that_is_not_quota_managed_is_exit_2(stubbed):
    _, stubber = stubbed
    stubber.add_response("describe_job_queues", {"jobQueues": [
        {"jobQueueName": "cpu", "jobQueueArn": arn("job-queue", "cpu"), "state": "ENABLED", "priority": 1,
         "computeEnvironmentOrder": [], "jobQueueType": "ECS", "status": "VALID"}]}, {"jobQueues": ["cpu"]})
    result = CliRunner().invoke(main, ["import", "--queue", "cpu"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "skipped job queue cpu: job queue type ECS, not SAGEMAKER_TRAINING",
        "error: DescribeJobQueues (job queue cpu): cannot be imported: job queue type ECS, not SAGEMAKER_TRAINING"]


def test_system_tags_are_never_deployed_and_user_keys_are_refused_there(stubbed, account):
    import pydantic

    from policy_engine.foundation.model import QuotaShare

    client, stubber = stubbed
    account.stub_import(stubber)
    imported = topology_from_data(read_account(Api(client)).data, "account")
    template = topology_template(imported)
    tags = [resource["Properties"].get("Tags") or {} for resource in template["Resources"].values()]
    assert not any(key.startswith("aws:") for resource_tags in tags for key in resource_tags)
    with pytest.raises(pydantic.ValidationError, match="system_tags holds only tags AWS set"):
        QuotaShare(name="s", capacity={"ml.g5.xlarge": 1}, strategy="LEND", system_tags={"team": "a"})


def test_without_a_paginator_the_next_token_loop_reads_every_page(stubbed, monkeypatch):
    client, stubber = stubbed
    monkeypatch.setattr(client, "can_paginate", lambda name: False)
    queue = arn("job-queue", "training")
    share = {"quotaShareName": "a", "quotaShareArn": f"{queue}/quota-share/a", "jobQueueArn": queue,
             "capacityLimits": [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
             "resourceSharingConfiguration": {"strategy": "LEND"}, "state": "ENABLED", "status": "VALID"}
    stubber.add_response("list_quota_shares", {"quotaShares": [share], "nextToken": "t1"}, {"jobQueue": queue})
    stubber.add_response("list_quota_shares", {"quotaShares": [{**share, "quotaShareName": "b"}]},
                         {"jobQueue": queue, "nextToken": "t1"})
    api = Api(client)
    names = [s["quotaShareName"] for page in api.pages("ListQuotaShares", "shares", jobQueue=queue)
             for s in page["quotaShares"]]
    assert names == ["a", "b"] and api.calls["ListQuotaShares"] == 2


def test_an_unwritable_output_is_one_line_and_exit_2(stubbed, account, tmp_path):
    _, stubber = stubbed
    account.stub_import(stubber)
    out = tmp_path / "nonexistent" / "dir" / "a.yaml"
    result = CliRunner().invoke(main, ["import", "-o", str(out)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.strip().splitlines()[-1] == (f"error: {out}: cannot write the output file: "
                                                      "No such file or directory")


def test_a_capacity_unit_given_twice_is_an_error_not_last_wins(stubbed):
    client, stubber = stubbed
    account = FakeAccount.from_template(topology_template(example_topology()))
    queue_arn = account.queues[0]["jobQueueArn"]
    account.shares[queue_arn][0]["capacityLimits"] = [{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1},
                                                      {"capacityUnit": "ml.g5.xlarge", "maxCapacity": 3}]
    account.stub_import(stubber)
    read = read_account(Api(client))
    assert [error.line for error in read.errors] == [
        "ListQuotaShares (quota share training/QS1): capacityLimits gives ml.g5.xlarge more than once"]
