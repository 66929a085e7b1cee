"""The whole stack with boto3 over HTTP: jobs, filters, pagination, priority, terminate, snapshot."""

from __future__ import annotations

from botocore.exceptions import ClientError

from tests.policy_engine.adapters.endpoint.conftest import INSTANCE, client, create_stack, error_of, payload, submit


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
    # B reclaims: a job of B preempts one of A's borrowed jobs
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
    # the two highest priorities run (own + QS2's): j2 (3) took j0's (1) place by in-share preemption at
    # its submission; 2 then 1 wait in priority order
    assert front == [ids[3], ids[0]]
    assert [arn_of[j["jobArn"]] for j in snapshot["frontOfQuotaShares"]["quotaShares"]["QS1"]] == front
    usage = snapshot["queueUtilization"]
    assert usage["totalCapacityUsage"] == [{"capacityUnit": INSTANCE, "quantity": 2.0}]
    assert usage["quotaShareUtilization"]["topCapacityUtilization"] == [
        {"quotaShareName": "QS1", "capacityUsage": [{"capacityUnit": INSTANCE, "quantity": 2.0}]}]

def test_terminate_service_jobs_reports_each_job_as_aws_documents(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    running, waiting, other = (submit(batch, name, "QS1", priority=p) for name, p in (("a", 3), ("b", 2), ("c", 1)))
    walkthrough_endpoint.advance(5)
    done = batch.terminate_service_jobs(jobs=[running, waiting, "no-such-job", " bad id"], reason="cleanup")
    assert done["successful"] == [running, waiting, "no-such-job"]  # not found counts as processed
    assert [(e["job"], e["code"]) for e in done["errors"]] == [(" bad id", "ValidationException")]
    for job in (running, waiting):
        terminated = batch.describe_service_job(jobId=job)
        assert (terminated["status"], terminated["statusReason"]) == ("FAILED", "Terminated by user: cleanup")
    assert batch.describe_service_job(jobId=other)["status"] == "RUNNING"  # took the freed instance
    code, status, message = error_of(batch.terminate_service_jobs, jobs=[running] * 51, reason="too many")
    assert (code, status) == ("ClientException", 400) and "1-50" in message

def test_submit_rate_limit_is_emulated_only_when_asked():
    from policy_engine.adapters.endpoint.server import start_in_thread
    from policy_engine.adapters.endpoint.service import Options, RateLimiter, Service
    from policy_engine.inputs.examples import example_topology

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

    from policy_engine.adapters.endpoint.server import start_in_thread
    from policy_engine.adapters.endpoint.service import Options, Service
    from policy_engine.inputs.examples import example_topology
    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.scenarios.workload import load_scenario

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

def test_a_client_token_makes_submission_idempotent(walkthrough_endpoint):
    batch = client(walkthrough_endpoint)
    first = submit(batch, "once", "QS1", clientToken="token-a")
    assert submit(batch, "once", "QS1", clientToken="token-a") == first
    _, _, message = error_of(submit, batch, "other", "QS1", clientToken="token-a")
    assert "already used" in message
    assert len(batch.list_service_jobs(jobQueue="training", jobStatus="RUNNING")["jobSummaryList"]) == 1


def test_the_clock_cannot_be_advanced_past_what_its_timestamps_hold(endpoint):
    import pytest

    batch = client(endpoint)
    create_stack(batch)
    submit(batch, "before", "A")
    start = endpoint.clock()
    # 253402300800 s is under the old 1e13 s cap, but from the account's start it passes year 9999
    for seconds in ("1e308", "10000000000001", "253402300800"):
        with pytest.raises(ValueError, match=r"would reach 9999-12-31T23:59:59.* or later"):
            endpoint.control("POST", f"clock/advance?seconds={seconds}")
    assert endpoint.clock() == start  # refused: nothing moved, and the clock still answers
    # up to the latest second every call that shows a date still answers
    latest = endpoint.service.latest
    endpoint.advance(latest - 10 - start)
    submit(batch, "after", "A", tags={"batch-quota:duration": "5"})
    assert endpoint.advance(10) == latest
    assert [j["jobName"] for j in batch.list_service_jobs(jobQueue="training", jobStatus="SUCCEEDED")[
        "jobSummaryList"]] == ["after", "before"]
    assert batch.get_job_queue_snapshot(jobQueue="training")["frontOfQueue"]
    assert endpoint.export()["time"] == latest
    with pytest.raises(ValueError, match="would reach 9999-12-31"):
        endpoint.advance(1)
    # a job that would end after it is refused, as a 400
    code, status, message = error_of(submit, batch, "late", "A")
    assert (code, status) == ("ClientException", 400) and "would reach 9999-12-31" in message
