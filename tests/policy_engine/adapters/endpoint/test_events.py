"""``serve --events``: the EventBridge events AWS documents for service jobs, with their envelope and detail shapes,
matched by the shipped patterns (``policy_engine/data/event_patterns.json``)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import botocore.session
import pytest
from botocore.validate import ParamValidator
from click.testing import CliRunner
from moto.events.models import EventPattern

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.cli.app import main
from policy_engine.cli.commands import walkthrough
from policy_engine.events import patterns as event_patterns
from policy_engine.events.service_events import STARTED_REASONS, Preemption
from policy_engine.events.sinks import FileSink, HttpSink
from policy_engine.inputs.examples import example_topology
from tests.policy_engine.adapters.endpoint.conftest import client, submit

#: The envelope AWS documents for every event ("Events and Event Patterns", and each service-job event page).
ENVELOPE = {"version", "id", "detail-type", "source", "account", "time", "region", "resources", "detail"}
#: The detail fields AWS's examples show for the preemption events.
PREEMPTION_FIELDS = {"Batch Service Job Preemption Started": {"statusReason", "preemptedJobArn", "status"},
                     "Batch Service Job Preemption Completed": {"preemptedJobArn", "preemptionSummary"}}
DESCRIBED = {"Batch Service Job State Change", "Batch Service Job Queue Blocked"}
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_MODEL = botocore.session.get_session().get_service_model("batch")


def check_event(event: dict, region: str = "us-east-1", account: str = "123456789012") -> None:
    """One event against what AWS documents: envelope, source, time, resources, and the detail's fields."""
    assert set(event) == ENVELOPE, event
    assert event["version"] == "0" and event["source"] == "aws.batch"
    assert (event["region"], event["account"]) == (region, account)
    assert _TIME.fullmatch(event["time"]), event["time"]
    assert re.fullmatch(r"[0-9a-f-]{36}", event["id"])
    (arn,) = event["resources"]
    assert re.fullmatch(rf"arn:aws:batch:{region}:{account}:service-job/[0-9a-f-]{{36}}", arn), arn
    detail, kind = event["detail"], event["detail-type"]
    if kind in PREEMPTION_FIELDS:
        assert set(detail) == PREEMPTION_FIELDS[kind]
        assert detail["preemptedJobArn"] == arn
        if "preemptionSummary" in detail:
            shape = _MODEL.shape_for("ServiceJobPreemptionSummary")
            assert not ParamValidator().validate(detail["preemptionSummary"], shape).has_errors()
        return
    assert kind in DESCRIBED, kind
    shape = _MODEL.operation_model("DescribeServiceJob").output_shape
    assert not {"tags", "serviceRequestPayload"} & set(detail)
    assert set(detail) <= set(shape.members), set(detail) - set(shape.members)
    report = ParamValidator().validate(detail, shape)
    assert not report.has_errors(), report.generate_report()
    assert detail["jobArn"] == arn
    assert re.fullmatch(rf"arn:aws:batch:{region}:{account}:job-queue/\S+", detail["jobQueue"])


def matches(pattern: dict, event: dict) -> bool:
    """EventBridge's matching, as moto implements it (the one matcher the tests use)."""
    return EventPattern.load(json.dumps(pattern)).matches_event(event)


def check_patterns(events: list[dict], queue_arn: str) -> None:
    """Each shipped pattern matches exactly its own events; narrowed to the queue, it still matches them where the
    detail names the queue, and matches none of them for another queue's ARN."""
    other = queue_arn.rsplit("/", 1)[0] + "/another-queue"
    for kind in event_patterns.kinds():
        own = [e for e in events if e["detail-type"] == kind.detail_type]
        assert [e for e in events if matches(event_patterns.pattern(kind.key), e)] == own
        narrowed = event_patterns.pattern(kind.key, [queue_arn])
        assert [e for e in events if matches(narrowed, e)] == own
        elsewhere = [e for e in events if matches(event_patterns.pattern(kind.key, [other]), e)]
        if kind.queue_field is None:  # preemption events name no queue: the filter cannot apply
            assert "detail" not in narrowed and elsewhere == own
        else:
            assert elsewhere == [] and all(e["detail"][kind.queue_field] == queue_arn for e in own)


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_walkthrough(running, preemption_seconds: float = 0.0) -> dict[str, str]:
    """AWS's three notebook steps, then time enough for every job to finish; returns job name -> ARN."""
    batch = client(running)
    arns = {}
    for spec in walkthrough.JOBS:
        if spec.submit_at == 0:
            job = submit(batch, spec.name, spec.share.split("/")[1], priority=spec.priority)
            arns[spec.name] = batch.describe_service_job(jobId=job)["jobArn"]
    running.advance(100)
    job = submit(batch, "qs2_job_1", "QS2", priority=1)
    arns["qs2_job_1"] = batch.describe_service_job(jobId=job)["jobArn"]
    if preemption_seconds:
        running.advance(preemption_seconds)
    running.advance(100)
    (update,) = walkthrough.UPDATES
    batch.update_service_job(jobId=arns[update.job], schedulingPriority=update.priority)
    running.advance(4 * 3600)
    return arns


