"""``QuotaShare``: a team's slice of a quota-managed job queue, with its grants.

Changing ``job_queue`` or ``quota_share_name`` replaces the share in CloudFormation
(both are create-only), so jobs in it are lost: rename with care.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Resource
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from constructs import Construct

from policy_engine import limits
from policy_engine import model as m
from quota_constructs import grants
from quota_constructs.arns import split_quota_share_arn
from quota_constructs.job_queue import TrainingJobQueue, TrainingJobQueueBase
from quota_constructs.props import STATES, STRATEGIES, Where, tag_problems


class QuotaShareBase(Resource):
    """Grants on a share, created here or imported with ``QuotaShare.from_quota_share_arn``."""

    quota_share_arn: str
    quota_share_name: str
    job_queue_arn: str
    job_queue_name: str

    @property
    def share_id(self) -> str:
        """``QUEUE/SHARE``, the value of ``grants.JOB_SHARE_TAG`` on this share's jobs."""
        return m.share_id(self.job_queue_name, self.quota_share_name)

    def _priority_caps(self) -> dict[int, tuple[iam.IGrantable, dict[str, int | None]]]:
        """Per grantee (by identity): the ``max_priority`` of its submit and update grants on this share."""
        caps = getattr(self, "_caps", None)
        if caps is None:
            caps = self._caps = {}
        return caps

    def _record_cap(self, grantee: iam.IGrantable, grant: str, max_priority: int | None) -> int | None:
        """Record a grant's cap; an update grant without one inherits the submit grant's; a higher one is refused.

        Without this a team capped at submission could raise its jobs above the cap with UpdateServiceJob.
        """
        caps = self._priority_caps().setdefault(id(grantee), (grantee, {}))[1]
        if grant == "update" and max_priority is None:
            max_priority = caps.get("submit")
        after = {**caps, grant: max_priority}
        submit = after.get("submit")
        if submit is not None and "update" in after and (after["update"] is None or after["update"] > submit):
            field = "max_priority" if grant == "update" else "max_priority of the earlier grant_update_priority"
            Where("QuotaShare", self.quota_share_name).fail(
                field, after["update"], f"at most {submit}, the max_priority of this grantee's grant_submit on the "
                "share (UpdateServiceJob would lift the submission cap); give both grants the same cap")
        caps[grant] = max_priority
        return max_priority

    def grant_submit(
        self,
        grantee: iam.IGrantable,
        *,
        max_priority: int | None = None,
        require_job_tag: bool = True,
        execution_role: iam.IRole | None = None,
        extra_tag_keys: tuple[str, ...] = (),
    ) -> iam.Grant:
        """Let ``grantee`` submit jobs to this share only (``batch:SubmitServiceJob``).

        ``max_priority`` caps the ``schedulingPriority`` it may ask for, and carries over to this grantee's
        ``grant_update_priority`` on the share. Every job must carry ``batch-quota:quota-share = QUEUE/SHARE``
        (``require_job_tag``, on by default), so that ``grant_update_priority`` is confined to the share's jobs;
        the grantee may add that tag key only, plus ``extra_tag_keys``. ``execution_role`` adds
        ``iam:PassRole`` for the SageMaker execution role the SDK passes.
        """
        where = Where("QuotaShare", self.quota_share_name)
        if max_priority is not None:
            where.number_ok("max_priority", max_priority, limits.JOB_PRIORITY)
        for key in extra_tag_keys:
            if not isinstance(key, str) or list(tag_problems({key: ""})):
                where.fail("extra_tag_keys", key, "a tag key AWS accepts (1-128 characters, not starting with 'aws:')")
        self._record_cap(grantee, "submit", max_priority)
        return grants.grant_submit(
            grantee,
            scope=self,
            queue_arn=self.job_queue_arn,
            share_arn=self.quota_share_arn,
            share_id=self.share_id,
            max_priority=max_priority,
            require_job_tag=require_job_tag,
            execution_role=execution_role,
            extra_tag_keys=tuple(extra_tag_keys),
        )

    def grant_update_priority(
        self, grantee: iam.IGrantable, *, max_priority: int | None = None, own_jobs_only: bool = True
    ) -> iam.Grant:
        """Let ``grantee`` change a job's scheduling priority (``batch:UpdateServiceJob``).

        IAM cannot name a share for this action; ``own_jobs_only`` confines it to jobs tagged
        with this share (``grant_submit`` requires that tag by default). Without ``max_priority`` the cap of
        this grantee's ``grant_submit`` on the share applies; a higher cap than that one is refused.
        """
        if max_priority is not None:
            Where("QuotaShare", self.quota_share_name).number_ok("max_priority", max_priority, limits.JOB_PRIORITY)
        max_priority = self._record_cap(grantee, "update", max_priority)
        return grants.grant_update_priority(
            grantee, scope=self, share_id=self.share_id if own_jobs_only else None, max_priority=max_priority
        )

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Describe this share and list the queue's shares (not other teams' jobs:
        see ``grant_read_account_service_jobs``)."""
        return grants.grant_read(
            grantee,
            scope=self,
            scoped={"batch:DescribeQuotaShare": [self.quota_share_arn], "batch:ListQuotaShares": [self.job_queue_arn]},
        )

    def grant_read_account_service_jobs(self, grantee: iam.IGrantable) -> iam.Grant:
        """Opt-in: ``ListServiceJobs``/``DescribeServiceJob`` on every service job of the account (IAM has no
        narrower resource), request payloads of other teams included. Needed by the SDK's ``list_jobs_by_share``."""
        return grants.grant_read_account_service_jobs(grantee, scope=self)


