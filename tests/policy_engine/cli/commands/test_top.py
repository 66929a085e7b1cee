"""``batch-quota top``: its figures against ``serve`` (one-shot table, JSON, call bounds), its module's imports,
and the live view in a real terminal (tmux)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from botocore.stub import Stubber
from click.testing import CliRunner

from policy_engine.adapters.aws.clients import Api
from policy_engine.adapters.aws.iam_policy import operations
from policy_engine.adapters.aws.queue_figures import PreemptionLog, QueueReader
from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.cli.app import main
from policy_engine.events.sinks import FileSink
from policy_engine.foundation.units import duration_text
from policy_engine.inputs.examples import example_topology
from tests.policy_engine.adapters.endpoint.conftest import client, submit
from tests.policy_engine.adapters.endpoint.conftest import payload as payload_for

TMUX = shutil.which("tmux")
#: Skips on a developer machine without tmux; CI installs it (`make system-deps`), so there it fails instead.
needs_tmux = pytest.mark.skipif(TMUX is None and not os.environ.get("CI"),
                                reason="tmux not installed (make system-deps installs it; CI does)")
ROOT = Path(__file__).resolve().parents[4]
BATCH_QUOTA = str(Path(sys.executable).with_name("batch-quota"))


def reclaimed(running) -> None:
    """Steps 1 and 2 of AWS's notebook: QS1 borrows QS2's instance, then QS2 reclaims it."""
    batch = client(running)
    for name, priority in (("qs1_job_high", 3), ("qs1_job_med", 2), ("qs1_job_low", 1)):
        submit(batch, name, "QS1", priority=priority)
    running.advance(100)
    submit(batch, "qs2_job_1", "QS2", priority=1)


@pytest.fixture
def served(tmp_path, monkeypatch):
    events = tmp_path / "events.jsonl"
    sink = FileSink(str(events))
    with start_in_thread(Service(Options(speed=0), example_topology(), sinks=[sink])) as running:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", running.url)
        yield running, events
    sink.close()


def test_once_as_json_shows_the_reclaim(served):
    running, events = served
    reclaimed(running)
    result = CliRunner().invoke(main, ["top", "--queue", "training", "--once", "--format", "json",
                                       "--events", str(events)])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    rows = {row["share"]: row for row in figures["rows"]}
    assert set(rows) == {"QS1", "QS2", "QS3"}
    assert {name: (row["limit"], row["used"], row["own"], row["borrowed"]) for name, row in rows.items()} == {
        "QS1": (1, 1, 1, 0), "QS2": (1, 1, 1, 0), "QS3": (1, 0, 0, 0)}
    assert rows["QS1"]["preemptions"] == 1 and rows["QS2"]["preemptions"] == 0  # qs1_job_med was reclaimed
    assert rows["QS1"]["waiting"] == 2 and rows["QS1"]["head"]["name"] == "qs1_job_med"
    assert rows["QS1"]["head"]["priority"] == 2 and rows["QS1"]["head"]["age_seconds"] == 100
    assert [job["name"] for job in figures["front"]] == ["qs1_job_med", "qs1_job_low"]
    (total,) = figures["totals"]
    assert (total["instance_type"], total["limit"], total["used"], total["waiting"]) == ("ml.g5.xlarge", 3, 2, 2)
    # at most: 1 snapshot, 1 share list, 1 RUNNABLE page per share with waiting jobs, 1 describe per head, 1 page of
    # SCHEDULED jobs (none here: nothing to describe)
    assert figures["calls"] == {"GetJobQueueSnapshot": 1, "ListQuotaShares": 1, "ListServiceJobs": 2,
                                "DescribeServiceJob": 1}
    assert set(figures["calls"]) <= set(operations(("top",)))  # `iam-policy --command top` grants them


def test_borrowed_and_lent_while_qs1_borrows(served):
    running, _ = served
    batch = client(running)
    for name, priority in (("qs1_job_high", 3), ("qs1_job_med", 2)):
        submit(batch, name, "QS1", priority=priority)
    result = CliRunner().invoke(main, ["top", "--queue", "training", "--once", "--format", "json"])
    rows = {row["share"]: row for row in json.loads(result.output)["rows"]}
    assert (rows["QS1"]["used"], rows["QS1"]["own"], rows["QS1"]["borrowed"]) == (2, 1, 1)
    assert rows["QS2"]["lent"] == 1.0 and rows["QS3"]["lent"] == 0.0  # RESERVE never lends
    assert rows["QS1"]["preemptions"] is None  # no events file: unknown, not zero


def test_once_as_a_table(served):
    running, events = served
    reclaimed(running)
    result = CliRunner().invoke(main, ["top", "--queue", "training", "--events", str(events), "--verbose"])
    assert result.exit_code == 0, result.output
    text = result.output
    for expected in ("QS1", "QS2", "QS3", "LEND_AND_BORROW", "qs1_job_med", "1m 40s", "front of the queue",
                     "per instance type", "calls this refresh: DescribeServiceJob 1, GetJobQueueSnapshot 1"):
        assert expected in text, expected


def test_the_share_list_is_read_once_a_minute(served):
    running, _ = served
    from policy_engine.adapters.aws.clients import ClientOptions, make_client

    clock = [0.0]
    reader = QueueReader(Api(make_client(ClientOptions(endpoint_url=running.url))), "training",
                         clock=lambda: clock[0])
    assert reader.read().calls.get("ListQuotaShares") == 1
    clock[0] = 59.0
    assert "ListQuotaShares" not in reader.read().calls
    clock[0] = 60.0
    assert reader.read().calls.get("ListQuotaShares") == 1


def test_a_share_with_more_waiting_jobs_than_a_page_shows_a_capped_count(served):
    running, _ = served
    batch = client(running)
    for number in range(102):
        submit(batch, f"job-{number}", "QS3")
    result = CliRunner().invoke(main, ["top", "--queue", "training", "--once", "--format", "json"])
    rows = {row["share"]: row for row in json.loads(result.output)["rows"]}
    assert (rows["QS3"]["waiting"], rows["QS3"]["waiting_capped"]) == (100, True)
    table = CliRunner().invoke(main, ["top", "--queue", "training", "--once"]).output
    assert "100+" in table


def test_an_unknown_queue_is_one_line_and_exit_2(served):
    result = CliRunner().invoke(main, ["top", "--queue", "nope", "--once"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: GetJobQueueSnapshot (job queue nope): ")


def test_against_aws_shapes_the_preemption_column_is_unknown():
    """Through botocore's Stubber (requests and responses checked against the service model)."""
    import boto3

    batch = boto3.client("batch", region_name="us-east-1")
    queue = "arn:aws:batch:us-east-1:123456789012:job-queue/training"
    job = "arn:aws:batch:us-east-1:123456789012:service-job/6271dfdf-d8a7-41b1-a4d2-55a2224f5375"
    with Stubber(batch) as stub:
        stub.add_response("get_job_queue_snapshot", {
            "frontOfQueue": {"jobs": [{"jobArn": job, "earliestTimeAtPosition": 1_000_000}],
                             "lastUpdatedAt": 4_600_000},
            "frontOfQuotaShares": {"quotaShares": {"a": [{"jobArn": job, "earliestTimeAtPosition": 1_000_000}]},
                                   "lastUpdatedAt": 4_600_000},
            "queueUtilization": {"quotaShareUtilization": {"topCapacityUtilization": [
                {"quotaShareName": "a", "capacityUsage": [{"capacityUnit": "ml.p5.48xlarge", "quantity": 6.0}]}]},
                "totalCapacityUsage": [{"capacityUnit": "ml.p5.48xlarge", "quantity": 6.0}],
                "lastUpdatedAt": 4_600_000}}, {"jobQueue": queue})
        stub.add_response("list_quota_shares", {"quotaShares": [
            {"quotaShareName": "a", "quotaShareArn": f"{queue}/quota-share/a", "jobQueueArn": queue,
             "capacityLimits": [{"capacityUnit": "ml.p5.48xlarge", "maxCapacity": 4}],
             "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1},
             "preemptionConfiguration": {"inSharePreemption": "DISABLED"}, "state": "ENABLED", "status": "VALID"},
            {"quotaShareName": "b", "quotaShareArn": f"{queue}/quota-share/b", "jobQueueArn": queue,
             "capacityLimits": [{"capacityUnit": "ml.p5.48xlarge", "maxCapacity": 4}],
             "resourceSharingConfiguration": {"strategy": "LEND"},
             "preemptionConfiguration": {"inSharePreemption": "DISABLED"}, "state": "ENABLED", "status": "VALID"},
        ]}, {"jobQueue": queue})
        stub.add_response("list_service_jobs", {"jobSummaryList": [
            {"jobArn": job, "jobId": job.rsplit("/", 1)[1], "jobName": "big", "serviceJobType": "SAGEMAKER_TRAINING",
             "quotaShareName": "a", "status": "RUNNABLE", "createdAt": 1_000_000,
             "capacityUsage": [{"capacityUnit": "ml.p5.48xlarge", "quantity": 2.0}]}], "nextToken": "more"},
            {"jobQueue": queue, "jobStatus": "RUNNABLE", "maxResults": 100,
             "filters": [{"name": "QUOTA_SHARE_NAME", "values": ["a"]}]})
        stub.add_response("describe_service_job", {
            "jobArn": job, "jobId": job.rsplit("/", 1)[1], "jobName": "big", "jobQueue": queue,
            "serviceJobType": "SAGEMAKER_TRAINING", "status": "RUNNABLE", "startedAt": 0, "createdAt": 1_000_000,
            "schedulingPriority": 7, "statusReason": "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY",
            "capacityUsage": [{"capacityUnit": "ml.p5.48xlarge", "quantity": 2.0}]},
            {"jobId": job.rsplit("/", 1)[1]})
        night = job.replace("6271dfdf", "0000dfdf")
        stub.add_response("list_service_jobs", {"jobSummaryList": [
            {"jobArn": night, "jobId": night.rsplit("/", 1)[1], "jobName": "night",
             "serviceJobType": "SAGEMAKER_TRAINING", "quotaShareName": "a", "status": "SCHEDULED",
             "createdAt": 1_000_000,
             "capacityUsage": [{"capacityUnit": "ml.p5.48xlarge", "quantity": 2.0}]}]},
            {"jobQueue": queue, "jobStatus": "SCHEDULED", "maxResults": 100})
        plan = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/p5-plan"
        stub.add_response("describe_service_job", {
            "jobArn": night, "jobId": night.rsplit("/", 1)[1], "jobName": "night", "jobQueue": queue,
            "serviceJobType": "SAGEMAKER_TRAINING", "status": "SCHEDULED", "startedAt": 0, "createdAt": 1_000_000,
            "serviceRequestPayload": json.dumps({"ResourceConfig": {"InstanceType": "ml.p5.48xlarge",
                                                                    "InstanceCount": 2, "TrainingPlanArn": plan}}),
            "capacityUsage": [{"capacityUnit": "ml.p5.48xlarge", "quantity": 2.0}]},
            {"jobId": night.rsplit("/", 1)[1]})
        figures = QueueReader(Api(batch), queue).read()
        stub.assert_no_pending_responses()
    a, b = figures.rows
    # the SCHEDULED plan job's 2 instances are held for its plan, not in use: out of a's own 4 first
    assert (a.used, a.plan_held, a.own, a.borrowed, a.waiting, a.waiting_capped) == (6, 2, 2, 2, 1, True)
    assert (b.used, b.lent) == (0, 2.0)
    assert a.head is not None and (a.head.name, a.head.priority, a.head.age_seconds) == ("big", 7, 3600)
    assert a.preemptions is None and b.preemptions is None
    assert duration_text(a.head.age_seconds) == "1h 00m"


