"""``history``: finished jobs streamed to the workload CSV, observed columns, replay with calibration."""

from __future__ import annotations

import csv
import io
import json
import os
import tracemalloc

import pytest
from botocore.stub import Stubber
from click.testing import CliRunner

from policy_engine.adapters.aws.clients import Api
from policy_engine.adapters.aws.history import COLUMNS, parse_since, share_medians, write_history
from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.simulation.scenarios.workload import Extras, load_jobs
from tests.policy_engine.adapters.aws.fake_account import batch_client
from tests.policy_engine.adapters.aws.lazy_jobs import LazyHistory

START = 1_780_000_000_000


def _history(jobs: int, since_ms: int = START) -> tuple[str, object]:
    client = batch_client()
    stubber = Stubber(client)
    LazyHistory(client, stubber, jobs, START, since_ms=since_ms)
    out = io.StringIO()
    with stubber:
        stats = write_history(Api(client), "training", since_ms, out, workers=1)
        stubber.assert_no_pending_responses()
    return out.getvalue(), stats


def test_rows_are_the_workload_columns_plus_what_was_observed():
    text, stats = _history(4)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == COLUMNS
    assert stats.written == 4 and stats.outside_window == 0
    # AWS lists newest first; the workload is oldest first, so jobs of one instant keep their order
    assert [r["name"][:9] for r in rows] == ["job000000", "job000001", "job000002", "job000003"]
    first = rows[0]
    assert first["name"] == "job000000-00000000-0000-0000-0000-000000000000"
    assert (first["share"], first["priority"], first["instance_type"], first["instances"]) == \
        ("training/QS1", "0", "ml.g5.xlarge", "1")
    assert (first["submit_at"], first["duration"], first["duration_known"]) == ("0", "600", "true")  # its run time
    assert first["submitted_epoch_ms"] == str(START) and rows[1]["submit_at"] == "60"  # time 0: the first one
    assert (first["observed_start"], first["observed_end"], first["observed_preemptions"],
            first["observed_status"]) == ("30", "630", "0", "SUCCEEDED")
    assert [r["observed_status"] for r in rows] == ["SUCCEEDED", "SUCCEEDED", "FAILED", "FAILED"]
    # a failed job's last attempt did not finish: the longest attempt is a lower bound (MaxRuntimeSeconds is only an
    # upper bound in AWS)
    assert (rows[2]["duration"], rows[2]["duration_known"]) == ("598", "false")
    assert stats.duration_unknown == 2 and stats.by_status == {"SUCCEEDED": 2, "FAILED": 2}


def test_the_window_is_applied_by_aws_not_by_paging_through_everything():
    client = batch_client()
    stubber = Stubber(client)
    LazyHistory(client, stubber, 1000, START, since_ms=START + 995 * 60_000)
    api = Api(client)
    out = io.StringIO()
    with stubber:
        stats = write_history(api, "training", START + 995 * 60_000, out, workers=1)
        stubber.assert_no_pending_responses()
    assert stats.listed == 5 and stats.outside_window == 0 and stats.written == 5
    assert api.calls["ListServiceJobs"] == 1 and api.calls["DescribeServiceJob"] == 5  # not 10 pages
    assert len(out.getvalue().splitlines()) == 6


