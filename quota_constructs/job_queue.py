"""``TrainingJobQueue``: a ``SAGEMAKER_TRAINING`` job queue with a quota-share scheduling policy.

aws-cdk-lib's L2 ``JobQueue`` cannot build this queue type, so this wraps ``CfnJobQueue``:
one service environment (AWS allows exactly one), the quota policy (created when not
given), a priority and optional ``jobStateTimeLimitActions`` that TERMINATE a job stuck
RUNNABLE at the front of the queue (it would otherwise hold every job behind it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aws_cdk import aws_batch as batch
from constructs import Construct

from policy_engine.foundation import limits
from policy_engine.foundation import model as m
from quota_constructs.arns import name_after
from quota_constructs.base import SchedulingPolicyBase, ServiceEnvironmentBase, TrainingJobQueueBase
from quota_constructs.quota_share import QuotaShare
from quota_constructs.scheduling_policy import QuotaSchedulingPolicy, default_scheduling_policy_name
from quota_constructs.validation import STATES, Where, construct_path, is_token

JOB_QUEUE_TYPE = "SAGEMAKER_TRAINING"


class TrainingJobQueue(TrainingJobQueueBase):
    """A quota-managed ``SAGEMAKER_TRAINING`` job queue.

    Without ``scheduling_policy`` the queue creates its own ``QuotaSchedulingPolicy``
    named ``scheduling_policy_name`` (default ``<queue>-quota-policy``).

    ``job_state_time_limit_actions`` takes ``policy_engine.model.JobStateTimeLimitAction``
    values, within AWS's bounds in ``policy_engine.limits``: ``max_time_seconds`` within ``TIME_LIMIT_SECONDS``,
    ``reason`` one of ``TIME_LIMIT_REASONS`` (the status reasons AWS accepts), action ``TIME_LIMIT_ACTION`` and
    state ``TIME_LIMIT_STATE``.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        job_queue_name: str,
        service_environment: ServiceEnvironmentBase,
        scheduling_policy: SchedulingPolicyBase | None = None,
        scheduling_policy_name: str | None = None,
        priority: int = 1,
        state: m.State = "ENABLED",
        job_state_time_limit_actions: Iterable[m.JobStateTimeLimitAction] = (),
        tags: Mapping[str, str] | None = None,
    ) -> None:
        where = Where("TrainingJobQueue", job_queue_name, scope, id)
        where.name_ok("job_queue_name", job_queue_name)
        where.number_ok("priority", priority, limits.QUEUE_PRIORITY)
        where.choice_ok("state", state, STATES)
        actions = [self._time_limit_action(where, index, a) for index, a in enumerate(job_state_time_limit_actions)]
        checked_tags = where.tags_ok(tags)
        if not isinstance(service_environment, ServiceEnvironmentBase):
            where.fail("service_environment", service_environment, "a ServiceEnvironment (or an imported one)")
        used_by = service_environment.used_by
        if used_by is not None:
            bound = limits.QUEUES_PER_ENVIRONMENT
            where.fail("service_environment", service_environment.service_environment_name,
                       f"a service environment no other job queue uses: job queue {used_by!r} already uses it "
                       f"({bound.what}: at most {bound.maximum})")
        if scheduling_policy is None:  # checked here, so that a refused policy name leaves no half-built queue
            policy_name = where.name_ok("scheduling_policy_name",
                                        scheduling_policy_name or default_scheduling_policy_name(job_queue_name))
        super().__init__(scope, id)
        self.scheduling_policy: SchedulingPolicyBase = (
            scheduling_policy if scheduling_policy is not None
            else QuotaSchedulingPolicy(self, "SchedulingPolicy", scheduling_policy_name=policy_name, tags=tags)
        )
        self.service_environment = service_environment
        self.resource = batch.CfnJobQueue(
            self,
            "Resource",
            job_queue_name=job_queue_name,
            job_queue_type=JOB_QUEUE_TYPE,
            priority=priority,
            state=state,
            scheduling_policy_arn=self.scheduling_policy.scheduling_policy_arn,
            service_environment_order=[
                batch.CfnJobQueue.ServiceEnvironmentOrderProperty(
                    order=1, service_environment=service_environment.service_environment_arn
                )
            ],
            job_state_time_limit_actions=actions or None,
            tags=checked_tags,
        )
        self.job_queue_name = job_queue_name
        self.job_queue_arn = self.resource.attr_job_queue_arn
        #: Names of the shares added so far (AWS: at most ``limits.SHARES_PER_QUEUE`` per queue, unique within it).
        self._quota_share_names: list[str] = []
        service_environment.use_for(job_queue_name)

    def add_quota_share_name(self, share_name: str) -> None:
        """Record a share built on this queue (``QuotaShare`` does), for ``check_new_share``."""
        self._quota_share_names.append(share_name)

    def check_new_share(self, share_name: str, where: Where) -> None:
        """Refuse a share AWS would: one past ``limits.SHARES_PER_QUEUE``, or a second one of a name (``where``: the
        new share)."""
        if not is_token(share_name) and share_name in self._quota_share_names:
            where.fail("quota_share_name", share_name,
                       f"a name not yet used in job queue {self.job_queue_name!r} (share names are unique per queue)")
        bound = limits.SHARES_PER_QUEUE
        if not bound.allows(len(self._quota_share_names) + 1):
            where.fail("job_queue", self.job_queue_name,
                       f"a job queue with room for another share: it already has {len(self._quota_share_names)} "
                       f"({bound.what}: at most {bound.maximum})")

    @staticmethod
    def _time_limit_action(where: Where, index: int, action: Any) -> batch.CfnJobQueue.JobStateTimeLimitActionProperty:
        if not isinstance(action, m.JobStateTimeLimitAction):
            where.fail(f"job_state_time_limit_actions[{index}]", action, "a JobStateTimeLimitAction")
        where.number_ok(f"job_state_time_limit_actions[{index}].max_time_seconds", action.max_time_seconds,
                        limits.TIME_LIMIT_SECONDS)
        if action.reason not in limits.TIME_LIMIT_REASONS:
            where.fail(f"job_state_time_limit_actions[{index}].reason", action.reason,
                       "one of " + ", ".join(limits.TIME_LIMIT_REASONS))
        return batch.CfnJobQueue.JobStateTimeLimitActionProperty(
            action=action.action, max_time_seconds=action.max_time_seconds, reason=action.reason, state=action.state
        )

    def add_quota_share(self, id: str, **props: Any) -> QuotaShare:
        """Add a ``QuotaShare`` to this queue (same props as ``QuotaShare`` minus ``job_queue``)."""
        return QuotaShare(self, id, job_queue=self, **props)

    @classmethod
    def from_model(
        cls, scope: Construct, id: str, queue: m.JobQueue, service_environment: ServiceEnvironmentBase
    ) -> TrainingJobQueue:
        """Build from a ``policy_engine`` job queue (its shares are added separately)."""
        return cls(
            scope,
            id,
            job_queue_name=queue.name,
            service_environment=service_environment,
            scheduling_policy_name=queue.scheduling_policy_name,
            priority=queue.priority,
            state=queue.state,
            job_state_time_limit_actions=queue.job_state_time_limit_actions,
            tags=queue.tags,
        )

    @classmethod
    def from_job_queue_arn(cls, scope: Construct, id: str, arn: str) -> TrainingJobQueueBase:
        """Reference an existing queue, e.g. to grant read access or import its shares."""
        return _ImportedJobQueue(scope, id, arn)


class _ImportedJobQueue(TrainingJobQueueBase):
    def __init__(self, scope: Construct, id: str, arn: str) -> None:
        name = name_after(arn, "job-queue/", "TrainingJobQueue.from_job_queue_arn", construct_path(scope, id))
        super().__init__(scope, id, environment_from_arn=arn)
        self.job_queue_arn = arn
        self.job_queue_name = name
