"""``--state`` checkpoints: a restart loads the last one and replays only the calls after it, and the restored
endpoint answers as the one that never stopped, and goes on as it would have."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import uuid

import pytest

from policy_engine.adapters.endpoint import service as service_module
from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.adapters.endpoint.store import Store
from policy_engine.inputs.topology_data import topology_from_data
from tests.policy_engine.adapters.endpoint.conftest import INSTANCE, payload

QUEUE = "training"
SHARES = ("A", "B", "C")


def topology():
    """Three shares on 6 instances: reclaims, in-share preemption, borrowing, and a jobStateTimeLimitAction
    (a head misconfigured for its share waits 600 s, then is terminated)."""
    return topology_from_data({
        "service_environments": [{"name": "gpu", "capacity": {INSTANCE: 6}}],
        "job_queues": [{
            "name": QUEUE, "service_environment": "gpu",
            "job_state_time_limit_actions": [
                {"max_time_seconds": 600, "reason": "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"}],
            "shares": [
                {"name": "A", "capacity": {INSTANCE: 2}, "strategy": "LEND_AND_BORROW", "borrow_limit": 100,
                 "in_share_preemption": True},
                {"name": "B", "capacity": {INSTANCE: 2}, "strategy": "LEND_AND_BORROW", "borrow_limit": 50},
                {"name": "C", "capacity": {INSTANCE: 2}, "strategy": "LEND"},
            ]}],
    }, "test topology")


@pytest.fixture
def ids(monkeypatch):
    """Job and event ids from a counter restarted by each call: two services given the same calls get the same ids."""
    counter = iter(())

    def restart(start: int = 1) -> None:
        nonlocal counter
        counter = (uuid.UUID(int=n) for n in range(start, 1 << 62))

    monkeypatch.setattr(service_module.uuid, "uuid4", lambda: next(counter))
    restart()
    return restart


def workload(service: Service, calls: int, seed: int) -> list[str]:
    """A random run: submissions (1-3 instances, some retried or with a preemption budget), priority updates,
    terminations, tags, share updates, a share created, and clock advances."""
    rng = random.Random(seed)
    jobs: list[str] = []
    for index in range(calls):
        roll = rng.random()
        try:
            if index % 8 == 7:
                service.control("advance", {"seconds": rng.choice([0.5, 5, 40, 200])})
            elif roll < 0.1 and jobs:
                service.call("UpdateServiceJob", {"jobId": rng.choice(jobs), "schedulingPriority": rng.randrange(10)})
            elif roll < 0.14 and jobs:
                service.call("TerminateServiceJob", {"jobId": rng.choice(jobs), "reason": "test"})
            elif roll < 0.17 and jobs:
                service.call("TagResource", {"resourceArn": f"arn:aws:batch:us-east-1:123456789012:service-job/"
                                                            f"{rng.choice(jobs)}", "tags": {"n": str(index)}})
            elif roll < 0.19:
                share = rng.choice(SHARES[:2])
                service.call("UpdateQuotaShare", {
                    "quotaShareArn": f"arn:aws:batch:us-east-1:123456789012:job-queue/{QUEUE}/quota-share/{share}",
                    "capacityLimits": [{"maxCapacity": rng.randrange(1, 4), "capacityUnit": INSTANCE}]})
            elif index == calls // 2:
                service.call("CreateQuotaShare", {
                    "quotaShareName": "D", "jobQueue": QUEUE,
                    "capacityLimits": [{"maxCapacity": 1, "capacityUnit": INSTANCE}],
                    "resourceSharingConfiguration": {"strategy": "RESERVE"},
                    "preemptionConfiguration": {"inSharePreemption": "DISABLED"}})
            else:
                body = {"jobName": f"j{index}", "jobQueue": QUEUE, "serviceJobType": "SAGEMAKER_TRAINING",
                        "quotaShareName": rng.choice(SHARES), "schedulingPriority": rng.randrange(10),
                        "serviceRequestPayload": payload(count=rng.choice([1, 1, 2, 3])),
                        "tags": {"batch-quota:duration": str(rng.choice([1, 30, 90, 600]))}}
                if rng.random() < 0.2:
                    body["retryStrategy"] = {"attempts": 2}
                    body["timeoutConfig"] = {"attemptDurationSeconds": 20}
                if rng.random() < 0.2:
                    body["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": 1}
                jobs.append(service.call("SubmitServiceJob", body)["jobId"])
        except ApiError:
            pass  # a call AWS rejects (a finished job's priority, a limit below the use): logged nowhere
    return jobs


def answers(service: Service, jobs: list[str]) -> dict[str, object]:
    """Everything a client reads: every job described, every list page, the queue's front, the trail, the export."""
    found: dict[str, object] = {job: service.call("DescribeServiceJob", {"jobId": job}) for job in jobs}
    for status in ("SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"):
        pages, token = [], None
        while True:
            page = service.call("ListServiceJobs", {"jobQueue": QUEUE, "jobStatus": status, "maxResults": 100,
                                                    **({"nextToken": token} if token else {})})
            pages.append(page)
            token = page.get("nextToken")
            if not token:
                break
        found[status] = pages
    found["snapshot"] = service.call("GetJobQueueSnapshot", {"jobQueue": QUEUE})
    found["shares"] = service.call("ListQuotaShares", {"jobQueue": QUEUE})
    # LookupEvents first: after a restart it is what reads the trail recorded before it
    found["lookup"] = [service.trail.lookup({"MaxResults": 50, "LookupAttributes": [
        {"AttributeKey": "EventName", "AttributeValue": name}]}) for name in ("SubmitServiceJob", "UpdateQuotaShare")]
    found["trail"] = [(e.at, e.name, e.request, e.response, e.event_id) for e in service.trail.events]
    scheduler = service.scheduler
    found["export"] = (scheduler.state_changes(), scheduler.updates, scheduler.terminations)
    found["clock"] = service.now
    return json.loads(json.dumps(found))  # tuples and lists alike