def test_the_workload_loader_reads_it_and_simulate_reports_observed_beside_simulated(tmp_path):
    text, _ = _history(30)
    jobs_csv = tmp_path / "jobs.csv"
    jobs_csv.write_text(text)
    extras = Extras()
    jobs = load_jobs(jobs_csv, example_topology(), extras)
    assert len(jobs) == 30 and len(extras.observed) == 30 and not extras.live
    scenario = tmp_path / "replay.yaml"
    scenario.write_text("topology: topology.yaml\njobs: jobs.csv\n")
    (tmp_path / "topology.yaml").write_text(_example_yaml())
    result = CliRunner().invoke(main, ["simulate", str(scenario), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = sorted(json.loads(result.output)["observed_vs_simulated"], key=lambda row: row["share"])
    assert [row["share"] for row in rows] == ["training/QS1", "training/QS2", "training/QS3"]
    assert all(row["jobs"] == 10 for row in rows)
    assert rows[0]["observed_first_start_wait_p50"] == 33 and rows[0]["observed_preemptions"] == 5
    text_report = CliRunner().invoke(main, ["simulate", str(scenario)])
    assert "Observed vs simulated" in text_report.output
    markdown = CliRunner().invoke(main, ["simulate", str(scenario), "--format", "markdown"]).output
    assert "| training/QS1 | 10 | 33s |" in markdown


def _example_yaml() -> str:
    from policy_engine.inputs.examples import EXAMPLE_YAML

    return EXAMPLE_YAML.read_text()


def test_ctrl_c_in_the_middle_leaves_no_file(monkeypatch, tmp_path):
    client = batch_client()
    stubber = Stubber(client)
    described = []

    class Interrupted(LazyHistory):
        def _queue_answer(self, params, model, **kwargs):
            if model.name == "DescribeServiceJob":
                described.append(params["jobId"])
                if len(described) == 150:
                    raise KeyboardInterrupt
            super()._queue_answer(params, model, **kwargs)

    Interrupted(client, stubber, 300, START)
    monkeypatch.setattr("policy_engine.cli.commands.aws_options.client_factory", lambda options: client)
    out = tmp_path / "jobs.csv"
    with stubber:
        result = CliRunner().invoke(main, ["history", "--queue", "training", "--since", "3650d", "--workers", "1",
                                           "-o", str(out)])
    assert len(described) == 150
    assert result.exit_code == 130
    assert "interrupted: nothing was written" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_access_denied_on_the_listing_is_one_line(stubbed):
    _, stubber = stubbed
    stubber.add_client_error("list_service_jobs", "AccessDeniedException", "not authorized", 403)
    result = CliRunner().invoke(main, ["history", "--queue", "training"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ListServiceJobs (jobs of job queue training created since ")
    assert result.stderr.endswith("Z): access denied (AccessDeniedException): not authorized "
                                  "(see `batch-quota iam-policy`)\n")


def test_memory_stays_flat_as_the_history_grows():
    """Five times the jobs, the same peak: rows go to the file as they arrive (50,000 in benchmarks/)."""

    def peak(jobs: int) -> int:
        client = batch_client()
        stubber = Stubber(client)
        LazyHistory(client, stubber, jobs, START)
        sink = open("/dev/null", "w")  # noqa: SIM115 - closed below; a real file, not a growing buffer
        tracemalloc.start()
        try:
            with stubber:
                write_history(Api(client), "training", START, sink, workers=1)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            sink.close()

    small, large = peak(200), peak(1000)
    assert large < small * 1.3, (small, large)


def test_since_and_share_medians(tmp_path):
    assert parse_since("30d") == 30 * 86400 and parse_since("12h") == 43200 and parse_since("90") == 90
    text, _ = _history(6)
    path = tmp_path / "jobs.csv"
    path.write_text(text)
    assert share_medians(str(path)) == {"QS1": 600.0, "QS2": 599.0, "QS3": 598.0}  # the SUCCEEDED ones


def test_an_unwritable_output_is_one_line_and_exit_2(stubbed, tmp_path):
    out = tmp_path / "no-such-dir" / "jobs.csv"
    result = CliRunner().invoke(main, ["history", "--queue", "training", "-o", str(out)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.strip() == f"error: {out}: cannot write the output file: No such file or directory"


def test_a_job_that_cannot_be_used_is_counted_with_its_reason_and_the_others_written(stubbed, monkeypatch, tmp_path):
    import time

    from botocore.stub import ANY

    from tests.policy_engine.adapters.aws.fake_account import service_job

    _, stubber = stubbed
    now = int(time.time() * 1000)
    good = service_job("good", "QS1", "RUNNING", created_ms=now - 5000, started_ms=now - 4000, job_id="1" * 8)
    wide = service_job("wide", "QS2", "SUCCEEDED", created_ms=now - 9000, started_ms=now - 8000,
                       stopped_ms=now - 1000, job_id="2" * 8)
    wide[1]["capacityUsage"] = [{"capacityUnit": "ml.g5.xlarge", "quantity": 1.0},
                                {"capacityUnit": "ml.p4d.24xlarge", "quantity": 1.0}]
    stubber.add_response("list_service_jobs", {"jobSummaryList": [good[0], wide[0]]},
                         {"jobQueue": "training", "filters": ANY})
    stubber.add_response("describe_service_job", good[1], {"jobId": "1" * 8})
    stubber.add_response("describe_service_job", wide[1], {"jobId": "2" * 8})
    out = tmp_path / "jobs.csv"
    result = CliRunner().invoke(main, ["history", "--queue", "training", "--since", "1h", "--workers", "1",
                                       "--no-cloudtrail", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "history of training: 1 job(s) since 1h (1 RUNNING)" in result.stderr
    assert ("not exported: 1 job(s): uses several instance types (ml.g5.xlarge, ml.p4d.24xlarge); the simulator "
            "models one per job") in result.stderr
    row = next(csv.DictReader(io.StringIO(out.read_text())))
    assert (row["observed_status"], row["submit_at"], row["observed_start"], row["observed_end"]) == \
        ("RUNNING", "0", "1", "")


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/full"), reason="a device node needs root")
def test_history_onto_a_device_writes_in_place_and_never_replaces_it(monkeypatch, tmp_path):
    """``history -o /dev/full`` once replaced the device with a CSV; a copy of its numbers in the test's folder
    shows the device is written in place: a full one is one line, exit 2, and it stays a device."""
    import stat

    for name, numbers_of, code in (("full", "/dev/full", 2), ("null", "/dev/null", 0)):
        device = tmp_path / name
        os.mknod(device, stat.S_IFCHR | 0o666, os.stat(numbers_of).st_rdev)
        client = batch_client()
        stubber = Stubber(client)
        LazyHistory(client, stubber, 5, START)
        monkeypatch.setattr("policy_engine.cli.commands.aws_options.client_factory",
                            lambda options, client=client: client)
        with stubber:
            result = CliRunner().invoke(main, ["history", "--queue", "training", "--since", "3650d", "--workers",
                                               "1", "-o", str(device)])
        assert result.exit_code == code, result.output
        if code == 2:
            assert result.stderr.strip().splitlines() == [
                f"error: {device}: cannot write the output file: No space left on device"]
        assert stat.S_ISCHR(os.stat(device).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "null"]


def test_a_plan_job_carries_its_plan_arn_and_an_on_demand_job_none(stubbed, tmp_path):
    """The payload's ``ResourceConfig.TrainingPlanArn`` (a CreateTrainingJob field; the Stubber checks the
    DescribeServiceJob answer against the batch model) becomes the row's ``training_plan``, which ``simulate`` resolves
    by the topology plan's ``arn:``."""
    import time

    from botocore.stub import ANY

    from policy_engine.foundation.model import ReservedCapacity, TrainingPlan
    from tests.policy_engine.adapters.aws.fake_account import ACCOUNT, REGION, service_job

    _, stubber = stubbed
    plan = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-plan/night"
    now = int(time.time() * 1000)
    on_plan = service_job("planned", "QS1", "SUCCEEDED", created_ms=now - 9000, started_ms=now - 8000,
                          stopped_ms=now - 2000, job_id="1" * 8)
    payload = json.loads(on_plan[1]["serviceRequestPayload"])
    payload["ResourceConfig"]["TrainingPlanArn"] = plan
    on_plan[1]["serviceRequestPayload"] = json.dumps(payload)
    on_demand = service_job("plain", "QS2", "RUNNING", created_ms=now - 5000, started_ms=now - 4000, job_id="2" * 8)
    stubber.add_response("list_service_jobs", {"jobSummaryList": [on_demand[0], on_plan[0]]},
                         {"jobQueue": "training", "filters": ANY})
    stubber.add_response("describe_service_job", on_demand[1], {"jobId": "2" * 8})
    stubber.add_response("describe_service_job", on_plan[1], {"jobId": "1" * 8})
    out = tmp_path / "jobs.csv"
    result = CliRunner().invoke(main, ["history", "--queue", "training", "--since", "1h", "--workers", "1",
                                       "--no-cloudtrail", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(row["name"][:7], row["training_plan"]) for row in rows] == [("planned", plan), ("plain-2", "")]
    night = TrainingPlan(name="night", arn=plan, instance_type="ml.g5.xlarge",
                         reserved_capacities=(ReservedCapacity(instances=1, start=0, end=86400),))
    jobs = load_jobs(out, example_topology().model_copy(update={"training_plans": (night,)}))
    assert [job.training_plan for job in jobs] == ["night", None]  # by its ARN, the name kept
