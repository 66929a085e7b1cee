"""Resource changes while jobs exist, over HTTP: the queue keeps scheduling, and the state is the simulator's.

Every call that changes resources (shares, queues, environments, policies, tags) is made while
jobs run and wait; afterwards a new job must be scheduled by the next pass, and every job's
state must equal a simulation of the same workload with the change as a scenario action.
"""

from __future__ import annotations

import pytest

from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate
from tests.policy_engine.adapters.endpoint.conftest import client
from tests.policy_engine.adapters.endpoint.twin import (
    G5_12,
    served_states,
    simulated_states,
    stack,
    submit,
    update_share,
)

ISSUE_SHARES = (("a", "LEND", 2, None), ("b", "LEND_AND_BORROW", 2, 100))


@pytest.mark.parametrize("borrow_limit", [100, 0], ids=["same-values", "borrow-limit-0"])
def test_a_share_update_while_jobs_wait_leaves_the_queue_scheduling(endpoint, borrow_limit):
    """The issue's reproduction: after UpdateQuotaShare, a new job stayed SUBMITTED forever."""
    batch = client(endpoint)
    arns = stack(batch, ISSUE_SHARES)
    topology = endpoint.service.account.topology()
    jobs = {"b1": submit(batch, "b1", "b", 2), "b2": submit(batch, "b2", "b", 4)}
    endpoint.advance(10)
    assert served_states(batch, jobs) == {"b1": ("RUNNING", 0), "b2": ("RUNNABLE", 0)}
    update_share(batch, arns["b"], resourceSharingConfiguration={"strategy": "LEND_AND_BORROW",
                                                                 "borrowLimit": borrow_limit})
    jobs["a1"] = submit(batch, "a1", "a", 1)
    assert served_states(batch, {"a1": jobs["a1"]}) == {"a1": ("RUNNING", 0)}  # the pass of its own instant
    endpoint.advance(5)
    endpoint.advance(20)
    jobs["a2"] = submit(batch, "a2", "a", 1)
    served = served_states(batch, jobs)
    assert served["a1"] == served["a2"] == ("RUNNING", 0)
    actions = [ShareUpdate(10, "training/b", {"borrow_limit": borrow_limit})] if borrow_limit != 100 else []
    assert served == simulated_states(endpoint, topology, actions, 35)


def test_lowering_the_borrow_limit_of_a_borrowing_share_makes_its_borrowed_job_a_reclaim_victim(endpoint):
    batch = client(endpoint)
    arns = stack(batch, ISSUE_SHARES)
    topology = endpoint.service.account.topology()
    jobs = {"b1": submit(batch, "b1", "b", 2), "b3": submit(batch, "b3", "b", 2)}  # b borrows a's 2
    endpoint.advance(10)
    update_share(batch, arns["b"], resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 0})
    endpoint.advance(10)
    jobs["a1"] = submit(batch, "a1", "a", 1)  # a reclaims its lent capacity from b
    served = served_states(batch, jobs)
    assert served == {"b1": ("RUNNING", 0), "b3": ("RUNNABLE", 1), "a1": ("RUNNING", 0)}
    endpoint.advance(3600)
    jobs["a2"] = submit(batch, "a2", "a", 1)
    served = served_states(batch, jobs)
    assert served["a2"] == ("RUNNING", 0)
    assert served == simulated_states(endpoint, topology, [ShareUpdate(10, "training/b", {"borrow_limit": 0})],
                                      3620)


def _change_share_limit(batch, arns):
    update_share(batch, arns["a"], capacityLimits=[{"maxCapacity": 1, "capacityUnit": G5_12}])
    return [ShareUpdate(10, "training/a", {"capacity": {G5_12: 1}})]


def _disable_share(batch, arns):
    update_share(batch, arns["b"], state="DISABLED")
    return [ShareUpdate(10, "training/b", {"state": "DISABLED"})]


def _change_strategy(batch, arns):
    update_share(batch, arns["a"], resourceSharingConfiguration={"strategy": "RESERVE"})
    return [ShareUpdate(10, "training/a", {"strategy": "RESERVE"})]


def _change_in_share_preemption(batch, arns):
    update_share(batch, arns["b"], preemptionConfiguration={"inSharePreemption": "ENABLED"})
    return [ShareUpdate(10, "training/b", {"in_share_preemption": True})]


def _cut_environment(batch, arns):
    batch.update_service_environment(serviceEnvironment="gpu",
                                     capacityLimits=[{"maxCapacity": 5, "capacityUnit": G5_12}])
    return [EnvironmentUpdate(10, "gpu", {G5_12: 5})]


def _disable_environment(batch, arns):
    batch.update_service_environment(serviceEnvironment="gpu", state="DISABLED")  # the engine has no env state
    return []


def _create_share(batch, arns):
    batch.create_quota_share(quotaShareName="c", jobQueue="training",
                             capacityLimits=[{"maxCapacity": 1, "capacityUnit": G5_12}],
                             resourceSharingConfiguration={"strategy": "LEND"},
                             preemptionConfiguration={"inSharePreemption": "DISABLED"})
    return None  # a new engine: compared with the scenario below only for liveness


