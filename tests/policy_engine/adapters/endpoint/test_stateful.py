"""A stateful test of the HTTP API: random interleavings of job calls, resource changes and clock advances.

boto3 drives a `serve` this test starts (speed 0: the clock moves only when a rule advances it).
After every step:

- no job is SUBMITTED: the scheduling pass of the call's own instant has decided about it;
- the simulator's invariants hold (usage is the sum of its running jobs, each line's head is its
  first waiting job, no placement in a pool above its capacity, every record mirrors its job);
- Describe and List agree: every job is listed under the status DescribeServiceJob gives it, once;
  GetJobQueueSnapshot's usage is the sum of the active jobs' ``capacityUsage``, its front the
  waiting jobs in priority order; ListQuotaShares, DescribeQuotaShare and ListTagsForResource
  say the same of each share;
- every refused call is a 4xx ``ClientException``, never a 5xx.

The number of examples and steps is bounded so the module runs in well under a minute.
"""

from __future__ import annotations

from collections import Counter

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

from policy_engine.adapters.endpoint.server import RunningEndpoint, start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.simulation.core.jobs import ACTIVE, Status
from tests.policy_engine.adapters.endpoint.conftest import client
from tests.policy_engine.adapters.endpoint.twin import submit

TYPES = ("ml.g5.xlarge", "ml.g5.2xlarge")
STATUSES = ("SUBMITTED", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED")
ACTIVE_NAMES = tuple(s.value for s in ACTIVE)
SHARE_NAMES = ("s0", "s1", "s2", "s3", "s4")
STRATEGIES = ("RESERVE", "LEND", "LEND_AND_BORROW")
QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/training"

_server: RunningEndpoint | None = None


@pytest.fixture(scope="module", autouse=True)
def server():
    global _server
    with start_in_thread(Service(Options(speed=0))) as running:
        _server = running
        yield running
    _server = None


def refused(call, *args, **kwargs):
    """Make a call AWS may refuse: a refusal must be a 4xx ClientException (never a 5xx); returns the answer or
    ``None``."""
    try:
        return call(*args, **kwargs)
    except ClientError as error:
        status = error.response["ResponseMetadata"]["HTTPStatusCode"]
        assert 400 <= status < 500 and error.response["Error"]["Code"] == "ClientException", error.response
        return None


def _limits(capacity: dict[str, int]) -> list[dict]:
    return [{"maxCapacity": n, "capacityUnit": t} for t, n in capacity.items()]


capacities = st.dictionaries(st.sampled_from(TYPES), st.integers(1, 3), min_size=1, max_size=2)
sharing = st.sampled_from(STRATEGIES).flatmap(
    lambda strategy: st.just({"strategy": strategy}) if strategy != "LEND_AND_BORROW"
    else st.sampled_from([None, -1, 0, 50, 100, 200]).map(
        lambda limit: {"strategy": strategy} | ({"borrowLimit": limit} if limit is not None else {})))


class ServeMachine(RuleBasedStateMachine):
    jobs = Bundle("jobs")

    def __init__(self) -> None:
        super().__init__()
        assert _server is not None
        self.endpoint = _server
        self.endpoint.reset()
        self.batch = client(self.endpoint)
        env = self.batch.create_service_environment(
            serviceEnvironmentName="gpu", serviceEnvironmentType="SAGEMAKER_TRAINING",
            capacityLimits=_limits({TYPES[0]: 4, TYPES[1]: 2}))
        policy = self.batch.create_scheduling_policy(name="quota",
                                                     quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
        self.batch.create_job_queue(jobQueueName="training", priority=1, jobQueueType="SAGEMAKER_TRAINING",
                                    schedulingPolicyArn=policy["arn"],
                                    serviceEnvironmentOrder=[{"order": 1,
                                                              "serviceEnvironment": env["serviceEnvironmentArn"]}])
        self.env_capacity = {TYPES[0]: 4, TYPES[1]: 2}
        #: share name -> ARN of the shares that exist
        self.shares: dict[str, str] = {}
        self.job_ids: list[str] = []
        self.counter = 0
        for name, strategy in (("s0", {"strategy": "LEND_AND_BORROW", "borrowLimit": 100}),
                               ("s1", {"strategy": "LEND"})):
            self._create(name, {TYPES[0]: 2, TYPES[1]: 1}, strategy)

    def _create(self, name: str, capacity: dict[str, int], strategy: dict) -> None:
        answer = refused(self.batch.create_quota_share, quotaShareName=name, jobQueue="training",
                         capacityLimits=_limits(capacity), resourceSharingConfiguration=strategy,
                         preemptionConfiguration={"inSharePreemption": "DISABLED"})
        if answer is not None:
            self.shares[name] = answer["quotaShareArn"]

    # --- job calls ---------------------------------------------------------------------------

    @rule(target=jobs, share=st.sampled_from(SHARE_NAMES), instance_type=st.sampled_from(TYPES),
          count=st.integers(1, 3), priority=st.integers(0, 3), duration=st.sampled_from([5, 30, 120, 600]))
    def submit_job(self, share, instance_type, count, priority, duration):
        self.counter += 1
        job = refused(submit, self.batch, f"j{self.counter}", share, count, priority, duration, instance_type)
        if job is None:
            return None
        self.job_ids.append(job)
        return job

    @rule(job=jobs, priority=st.integers(0, 4))
    def update_priority(self, job, priority):
        if job is not None:
            refused(self.batch.update_service_job, jobId=job, schedulingPriority=priority)

    @rule(job=consumes(jobs))
    def terminate(self, job):
        if job is not None:
            refused(self.batch.terminate_service_job, jobId=job, reason="stateful test")

    # --- resource changes ----------------------------------------------------------------------

    @rule(name=st.sampled_from(SHARE_NAMES), capacity=capacities, strategy=sharing)
    def create_share(self, name, capacity, strategy):
        self._create(name, capacity, strategy)

    @rule(name=st.sampled_from(SHARE_NAMES), capacity=st.none() | capacities, strategy=st.none() | sharing,
          preemption=st.none() | st.sampled_from(["ENABLED", "DISABLED"]),
          state=st.none() | st.sampled_from(["ENABLED", "DISABLED"]))
    def update_share(self, name, capacity, strategy, preemption, state):
        if name not in self.shares:
            return
        request = {"quotaShareArn": self.shares[name]}
        if capacity is not None:
            request["capacityLimits"] = _limits(capacity)
        if strategy is not None:
            request["resourceSharingConfiguration"] = strategy
        if preemption is not None:
            request["preemptionConfiguration"] = {"inSharePreemption": preemption}
        if state is not None:
            request["state"] = state
        refused(self.batch.update_quota_share, **request)

    @rule(name=st.sampled_from(SHARE_NAMES))
    def disable_and_delete_share(self, name):
        if name not in self.shares:
            return
        arn = self.shares[name]
        refused(self.batch.update_quota_share, quotaShareArn=arn, state="DISABLED")
        if refused(self.batch.delete_quota_share, quotaShareArn=arn) is not None:  # its unfinished jobs end FAILED
            del self.shares[name]

    @rule(first=st.integers(0, 8), second=st.integers(0, 4))
    def update_environment(self, first, second):
        capacity = {TYPES[0]: first, TYPES[1]: second}
        if refused(self.batch.update_service_environment, serviceEnvironment="gpu",
                   capacityLimits=_limits(capacity)) is not None:
            self.env_capacity = capacity

    @rule(job=jobs, share=st.sampled_from(SHARE_NAMES), key=st.sampled_from(["team", "cost"]))
    def tag_and_untag(self, job, share, key):
        arns = [QUEUE_ARN] + ([self.shares[share]] if share in self.shares else [])
        if job is not None:
            arns.append(f"arn:aws:batch:us-east-1:123456789012:service-job/{job}")
        for arn in arns:
            refused(self.batch.tag_resource, resourceArn=arn, tags={key: "x"})
        refused(self.batch.untag_resource, resourceArn=arns[-1], tagKeys=[key])

    @rule(seconds=st.sampled_from([0, 1, 5, 30, 100, 700]))
    def advance(self, seconds):
        self.endpoint.advance(seconds)

    # --- after every step ---------------------------------------------------------------------

    @invariant()
    def nothing_is_left_submitted_and_lists_agree_with_describe(self):
        batch = self.batch
        described = {job: batch.describe_service_job(jobId=job) for job in self.job_ids}
        assert not [d["jobName"] for d in described.values() if d["status"] == "SUBMITTED"]
        listed: Counter[str] = Counter()
        for status in STATUSES:
            for page in batch.get_paginator("list_service_jobs").paginate(jobQueue="training", jobStatus=status):
                for summary in page["jobSummaryList"]:
                    listed[summary["jobId"]] += 1
                    assert described[summary["jobId"]]["status"] == status, (summary, status)
        assert set(listed) == set(described) and set(listed.values()) <= {1}
        snapshot = batch.get_job_queue_snapshot(jobQueue="training")
        usage: Counter[str] = Counter()
        for detail in described.values():
            if detail["status"] in ACTIVE_NAMES:
                for item in detail["capacityUsage"]:
                    usage[item["capacityUnit"]] += int(item["quantity"])
        total = {u["capacityUnit"]: int(u["quantity"]) for u in snapshot["queueUtilization"]["totalCapacityUsage"]}
        assert total == {unit: count for unit, count in usage.items() if count}
        waiting = sorted((d for d in described.values() if d["status"] == "RUNNABLE"),
                         key=lambda d: (-d["schedulingPriority"], d["createdAt"], self.job_ids.index(d["jobId"])))
        assert [j["jobArn"] for j in snapshot["frontOfQueue"]["jobs"]] == [d["jobArn"] for d in waiting][:100]
        shares = {s["quotaShareName"]: s for s in batch.list_quota_shares(jobQueue="training")["quotaShares"]}
        assert set(shares) == set(self.shares)
        for name, arn in self.shares.items():
            detail = batch.describe_quota_share(quotaShareArn=arn)
            detail.pop("ResponseMetadata")
            tags = detail.pop("tags", {})
            assert detail == shares[name]
            assert batch.list_tags_for_resource(resourceArn=arn)["tags"] == tags

    @invariant()
    def the_simulators_invariants_hold_and_records_mirror_it(self):
        scheduler = self.endpoint.service.scheduler
        engine = scheduler.engine
        for pool in engine.pools:
            for share in pool.shares:
                assert share.used == sum(job.spec.instances for job in share.active)
                assert share.active_priorities == dict(Counter(job.priority for job in share.active))
                assert share.line.first is next(share.line.in_order(), None)
                for job in share.line.in_order():
                    assert job.status is Status.RUNNABLE
                for job in share.active:
                    assert job.status in ACTIVE
        environments = {id(pool.env): pool.env for pool in engine.pools}
        for env in environments.values():
            used = sum(share.used for pool in env.pools for share in pool.shares)
            assert env.used == used >= 0
        for record in scheduler.jobs.records:
            job = scheduler.job(record)
            if job is None:  # finished before the engine was replaced, or failed as its share or type went
                assert record.status in ("SUCCEEDED", "FAILED"), (record.name, record.status)
                continue
            assert record.status == job.status.value, (record.name, record.status, job.status)


ServeMachine.TestCase.settings = settings(max_examples=10, stateful_step_count=12, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
test_serve_stateful = ServeMachine.TestCase