def by_job(events: list[dict], arn: str) -> list[dict]:
    return [e for e in events if e["resources"] == [arn]]


@pytest.fixture
def events_file(tmp_path):
    return tmp_path / "events.jsonl"


def test_walkthrough_events_are_the_documented_ones(events_file):
    sink = FileSink(str(events_file))
    with start_in_thread(Service(Options(speed=0), example_topology(), sinks=[sink])) as running:
        arns = run_walkthrough(running)
        queue_arn = client(running).describe_job_queues(jobQueues=["training"])["jobQueues"][0]["jobQueueArn"]
        origin = running.service.origin_ms
    sink.close()
    events = read(events_file)
    for event in events:
        check_event(event)
    check_patterns(events, queue_arn)
    for arn in arns.values():
        changes = [e["detail"]["status"] for e in by_job(events, arn) if e["detail-type"].endswith("State Change")]
        assert changes[0] == "RUNNABLE"  # none for the initial submission
        assert changes[-1] == "SUCCEEDED" and "SUBMITTED" not in changes
    # step 2: QS2 reclaims the instance qs1_job_med borrowed; with --preemption-seconds 0 the whole sequence is
    # one instant: Started (still RUNNING), the move back to RUNNABLE, Completed with the summary
    med = [e for e in by_job(events, arns["qs1_job_med"]) if e["time"] == by_job(events, arns["qs2_job_1"])[0]["time"]]
    assert [e["detail-type"] for e in med] == ["Batch Service Job Preemption Started",
                                               "Batch Service Job State Change",
                                               "Batch Service Job Preemption Completed"]
    started, change, completed = (e["detail"] for e in med)
    assert started == {"statusReason": STARTED_REASONS[Preemption.CROSS_SHARE],
                       "preemptedJobArn": arns["qs1_job_med"], "status": "RUNNING"}
    assert change["status"] == "RUNNABLE" and "Preempted by job qs2_job_1" in change["statusReason"]
    assert completed["preemptionSummary"]["preemptedAttemptCount"] == 1
    # step 3: in-share preemption of qs1_job_high after qs1_job_low's priority raise
    high = [e["detail"] for e in by_job(events, arns["qs1_job_high"]) if "Preemption Started" in e["detail-type"]]
    assert [d["statusReason"] for d in high] == [STARTED_REASONS[Preemption.IN_SHARE]]
    # times are the simulated clock: the reclaim happened 100 simulated seconds after the first submissions
    first = min(e["time"] for e in events)
    assert first == _iso(origin)
    assert med[0]["time"] == _iso(origin + 100_000)


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_preemption_window_starts_and_completes_apart(events_file):
    sink = FileSink(str(events_file))
    with start_in_thread(Service(Options(speed=0, preemption_seconds=20), example_topology(),
                                 sinks=[sink])) as running:
        arns = run_walkthrough(running, preemption_seconds=20)
        origin = running.service.origin_ms
    sink.close()
    events = read(events_file)
    for event in events:
        check_event(event)
    med = {e["detail-type"]: e for e in by_job(events, arns["qs1_job_med"]) if "Preemption" in e["detail-type"]}
    assert med["Batch Service Job Preemption Started"]["time"] == _iso(origin + 100_000)
    assert med["Batch Service Job Preemption Started"]["detail"]["status"] == "RUNNING"
    assert med["Batch Service Job Preemption Completed"]["time"] == _iso(origin + 120_000)


def test_a_job_that_can_never_run_blocks_the_queue(events_file):
    sink = FileSink(str(events_file))
    with start_in_thread(Service(Options(speed=0), example_topology(), sinks=[sink])) as running:
        batch = client(running)
        job = submit(batch, "too-big", "QS3", count=2)  # QS3 is RESERVE with 1 instance
        arn = batch.describe_service_job(jobId=job)["jobArn"]
    sink.close()
    events = read(events_file)
    for event in events:
        check_event(event)
    assert [e["detail-type"] for e in events] == ["Batch Service Job State Change", "Batch Service Job Queue Blocked"]
    blocked = events[1]["detail"]
    assert blocked["jobArn"] == arn and blocked["status"] == "RUNNABLE"
    assert blocked["statusReason"].startswith("MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED")


