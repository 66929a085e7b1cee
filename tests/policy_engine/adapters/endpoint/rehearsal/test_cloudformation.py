"""CloudFormation's semantics in the deploy rehearsal, driven with boto3 over HTTP (its query-protocol answers
parsed by botocore): change sets as CloudFormation lists them, intrinsic functions resolved to the endpoint's
ARNs, an update that fails put back, exports in use, ``reset``, the request guard, and resources that reach
their final status whatever the clock."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import boto3
import pytest
from botocore.exceptions import ClientError

from policy_engine.adapters.endpoint.base.status_reasons import SHARE_DELETED
from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from tests.policy_engine.adapters.endpoint.conftest import payload

GPU = "ml.g5.xlarge"


def template(share_limit: int = 1, queue_name: str = "training", policy_name: str = "quota",
             borrow: int = 100, extra: dict | None = None, outputs: dict | None = None) -> str:
    resources = {
        "Env": {"Type": "AWS::Batch::ServiceEnvironment", "Properties": {
            "ServiceEnvironmentName": "gpu", "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
            "CapacityLimits": [{"CapacityUnit": GPU, "MaxCapacity": 4}],
            "Tags": {"team": {"Fn::Sub": "${Team}-${AWS::Region}"}}}},
        "Policy": {"Type": "AWS::Batch::SchedulingPolicy", "Properties": {
            "Name": policy_name, "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"}}},
        "Queue": {"Type": "AWS::Batch::JobQueue", "Properties": {
            "JobQueueName": queue_name, "JobQueueType": "SAGEMAKER_TRAINING", "Priority": 1,
            "SchedulingPolicyArn": {"Fn::GetAtt": ["Policy", "Arn"]},
            "ServiceEnvironmentOrder": [{"Order": 1, "ServiceEnvironment": {"Ref": "Env"}}]}},
        "Share": {"Type": "AWS::Batch::QuotaShare", "Properties": {
            "QuotaShareName": "research", "JobQueue": {"Fn::GetAtt": ["Queue", "JobQueueArn"]},
            "CapacityLimits": [{"CapacityUnit": GPU, "MaxCapacity": share_limit}],
            "ResourceSharingConfiguration": {"Strategy": "LEND_AND_BORROW", "BorrowLimit": borrow},
            "PreemptionConfiguration": {"InSharePreemption": "DISABLED"}}},
        "Topic": {"Type": "AWS::SNS::Topic", "Condition": "WithTopic"},
    }
    resources.update(extra or {})
    return json.dumps({
        "Parameters": {"Team": {"Type": "String", "Default": "ml"},
                       "Version": {"Type": "AWS::SSM::Parameter::Value<String>",
                                   "Default": "/cdk-bootstrap/hnb659fds/version"}},
        "Conditions": {"WithTopic": {"Fn::Equals": [{"Ref": "Team"}, "ml"]}},
        "Resources": resources,
        "Outputs": outputs or {"Share": {"Value": {"Fn::Join": ["|", [{"Ref": "Share"}, {"Ref": "Version"}]]}}},
    })


@pytest.fixture()
def endpoint():
    running = start_in_thread(Service(Options(speed=0, transition_seconds=600)))
    try:
        yield running
    finally:
        running.stop()


def client(endpoint, service: str):
    return boto3.client(service, endpoint_url=endpoint.url, region_name="us-east-1",
                        aws_access_key_id="rehearsal", aws_secret_access_key="rehearsal")


def deploy(cloudformation, body: str, name: str = "Stack", change_set: str = "cs") -> dict:
    """CreateChangeSet and ExecuteChangeSet as the CDK CLI calls them; returns the change set's description."""
    exists = any(s["StackName"] == name for s in cloudformation.describe_stacks()["Stacks"])
    cloudformation.create_change_set(StackName=name, ChangeSetName=change_set, TemplateBody=body,
                                     ChangeSetType="UPDATE" if exists else "CREATE")
    described = cloudformation.describe_change_set(StackName=name, ChangeSetName=change_set)
    cloudformation.execute_change_set(StackName=name, ChangeSetName=change_set)
    return described


