"""The whole stack with boto3 over HTTP: resources, jobs, filters, pagination, priority, terminate, snapshot."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.policy_engine.endpoint.conftest import INSTANCE, client, payload, submit

ENV_CAPACITY = 4


def create_stack(batch, shares=(("A", "LEND_AND_BORROW", 2, 100, "DISABLED"), ("B", "LEND", 2, None, "DISABLED"))):
    env = batch.create_service_environment(serviceEnvironmentName="gpu", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                           capacityLimits=[{"maxCapacity": ENV_CAPACITY, "capacityUnit": INSTANCE}])
    policy = batch.create_scheduling_policy(name="quota", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    queue = batch.create_job_queue(jobQueueName="training", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                                   schedulingPolicyArn=policy["arn"],
                                   serviceEnvironmentOrder=[{"order": 1,
                                                             "serviceEnvironment": env["serviceEnvironmentArn"]}])
    arns = {}
    for name, strategy, limit, borrow, preemption in shares:
        sharing = {"strategy": strategy} | ({"borrowLimit": borrow} if borrow is not None else {})
        arns[name] = batch.create_quota_share(
            quotaShareName=name, jobQueue=queue["jobQueueArn"],
            capacityLimits=[{"maxCapacity": limit, "capacityUnit": INSTANCE}], resourceSharingConfiguration=sharing,
            preemptionConfiguration={"inSharePreemption": preemption}, tags={"team": name})["quotaShareArn"]
    return env, policy, queue, arns


def error_of(call, *args, **kwargs) -> tuple[str, int, str]:
    with pytest.raises(ClientError) as caught:
        call(*args, **kwargs)
    response = caught.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Message"]


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


def test_submitted_jobs_run_borrow_and_wait_as_the_simulator_says(endpoint):
    batch = client(endpoint)
    create_stack(batch)
    first = [submit(batch, f"a{i}", "A", priority=i) for i in range(5)]
    statuses = {job: batch.describe_service_job(jobId=job)["status"] for job in first}
    # A: 2 own + 2 borrowed from idle B (borrowLimit 100 %), the fifth waits
    assert sorted(statuses.values()) == ["RUNNABLE", "RUNNING", "RUNNING", "RUNNING", "RUNNING"]
    assert statuses[first[4]] == "RUNNABLE"  # submitted last: the four before it hold A's limit and ceiling
    running = batch.list_service_jobs(jobQueue="training")["jobSummaryList"]  # no status: RUNNING only
    assert {j["jobId"] for j in running} == set(first[:4])
    detail = batch.describe_service_job(jobId=first[3])
    assert detail["capacityUsage"] == [{"capacityUnit": INSTANCE, "quantity": 1.0}]
    assert detail["latestAttempt"]["serviceResourceId"]["name"] == "TrainingJobArn"
    assert detail["startedAt"] == detail["createdAt"]
    # B reclaims: a job of B preempts one of A's borrowed jobs (once they ran the engine's min_runtime, 1 s)
    endpoint.advance(10)
    b = submit(batch, "b0", "B")
    assert batch.describe_service_job(jobId=b)["status"] == "RUNNING"
    preempted = [j for j in first if batch.describe_service_job(jobId=j)["preemptionSummary"]["preemptedAttemptCount"]]
    assert len(preempted) == 1
    victim = batch.describe_service_job(jobId=preempted[0])
    assert victim["status"] == "RUNNABLE"
    assert victim["statusReason"].startswith("CAPACITY") or victim["statusReason"].startswith("BLOCKED")
    recent = victim["preemptionSummary"]["recentPreemptedAttempts"][0]
    assert "Preempted by job b0" in recent["statusReason"] and recent["stoppedAt"] >= recent["startedAt"]


def test_jobs_finish_after_their_duration_tag_max_runtime_or_default(endpoint):
    batch = client(endpoint)
    create_stack(batch)
    tagged = submit(batch, "tagged", "A", tags={"batch-quota:duration": "60"})
    capped = batch.submit_service_job(jobName="capped", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                                      serviceRequestPayload=payload(max_runtime=120), quotaShareName="A")["jobId"]
    default = submit(batch, "default", "A")
    endpoint.advance(60)
    assert [batch.describe_service_job(jobId=j)["status"] for j in (tagged, capped, default)] == [
        "SUCCEEDED", "RUNNING", "RUNNING"]
    endpoint.advance(60)
    assert batch.describe_service_job(jobId=capped)["status"] == "SUCCEEDED"
    endpoint.advance(3600 - 120)
    done = batch.describe_service_job(jobId=default)
    assert done["status"] == "SUCCEEDED" and done["stoppedAt"] - done["startedAt"] == 3600 * 1000


def test_list_filters_and_pagination(endpoint):
    batch = client(endpoint)
    create_stack(batch, shares=(("A", "LEND", 2, None, "DISABLED"), ("B", "LEND", 2, None, "DISABLED")))
    ids = [submit(batch, f"job-{i:03}", "A" if i % 2 else "B") for i in range(150)]
    # every page has at most 100 jobs, newest first, and the pages together are every RUNNABLE job
    pages, token = [], None
    while True:
        kwargs = {"nextToken": token} if token else {}
        page = batch.list_service_jobs(jobQueue="training", jobStatus="RUNNABLE", maxResults=40, **kwargs)
        pages.append([j["jobId"] for j in page["jobSummaryList"]])
        token = page.get("nextToken")
        if not token:
            break
    assert [len(p) for p in pages] == [40, 40, 40, 26]
    flat = [job for page in pages for job in page]
    assert flat == list(reversed(ids[4:]))  # four run (2 + 2), the rest wait
    full = batch.list_service_jobs(jobQueue="training", jobStatus="RUNNABLE")
    assert len(full["jobSummaryList"]) == 100 and "nextToken" in full
    # paginator (botocore's own) over a filter: QUOTA_SHARE_NAME with jobStatus
    paginator = batch.get_paginator("list_service_jobs")
    share_a = [j for p in paginator.paginate(jobQueue="training", jobStatus="RUNNABLE",
                                             filters=[{"name": "QUOTA_SHARE_NAME", "values": ["A"]}])
               for j in p["jobSummaryList"]]
    assert len(share_a) == 73 and {j["quotaShareName"] for j in share_a} == {"A"}
    by_name = batch.list_service_jobs(jobQueue="training", filters=[{"name": "JOB_NAME", "values": ["JOB-01*"]}])
    assert sorted(j["jobName"] for j in by_name["jobSummaryList"]) == [f"job-{i:03}" for i in range(10, 20)]
    exact = batch.list_service_jobs(jobQueue="training", filters=[{"name": "JOB_NAME", "values": ["Job-007"]}])
    assert [j["jobName"] for j in exact["jobSummaryList"]] == ["job-007"]
    created = batch.describe_service_job(jobId=ids[0])["createdAt"]
    after = batch.list_service_jobs(jobQueue="training",
                                    filters=[{"name": "AFTER_CREATED_AT", "values": [str(created - 1)]}])
    assert len(after["jobSummaryList"]) == 100
    endpoint.advance(10)
    late = [submit(batch, f"late-{i}", "A") for i in range(5)]
    late_created = batch.describe_service_job(jobId=late[0])["createdAt"]
    assert late_created == created + 10_000
    after = batch.list_service_jobs(jobQueue="training",
                                    filters=[{"name": "AFTER_CREATED_AT", "values": [str(late_created - 1)]}])
    assert [j["jobId"] for j in after["jobSummaryList"]] == late[::-1] and "nextToken" not in after
    before = [j for p in paginator.paginate(jobQueue="training", filters=[
        {"name": "BEFORE_CREATED_AT", "values": [str(late_created)]}]) for j in p["jobSummaryList"]]
    assert [j["jobId"] for j in before] == ids[::-1]
    code, status, message = error_of(batch.list_service_jobs, jobQueue="training", filters=[
        {"name": "JOB_NAME", "values": ["a"]}, {"name": "QUOTA_SHARE_NAME", "values": ["A"]}])
    assert (code, status) == ("ClientException", 400) and "one filter" in message
    code, _, message = error_of(batch.list_service_jobs, jobQueue="training", maxResults=101)
    assert code == "ClientException" and "between 1 and 100" in message


def test_raising_a_priority_preempts_in_share_and_terminate_frees_capacity(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    high = submit(batch, "high", "QS1", priority=3)
    med = submit(batch, "med", "QS1", priority=2)
    low = submit(batch, "low", "QS1", priority=1)
    assert [batch.describe_service_job(jobId=j)["status"] for j in (high, med, low)] == [
        "RUNNING", "RUNNING", "RUNNABLE"]
    walkthrough_endpoint.advance(10)
    updated = batch.update_service_job(jobId=low, schedulingPriority=4)
    assert updated["jobId"] == low
    raised = batch.describe_service_job(jobId=low)
    assert (raised["status"], raised["schedulingPriority"]) == ("RUNNING", 4)
    preempted = batch.describe_service_job(jobId=med)  # the lowest-priority job of QS1 makes room
    assert preempted["status"] == "RUNNABLE" and preempted["preemptionSummary"]["preemptedAttemptCount"] == 1
    assert "in-share preemption" in preempted["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"]
    batch.terminate_service_job(jobId=high, reason="not needed")
    gone = batch.describe_service_job(jobId=high)
    assert (gone["status"], gone["isTerminated"]) == ("FAILED", True)
    assert gone["statusReason"] == "Terminated by user: not needed"
    assert gone["attempts"][-1]["stoppedAt"] == gone["stoppedAt"]
    # QS1's own instance is free again: the waiting job runs at once
    assert batch.describe_service_job(jobId=med)["status"] == "RUNNING"
    waiting = submit(batch, "waiting", "QS1")
    batch.terminate_service_job(jobId=waiting, reason="changed my mind")
    assert batch.describe_service_job(jobId=waiting)["status"] == "FAILED"
    code, _, message = error_of(batch.update_service_job, jobId=high, schedulingPriority=5)
    assert code == "ClientException" and "FAILED" in message
    code, _, message = error_of(batch.update_service_job, jobId=low, schedulingPriority=10_000)
    assert "9999" in message


def test_job_queue_snapshot_shows_front_of_queue_and_utilisation(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    ids = [submit(batch, f"j{i}", "QS1", priority=p) for i, p in enumerate((1, 5, 3, 2))]
    snapshot = batch.get_job_queue_snapshot(jobQueue="training")
    arn_of = {batch.describe_service_job(jobId=j)["jobArn"]: j for j in ids}
    front = [arn_of[j["jobArn"]] for j in snapshot["frontOfQueue"]["jobs"]]
    assert front == [ids[2], ids[3]]  # the first two run (own + QS2's); 3 then 2 wait in priority order
    assert [arn_of[j["jobArn"]] for j in snapshot["frontOfQuotaShares"]["quotaShares"]["QS1"]] == front
    usage = snapshot["queueUtilization"]
    assert usage["totalCapacityUsage"] == [{"capacityUnit": INSTANCE, "quantity": 2.0}]
    assert usage["quotaShareUtilization"]["topCapacityUtilization"] == [
        {"quotaShareName": "QS1", "capacityUsage": [{"capacityUnit": INSTANCE, "quantity": 2.0}]}]


def test_resources_go_through_creating_updating_deleting(tmp_path):
    from policy_engine.endpoint.server import start_in_thread
    from policy_engine.endpoint.service import Options, Service

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


def test_submit_rate_limit_is_emulated_only_when_asked():
    from policy_engine.endpoint.server import start_in_thread
    from policy_engine.endpoint.service import Options, RateLimiter, Service
    from policy_engine.examples import example_topology

    wall = [0.0]  # the limiter's real-time clock, frozen so the test does not depend on the machine's speed
    service = Service(Options(speed=0, enforce_limits=True), example_topology())
    service.limiter = RateLimiter(5, wall=lambda: wall[0])
    with start_in_thread(service) as running:
        batch = client(running)

        def attempt(index):
            try:
                submit(batch, f"j{index}", "QS1")
                return 200
            except ClientError as error:
                return error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"]

        assert [attempt(i) for i in range(7)] == [200] * 5 + [("TooManyRequestsException", 429)] * 2
        wall[0] += 0.2  # one more token after a fifth of a second
        assert [attempt(i) for i in range(7, 9)] == [200, ("TooManyRequestsException", 429)]
        # the other operations are not limited
        assert batch.list_service_jobs(jobQueue="training", jobStatus="RUNNABLE")["jobSummaryList"]


def test_preemption_in_progress_window_as_aws_shows_it(tmp_path):
    import yaml

    from policy_engine.endpoint.server import start_in_thread
    from policy_engine.endpoint.service import Options, Service
    from policy_engine.examples import example_topology
    from policy_engine.simulation.engine import Engine
    from policy_engine.simulation.workload import load_scenario

    with start_in_thread(Service(Options(speed=0, preemption_seconds=20), example_topology())) as running:
        batch = client(running)
        high, med = submit(batch, "high", "QS1", priority=3), submit(batch, "med", "QS1", priority=2)
        running.advance(100)
        qs2 = submit(batch, "qs2", "QS2")
        victim = batch.describe_service_job(jobId=med)
        assert (victim["status"], victim["statusReason"]) == ("RUNNING", "PREEMPTION_IN_PROGRESS")
        assert batch.describe_service_job(jobId=qs2)["status"] == "SCHEDULED"
        running_now = {j["jobName"] for j in batch.list_service_jobs(jobQueue="training")["jobSummaryList"]}
        assert running_now == {"high", "med"}
        running.advance(19)
        assert batch.describe_service_job(jobId=med)["status"] == "RUNNING"
        running.advance(1)
        victim = batch.describe_service_job(jobId=med)
        assert victim["status"] == "RUNNABLE" and victim["preemptionSummary"]["preemptedAttemptCount"] == 1
        assert victim["attempts"][0]["stoppedAt"] - victim["attempts"][0]["startedAt"] == 120_000
        assert batch.describe_service_job(jobId=qs2)["status"] == "RUNNING"
        assert batch.describe_service_job(jobId=high)["status"] == "RUNNING"
        exported = running.export()
    assert exported["scenario"]["settings"] == {"preemption_delay": 20}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(exported["scenario"]), encoding="utf-8")
    scenario = load_scenario(path)
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
    engine.run(until=120)
    assert {job.spec.name: job.status.value for job in engine.jobs} == {"high": "RUNNING", "med": "RUNNABLE",
                                                                       "qs2": "RUNNING"}


def test_an_attempt_longer_than_its_timeout_fails_and_is_retried(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    job = submit(batch, "slow", "QS3", tags={"batch-quota:duration": "500"}, retryStrategy={"attempts": 2},
                 timeoutConfig={"attemptDurationSeconds": 100})
    walkthrough_endpoint.advance(100)
    retried = batch.describe_service_job(jobId=job)
    assert retried["status"] == "RUNNING" and len(retried["attempts"]) == 2  # the retry runs at once
    assert retried["attempts"][0]["statusReason"] == "Job attempt duration exceeded timeout"
    walkthrough_endpoint.advance(100)
    failed = batch.describe_service_job(jobId=job)
    assert (failed["status"], failed["statusReason"]) == ("FAILED", "Job attempt duration exceeded timeout")
    assert failed["stoppedAt"] - failed["createdAt"] == 200_000
    exported = walkthrough_endpoint.export()["scenario"]["jobs"][0]
    assert (exported["attempts"], exported["failures"], exported["fail_after"]) == (2, 2, 100)


def test_a_share_update_mid_run_keeps_running_jobs_and_starts_waiting_ones(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    running_job = submit(batch, "runs", "QS3", tags={"batch-quota:duration": "100"})
    waiting_job = submit(batch, "waits", "QS3", tags={"batch-quota:duration": "100"})
    walkthrough_endpoint.advance(40)
    share = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/QS3"
    # QS3 (RESERVE) never borrows: only a larger limit of its own (and room in the environment) starts the job
    batch.update_service_environment(serviceEnvironment="gpu-env",
                                     capacityLimits=[{"maxCapacity": 4, "capacityUnit": INSTANCE}])
    batch.update_quota_share(quotaShareArn=share, capacityLimits=[{"maxCapacity": 2, "capacityUnit": INSTANCE}])
    assert batch.describe_service_job(jobId=waiting_job)["status"] == "RUNNING"
    walkthrough_endpoint.advance(60)  # the running job keeps its finish time: 100 s after it started
    done = batch.describe_service_job(jobId=running_job)
    assert done["status"] == "SUCCEEDED" and done["stoppedAt"] - done["startedAt"] == 100_000
    assert batch.describe_service_job(jobId=waiting_job)["status"] == "RUNNING"


def test_a_bug_in_the_endpoint_is_a_server_exception(endpoint, monkeypatch):
    from policy_engine.endpoint import handlers

    def broken(service, params):
        raise RuntimeError("boom")

    monkeypatch.setitem(handlers.HANDLERS, "ListSchedulingPolicies", broken)
    code, status, message = error_of(client(endpoint).list_scheduling_policies)
    assert (code, status) == ("ServerException", 500) and "RuntimeError: boom" in message


def test_a_client_token_makes_submission_idempotent(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    first = submit(batch, "once", "QS1", clientToken="token-a")
    assert submit(batch, "once", "QS1", clientToken="token-a") == first
    _, _, message = error_of(submit, batch, "other", "QS1", clientToken="token-a")
    assert "already used" in message
    assert len(batch.list_service_jobs(jobQueue="training", jobStatus="RUNNING")["jobSummaryList"]) == 1
