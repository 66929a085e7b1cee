"""The whole stack with boto3 over HTTP: resources, their life cycle, tags, and what the endpoint refuses."""

from __future__ import annotations

from tests.policy_engine.adapters.endpoint.conftest import INSTANCE, client, create_stack, error_of, payload, submit


def test_stack_is_created_with_aws_arns_names_and_states(endpoint):
    batch = client(endpoint)
    env, policy, _, arns = create_stack(batch)
    assert env["serviceEnvironmentArn"] == "arn:aws:batch:us-east-1:123456789012:service-environment/gpu"
    assert policy["arn"] == "arn:aws:batch:us-east-1:123456789012:scheduling-policy/quota"
    assert arns["A"] == "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/A"
    described = batch.describe_job_queues(jobQueues=["training"])["jobQueues"][0]
    assert (described["status"], described["state"], described["jobQueueType"]) == ("VALID", "ENABLED",
                                                                                     "SAGEMAKER_TRAINING")
    share = batch.describe_quota_share(quotaShareArn=arns["A"])
    assert share["resourceSharingConfiguration"] == {"strategy": "LEND_AND_BORROW", "borrowLimit": 100}
    assert share["tags"] == {"team": "A"}
    listed = batch.list_quota_shares(jobQueue="training")["quotaShares"]
    assert [s["quotaShareName"] for s in listed] == ["A", "B"]
    assert all("tags" not in s for s in listed)  # ListQuotaShares carries no tags
    assert batch.list_tags_for_resource(resourceArn=arns["B"])["tags"] == {"team": "B"}

def test_resources_go_through_creating_updating_deleting(tmp_path):
    from policy_engine.adapters.endpoint.server import start_in_thread
    from policy_engine.adapters.endpoint.service import Options, Service

    with start_in_thread(Service(Options(speed=0, transition_seconds=30))) as running:
        batch = client(running)
        env = batch.create_service_environment(serviceEnvironmentName="gpu",
                                               serviceEnvironmentType="SAGEMAKER_TRAINING",
                                               capacityLimits=[{"maxCapacity": 2, "capacityUnit": INSTANCE}])
        assert batch.describe_service_environments()["serviceEnvironments"][0]["status"] == "CREATING"
        policy = batch.create_scheduling_policy(name="q", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
        batch.create_job_queue(jobQueueName="training", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                               schedulingPolicyArn=policy["arn"],
                               serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "gpu"}])
        _, _, message = error_of(
            batch.create_quota_share, quotaShareName="A", jobQueue="training",
            capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
            resourceSharingConfiguration={"strategy": "RESERVE"}, preemptionConfiguration={"inSharePreemption":
                                                                                            "DISABLED"})
        assert "CREATING" in message and "VALID" in message
        running.advance(30)
        assert batch.describe_job_queues()["jobQueues"][0]["status"] == "VALID"
        batch.create_quota_share(quotaShareName="A", jobQueue="training",
                                 capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
                                 resourceSharingConfiguration={"strategy": "RESERVE"},
                                 preemptionConfiguration={"inSharePreemption": "DISABLED"})
        _, _, message = error_of(submit, batch, "early", "A")
        assert "CREATING" in message  # a share takes jobs once VALID
        running.advance(30)
        job = submit(batch, "j", "A")
        batch.update_service_environment(serviceEnvironment=env["serviceEnvironmentArn"], state="DISABLED")
        assert batch.describe_service_environments()["serviceEnvironments"][0]["status"] == "UPDATING"
        running.advance(30)
        assert batch.describe_service_environments()["serviceEnvironments"][0]["status"] == "VALID"
        _, _, message = error_of(batch.delete_service_environment, serviceEnvironment="gpu")
        assert "used by job queue(s) training" in message
        batch.update_job_queue(jobQueue="training", state="DISABLED")
        running.advance(30)
        batch.delete_job_queue(jobQueue="training")
        assert batch.describe_job_queues()["jobQueues"][0]["status"] == "DELETING"
        running.advance(30)
        assert batch.describe_job_queues()["jobQueues"] == []
        # a new queue of the same name starts without the old one's jobs
        batch.create_job_queue(jobQueueName="training", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                               schedulingPolicyArn=policy["arn"],
                               serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "gpu"}])
        running.advance(30)
        assert batch.list_service_jobs(jobQueue="training", jobStatus="FAILED")["jobSummaryList"] == []
        assert batch.describe_service_job(jobId=job)["status"] == "FAILED"  # still described