def test_a_stack_resolves_refs_getatt_sub_join_conditions_and_ssm_parameters_to_the_endpoints_arns(endpoint):
    cloudformation, batch = client(endpoint, "cloudformation"), client(endpoint, "batch")
    deploy(cloudformation, template())
    stack = cloudformation.describe_stacks(StackName="Stack")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    share_arn = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/research"
    assert stack["Outputs"][0]["OutputValue"] == f"{share_arn}|33"  # Ref of the share; the SSM parameter's value
    queue = batch.describe_job_queues(jobQueues=["training"])["jobQueues"][0]
    assert queue["schedulingPolicyArn"] == "arn:aws:batch:us-east-1:123456789012:scheduling-policy/quota"
    environment = batch.describe_service_environments()["serviceEnvironments"][0]
    assert environment["tags"] == {"team": "ml-us-east-1"}  # Fn::Sub with a parameter and a pseudo parameter
    # final status at once, though the endpoint's resources take 600 s and the clock does not move
    assert {queue["status"], environment["status"], batch.describe_quota_share(quotaShareArn=share_arn)["status"]} \
        == {"VALID"}
    types = {r["LogicalResourceId"]: r["ResourceType"]
             for r in cloudformation.describe_stack_resources(StackName="Stack")["StackResources"]}
    assert types["Topic"] == "AWS::SNS::Topic"  # its condition holds
    created = [e["LogicalResourceId"] for e in reversed(cloudformation.describe_stack_events(StackName="Stack")[
        "StackEvents"]) if e["ResourceStatus"] == "CREATE_COMPLETE" and e["LogicalResourceId"] != "Stack"]
    assert created.index("Env") < created.index("Queue") < created.index("Share")  # dependency order
    assert created.index("Policy") < created.index("Queue")


def test_a_change_set_lists_modify_with_replacement_true_false_and_conditional(endpoint):
    cloudformation = client(endpoint, "cloudformation")
    deploy(cloudformation, template())
    cloudformation.create_change_set(StackName="Stack", ChangeSetName="limit", TemplateBody=template(share_limit=2))
    changes = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"]
               for c in cloudformation.describe_change_set(StackName="Stack", ChangeSetName="limit")["Changes"]}
    assert set(changes) == {"Share"}
    assert (changes["Share"]["Action"], changes["Share"]["Replacement"]) == ("Modify", "False")
    assert changes["Share"]["Details"][0]["Target"] == {"Attribute": "Properties", "Name": "CapacityLimits",
                                                        "RequiresRecreation": "Never"}
    # a new policy name replaces the policy (Name is create-only); the queue that refers to it by Fn::GetAtt
    # sees a value not known yet: Conditional
    cloudformation.create_change_set(StackName="Stack", ChangeSetName="policy",
                                     TemplateBody=template(policy_name="quota-2"))
    changes = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"]
               for c in cloudformation.describe_change_set(StackName="Stack", ChangeSetName="policy")["Changes"]}
    assert changes["Policy"]["Replacement"] == "True"
    assert changes["Policy"]["Details"][0]["Target"]["RequiresRecreation"] == "Always"
    assert changes["Queue"]["Replacement"] == "False"  # SchedulingPolicyArn is updatable in place
    assert changes["Queue"]["Details"][0]["Evaluation"] == "Dynamic"
    assert changes["Queue"]["Details"][0]["CausingEntity"] == "Policy"
    # a queue renamed is replaced; the share's JobQueue (create-only) then depends on it: Conditional
    cloudformation.create_change_set(StackName="Stack", ChangeSetName="queue",
                                     TemplateBody=template(queue_name="training-2"))
    changes = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"]
               for c in cloudformation.describe_change_set(StackName="Stack", ChangeSetName="queue")["Changes"]}
    assert (changes["Queue"]["Replacement"], changes["Share"]["Replacement"]) == ("True", "Conditional")
    # the same template: CloudFormation's "no changes" answer, which the CDK CLI reads
    cloudformation.create_change_set(StackName="Stack", ChangeSetName="same", TemplateBody=template())
    same = cloudformation.describe_change_set(StackName="Stack", ChangeSetName="same")
    assert (same["Status"], same["ExecutionStatus"]) == ("FAILED", "UNAVAILABLE")
    assert same["StatusReason"].startswith("The submitted information didn't contain changes")


