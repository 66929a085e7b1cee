"""``history`` reads past changes from CloudTrail (``LookupEvents``), through botocore's Stubber: every request and
response is validated against the installed ``cloudtrail`` model; pagination, AccessDenied, the replay's actions."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import boto3
from botocore.stub import ANY, Stubber
from click.testing import CliRunner

from policy_engine.adapters.aws.clients import Api
from policy_engine.adapters.aws.replay import build_replay, initial_priorities, named_jobs
from policy_engine.adapters.aws.trail import JOB_EVENTS, QUEUE_EVENTS, TOPOLOGY_EVENTS, EventName, read_trail
from policy_engine.cli.app import main
from policy_engine.cli.commands import aws_options as cli_options
from tests.policy_engine.adapters.aws.fake_account import REGION, batch_client, service_job

NOW = 1_780_000_000_000
SINCE = NOW - 86_400_000
QS1 = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/QS1"


def cloudtrail_client() -> Any:
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
    return session.client("cloudtrail", endpoint_url="http://127.0.0.1:9")


def event(name: str, at_ms: int, request: dict[str, Any], response: dict[str, Any] | None = None) -> dict[str, Any]:
    record = {"eventVersion": "1.09", "eventTime": datetime.fromtimestamp(at_ms // 1000, UTC).isoformat(),
              "eventSource": "batch.amazonaws.com", "eventName": name, "requestParameters": request,
              "responseElements": response}
    return {"EventId": f"{name}-{at_ms}", "EventName": name, "EventTime": datetime.fromtimestamp(at_ms / 1000, UTC),
            "EventSource": "batch.amazonaws.com", "CloudTrailEvent": json.dumps(record)}


def expect(stubber: Stubber, name: EventName, pages: list[list[dict[str, Any]]], start_ms: int) -> None:
    for index, events in enumerate(pages):
        params: dict[str, Any] = {"LookupAttributes": [{"AttributeKey": "EventName", "AttributeValue": str(name)}],
                                  "StartTime": datetime.fromtimestamp(start_ms / 1000, UTC), "MaxResults": 50}
        if index:
            params["NextToken"] = f"page{index}"
        response: dict[str, Any] = {"Events": events}
        if index + 1 < len(pages):
            response["NextToken"] = f"page{index + 1}"
        stubber.add_response("lookup_events", response, params)


LOOKBACK = NOW - 90 * 86_400_000
JOB = "00000000-0000-0000-0000-000000000001"


def stub_trail(stubber: Stubber, denied: frozenset[EventName] = frozenset()) -> None:
    """Every lookup history makes, in its order; ``denied`` ones answer AccessDenied."""
    answers: dict[EventName, list[list[dict[str, Any]]]] = {
        EventName.UPDATE_SERVICE_JOB: [[event("UpdateServiceJob", NOW - 1000,
                                              {"jobId": JOB, "schedulingPriority": 7})]],
        EventName.UPDATE_QUOTA_SHARE: [
            [event("UpdateQuotaShare", NOW - 3000, {"quotaShareArn": QS1, "capacityLimits": [
                {"maxCapacity": 2, "capacityUnit": "ml.g5.xlarge"}]})],
            [event("UpdateQuotaShare", NOW - 5000, {"quotaShareArn": QS1, "capacityLimits": [
                {"maxCapacity": 3, "capacityUnit": "ml.g5.xlarge"}]})]],  # a second page, older
        EventName.CREATE_QUOTA_SHARE: [[event("CreateQuotaShare", SINCE - 10_000, {
            "quotaShareName": "QS1", "jobQueue": "training", "capacityLimits": [
                {"maxCapacity": 1, "capacityUnit": "ml.g5.xlarge"}],
            "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 200},
            "preemptionConfiguration": {"inSharePreemption": "DISABLED"}})]],
        EventName.SUBMIT_SERVICE_JOB: [[event("SubmitServiceJob", NOW - 9000, {"schedulingPriority": 2},
                                              {"jobId": JOB, "jobName": "a"})]],
    }
    plan = [(name, SINCE) for name in JOB_EVENTS] + [(name, LOOKBACK) for name in TOPOLOGY_EVENTS]
    plan += [(name, SINCE) for name in QUEUE_EVENTS] + [(EventName.SUBMIT_SERVICE_JOB, SINCE)]
    for name, start in plan:
        if name in denied:
            stubber.add_client_error("lookup_events", "AccessDeniedException", "not authorized to LookupEvents", 400)
        else:
            expect(stubber, name, answers.get(name, [[]]), start)


def test_every_change_is_read_oldest_first_across_pages():
    client = cloudtrail_client()
    stubber = Stubber(client)
    stub_trail(stubber)
    api = Api(client)
    with stubber:
        trail = read_trail(api, SINCE, NOW, submissions=True)
        stubber.assert_no_pending_responses()
    assert not trail.blind
    assert [(c.name, c.at_ms) for c in trail.changes] == [
        ("CreateQuotaShare", SINCE - 10_000), ("SubmitServiceJob", NOW - 9000), ("UpdateQuotaShare", NOW - 5000),
        ("UpdateQuotaShare", NOW - 3000), ("UpdateServiceJob", NOW - 1000)]
    assert api.calls["LookupEvents"] == 12  # 10 event names, one of them on two pages, and the submissions
    assert initial_priorities(trail) == {JOB: 2} and named_jobs(trail) == {JOB}


def test_the_replay_unwinds_the_topology_and_times_the_actions():
    client = cloudtrail_client()
    stubber = Stubber(client)
    stub_trail(stubber)
    with stubber:
        trail = read_trail(Api(client), SINCE, NOW, submissions=True)
    from policy_engine.adapters.aws.replay import JobRef

    current = {"service_environments": [{"name": "gpu", "capacity": {"ml.g5.xlarge": 4}}],
               "job_queues": [{"name": "training", "service_environment": "gpu", "shares": [
                   {"name": "QS1", "capacity": {"ml.g5.xlarge": 2}, "strategy": "LEND_AND_BORROW",
                    "borrow_limit": 200}]}]}
    t0 = NOW - 10_000
    replay = build_replay(current, "training", trail, t0, {JOB: JobRef("a-" + JOB, NOW - 9000)})
    # the share at time 0 is what its CreateQuotaShare (before the window) made, not what it is now
    assert replay.topology["job_queues"][0]["shares"] == [
        {"name": "QS1", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND_AND_BORROW", "borrow_limit": 200}]
    assert replay.actions == [
        {"at": 5, "update_share": {"share": "training/QS1", "capacity": {"ml.g5.xlarge": 3}}},
        {"at": 7, "update_share": {"share": "training/QS1", "capacity": {"ml.g5.xlarge": 2}}},
        {"at": 9, "update_priority": {"job": "a-" + JOB, "priority": 7}}]
    assert replay.notes == []


def test_access_denied_is_said_per_change_it_hides_and_history_still_writes_the_jobs(monkeypatch, tmp_path):
    batch = batch_client()
    cloudtrail = cloudtrail_client()
    batch_stubber, trail_stubber = Stubber(batch), Stubber(cloudtrail)
    plan = [*JOB_EVENTS, *TOPOLOGY_EVENTS, *QUEUE_EVENTS]
    for _ in plan:  # every lookup denied: no UpdateServiceJob seen, so no SubmitServiceJob lookup either
        trail_stubber.add_client_error("lookup_events", "AccessDeniedException", "User is not authorized", 400)
    now = int(time.time() * 1000)
    summary, job = service_job("a", "QS1", "SUCCEEDED", created_ms=now - 60_000, started_ms=now - 50_000,
                               stopped_ms=now - 20_000, job_id=JOB)
    batch_stubber.add_response("list_service_jobs", {"jobSummaryList": [summary]},
                               {"jobQueue": "training", "filters": ANY})
    batch_stubber.add_response("describe_service_job", job, {"jobId": JOB})
    monkeypatch.setattr(cli_options, "client_factory", lambda options: batch)
    monkeypatch.setattr(cli_options, "cloudtrail_factory", lambda options: cloudtrail)
    monkeypatch.delenv("AWS_ENDPOINT_URL_BATCH", raising=False)
    out = tmp_path / "jobs.csv"
    with batch_stubber, trail_stubber:
        result = CliRunner().invoke(main, ["history", "--queue", "training", "--since", "2d", "-o", str(out)])
        trail_stubber.assert_no_pending_responses()
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    denied = [line for line in lines if line.startswith("could not read")]
    assert len(denied) == 1 and "access denied (AccessDeniedException): User is not authorized" in denied[0]
    assert "UpdateServiceJob" in denied[0] and "UpdateQuotaShare" in denied[0]
    assert "  not seen: UpdateServiceJob: priority updates are not replayed: jobs keep their current priority" in lines
    assert "  not seen: TerminateServiceJob: terminations are not replayed: terminated jobs run on in the replay" \
        in lines
    assert len(out.read_text().splitlines()) == 2


def test_some_lookups_denied_are_named_and_the_others_used():
    client = cloudtrail_client()
    stubber = Stubber(client)
    stub_trail(stubber, denied=frozenset({EventName.SUBMIT_SERVICE_JOB}))
    with stubber:
        trail = read_trail(Api(client), SINCE, NOW, submissions=True)
    assert [blind.events for blind in trail.blind] == [(EventName.SUBMIT_SERVICE_JOB,)]
    assert not trail.saw(EventName.SUBMIT_SERVICE_JOB) and trail.saw(EventName.UPDATE_SERVICE_JOB)
    assert initial_priorities(trail) == {}
    assert len(list(trail.of(EventName.UPDATE_QUOTA_SHARE))) == 2


def test_an_unreadable_record_is_counted_not_skipped_in_silence():
    client = cloudtrail_client()
    stubber = Stubber(client)
    broken = {"EventId": "x", "EventName": "UpdateServiceJob", "EventTime": datetime.fromtimestamp(NOW / 1000, UTC),
              "CloudTrailEvent": "{not json"}
    for name in (*JOB_EVENTS, *TOPOLOGY_EVENTS, *QUEUE_EVENTS):
        expect(stubber, name, [[broken]] if name is EventName.UPDATE_SERVICE_JOB else [[]],
               LOOKBACK if name in TOPOLOGY_EVENTS else SINCE)
    with stubber:
        trail = read_trail(Api(client), SINCE, NOW, submissions=True)
    assert trail.unreadable == 1 and "event x (UpdateServiceJob)" in trail.unreadable_reason
    from policy_engine.adapters.aws.replay import unseen

    assert list(unseen(trail))[-1].startswith("1 CloudTrail event(s) could not be read and are not replayed")


def _change(name: EventName, at_ms: int, request: dict[str, Any]) -> Any:
    from policy_engine.adapters.aws.trail import Change

    return Change(at_ms, name, request, {}, f"{name}-{at_ms}")


def test_shares_created_deleted_and_unknown_before_the_window_are_replayed_or_named():
    from policy_engine.adapters.aws.replay import JobRef
    from policy_engine.adapters.aws.trail import Trail

    qs2 = QS1.replace("QS1", "QS2")
    create = {"quotaShareName": "QS2", "jobQueue": "arn:aws:batch:us-east-1:123456789012:job-queue/training",
              "capacityLimits": [{"maxCapacity": 1, "capacityUnit": "ml.g5.xlarge"}],
              "resourceSharingConfiguration": {"strategy": "LEND"}}
    trail = Trail([
        _change(EventName.CREATE_QUOTA_SHARE, NOW + 2000, create),
        _change(EventName.UPDATE_QUOTA_SHARE, NOW + 3000, {"quotaShareArn": QS1, "state": "DISABLED"}),
        _change(EventName.DELETE_QUOTA_SHARE, NOW + 4000, {"quotaShareArn": QS1}),
        _change(EventName.TERMINATE_SERVICE_JOBS, NOW + 500, {"jobs": [JOB, "arn:aws:batch:x:1:service-job/other"],
                                                              "reason": "r"}),
        _change(EventName.UPDATE_JOB_QUEUE, NOW + 600, {"jobQueue": "training", "state": "DISABLED"}),
        _change(EventName.UPDATE_QUOTA_SHARE, NOW + 700, {"quotaShareArn": qs2.replace("QS2", "QS9"),
                                                          "state": "DISABLED"}),
    ])
    current = {"service_environments": [{"name": "gpu", "capacity": {"ml.g5.xlarge": 4}}],
               "job_queues": [{"name": "training", "service_environment": "gpu", "shares": [
                   {"name": "QS2", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND"},
                   {"name": "QS9", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND", "state": "DISABLED"}]}]}
    replay = build_replay(current, "training", trail, NOW, {JOB: JobRef("a-" + JOB, NOW + 1000)})
    shares = replay.topology["job_queues"][0]["shares"]
    # QS2 did not exist at time 0; QS1 (deleted since, never seen created) is left out and named; QS9's state
    # before its update is unknown: the replay starts from the value the update set, and says so
    assert [share["name"] for share in shares] == ["QS9"]
    # QS1's own changes are not replayed (the replay has no QS1); the termination before its job's submission
    # (CloudTrail's whole seconds) is moved to the submission
    assert [next(iter(set(action) - {"at"})) for action in replay.actions] == [
        "update_share", "terminate_job", "create_share"]
    assert replay.actions[1] == {"at": 1, "terminate_job": {"job": "a-" + JOB, "reason": "r"}}
    assert replay.moved == 1
    assert replay.actions[2]["create_share"] == {"share": "training/QS2", "capacity": {"ml.g5.xlarge": 1},
                                                 "strategy": "LEND", "borrow_limit": None,
                                                 "in_share_preemption": False, "state": "ENABLED"}
    assert any("quota share training/QS1 was deleted" in note for note in replay.notes)
    assert any(note.startswith("quota share training/QS9: its state before") for note in replay.notes)
    assert any(note.startswith("UpdateJobQueue of job queue training") for note in replay.notes)