def test_preemptions_outside_the_hour_or_another_queue_are_not_counted(tmp_path):
    arn = "arn:aws:batch:us-east-1:1:service-job/j"

    def change(queue: str) -> dict:
        return {"detail-type": "Batch Service Job State Change", "time": "2026-01-01T00:00:00Z",
                "detail": {"jobArn": arn, "jobQueue": f"arn:aws:batch:us-east-1:1:job-queue/{queue}",
                           "quotaShareName": "a", "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 1}]}}

    def started(at: str) -> dict:
        return {"detail-type": "Batch Service Job Preemption Started", "time": at,
                "detail": {"preemptedJobArn": arn, "status": "RUNNING", "statusReason": "x"}}

    path = tmp_path / "events.jsonl"
    lines = [change("training"), started("2026-01-01T00:10:00Z"), started("2026-01-01T01:05:00Z")]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines) + "not json\n" + '{"partial')
    log = PreemptionLog(str(path))
    now = 1767229200000 + 600_000  # 2026-01-01T01:10:00Z
    assert log.counts("training", now) == {("a", "ml.g5.xlarge"): 1}  # 00:10 is more than an hour before
    assert log.counts("other", now) == {}
    assert log.unreadable == 1  # counted (and shown on the screen), never silently skipped
    with path.open("a") as handle:  # the partial line completes; a new preemption arrives
        handle.write('": 1}\n' + json.dumps(started("2026-01-01T01:09:00Z")) + "\n")
    assert log.counts("training", now) == {("a", "ml.g5.xlarge"): 2}