def test_an_update_the_endpoint_refuses_is_rolled_back_and_the_old_resources_were_never_touched(endpoint):
    cloudformation, batch = client(endpoint, "cloudformation"), client(endpoint, "batch")
    deploy(cloudformation, template())
    share_arn = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/research"
    job = batch.submit_service_job(jobName="j", jobQueue="training", quotaShareName="research",
                                   serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
    # the limit goes up in place, then a second share the endpoint refuses (borrowLimit with RESERVE)
    refused = {"Bad": {"Type": "AWS::Batch::QuotaShare", "DependsOn": "Share", "Properties": {
        "QuotaShareName": "bad", "JobQueue": {"Ref": "Queue"},
        "CapacityLimits": [{"CapacityUnit": GPU, "MaxCapacity": 1}],
        "ResourceSharingConfiguration": {"Strategy": "RESERVE", "BorrowLimit": 10},
        "PreemptionConfiguration": {"InSharePreemption": "DISABLED"}}}}
    deploy(cloudformation, template(share_limit=3, extra=refused), change_set="bad")
    stack = cloudformation.describe_stacks(StackName="Stack")["Stacks"][0]
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    events = cloudformation.describe_stack_events(StackName="Stack")["StackEvents"]
    failed = next(e for e in events if e["ResourceStatus"] == "CREATE_FAILED")
    assert failed["LogicalResourceId"] == "Bad"
    assert "borrowLimit is only valid with the LEND_AND_BORROW strategy" in failed["ResourceStatusReason"]
    assert any(e["ResourceStatus"] == "UPDATE_ROLLBACK_IN_PROGRESS" and "[Bad]" in e["ResourceStatusReason"]
               for e in events)
    share = batch.describe_quota_share(quotaShareArn=share_arn)
    assert share["capacityLimits"][0]["maxCapacity"] == 1  # the in-place change was put back
    assert batch.describe_service_job(jobId=job)["status"] == "RUNNING"
    assert cloudformation.get_template(StackName="Stack")["TemplateBody"] == json.loads(template())  # the old one


def test_a_replacing_update_creates_the_new_share_first_and_deletes_the_old_one_and_its_jobs_at_cleanup(endpoint):
    cloudformation, batch = client(endpoint, "cloudformation"), client(endpoint, "batch")
    second = {"Env2": {"Type": "AWS::Batch::ServiceEnvironment", "Properties": {
        "ServiceEnvironmentName": "gpu-2", "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
        "CapacityLimits": [{"CapacityUnit": GPU, "MaxCapacity": 2}]}},
        "Queue2": {"Type": "AWS::Batch::JobQueue", "Properties": {
            "JobQueueName": "other", "JobQueueType": "SAGEMAKER_TRAINING", "Priority": 1,
            "SchedulingPolicyArn": {"Fn::GetAtt": ["Policy", "Arn"]},
            "ServiceEnvironmentOrder": [{"Order": 1, "ServiceEnvironment": {"Ref": "Env2"}}]}}}
    deploy(cloudformation, template(extra=second))
    job = batch.submit_service_job(jobName="j", jobQueue="training", quotaShareName="research",
                                   serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
    moved = json.loads(template(extra=second))
    moved["Resources"]["Share"]["Properties"]["JobQueue"] = {"Ref": "Queue2"}
    described = deploy(cloudformation, json.dumps(moved), change_set="move")
    change = described["Changes"][0]["ResourceChange"]
    assert (change["LogicalResourceId"], change["Replacement"]) == ("Share", "True")
    assert batch.describe_service_job(jobId=job)["status"] == "FAILED"
    assert batch.describe_service_job(jobId=job)["statusReason"] == SHARE_DELETED
    assert [s["quotaShareName"] for s in batch.list_quota_shares(jobQueue="other")["quotaShares"]] == ["research"]
    assert batch.list_quota_shares(jobQueue="training")["quotaShares"] == []


def test_delete_quota_share_terminates_its_unfinished_jobs_as_aws_documents(endpoint):
    cloudformation, batch = client(endpoint, "cloudformation"), client(endpoint, "batch")
    deploy(cloudformation, template())
    share_arn = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/research"
    jobs = [batch.submit_service_job(jobName=f"j{i}", jobQueue="training", quotaShareName="research",
                                     serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
            for i in range(6)]  # some run, some wait
    assert {batch.describe_service_job(jobId=j)["status"] for j in jobs} == {"RUNNING", "RUNNABLE"}
    batch.update_quota_share(quotaShareArn=share_arn, state="DISABLED")
    endpoint.advance(600)
    batch.delete_quota_share(quotaShareArn=share_arn)
    assert {(batch.describe_service_job(jobId=j)["status"], batch.describe_service_job(jobId=j)["statusReason"])
            for j in jobs} == {("FAILED", SHARE_DELETED)}


def test_an_export_in_use_keeps_its_stack_and_destroy_goes_in_reverse_order(endpoint):
    cloudformation, batch = client(endpoint, "cloudformation"), client(endpoint, "batch")
    deploy(cloudformation, template(outputs={"Env": {"Value": {"Ref": "Env"}, "Export": {"Name": "EnvArn"}}}),
           name="Capacity")
    user = {"Resources": {"Policy": {"Type": "AWS::Batch::SchedulingPolicy", "Properties": {
        "Name": "other", "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"}}},
        "Queue": {"Type": "AWS::Batch::JobQueue", "Properties": {
            "JobQueueName": "other", "JobQueueType": "SAGEMAKER_TRAINING", "Priority": 2,
            "SchedulingPolicyArn": {"Ref": "Policy"},
            "ServiceEnvironmentOrder": [{"Order": 1, "ServiceEnvironment": {"Fn::ImportValue": "EnvArn"}}]}}}}
    deploy(cloudformation, json.dumps(user), name="Teams")
    assert cloudformation.list_imports(ExportName="EnvArn")["Imports"] == ["Teams"]
    cloudformation.delete_stack(StackName="Capacity")
    capacity = cloudformation.describe_stacks(StackName="Capacity")["Stacks"][0]
    assert capacity["StackStatus"] == "DELETE_FAILED"
    assert "in use by Teams" in capacity["StackStatusReason"]
    cloudformation.delete_stack(StackName="Teams")
    cloudformation.delete_stack(StackName="Capacity")
    assert cloudformation.describe_stacks()["Stacks"] == []
    assert batch.describe_job_queues()["jobQueues"] == []
    assert batch.describe_service_environments()["serviceEnvironments"] == []


def test_reset_drops_every_deployed_stack_with_the_rest_of_the_state(endpoint):
    cloudformation, batch = client(endpoint, "cloudformation"), client(endpoint, "batch")
    deploy(cloudformation, template())
    s3 = client(endpoint, "s3")
    s3.put_object(Bucket="cdk-hnb659fds-assets-123456789012-us-east-1", Key="t.json", Body=b"{}")
    endpoint.reset()
    with pytest.raises(ClientError, match="does not exist"):
        cloudformation.describe_stacks(StackName="Stack")
    assert batch.describe_job_queues()["jobQueues"] == []
    assert s3.list_objects_v2(Bucket="cdk-hnb659fds-assets-123456789012-us-east-1").get("KeyCount") == 0
    deploy(cloudformation, template())  # the same names deploy again
    assert cloudformation.describe_stacks(StackName="Stack")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"


def test_sts_ssm_and_s3_answer_what_the_cdk_cli_asks(endpoint):
    sts, ssm, s3 = client(endpoint, "sts"), client(endpoint, "ssm"), client(endpoint, "s3")
    assert sts.get_caller_identity()["Account"] == "123456789012"
    role = "arn:aws:iam::123456789012:role/cdk-hnb659fds-deploy-role-123456789012-us-east-1"
    assert sts.assume_role(RoleArn=role, RoleSessionName="cdk")["Credentials"]["AccessKeyId"]
    assert ssm.get_parameter(Name="/cdk-bootstrap/hnb659fds/version")["Parameter"]["Value"] == "33"
    with pytest.raises(ClientError, match="ParameterNotFound"):
        ssm.get_parameter(Name="/other")
    bucket = "cdk-hnb659fds-assets-123456789012-us-east-1"
    assert s3.get_bucket_location(Bucket=bucket)["LocationConstraint"] == "us-east-1"
    s3.put_object(Bucket=bucket, Key="a/b.json", Body=b'{"x": 1}')
    assert s3.get_object(Bucket=bucket, Key="a/b.json")["Body"].read() == b'{"x": 1}'
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="a/")["Contents"]] == ["a/b.json"]
    with pytest.raises(ClientError, match="NoSuchBucket"):
        s3.list_objects_v2(Bucket="someone-elses")


