"""``snapshot``: a live queue as a scenario; ``simulate`` continues from it with the reclaim the rules predict."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from policy_engine.adapters.aws.clients import Api
from policy_engine.adapters.aws.snapshot import take_snapshot
from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.simulation.results.records import simulate
from policy_engine.simulation.scenarios.workload import load_scenario
from tests.policy_engine.adapters.aws.fake_account import FakeAccount, arn, service_job, short, topology_template

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
    assert rows["qs2-job"]["duration"] == 1800 and rows["qs2-job"]["status"] == "RUNNABLE"
    assert "started_at" not in rows["qs2-job"] and "remaining" not in rows["qs2-job"]
    assert [short(row["name"]) for row in snapshot.jobs] == ["qs1-high", "qs1-med", "qs1-low", "qs2-job"]
    assert snapshot.estimates[0].startswith("max-runtime") and snapshot.estimates[1].startswith("assumed")
    assert "preempted 1 time(s) so far" in snapshot.estimates[1]
    assert snapshot.cross_check == ["GetJobQueueSnapshot agrees with the listed jobs: usage of its top 1 share(s) "
                                    "and front of queue (2 job(s))"]
    assert snapshot.violations == []
    assert api.calls["ListServiceJobs"] == 6 and api.calls["DescribeServiceJob"] == 4


def test_snapshot_then_simulate_continues_with_the_reclaim(stubbed, account, tmp_path, monkeypatch):
    _, stubber = stubbed
    monkeypatch.setattr("policy_engine.cli.commands.snapshot.now_ms", lambda: NOW)
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
    assert result.stderr.strip() == ("error: DescribeJobQueues (job queue cpu): cannot be snapshotted: "
                                     "job queue type ECS, not SAGEMAKER_TRAINING")


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


def test_a_queue_that_does_not_exist_is_named_once(stubbed):
    _, stubber = stubbed
    stubber.add_response("describe_job_queues", {"jobQueues": []}, {"jobQueues": ["nosuch"]})
    result = CliRunner().invoke(main, ["snapshot", "--queue", "nosuch"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: DescribeJobQueues (job queue nosuch): no such job queue in Region us-east-1"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_assume_remaining_refuses_non_finite_numbers(value):
    result = CliRunner().invoke(main, ["snapshot", "--queue", "training", "--assume-remaining", value])
    assert result.exit_code == 2
    assert "--assume-remaining" in result.stderr and "not a finite number" in result.stderr
    assert "Traceback" not in result.output


def test_an_unwritable_output_is_one_line_and_exit_2(stubbed, account, tmp_path):
    _, stubber = stubbed
    stub_snapshot(stubber, account, live_jobs())
    out = tmp_path / "no" / "such" / "dir" / "snapshot.yaml"
    result = CliRunner().invoke(main, ["snapshot", "--queue", "training", "--workers", "1", "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (f"error: {out}: cannot write the output file: "
                                                      "No such file or directory")


def _history_csv(tmp_path, rows: list[tuple[str, float]], header: str = "name,share,duration,observed_status"):
    path = tmp_path / "history.csv"
    path.write_text("\n".join([header] + [f"j{i},{share},{duration},SUCCEEDED"
                                           for i, (share, duration) in enumerate(rows)]) + "\n")
    return path


def test_history_estimates_come_from_this_queue_only_and_an_outlived_median_falls_back(stubbed, account, tmp_path):
    from policy_engine.adapters.aws.history import share_medians

    path = _history_csv(tmp_path, [("other/QS1", 99_999), ("other/QS1", 99_999), ("training/QS1", 450),
                                   ("training/QS1", 450), ("training/QS1", 450)])
    assert share_medians(str(path), "training") == {"QS1": 450}
    client, stubber = stubbed
    stub_snapshot(stubber, account, live_jobs())
    snapshot = take_snapshot(Api(client), "training", NOW, assume_remaining=900,
                             per_share_estimate=share_medians(str(path), "training"), workers=1)
    rows = {short(row["name"]): (row, estimate)
            for row, estimate in zip(snapshot.jobs, snapshot.estimates, strict=True)}
    high, high_estimate = rows["qs1-high"]  # ran 500 s, median 450 s: the payload's upper bound takes over
    assert high["remaining"] == 3100 and high_estimate.startswith("max-runtime")
    assert "ran 8m 20s, past its share's history median 7m 30s" in high_estimate
    med, med_estimate = rows["qs1-med"]  # ran 400 s < 450 s: the median applies
    assert med["remaining"] == 50 and med_estimate.startswith("history")


def test_a_history_csv_with_a_wrong_header_or_no_row_of_the_queue_is_exit_2(tmp_path):
    wrong = _history_csv(tmp_path, [("training/QS1", 450)], header="name,queue,seconds,observed_status")
    result = CliRunner().invoke(main, ["snapshot", "--queue", "training", "--history", str(wrong)])
    assert result.exit_code == 2 and "no column share, duration" in result.stderr
    other = _history_csv(tmp_path, [("other/QS1", 450)])
    result = CliRunner().invoke(main, ["snapshot", "--queue", "training", "--history", str(other)])
    assert result.exit_code == 2 and "no SUCCEEDED job of job queue training" in result.stderr


def test_an_impossible_live_state_is_reported_at_snapshot_time(stubbed, account, tmp_path, monkeypatch):
    _, stubber = stubbed
    monkeypatch.setattr("policy_engine.cli.commands.snapshot.now_ms", lambda: NOW)
    jobs = [service_job("huge", "QS1", "RUNNING", instances=5, created_ms=NOW - 600_000, started_ms=NOW - 500_000)]
    stub_snapshot(stubber, account, jobs, utilisation=[
        {"quotaShareName": "QS1", "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 5.0}]}])
    out = tmp_path / "snapshot.yaml"
    result = CliRunner().invoke(main, ["snapshot", "--queue", "training", "--workers", "1", "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "impossible state: 5 ml.g5.xlarge on capacity, above the service environment's 3" in result.stderr
    assert "# impossible state: 5 ml.g5.xlarge on capacity" in out.read_text()


def test_the_cross_check_needs_evidence_to_agree(stubbed, account):
    client, stubber = stubbed
    account.stub_import(stubber, queues=["training"])
    running, runnable = live_jobs()[0], live_jobs()[3]
    for status in STATUSES:
        summaries = [job[0] for job in (running, runnable) if job[0]["status"] == status]
        stubber.add_response("list_service_jobs", {"jobSummaryList": summaries},
                             {"jobQueue": "training", "jobStatus": status})
    for summary, described in (running, runnable):
        stubber.add_response("describe_service_job", described, {"jobId": summary["jobId"]})
    stubber.add_response("get_job_queue_snapshot", {"frontOfQueue": {"jobs": [], "lastUpdatedAt": NOW},
                                                    "queueUtilization": {"lastUpdatedAt": NOW}},
                         {"jobQueue": "training"})
    snapshot = take_snapshot(Api(client), "training", NOW, assume_remaining=900, workers=1)
    assert snapshot.cross_check == [
        "GetJobQueueSnapshot reports no utilisation, but 1 instance(s) of listed jobs are on capacity "
        "(jobs changed state while reading?)",
        f"1 listed RUNNABLE job(s) are missing from GetJobQueueSnapshot's front of job queue training "
        f"(first: {runnable[0]['jobArn']}; jobs changed state while reading?)",
    ]


def test_snapshot_pages_through_list_service_jobs(stubbed, account):
    client, stubber = stubbed
    account.stub_import(stubber, queues=["training"])
    runnable = [service_job(f"wait{i:03d}", "QS1", "RUNNABLE", created_ms=NOW - 100_000 + i,
                            job_id=f"00000000-0000-0000-0000-{i:012d}") for i in range(150)]
    for status in STATUSES:
        if status == "RUNNABLE":
            stubber.add_response("list_service_jobs", {"jobSummaryList": [s for s, _ in runnable[:100]],
                                                       "nextToken": "page-2"},
                                 {"jobQueue": "training", "jobStatus": status})
            stubber.add_response("list_service_jobs", {"jobSummaryList": [s for s, _ in runnable[100:]]},
                                 {"jobQueue": "training", "jobStatus": status, "nextToken": "page-2"})
        else:
            stubber.add_response("list_service_jobs", {"jobSummaryList": []},
                                 {"jobQueue": "training", "jobStatus": status})
    for summary, described in runnable:
        stubber.add_response("describe_service_job", described, {"jobId": summary["jobId"]})
    stubber.add_response("get_job_queue_snapshot", {
        "frontOfQueue": {"jobs": [{"jobArn": s["jobArn"], "earliestTimeAtPosition": NOW} for s, _ in runnable[:100]],
                         "lastUpdatedAt": NOW}}, {"jobQueue": "training"})
    api = Api(client)
    snapshot = take_snapshot(api, "training", NOW, assume_remaining=900, workers=1)
    assert len(snapshot.jobs) == 150 and api.calls["ListServiceJobs"] == 7
    assert [short(row["name"]) for row in snapshot.jobs[:2]] == ["wait000", "wait001"]
    assert snapshot.cross_check == ["GetJobQueueSnapshot agrees with the listed jobs: front of queue (100 job(s))"]