class QuotaShare(QuotaShareBase):
    """A quota share: capacity per instance type, strategy, borrow limit and in-share preemption.

    ``borrow_limit`` (percent of ``capacity``, -1 = unlimited) is only valid with
    ``LEND_AND_BORROW``; ``None`` leaves AWS's default (-1).
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
        where = Where("QuotaShare", quota_share_name)
        where.name_ok("quota_share_name", quota_share_name)
        capacity_limits = where.capacity_ok(
            "capacity", capacity, limits.SHARE_CAPACITY_LIMITS, limits.SHARE_MAX_CAPACITY
        )
        where.choice_ok("strategy", strategy, STRATEGIES)
        if borrow_limit is not None:
            if strategy != "LEND_AND_BORROW":
                where.fail("borrow_limit", borrow_limit, f"unset, because strategy is {strategy} "
                           "(borrow_limit only applies to LEND_AND_BORROW)")
            where.number_ok("borrow_limit", borrow_limit, limits.BORROW_LIMIT)
        if not isinstance(in_share_preemption, bool):
            where.fail("in_share_preemption", in_share_preemption, "True or False")
        where.choice_ok("state", state, STATES)
        checked_tags = where.tags_ok(tags)
        if not isinstance(job_queue, TrainingJobQueueBase):
            where.fail("job_queue", job_queue, "a TrainingJobQueue (or an imported one)")
        if isinstance(job_queue, TrainingJobQueue):  # an imported queue's existing shares are unknown here
            job_queue.check_new_share(quota_share_name)
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
                strategy=strategy, borrow_limit=borrow_limit
            ),
            preemption_configuration=batch.CfnQuotaShare.QuotaSharePreemptionConfigurationProperty(
                in_share_preemption="ENABLED" if in_share_preemption else "DISABLED"
            ),
            state=state,
            tags=checked_tags,
        )
        self.quota_share_name = quota_share_name
        self.quota_share_arn = self.resource.attr_quota_share_arn
        self.job_queue = job_queue
        self.job_queue_arn = job_queue.job_queue_arn
        self.job_queue_name = job_queue.job_queue_name
        if isinstance(job_queue, TrainingJobQueue):
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
        queue_arn, queue_name, share_name = split_quota_share_arn(arn)
        super().__init__(scope, id, environment_from_arn=arn)
        self.quota_share_arn = arn
        self.quota_share_name = share_name
        self.job_queue_arn = queue_arn
        self.job_queue_name = queue_name