@pytest.mark.parametrize("service", ["cloudformation", "s3", "sts", "ssm"])
def test_every_rehearsal_route_is_behind_the_request_guard(endpoint, service):
    scope = f"AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/{service}/aws4_request, SignedHeaders=host, Signature=0"
    request = urllib.request.Request(f"{endpoint.url}/", data=b"Action=DescribeStacks&Version=2010-05-15",
                                     headers={"Authorization": scope, "Origin": "https://evil.example",
                                              "Content-Type": "application/x-www-form-urlencoded"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    rebinding = urllib.request.Request(f"{endpoint.url}/", data=b"Action=DescribeStacks&Version=2010-05-15",
                                       headers={"Authorization": scope, "Host": "attacker.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(rebinding, timeout=10)
    assert refused.value.code == 403
    unsigned = urllib.request.Request(f"{endpoint.url}/", data=b"Action=DescribeStacks&Version=2010-05-15")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(unsigned, timeout=10)
    assert refused.value.code == 403


@pytest.mark.parametrize("body", [
    "not a template: [", "[]", '{"Resources": {}}', '{"Resources": {"A": 1}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic", "Properties": []}}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Fn::Join": 5}}}}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Fn::Select": [9, []]}}}}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic", "DependsOn": "B"}}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Ref": "A"}}}}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic"}}, "Outputs": {"X": {"Nope": 1}}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic"}}, "Rules": {"R": {"Assertions": [{}]}}}',
    '{"Resources": {"A": {"Type": "AWS::SNS::Topic"}}, "Parameters": {"P": {"Type": "String"}}}',
])
def test_a_template_cloudformation_would_refuse_is_a_validation_error_never_a_5xx(endpoint, body):
    cloudformation = client(endpoint, "cloudformation")
    try:
        deploy(cloudformation, body)
    except ClientError as error:
        assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 400, error.response
        assert error.response["Error"]["Code"] == "ValidationError"
        return
    stack = cloudformation.describe_stacks(StackName="Stack")["Stacks"][0]  # or it fails and rolls back
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE", stack


def test_an_in_place_limit_change_reaches_the_running_scheduler_as_update_quota_share_does(endpoint):
    cloudformation, batch = client(endpoint, "cloudformation"), client(endpoint, "batch")
    deploy(cloudformation, template(share_limit=1, borrow=0))
    jobs = [batch.submit_service_job(jobName=f"j{i}", jobQueue="training", quotaShareName="research",
                                     serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())["jobId"]
            for i in range(3)]
    assert [batch.describe_service_job(jobId=j)["status"] for j in jobs] == ["RUNNING", "RUNNABLE", "RUNNABLE"]
    deploy(cloudformation, template(share_limit=3, borrow=0), change_set="raise")
    # the clock has not moved: the scheduling pass at the update's instant places the waiting jobs
    assert [batch.describe_service_job(jobId=j)["status"] for j in jobs] == ["RUNNING"] * 3