@pytest.mark.parametrize(("every", "preemption_seconds"), [(37, 0.0), (200, 25.0)])
def test_a_restart_from_a_checkpoint_answers_as_the_endpoint_that_never_stopped(tmp_path, ids, every,
                                                                                 preemption_seconds):
    options = Options(speed=0, checkpoint_every=every, preemption_seconds=preemption_seconds)
    path = tmp_path / "state.db"
    ids()
    recorded = Service(options, topology(), Store(path))
    jobs = workload(recorded, 700, seed=every)
    ids()
    never_stopped = Service(options, topology())  # no --state: no checkpoint ever taken
    never_stopped.origin_ms = never_stopped.trail.origin_ms = recorded.origin_ms  # the same epoch
    assert workload(never_stopped, 700, seed=every) == jobs
    expected = answers(never_stopped, jobs)
    assert answers(recorded, jobs) == expected  # taking checkpoints changes nothing
    assert {job["status"] for job in expected["FAILED"][0]["jobSummaryList"]} == {"FAILED"}
    recorded.save_clock()
    recorded.store.close()
    shutil.copy(path, tmp_path / "copy.db")
    ids()
    restored = Service(options, None, Store(path))
    assert restored.restored is not None and "from the checkpoint" in restored.restored
    assert int(restored.restored.split(", ")[1].split()[0]) < every  # only the calls after it replayed
    assert answers(restored, jobs) == expected
    ids()
    untouched = Service(options, None, Store(tmp_path / "copy.db"))  # goes on before anything reads its past
    for service in (restored, never_stopped, untouched):  # and all go on alike
        ids(1 << 40)
        more = workload(service, 150, seed=every + 1)
        service.control("advance", {"seconds": 5000})
    expected = answers(never_stopped, jobs + more)
    assert answers(restored, jobs + more) == expected
    assert answers(untouched, jobs + more) == expected
    restored.checkpoint()  # as at shutdown: the checkpoints after a restore append where the restored one ended
    restored.store.close()
    assert answers(Service(options, None, Store(path)), jobs + more) == expected


def test_a_checkpoint_that_cannot_be_used_is_set_aside_and_the_log_replayed(tmp_path, ids, caplog):
    options = Options(speed=0, checkpoint_every=50)
    path = tmp_path / "state.db"
    ids()
    recorded = Service(options, topology(), Store(path))
    jobs = workload(recorded, 300, seed=3)
    expected = answers(recorded, jobs)
    recorded.store.close()
    with sqlite3.connect(path) as db:  # as a later version of batch-quota might have written it
        state = json.loads(db.execute("SELECT state FROM checkpoint").fetchone()[0])
        db.execute("UPDATE checkpoint SET state = ?", (json.dumps({**state, "version": 999}),))
    restored = Service(options, None, Store(path))
    assert restored.restored is not None and "without a checkpoint" in restored.restored
    assert "the checkpoint is not used (CheckpointError: checkpoint version 999" in caplog.text
    created = len(Service(options, topology()).trail.events)  # the topology's Create records: new ids each start

    def logged(found):
        return {**found, "trail": [event[:4] for event in found["trail"][:created]] + found["trail"][created:]}

    assert logged(answers(restored, jobs)) == logged(expected)  # the logged calls' event ids too: the log keeps them


def test_a_clean_shutdown_checkpoints_so_a_restart_replays_nothing(tmp_path):
    from policy_engine.adapters.endpoint.server import start_in_thread
    from tests.policy_engine.adapters.endpoint.conftest import client, submit

    path = tmp_path / "state.db"
    with start_in_thread(Service(Options(speed=0), topology(), Store(path))) as running:
        batch = client(running)
        first = submit(batch, "a", "A")
        running.advance(10)
        described = batch.describe_service_job(jobId=first)
    restored = Service(Options(speed=0), None, Store(path))
    assert restored.restored is not None and ", 0 call(s) replayed" in restored.restored
    assert restored.call("DescribeServiceJob", {"jobId": first}) == {k: v for k, v in described.items()
                                                                     if k != "ResponseMetadata"}


def test_a_checkpoint_whose_trail_is_damaged_is_set_aside_at_restart_not_at_the_first_lookup(tmp_path, ids, caplog):
    # the trail recorded before a restart is read only when a LookupEvents needs it: damage must show at restart
    options = Options(speed=0, checkpoint_every=50)
    path = tmp_path / "state.db"
    ids()
    recorded = Service(options, topology(), Store(path))
    jobs = workload(recorded, 300, seed=5)
    expected = answers(recorded, jobs)
    recorded.store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE checkpoint_log SET rows = '[not json' WHERE kind = 'trail'")
    restored = Service(options, None, Store(path))
    assert restored.restored is not None and "without a checkpoint" in restored.restored
    assert "the checkpoint is not used (CheckpointError: the trail's rows cannot be read" in caplog.text
    assert answers(restored, jobs)["lookup"] == expected["lookup"]
