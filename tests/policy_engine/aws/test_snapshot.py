"""``snapshot``: a live queue as a scenario; ``simulate`` continues from it with the reclaim the rules predict."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from policy_engine.aws.clients import Api
from policy_engine.aws.snapshot import take_snapshot
from policy_engine.cli import main
from policy_engine.examples import example_topology
from policy_engine.simulation.engine import simulate
from policy_engine.simulation.workload import load_scenario
from tests.policy_engine.aws.fake_account import FakeAccount, arn, service_job, short, topology_template

NOW = 1_780_000_000_000  # epoch ms: the snapshot's time 0
STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING")


@pytest.fixture(scope="module")
def account() -> FakeAccount:
    return FakeAccount.from_template(topology_template(example_topology()))


def live_jobs():
    """AWS's worked example after step 1: QS1's high job on its own instance, med on QS2's, QS2's job waits."""
    return [
        service_job("qs1-high", "QS1", "RUNNING", priority=3, created_ms=NOW - 600_000, started_ms=NOW - 500_000,
                    max_runtime=3600),
        service_job("qs1-med", "QS1", "RUNNING", priority=2, created_ms=NOW - 590_000, started_ms=NOW - 400_000,
                    max_runtime=None, preempted=1, preemption_retries=3),
        service_job("qs2-job", "QS2", "RUNNABLE", priority=1, created_ms=NOW - 1_000, max_runtime=1800,
                    usage_in_payload_only=True),
        service_job("qs1-low", "QS1", "RUNNABLE", priority=1, created_ms=NOW - 580_000, max_runtime=7200),
    ]


def stub_snapshot(stubber, account, jobs, utilisation=None) -> None:
    account.stub_import(stubber, queues=["training"])
    for status in STATUSES:
        summaries = [summary for summary, _ in jobs if summary["status"] == status]
        stubber.add_response("list_service_jobs", {"jobSummaryList": summaries},
                             {"jobQueue": "training", "jobStatus": status})
    active = [job for job in jobs if job[0]["status"] in ("SCHEDULED", "STARTING", "RUNNING")]
    waiting = sorted((job for job in jobs if job not in active), key=lambda job: job[0]["createdAt"])
    for summary, described in active + waiting:
        stubber.add_response("describe_service_job", described, {"jobId": summary["jobId"]})
    front = [{"jobArn": summary["jobArn"], "earliestTimeAtPosition": NOW - 500} for summary, _ in waiting]
    usage = utilisation if utilisation is not None else [
        {"quotaShareName": "QS1", "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}]}]
    stubber.add_response("get_job_queue_snapshot", {
        "frontOfQueue": {"jobs": front, "lastUpdatedAt": NOW},
        "queueUtilization": {"quotaShareUtilization": {"topCapacityUtilization": usage},
                             "totalCapacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}],
                             "lastUpdatedAt": NOW}}, {"jobQueue": "training"})


def test_snapshot_rows_say_where_each_figure_came_from(stubbed, account):
    client, stubber = stubbed
    stub_snapshot(stubber, account, live_jobs())
    api = Api(client)
    snapshot = take_snapshot(api, "training", NOW, assume_remaining=900, workers=1)
    stubber.assert_no_pending_responses()
    rows = {short(row["name"]): row for row in snapshot.jobs}
    assert rows["qs1-high"] == {"name": rows["qs1-high"]["name"], "share": "QS1", "priority": 3,
                                "instance_type": "ml.g5.xlarge", "instances": 1, "duration": 3600,
                                "status": "RUNNING", "started_at": -500, "remaining": 3100}
    assert rows["qs1-med"]["remaining"] == 900 and rows["qs1-med"]["preemption_retries"] == 2
    assert rows["qs2-job"]["duration"] == 1800 and "status" not in rows["qs2-job"]
    assert [short(row["name"]) for row in snapshot.jobs] == ["qs1-high", "qs1-med", "qs1-low", "qs2-job"]
    assert snapshot.estimates[0].startswith("max-runtime") and snapshot.estimates[1].startswith("assumed")
    assert "preempted 1 time(s) so far" in snapshot.estimates[1]
    assert snapshot.cross_check == ["GetJobQueueSnapshot agrees with the listed jobs (top shares' usage, "
                                    "front of queue)"]
    assert api.calls["ListServiceJobs"] == 6 and api.calls["DescribeServiceJob"] == 4


def test_snapshot_then_simulate_continues_with_the_reclaim(stubbed, account, tmp_path, monkeypatch):
    _, stubber = stubbed
    monkeypatch.setattr("policy_engine.commands.snapshot.now_ms", lambda: NOW)
    stub_snapshot(stubber, account, live_jobs())
    out = tmp_path / "snapshot.yaml"
    taken = CliRunner().invoke(main, ["snapshot", "--queue", "training", "-o", str(out), "--workers", "1",
                                      "--assume-remaining", "900"])
    assert taken.exit_code == 0, taken.output
    assert "2 job(s) on capacity, 2 waiting" in taken.stderr
    assert "# remaining: assumed (--assume-remaining)" in out.read_text()
    scenario = load_scenario(out)
    assert set(scenario.live) == {j.name for j in scenario.jobs if j.name.startswith("qs1-high")
                                  or j.name.startswith("qs1-med")}
    result = simulate(scenario.topology, scenario.jobs, live=scenario.live, until=0)
    by = {short(record.name): record for record in result.jobs}
    # QS2 (a LEND share) claims its own instance back at once: QS1's newest borrowed job is preempted
    assert by["qs2-job"].status == "RUNNING" and by["qs2-job"].wait_seconds == 0
    assert by["qs1-med"].status == "RUNNABLE" and by["qs1-med"].preemptions == 1
    assert by["qs1-high"].status == "RUNNING" and by["qs1-high"].started_at == -500
    assert by["qs1-low"].status == "RUNNABLE"  # QS3 reserves its instance
    ran = CliRunner().invoke(main, ["simulate", str(out), "--format", "json"])
    assert ran.exit_code == 0, ran.output


def test_a_cross_check_disagreement_is_reported(stubbed, account):
    client, stubber = stubbed
    stub_snapshot(stubber, account, live_jobs(), utilisation=[
        {"quotaShareName": "QS1", "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 3.0}]}])
    snapshot = take_snapshot(Api(client), "training", NOW, assume_remaining=900, workers=1)
    assert snapshot.cross_check == ["GetJobQueueSnapshot reports QS1 using 3 ml.g5.xlarge; the listed jobs use 2 "
                                    "(jobs changed state while reading?)"]


def test_a_queue_that_is_not_quota_managed_is_exit_2(stubbed):
    _, stubber = stubbed
    stubber.add_response("describe_job_queues", {"jobQueues": [
        {"jobQueueName": "cpu", "jobQueueArn": arn("job-queue", "cpu"), "state": "ENABLED", "priority": 1,
         "computeEnvironmentOrder": [], "jobQueueType": "ECS", "status": "VALID"}]}, {"jobQueues": ["cpu"]})
    result = CliRunner().invoke(main, ["snapshot", "--queue", "cpu"])
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: DescribeJobQueues (job queue cpu): job queue cpu: job queue type ECS, "
                                     "not SAGEMAKER_TRAINING")


def test_describe_access_denied_names_the_job(stubbed, account, tmp_path):
    _, stubber = stubbed
    jobs = live_jobs()
    account.stub_import(stubber, queues=["training"])
    for status in STATUSES:
        stubber.add_response("list_service_jobs", {"jobSummaryList": [s for s, _ in jobs if s["status"] == status]},
                             {"jobQueue": "training", "jobStatus": status})
    stubber.add_client_error("describe_service_job", "AccessDeniedException", "no", 403,
                             expected_params={"jobId": jobs[0][0]["jobId"]})
    out = tmp_path / "snapshot.yaml"
    result = CliRunner().invoke(main, ["snapshot", "--queue", "training", "--workers", "1", "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: DescribeServiceJob (service job qs1-high ({jobs[0][0]['jobId']})): "
                                    "access denied")
    assert not out.exists()
