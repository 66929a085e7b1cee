"""TrainingJobQueue: SAGEMAKER_TRAINING type, one environment, the quota policy, time-limit actions."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Match, Template

from policy_engine.foundation.model import JobStateTimeLimitAction
from quota_constructs import QuotaSchedulingPolicy, ServiceEnvironment, TrainingJobQueue
from quota_constructs.errors import QuotaConstructError
from tests.quota_constructs.conftest import cfn_lint_errors, fast_app

CAPACITY = "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"
QUOTA = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"


@pytest.fixture(scope="module")
def built():
    stack = Stack(fast_app(), "Queues")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu-env", capacity={"ml.g5.xlarge": 3})
    queue = TrainingJobQueue(
        stack, "Queue", job_queue_name="training", service_environment=env, priority=10,
        job_state_time_limit_actions=[JobStateTimeLimitAction(max_time_seconds=3600, reason=QUOTA)],
        tags={"team": "platform"},
    )
    other_env = ServiceEnvironment(stack, "Env2", service_environment_name="gpu-env-2", capacity={"ml.g5.xlarge": 1})
    shared_policy = QuotaSchedulingPolicy(stack, "Shared", scheduling_policy_name="shared-policy")
    second = TrainingJobQueue(stack, "Second", job_queue_name="second", service_environment=other_env,
                              scheduling_policy=shared_policy, state="DISABLED")
    reader = iam.Role(stack, "Reader", assumed_by=iam.AccountRootPrincipal())
    queue.grant_read(reader)
    return stack, queue, second, Template.from_stack(stack)


def test_queue_properties(built):
    stack, queue, _, template = built
    env_id = next(iter(template.find_resources("AWS::Batch::ServiceEnvironment",
                                               {"Properties": {"ServiceEnvironmentName": "gpu-env"}})))
    policy_id = next(iter(template.find_resources("AWS::Batch::SchedulingPolicy",
                                                  {"Properties": {"Name": "training-quota-policy"}})))
    template.has_resource_properties("AWS::Batch::JobQueue", {
        "JobQueueName": "training",
        "JobQueueType": "SAGEMAKER_TRAINING",
        "Priority": 10,
        "State": "ENABLED",
        "SchedulingPolicyArn": {"Fn::GetAtt": [policy_id, "Arn"]},
        "ServiceEnvironmentOrder": [
            {"Order": 1, "ServiceEnvironment": {"Fn::GetAtt": [env_id, "ServiceEnvironmentArn"]}}
        ],
        "ComputeEnvironmentOrder": Match.absent(),
        "JobStateTimeLimitActions": [
            {"Action": "TERMINATE", "MaxTimeSeconds": 3600, "Reason": QUOTA, "State": "RUNNABLE"}
        ],
        "Tags": {"team": "platform"},
    })
    assert queue.job_queue_name == "training"
    assert stack.resolve(queue.job_queue_arn)["Fn::GetAtt"][1] == "JobQueueArn"


def test_default_policy_is_created_per_queue_and_a_given_one_is_used(built):
    _, _, second, template = built
    template.resource_count_is("AWS::Batch::SchedulingPolicy", 2)  # training's own + the shared one
    template.has_resource_properties("AWS::Batch::JobQueue", {
        "JobQueueName": "second", "State": "DISABLED", "JobStateTimeLimitActions": Match.absent(),
    })
    assert second.scheduling_policy.scheduling_policy_name == "shared-policy"


def test_grant_read_lists_shares_on_the_queue_and_describes_on_star(built):
    stack, queue, _, template = built
    queue_arn = stack.resolve(queue.job_queue_arn)
    for statement in (
        {"Action": ["batch:ListQuotaShares", "batch:GetJobQueueSnapshot"], "Effect": "Allow", "Resource": queue_arn},
        {"Action": Match.array_with(["batch:DescribeJobQueues"]), "Effect": "Allow", "Resource": "*"},
    ):
        template.has_resource_properties(
            "AWS::IAM::Policy", {"PolicyDocument": {"Statement": Match.array_with([statement])}}
        )
    statements = template.to_json()["Resources"]
    actions = [a for r in statements.values() if r["Type"] == "AWS::IAM::Policy"
               for s in r["Properties"]["PolicyDocument"]["Statement"] for a in ([s["Action"]] if isinstance(
                   s["Action"], str) else s["Action"])]
    assert not [a for a in actions if not a.startswith(("batch:Describe", "batch:List", "batch:Get"))]
    assert "batch:ListServiceJobs" not in actions and "batch:DescribeServiceJob" not in actions  # an opt-in only


def test_template_passes_cfn_lint(built):
    assert cfn_lint_errors(built[3].to_json()) == []


@pytest.mark.parametrize(
    ("props", "field", "expected"),
    [
        ({"priority": 1001}, "priority", "0-1000"),
        ({"priority": -1}, "priority", "0-1000"),
        ({"state": "enabled"}, "state", "ENABLED, DISABLED"),
        ({"job_queue_name": ""}, "job_queue_name", "1-128"),
        ({"job_state_time_limit_actions": [JobStateTimeLimitAction(max_time_seconds=599, reason=CAPACITY)]},
         "job_state_time_limit_actions[0].max_time_seconds", "600-86400"),
        ({"job_state_time_limit_actions": [JobStateTimeLimitAction(max_time_seconds=86401, reason=CAPACITY)]},
         "job_state_time_limit_actions[0].max_time_seconds", "600-86400"),
        ({"job_state_time_limit_actions": [JobStateTimeLimitAction(max_time_seconds=600, reason="")]},
         "job_state_time_limit_actions[0].reason", "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY"),
        ({"job_state_time_limit_actions": [JobStateTimeLimitAction(max_time_seconds=600, reason="stuck at head")]},
         "job_state_time_limit_actions[0].reason", "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"),
        ({"tags": {"aws:team": "a"}}, "tags", "'aws:'"),
        ({"tags": {f"k{i}": "v" for i in range(51)}}, "tags", "at most 50"),
        ({"service_environment": "gpu-env"}, "service_environment", "a ServiceEnvironment"),
    ],
)
def test_invalid_props_raise(props, field, expected):
    stack = Stack(fast_app(), "Bad")
    env = ServiceEnvironment(stack, "Env", service_environment_name="e", capacity={"ml.g5.xlarge": 1})
    arguments = {"job_queue_name": "training", "service_environment": env, **props}
    with pytest.raises(QuotaConstructError) as error:
        TrainingJobQueue(stack, "Queue", **arguments)
    assert str(error.value).startswith(f"TrainingJobQueue {arguments['job_queue_name']!r}: {field} = ")
    assert (error.value.path, error.value.field) == ("Bad/Queue", field)
    assert f"{field} = {error.value.value!r} is invalid" in str(error.value)
    assert expected in str(error.value)


def test_import_by_arn_and_reject_a_share_arn():
    stack = Stack(fast_app(), "Import")
    arn = "arn:aws:batch:us-east-1:123456789012:job-queue/training"
    imported = TrainingJobQueue.from_job_queue_arn(stack, "Q", arn)
    assert (imported.job_queue_name, imported.job_queue_arn) == ("training", arn)
    assert imported.env.region == "us-east-1" and imported.env.account == "123456789012"
    with pytest.raises(QuotaConstructError, match="job-queue/NAME") as error:
        TrainingJobQueue.from_job_queue_arn(stack, "S", arn + "/quota-share/QS1")
    assert (error.value.path, error.value.field, error.value.value) == ("Import/S", "arn", arn + "/quota-share/QS1")


def _queue(name: str = "hand") -> tuple[Stack, ServiceEnvironment, TrainingJobQueue]:
    stack = Stack(fast_app(), "Hand")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu-env", capacity={"ml.g5.xlarge": 20})
    return stack, env, TrainingJobQueue(stack, "Queue", job_queue_name=name, service_environment=env)


def test_a_21st_share_is_refused_naming_the_share_the_queue_and_the_limit():
    stack, _, queue = _queue()
    for index in range(20):
        queue.add_quota_share(f"S{index}", quota_share_name=f"s{index}", capacity={"ml.g5.xlarge": 1},
                              strategy="RESERVE")
    with pytest.raises(QuotaConstructError, match=r"^QuotaShare 's20': job_queue = 'hand' is invalid; expected a job "
                                                  r"queue with room for another share: it already has 20 \(quota "
                                                  r"shares per job queue: at most 20\)$") as error:
        queue.add_quota_share("S20", quota_share_name="s20", capacity={"ml.g5.xlarge": 1}, strategy="RESERVE")
    # the path of the share that was refused (under its queue), not of the queue
    assert (error.value.path, error.value.field, error.value.value) == (f"{queue.node.path}/S20", "job_queue", "hand")
    Template.from_stack(stack).resource_count_is("AWS::Batch::QuotaShare", 20)  # nothing half-built


def test_a_duplicate_share_name_is_refused_also_when_built_directly():
    from quota_constructs import QuotaShare

    stack, _, queue = _queue()
    queue.add_quota_share("A", quota_share_name="team-a", capacity={"ml.g5.xlarge": 1}, strategy="RESERVE")
    with pytest.raises(ValueError, match=r"^QuotaShare 'team-a': quota_share_name = 'team-a' is invalid; expected a "
                                         r"name not yet used in job queue 'hand'"):
        QuotaShare(stack, "Again", job_queue=queue, quota_share_name="team-a", capacity={"ml.g5.xlarge": 1},
                   strategy="LEND")


def test_a_second_queue_on_one_service_environment_is_refused():
    stack, env, _ = _queue("first")
    with pytest.raises(ValueError, match=r"^TrainingJobQueue 'second': service_environment = 'gpu-env' is invalid; "
                                         r"expected a service environment no other job queue uses: job queue 'first' "
                                         r"already uses it \(job queues per quota-managed service environment: "
                                         r"at most 1\)$"):
        TrainingJobQueue(stack, "Second", job_queue_name="second", service_environment=env)
    Template.from_stack(stack).resource_count_is("AWS::Batch::JobQueue", 1)
    Template.from_stack(stack).resource_count_is("AWS::Batch::SchedulingPolicy", 1)


def test_a_refused_policy_name_leaves_no_half_built_queue():
    stack = Stack(fast_app(), "Hand")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu-env", capacity={"ml.g5.xlarge": 1})
    with pytest.raises(ValueError, match="scheduling_policy_name = 'bad policy' is invalid"):
        TrainingJobQueue(stack, "Queue", job_queue_name="q", service_environment=env,
                         scheduling_policy_name="bad policy")
    assert [c.node.id for c in stack.node.children] == ["Env"]
    TrainingJobQueue(stack, "Queue", job_queue_name="q", service_environment=env)  # the environment is still free