def test_an_events_file_is_read_as_every_input_is(tmp_path, monkeypatch):
    """Regular files only (a FIFO or a device is one line before any call), a chunk per refresh, a line nested
    100,000 deep or longer than any event counted as unreadable, never a RecursionError or a read into memory."""
    import stat

    from policy_engine.adapters.aws import queue_figures

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    sources = [fifo]
    if os.geteuid() == 0 and os.path.exists("/dev/zero"):  # a copy of /dev/zero's numbers, never /dev itself
        zero = tmp_path / "zero.jsonl"
        os.mknod(zero, stat.S_IFCHR | 0o444, os.stat("/dev/zero").st_rdev)
        sources.append(zero)
    for source in sources:
        began = time.monotonic()
        result = CliRunner().invoke(main, ["top", "--queue", "training", "--once", "--events", str(source)])
        assert result.exit_code == 2 and time.monotonic() - began < 10
        assert result.stderr.strip().splitlines() == [
            f"error: {source}: is {'a FIFO (named pipe)' if source == fifo else 'a character device'}, not a regular "
            "events file"]
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")  # within MAX_LINE: parsed, too deep
    log = PreemptionLog(str(deep))
    assert log.counts("training", 0) == {} and log.unreadable == 1
    monkeypatch.setattr(queue_figures, "MAX_LINE", 100)
    with deep.open("a") as handle:
        handle.write("x" * 200 + "\n")
    assert log.counts("training", 0) == {} and log.unreadable == 2
    monkeypatch.setattr(queue_figures, "READ_CHUNK", 64)  # a chunk a refresh: the rest is read at the next ones
    grown = tmp_path / "grown.jsonl"
    grown.write_text("not json\n" * 20)
    log = PreemptionLog(str(grown))
    log.read()
    assert 0 < log.unreadable < 20
    while log.unreadable < 20:
        log.read()
    assert log.unreadable == 20


