"""``QuotaShare``: a team's slice of a quota-managed job queue, with its grants.

Changing ``job_queue`` or ``quota_share_name`` replaces the share in CloudFormation
(both are create-only), so jobs in it are lost: rename with care.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import aws_batch as batch
from constructs import Construct

from policy_engine.foundation import limits
from policy_engine.foundation import model as m
from policy_engine.foundation.aws_rules import SharingProblem, sharing_problems, written_borrow_limit
from quota_constructs.arns import split_quota_share_arn
from quota_constructs.base import QuotaShareBase, TrainingJobQueueBase
from quota_constructs.validation import STATES, STRATEGIES, Where, construct_path


class QuotaShare(QuotaShareBase):
    """A quota share: capacity per instance type, strategy, borrow limit and in-share preemption.

    ``borrow_limit`` (percent of ``capacity``, ``model.UNLIMITED_BORROW`` = unlimited) is only valid with
    ``LEND_AND_BORROW``; ``None`` is AWS's default (-1), written explicitly (``aws_rules.written_borrow_limit``).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        job_queue: TrainingJobQueueBase,
        quota_share_name: str,
        capacity: Mapping[str, int],
        strategy: m.Strategy,
        borrow_limit: int | None = None,
        in_share_preemption: bool = False,
        state: m.State = "ENABLED",
        tags: Mapping[str, str] | None = None,
    ) -> None:
        where = Where("QuotaShare", quota_share_name, scope, id)
        where.name_ok("quota_share_name", quota_share_name)
        capacity_limits = where.capacity_ok(
            "capacity", capacity, limits.SHARE_CAPACITY_LIMITS, limits.SHARE_MAX_CAPACITY
        )
        where.choice_ok("strategy", strategy, STRATEGIES)
        if SharingProblem.NOT_BORROWING in sharing_problems(strategy, borrow_limit):
            where.fail("borrow_limit", borrow_limit, f"unset, because strategy is {strategy} "
                       "(borrow_limit only applies to LEND_AND_BORROW)")
        if borrow_limit is not None:
            where.number_ok("borrow_limit", borrow_limit, limits.BORROW_LIMIT)  # its type, and the range
        if not isinstance(in_share_preemption, bool):
            where.fail("in_share_preemption", in_share_preemption, "True or False")
        where.choice_ok("state", state, STATES)
        checked_tags = where.tags_ok(tags)
        if not isinstance(job_queue, TrainingJobQueueBase):
            where.fail("job_queue", job_queue, "a TrainingJobQueue (or an imported one)")
        job_queue.check_new_share(quota_share_name, where)
        super().__init__(scope, id)
        self.resource = batch.CfnQuotaShare(
            self,
            "Resource",
            quota_share_name=quota_share_name,
            job_queue=job_queue.job_queue_arn,
            capacity_limits=[
                batch.CfnQuotaShare.QuotaShareCapacityLimitProperty(capacity_unit=unit, max_capacity=count)
                for unit, count in capacity_limits
            ],
            resource_sharing_configuration=batch.CfnQuotaShare.QuotaShareResourceSharingConfigurationProperty(
                strategy=strategy, borrow_limit=written_borrow_limit(strategy, borrow_limit)
            ),
            preemption_configuration=batch.CfnQuotaShare.QuotaSharePreemptionConfigurationProperty(
                in_share_preemption="ENABLED" if in_share_preemption else "DISABLED"
            ),
            state=state,
            tags=checked_tags,
        )
        self.quota_share_name = quota_share_name
        self.instance_types = tuple(unit for unit, _ in capacity_limits)
        self.quota_share_arn = self.resource.attr_quota_share_arn
        self.job_queue = job_queue
        self.job_queue_arn = job_queue.job_queue_arn
        self.job_queue_name = job_queue.job_queue_name
        job_queue.add_quota_share_name(quota_share_name)

    @classmethod
    def from_model(cls, scope: Construct, id: str, share: m.QuotaShare, job_queue: TrainingJobQueueBase) -> QuotaShare:
        """Build from a ``policy_engine`` quota share."""
        return cls(
            scope,
            id,
            job_queue=job_queue,
            quota_share_name=share.name,
            capacity=share.capacity,
            strategy=share.strategy,
            borrow_limit=share.borrow_limit,
            in_share_preemption=share.in_share_preemption,
            state=share.state,
            tags=share.tags,
        )

    @classmethod
    def from_quota_share_arn(cls, scope: Construct, id: str, arn: str) -> QuotaShareBase:
        """Reference an existing share (``arn:...:job-queue/QUEUE/quota-share/SHARE``) to grant on it."""
        return _ImportedQuotaShare(scope, id, arn)


class _ImportedQuotaShare(QuotaShareBase):
    def __init__(self, scope: Construct, id: str, arn: str) -> None:
        queue_arn, queue_name, share_name = split_quota_share_arn(arn, construct_path(scope, id))
        super().__init__(scope, id, environment_from_arn=arn)
        self.quota_share_arn = arn
        self.quota_share_name = share_name
        self.job_queue_arn = queue_arn
        self.job_queue_name = queue_name
