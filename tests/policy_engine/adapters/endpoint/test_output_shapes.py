"""Every implemented operation's responses, as botocore parsed them, conform to the operation's output shape."""

from __future__ import annotations

from botocore.validate import ParamValidator

from policy_engine.adapters.endpoint.operations import HANDLERS
from tests.policy_engine.adapters.endpoint.conftest import client, create_stack, submit


def enum_problems(shape, value, path="") -> list[str]:
    """botocore's validator checks required members and types; enums are checked here."""
    problems = []
    kind = shape.type_name
    if kind == "structure":
        for name, item in value.items():
            problems += enum_problems(shape.members[name], item, f"{path}.{name}")
    elif kind == "list":
        for index, item in enumerate(value):
            problems += enum_problems(shape.member, item, f"{path}[{index}]")
    elif kind == "map":
        for key, item in value.items():
            problems += enum_problems(shape.value, item, f"{path}.{key}")
    elif kind == "string" and shape.enum and value not in shape.enum:
        problems.append(f"{path}: {value!r} not in {shape.enum}")
    return problems


def exercise_every_operation(endpoint, batch) -> None:
    env, policy, queue, shares = create_stack(batch)
    batch.describe_service_environments()
    batch.describe_service_environments(serviceEnvironments=["gpu"], maxResults=1)
    batch.update_service_environment(serviceEnvironment="gpu", capacityLimits=[{"maxCapacity": 5,
                                                                                "capacityUnit": "ml.g5.xlarge"}])
    batch.describe_scheduling_policies(arns=[policy["arn"]])
    batch.list_scheduling_policies()
    batch.update_scheduling_policy(arn=policy["arn"], quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    batch.describe_job_queues()
    batch.update_job_queue(jobQueue="training", priority=2)
    batch.describe_quota_share(quotaShareArn=shares["A"])
    batch.list_quota_shares(jobQueue="training")
    batch.update_quota_share(quotaShareArn=shares["A"], resourceSharingConfiguration={"strategy": "LEND_AND_BORROW",
                                                                                       "borrowLimit": -1})
    jobs = [submit(batch, f"j{i}", "A", priority=i, tags={"batch-quota:duration": "100"}) for i in range(6)]
    endpoint.advance(5)
    batch.submit_service_job(jobName="b", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                             serviceRequestPayload='{"ResourceConfig": {"InstanceType": "ml.g5.xlarge"}}',
                             quotaShareName="B", retryStrategy={"attempts": 2},
                             preemptionConfiguration={"preemptionRetriesBeforeTermination": 3},
                             timeoutConfig={"attemptDurationSeconds": 600}, clientToken="token-1")
    batch.update_service_job(jobId=jobs[0], schedulingPriority=9)
    for status in ("RUNNING", "RUNNABLE", "SUCCEEDED", "FAILED"):
        batch.list_service_jobs(jobQueue="training", jobStatus=status)
    for job in jobs:
        batch.describe_service_job(jobId=job)
    batch.get_job_queue_snapshot(jobQueue="training")
    batch.terminate_service_job(jobId=jobs[1], reason="test")
    batch.terminate_service_jobs(jobs=[jobs[2], "missing", " bad"], reason="test")
    endpoint.advance(3700)
    for job in jobs:
        batch.describe_service_job(jobId=job)
    batch.list_service_jobs(jobQueue="training", filters=[{"name": "JOB_NAME", "values": ["j*"]}])
    batch.tag_resource(resourceArn=queue["jobQueueArn"], tags={"k": "v"})
    batch.list_tags_for_resource(resourceArn=queue["jobQueueArn"])
    batch.untag_resource(resourceArn=queue["jobQueueArn"], tagKeys=["k"])
    batch.update_quota_share(quotaShareArn=shares["B"], state="DISABLED")
    batch.delete_quota_share(quotaShareArn=shares["B"])
    batch.update_job_queue(jobQueue="training", state="DISABLED")
    batch.delete_job_queue(jobQueue="training")
    batch.delete_scheduling_policy(arn=policy["arn"])
    batch.update_service_environment(serviceEnvironment="gpu", state="DISABLED")
    batch.delete_service_environment(serviceEnvironment=env["serviceEnvironmentArn"])
    batch.describe_job_queues()


def test_every_implemented_operation_answers_in_its_output_shape(endpoint):
    batch = client(endpoint)
    seen: dict[str, int] = {}
    problems: list[str] = []
    validator = ParamValidator()

    def check(http_response, parsed, model, **_):
        assert http_response.status_code == 200, (model.name, parsed)
        seen[model.name] = seen.get(model.name, 0) + 1
        body = {key: value for key, value in parsed.items() if key != "ResponseMetadata"}
        shape = model.output_shape
        if shape is None:
            assert body == {}
            return
        report = validator.validate(body, shape)
        if report.has_errors():
            problems.append(f"{model.name}: {report.generate_report()}")
        problems.extend(f"{model.name}{line}" for line in enum_problems(shape, body))

    batch.meta.events.register("after-call.batch", check)
    exercise_every_operation(endpoint, batch)
    assert problems == []
    assert set(HANDLERS) - set(seen) == set()