class _Receiver(BaseHTTPRequestHandler):
    """Keeps each POSTed event; refuses (503) the first ``server.failures_left`` requests."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        if self.server.failures_left > 0:  # type: ignore[attr-defined]
            self.server.failures_left -= 1  # type: ignore[attr-defined]
            self.send_response(503)
        else:
            self.server.received.append(json.loads(body))  # type: ignore[attr-defined]
            self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received = []  # type: ignore[attr-defined]
    server.failures_left = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_events_url_receives_the_same_events_and_retries(receiver, events_file):
    receiver.failures_left = 2  # the first event is refused twice (503), then accepted on the third try
    url = f"http://127.0.0.1:{receiver.server_address[1]}/events"
    file_sink, http_sink = FileSink(str(events_file)), HttpSink(url, backoff=0.01)
    with start_in_thread(Service(Options(speed=0), example_topology(), sinks=[file_sink, http_sink])) as running:
        run_walkthrough(running)
        state = running.control("GET", "events")
    http_sink.close()
    file_sink.close()
    assert receiver.received == read(events_file)
    assert http_sink.stats.delivered == http_sink.stats.sent == len(receiver.received)
    assert http_sink.stats.failed == http_sink.stats.dropped == 0
    assert [sink["target"] for sink in state["sinks"]] == [str(events_file), url]


def test_an_unreachable_events_url_never_blocks_the_scheduler_and_is_counted(caplog):
    import socket
    import time

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sink = HttpSink(f"http://127.0.0.1:{port}/", attempts=2, backoff=0.01)
    with start_in_thread(Service(Options(speed=0), example_topology(), sinks=[sink])) as running:
        started = time.monotonic()
        run_walkthrough(running)
        elapsed = time.monotonic() - started
    sink.close()
    assert sink.stats.sent > 0 and sink.stats.failed == sink.stats.sent and sink.stats.delivered == 0
    assert elapsed < 30  # the calls did not wait for delivery (each event has failed twice in the thread)
    assert any("not delivered after 2 attempt(s)" in record.getMessage() for record in caplog.records)


def test_simulate_writes_the_same_event_kinds_as_serve(tmp_path, events_file):
    sink = FileSink(str(events_file))
    with start_in_thread(Service(Options(speed=0), example_topology(), sinks=[sink])) as running:
        arns = run_walkthrough(running)
    sink.close()
    names = {arn: name for name, arn in arns.items()}
    served = [(e["detail-type"], names[e["resources"][0]], e["detail"].get("status")) for e in read(events_file)]
    simulated_file = tmp_path / "simulated.jsonl"
    result = CliRunner().invoke(main, ["simulate", "scenarios/walkthrough.yaml", "--events", str(simulated_file),
                                       "--event-format", "eventbridge"])
    assert result.exit_code == 0, result.output
    simulated = read(simulated_file)
    for event in simulated:
        check_event(event)
    check_patterns(simulated, "arn:aws:batch:us-east-1:123456789012:job-queue/training")
    assert sorted(served) == sorted((e["detail-type"], e["detail"].get("jobName") or _name(simulated, e),
                                     e["detail"].get("status")) for e in simulated)


def _name(events: list[dict], event: dict) -> str:
    """A preemption event's job name, from the job's own state changes (its detail names none)."""
    arn = event["resources"][0]
    return next(e["detail"]["jobName"] for e in events if e["resources"] == [arn] and "jobName" in e["detail"])


@pytest.mark.parametrize(("args", "message"), [
    (["serve", "--events-url", "ftp://example.com/x"], "--events-url ftp://example.com/x: expected an http://"),
    (["serve", "--events-url", "http://"], "expected an http:// or https:// URL with a host"),
])
def test_bad_event_options_are_one_line_and_exit_2(args, message):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: ") and message in line


def test_events_file_cannot_be_the_state_file(tmp_path):
    state = tmp_path / "state.db"
    result = CliRunner().invoke(main, ["serve", "--state", str(state), "--events", str(state)])
    assert result.exit_code == 2 and "--events" in result.output and "is also an input" in result.output


def test_simulate_event_format_needs_events():
    result = CliRunner().invoke(main, ["simulate", "scenarios/walkthrough.yaml", "--event-format", "eventbridge"])
    assert result.exit_code == 2
    assert "add --events FILE" in result.output


def test_a_resumed_state_sends_no_event_twice(tmp_path, events_file):
    from policy_engine.adapters.endpoint.store import Store

    path = tmp_path / "state.db"
    sink = FileSink(str(events_file))
    with start_in_thread(Service(Options(speed=0), example_topology(), Store(str(path)), [sink])) as running:
        batch = client(running)
        for name, priority in (("qs1_job_high", 3), ("qs1_job_med", 2)):
            submit(batch, name, "QS1", priority=priority)
    sink.close()
    before = read(events_file)
    sink = FileSink(str(events_file), append=True)
    with start_in_thread(Service(Options(speed=0), example_topology(), Store(str(path)), [sink])) as running:
        running.advance(100)
        submit(client(running), "qs2_job_1", "QS2", priority=1)
    sink.close()
    after = read(events_file)
    assert after[:len(before)] == before  # the replayed calls sent nothing again
    added = [e["detail-type"] for e in after[len(before):]]
    assert "Batch Service Job Preemption Started" in added
    assert len({e["id"] for e in after}) == len(after)  # ids stay unique across the restart