def test_policy_engine_rules_and_shape_constraints_are_enforced(endpoint):
    batch = client(endpoint)
    create_stack(batch)

    def share(name, **overrides):
        args = dict(quotaShareName=name, jobQueue="training",
                    capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
                    resourceSharingConfiguration={"strategy": "RESERVE"},
                    preemptionConfiguration={"inSharePreemption": "DISABLED"}) | overrides
        return batch.create_quota_share(**args)

    _, status, message = error_of(share, "C", resourceSharingConfiguration={"strategy": "LEND", "borrowLimit": 50})
    assert status == 400 and "borrowLimit is only valid with the LEND_AND_BORROW" in message
    _, _, message = error_of(share, "C", resourceSharingConfiguration={"strategy": "BORROW"})
    assert "Member must satisfy enum value set: [RESERVE, LEND, LEND_AND_BORROW]" in message
    _, _, message = error_of(share, "C", capacityLimits=[{"maxCapacity": 0, "capacityUnit": INSTANCE}])
    assert "maxCapacity" in message and "at least 1" in message
    _, _, message = error_of(share, "bad name!")
    assert "1-128 letters" in message
    _, _, message = error_of(batch.tag_resource, resourceArn=batch.describe_job_queues()["jobQueues"][0][
        "jobQueueArn"], tags={f"k{i}": "v" for i in range(51)})
    assert "less than or equal to 50" in message
    for index in range(18):  # 2 shares exist: up to 20 is fine
        share(f"S{index}")
    _, _, message = error_of(share, "S21")
    assert "BQ106" in message and "20" in message
    # one queue per quota-managed service environment (BQ107)
    policy = batch.list_scheduling_policies()["schedulingPolicies"][0]["arn"]
    _, _, message = error_of(batch.create_job_queue, jobQueueName="second", priority=1,
                             jobQueueType="SAGEMAKER_TRAINING", schedulingPolicyArn=policy,
                             serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "gpu"}])
    assert "BQ107" in message
    # a quota share policy never becomes a fair-share policy
    _, _, message = error_of(batch.update_scheduling_policy, arn=policy, fairsharePolicy={"shareDecaySeconds": 60})
    assert "cannot become a fair-share policy" in message
    # jobs: an instance type the share lacks, a DISABLED share, a queue's quota share is required
    _, _, message = error_of(batch.submit_service_job, jobName="x", jobQueue="training",
                             serviceJobType="SAGEMAKER_TRAINING", quotaShareName="A",
                             serviceRequestPayload=payload(instance_type="ml.p4d.24xlarge"))
    assert "no capacity limit for ml.p4d.24xlarge" in message
    _, _, message = error_of(batch.submit_service_job, jobName="x", jobQueue="training",
                             serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload=payload())
    assert "quotaShareName is required" in message
    _, _, message = error_of(batch.submit_service_job, jobName="x", jobQueue="training", quotaShareName="A",
                             serviceJobType="SAGEMAKER_TRAINING", serviceRequestPayload="{not json")
    assert "serviceRequestPayload is not valid JSON" in message

def test_operations_outside_the_subset_get_a_client_exception(endpoint):
    batch = client(endpoint)
    for call, kwargs in ((batch.describe_compute_environments, {}), (batch.list_jobs, {"jobQueue": "q"}),
                         (batch.submit_job, {"jobName": "j", "jobQueue": "q", "jobDefinition": "d"})):
        code, status, message = error_of(call, **kwargs)
        assert (code, status) == ("ClientException", 400)
        assert "is not supported by batch-quota serve" in message

def test_tags_route_on_the_raw_path_for_every_arn_kind(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    job = submit(batch, "tagged", "QS1", tags={"a": "1"})
    arns = [batch.describe_service_job(jobId=job)["jobArn"],
            "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/QS2",
            "arn:aws:batch:us-east-1:123456789012:job-queue/training",
            "arn:aws:batch:us-east-1:123456789012:service-environment/gpu-env"]
    for arn in arns:
        batch.tag_resource(resourceArn=arn, tags={"owner": "ml", "cost": "x"})
        batch.untag_resource(resourceArn=arn, tagKeys=["cost"])
        tags = batch.list_tags_for_resource(resourceArn=arn)["tags"]
        assert tags.get("owner") == "ml" and "cost" not in tags
    assert batch.describe_service_job(jobId=job)["tags"] == {"a": "1", "owner": "ml"}
    code, _, message = error_of(batch.list_tags_for_resource,
                                resourceArn="arn:aws:batch:us-east-1:123456789012:job-queue/nope/quota-share/X")
    assert code == "ClientException" and "does not exist" in message

def test_a_bug_in_the_endpoint_is_a_server_exception(endpoint, monkeypatch):
    from policy_engine.adapters.endpoint import operations

    def broken(service, params):
        raise RuntimeError("boom")

    monkeypatch.setitem(operations.HANDLERS, "ListSchedulingPolicies", broken)
    code, status, message = error_of(client(endpoint).list_scheduling_policies)
    assert (code, status) == ("ServerException", 500) and "RuntimeError: boom" in message