def test_the_figures_module_needs_only_boto3():
    """A monitoring Lambda imports it with boto3 alone: no pydantic, numpy, YAML, click or rich."""
    code = ("import sys; import policy_engine.adapters.aws.queue_figures; "
            "print(sorted(m for m in ('pydantic', 'numpy', 'yaml', 'click', 'rich', 'policy_engine.foundation.model') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "[]"


# --- a real terminal ----------------------------------------------------------------------------------------------


#: A tmux server of the test's own (its socket, no user configuration), so no other session's size applies.
SOCKET = f"batch-quota-top-{os.getpid()}"


def _tmux(*args: str) -> str:
    assert TMUX, "CI must have tmux (make system-deps installs it)"
    return subprocess.run([TMUX, "-L", SOCKET, "-f", "/dev/null", *args], capture_output=True, text=True,
                          check=True).stdout


def _share_rows(screen: str, prefix: str = "QS") -> dict[str, list[str]]:
    """The shares table's rows on the screen: share -> its cells."""
    rows = {}
    for line in screen.splitlines():
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if len(cells) == 14 and cells[0].startswith(prefix):
            rows[cells[0]] = cells
    return rows


def _wait_for(pane: str, check, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", pane)
        if check(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"the pane never showed what was expected; it shows:\n{screen}")


@contextlib.contextmanager
def _serve_process(*args: str) -> Iterator[str]:
    """``batch-quota serve ARGS`` at speed 0 on a free port in its own process: its URL. After the test, the tmux
    server and the endpoint are stopped."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    serve = subprocess.Popen([BATCH_QUOTA, "serve", *args, "--speed", "0", "--port", "0"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
    try:
        assert serve.stdout is not None
        url = serve.stdout.readline().strip()
        assert url.startswith("http://"), url
        yield url
    finally:
        subprocess.run([TMUX or "tmux", "-L", SOCKET, "kill-server"], capture_output=True)
        serve.terminate()
        serve.wait(timeout=10)


class _Endpoint:
    """What the endpoint conftest's ``client`` needs of a running endpoint: its URL."""

    def __init__(self, url: str) -> None:
        self.url = url


def _top_in_tmux(session: str, url: str, status: Path, size: tuple[int, int], options: str = "") -> str:
    """``top --queue training`` against ``url`` in a tmux pane of ``size`` (columns, lines): the pane. Its exit code
    goes to ``status``; the terminal's own size, not one the test run's environment may carry (COLUMNS, LINES)."""
    command = (f"env -u COLUMNS -u LINES AWS_ENDPOINT_URL_BATCH={url} {BATCH_QUOTA} top --queue training "
               f"--interval 0.5{options}; echo $? > {status}")
    _tmux("new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), "-e", f"PYTHONPATH={ROOT}",
          "-e", "AWS_DEFAULT_REGION=us-east-1", "-e", "AWS_ACCESS_KEY_ID=testing",
          "-e", "AWS_SECRET_ACCESS_KEY=testing", "-c", str(ROOT), command)
    return f"{session}:0.0"


def _quit_top(pane: str, status: Path) -> None:
    """Press q and see top exit 0."""
    _tmux("send-keys", "-t", pane, "q")
    deadline = time.monotonic() + 30
    # the shell creates the file before echo writes the code into it: wait for the code, not the file
    while not (status.exists() and status.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert status.read_text().strip() == "0"


@needs_tmux
def test_top_in_tmux_against_serve_walkthrough(tmp_path):
    events = tmp_path / "events.jsonl"
    with _serve_process("--walkthrough", "--events", str(events)) as url:

        class Running(_Endpoint):  # what ``reclaimed`` needs of an endpoint
            def advance(self, seconds: float) -> None:
                import urllib.request

                urllib.request.urlopen(urllib.request.Request(
                    f"{self.url}/_batch-quota/clock/advance?seconds={seconds}", method="POST",
                    headers={"Content-Type": "application/json"}), timeout=30).read()

        reclaimed(Running(url))
        status = tmp_path / "status"
        pane = _top_in_tmux(f"top-{os.getpid()}", url, status, (220, 50), f" --events {events}")
        screen = _wait_for(pane, lambda s: "qs1_job_med" in s and "sort: share" in s)
        rows = _share_rows(screen)
        assert set(rows) == {"QS1", "QS2", "QS3"}, screen
        assert [rows[share][3] for share in ("QS1", "QS2", "QS3")] == ["1", "1", "1"]  # the limits
        assert rows["QS1"][13] == "1"  # the reclaim: one preemption of QS1's job in the last hour
        assert rows["QS1"][9] == "qs1_job_med" and rows["QS1"][8] == "2"
        _tmux("send-keys", "-t", pane, "s")
        _wait_for(pane, lambda s: "sort: used" in s)
        _tmux("send-keys", "-t", pane, "/", "QS2", "Enter")
        screen = _wait_for(pane, lambda s: "filter: QS2" in s and set(_share_rows(s)) == {"QS2"})
        _quit_top(pane, status)


@pytest.mark.parametrize("width", [200, 100])
def test_no_column_but_the_reason_is_cut_on_a_narrower_terminal(served, width):
    """rich alone squeezed the short columns to ``O…`` and ``LE…`` on a 180-column terminal: every header and
    figure stays whole; below the width of the whole table the reasons move under it, one line per head."""
    from rich.console import Console

    from policy_engine.adapters.aws.clients import ClientOptions, make_client
    from policy_engine.reports.top import screen as top_view

    running, _ = served
    reclaimed(running)
    figures = QueueReader(Api(make_client(ClientOptions(endpoint_url=running.url))), "training").read()
    console = Console(width=width, record=True, highlight=False)
    console.print(top_view.shares_table(figures, top_view.visible_rows(figures, top_view.SORTS[0], "")))
    lines = console.export_text().splitlines()
    header = next(line for line in lines if "SHARE" in line)
    for name in ("SHARE", "TYPE", "LIMIT", "OWN", "BORROWED", "LENT", "WAITING", "HEAD JOB", "PRIO", "AGE"):
        assert f" {name} " in header, (name, header)
    qs1 = next(line for line in lines if line.lstrip("│ ").startswith("QS1"))
    assert "qs1_job_med" in qs1 and "1m 40s" in qs1
    assert all(len(line) <= width for line in lines)
    reason = next(line for line in lines if "CAPACITY" in line)
    assert (reason is qs1) == (width == 200)  # in the row, or on its own line under the table


@needs_tmux
def test_top_in_tmux_shows_a_plan_job_waiting_for_its_window_as_held_for_plan(tmp_path):
    """A plan job dispatched before its window sits SCHEDULED holding its share's quota (docs/training_plans.md):
    top shows its instances under PLAN HELD, not as the share's own use."""
    topology = tmp_path / "plans.yaml"
    topology.write_text("""\
service_environments:
  - {name: gpu, capacity: {ml.p5.48xlarge: 8}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: PA, capacity: {ml.p5.48xlarge: 4}, strategy: RESERVE}
      - {name: PB, capacity: {ml.p5.48xlarge: 4}, strategy: RESERVE}
training_plans:
  - name: night
    instance_type: ml.p5.48xlarge
    reserved_capacities:
      - {instances: 4, start: 86400, end: 172800}
""")
    with _serve_process(str(topology)) as url:
        batch = client(_Endpoint(url))
        request = json.loads(payload_for("ml.p5.48xlarge", 4))
        request["ResourceConfig"]["TrainingPlanArn"] = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/night"
        batch.submit_service_job(jobName="early", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                                 serviceRequestPayload=json.dumps(request), quotaShareName="PA")
        batch.submit_service_job(jobName="plain", jobQueue="training", serviceJobType="SAGEMAKER_TRAINING",
                                 serviceRequestPayload=payload_for("ml.p5.48xlarge", 2), quotaShareName="PB")
        status = tmp_path / "status"
        pane = _top_in_tmux(f"top-plan-{os.getpid()}", url, status, (220, 50))
        screen = _wait_for(pane, lambda s: set(_share_rows(s, "P")) == {"PA", "PB"} and "sort: share" in s)
        rows = _share_rows(screen, "P")
        header = next(line for line in screen.splitlines() if "PLAN HELD" in line)
        assert [cell.strip() for cell in header.replace("┃", "│").split("│")[1:-1]][4:7] == [
            "OWN", "BORROWED", "PLAN HELD"]
        assert rows["PA"][4:7] == ["0", "0", "4"], screen  # held for its plan's window, not in use
        assert rows["PB"][4:7] == ["2", "0", "0"], screen  # a plain job runs: in use
        _quit_top(pane, status)


def test_lent_instances_are_whole_and_add_up_to_what_borrowers_use():
    """Largest remainder: each lender the whole part of its idle share of the lent instances, the rest one each to
    the largest fractions (ties by name); never more than a lender's idle instances, nor more than they all have."""
    from policy_engine.adapters.aws.queue_figures import largest_remainder

    assert largest_remainder({"L1": 1, "L2": 1, "L3": 1}, 1) == {"L1": 1, "L2": 0, "L3": 0}  # not 0.33 each
    assert largest_remainder({"L1": 1, "L2": 1, "L3": 1}, 2) == {"L1": 1, "L2": 1, "L3": 0}
    assert largest_remainder({"a": 6, "b": 3, "c": 1}, 5) == {"a": 3, "b": 2, "c": 0}  # 3, 1.5, 0.5: b's half first
    assert largest_remainder({"a": 2, "b": 2}, 9) == {"a": 2, "b": 2}  # borrowed beyond the lenders' idle: not theirs
    assert largest_remainder({"a": 0, "b": 0}, 3) == {"a": 0, "b": 0}
    rng = __import__("random").Random(7)
    for _ in range(500):
        idle = {f"s{n}": rng.randint(0, 9) for n in range(rng.randint(1, 6))}
        lent = rng.randint(0, 60)
        split = largest_remainder(idle, lent)
        assert sum(split.values()) == min(lent, sum(idle.values()))
        assert all(0 <= split[name] <= idle[name] for name in idle)
        # within one instance of the proportional share
        assert all(abs(split[name] - idle[name] * min(lent, sum(idle.values())) / (sum(idle.values()) or 1)) < 1
                   for name in idle)


def test_the_clock_is_serves_simulated_one_or_the_accounts(served):
    """``serve`` marks its answers (``CLOCK_HEADER``): its snapshot's time is its simulated clock, labelled so; an
    answer without the mark (AWS) is the account's clock."""
    from policy_engine.adapters.aws.clients import ClientOptions, make_client
    from policy_engine.reports.top import view

    running, _ = served
    reader = QueueReader(Api(make_client(ClientOptions(endpoint_url=running.url))), "training")
    before = reader.read()
    running.advance(3 * 86400 + 100)  # the simulated clock moves; the wall clock barely does
    figures = reader.read()
    assert before.simulated_clock and figures.simulated_clock
    assert figures.taken_at_ms - before.taken_at_ms == (3 * 86400 + 100) * 1000
    taken = datetime.fromtimestamp(figures.taken_at_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert view.clock_text(figures) == f"simulated clock {taken} UTC"
    once = CliRunner().invoke(main, ["top", "--queue", "training", "--once"])
    assert f"simulated clock {taken} UTC" in once.output, once.output
    assert json.loads(CliRunner().invoke(main, ["top", "--queue", "training", "--once", "--format", "json"])
                      .output)["simulated_clock"] is True
    assert view.clock_text(replace(figures, simulated_clock=False)) == f"snapshot at {taken} UTC"


LENDERS = """\
service_environments:
  - {name: gpu, capacity: {ml.g5.xlarge: 4}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: LA, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
      - {name: LB, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
      - {name: LC, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
      - {name: LD, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW, borrow_limit: -1}
"""


@needs_tmux
def test_top_in_tmux_shows_whole_lent_instances_and_the_simulated_clock(tmp_path):
    """Three lenders idle, one instance borrowed: LENT reads 1, 0, 0 (whole instances, largest remainder; ties by
    name), never 0.3 each; the footer names the endpoint's simulated clock."""
    topology = tmp_path / "lenders.yaml"
    topology.write_text(LENDERS)
    with _serve_process(str(topology)) as url:
        batch = client(_Endpoint(url))
        for name in ("first", "second"):  # LD's own instance, then one borrowed
            submit(batch, name, "LD")
        status = tmp_path / "status"
        pane = _top_in_tmux(f"top-lent-{os.getpid()}", url, status, (120, 40))
        screen = _wait_for(pane, lambda s: "sort: share" in s and "LD" in s and "LC" in s)
        lines = screen.splitlines()
        header = next(line for line in lines if " LENT " in line and "SHARE" in line)
        # 120 columns: the narrow layout (no borders, no strategy, no plan column while it holds nothing)
        assert header.split()[:6] == ["SHARE", "TYPE", "LIMIT", "OWN", "BORROWED", "LENT"], screen
        rows = {line.split()[0]: line.split() for line in lines if line.split()[:1] in (["LA"], ["LB"], ["LC"], ["LD"])}
        assert {share: row[3:6] for share, row in rows.items()} == {  # own, borrowed, lent
            "LA": ["0", "0", "1"], "LB": ["0", "0", "0"], "LC": ["0", "0", "0"], "LD": ["1", "1", "0"]}, screen
        totals = next(line for line in lines if line.lstrip("│ ").startswith("ml.g5.xlarge") and "LEND" not in line)
        cells = [cell.strip() for cell in totals.split("│")[1:-1]]
        assert cells[6] == "1", screen  # the LENT total: one instance
        assert re.search(r"simulated clock \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, every 0.5s", screen), screen
        _quit_top(pane, status)