def _delete_share(batch, arns):
    arns["c"] = batch.create_quota_share(quotaShareName="c", jobQueue="training",
                                         capacityLimits=[{"maxCapacity": 1, "capacityUnit": G5_12}],
                                         resourceSharingConfiguration={"strategy": "LEND"},
                                         preemptionConfiguration={"inSharePreemption": "DISABLED"})["quotaShareArn"]
    update_share(batch, arns["c"], state="DISABLED")
    batch.delete_quota_share(quotaShareArn=arns["c"])
    return []  # gone at the instant it came: the same as no change


def _other_queue(batch, arns):
    env = batch.create_service_environment(serviceEnvironmentName="cpu", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                           capacityLimits=[{"maxCapacity": 2, "capacityUnit": "ml.m5.xlarge"}])
    policy = batch.create_scheduling_policy(name="other", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    batch.create_job_queue(jobQueueName="other", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                           schedulingPolicyArn=policy["arn"],
                           serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env["serviceEnvironmentArn"]}])
    batch.update_job_queue(jobQueue="other", priority=5)
    batch.update_job_queue(jobQueue="other", state="DISABLED")
    batch.delete_job_queue(jobQueue="other")
    return []  # a new engine each time, which adopts every job as it was: the same as no change


def _update_queue(batch, arns):
    batch.update_job_queue(jobQueue="training", priority=3)  # one queue per environment: priority changes nothing
    return []


def _policy(batch, arns):
    arn = batch.create_scheduling_policy(name="spare", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"},
                                         tags={"team": "x"})["arn"]
    batch.update_scheduling_policy(arn=arn, quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    batch.delete_scheduling_policy(arn=arn)
    return []


def _tags(batch, arns):
    for arn in (arns["a"], arns["b"], "arn:aws:batch:us-east-1:123456789012:job-queue/training"):
        batch.tag_resource(resourceArn=arn, tags={"team": "ml"})
        batch.untag_resource(resourceArn=arn, tagKeys=["team"])
    job = batch.list_service_jobs(jobQueue="training")["jobSummaryList"][0]["jobArn"]
    batch.tag_resource(resourceArn=job, tags={"owner": "me"})
    return []


CHANGES = [_change_share_limit, _disable_share, _change_strategy, _change_in_share_preemption, _cut_environment,
           _disable_environment, _create_share, _delete_share, _other_queue, _update_queue, _policy, _tags]


@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__.strip("_") for c in CHANGES])
def test_every_resource_change_while_jobs_run_and_wait_keeps_the_queue_live_and_equal_to_the_simulator(
        endpoint, change):
    batch = client(endpoint)
    arns = stack(batch, ISSUE_SHARES)
    topology = endpoint.service.account.topology()
    jobs = {"b1": submit(batch, "b1", "b", 2, duration=100), "b2": submit(batch, "b2", "b", 4, duration=50),
            "b3": submit(batch, "b3", "b", 1, duration=40), "a0": submit(batch, "a0", "a", 1, duration=30)}
    endpoint.advance(10)
    actions = change(batch, arns)
    endpoint.advance(1)
    jobs["a1"] = submit(batch, "a1", "a", 1, duration=500)
    # the next scheduling pass (the submission's own instant) decided about it: it is never left SUBMITTED
    assert served_states(batch, {"a1": jobs["a1"]})["a1"][0] != "SUBMITTED"
    endpoint.advance(200)
    jobs["a2"] = submit(batch, "a2", "a", 1, duration=100)
    served = served_states(batch, jobs)
    assert all(status != "SUBMITTED" for status, _ in served.values()), served
    if actions is not None:  # a change the scenario expresses: the same states as the simulation
        assert served == simulated_states(endpoint, topology, actions, 211)


def test_an_oversubscribing_change_is_accepted_logged_once_naming_bq201_and_listed_in_findings(endpoint, caplog):
    batch = client(endpoint)
    arns = stack(batch, ISSUE_SHARES)  # 2 + 2 on 8: 4 instances belong to no share
    assert [f["rule"] for f in endpoint.control("GET", "findings")["findings"]] == ["BQ203"]
    caplog.clear()  # what creating the stack logged
    with caplog.at_level("WARNING", logger="batch_quota.serve"):
        update_share(batch, arns["a"], capacityLimits=[{"maxCapacity": 7, "capacityUnit": G5_12}])
        update_share(batch, arns["a"], capacityLimits=[{"maxCapacity": 7, "capacityUnit": G5_12}])  # no new line
    lines = [r.getMessage() for r in caplog.records if r.name == "batch_quota.serve"]
    assert len(lines) == 1, lines
    assert lines[0].startswith("BQ201 warning service_environments[gpu]: ml.g5.12xlarge: share limits add up to 9")
    assert batch.describe_quota_share(quotaShareArn=arns["a"])["capacityLimits"][0]["maxCapacity"] == 7
    findings = endpoint.control("GET", "findings")["findings"]
    assert [(f["rule"], f["severity"], f["object"]) for f in findings] == [
        ("BQ201", "warning", "service_environments[gpu]")]
    update_share(batch, arns["a"], capacityLimits=[{"maxCapacity": 6, "capacityUnit": G5_12}])
    assert endpoint.control("GET", "findings")["findings"] == []
