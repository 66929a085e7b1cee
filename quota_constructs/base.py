"""The base classes of the constructs: what one construct needs from another, created here or imported.

As in aws-cdk's ``aws-batch`` (``compute-environment-base.ts``), each resource has a base class
holding its attributes and ``grant_*`` methods, a concrete class that creates it, and a private
``_Imported*`` class behind ``from_*_arn``. The bases live here, below every concrete construct,
so a construct module needs only this one to refer to another resource and no two construct
modules import each other (``QuotaShare`` takes a ``TrainingJobQueueBase``; ``TrainingJobQueue``
creates ``QuotaShare``s).
"""

from __future__ import annotations

from aws_cdk import Resource
from aws_cdk import aws_iam as iam

from policy_engine.foundation import limits
from policy_engine.foundation import model as m
from policy_engine.foundation.aws_rules import tag_problems
from quota_constructs import grants
from quota_constructs.validation import Where


class ServiceEnvironmentBase(Resource):
    """What a job queue needs from a service environment, created here or imported."""

    service_environment_arn: str
    service_environment_name: str
    _job_queue_name: str | None = None

    @property
    def used_by(self) -> str | None:
        """The job queue built on this environment in this app (AWS allows one per quota-managed environment)."""
        return self._job_queue_name

    def use_for(self, job_queue_name: str) -> None:
        """Record the job queue built on this environment (``TrainingJobQueue`` refuses a second one)."""
        self._job_queue_name = job_queue_name


class SchedulingPolicyBase(Resource):
    """What a job queue needs from a scheduling policy, created here or imported."""

    scheduling_policy_arn: str
    scheduling_policy_name: str


class TrainingJobQueueBase(Resource):
    """What quota shares and grants need from a queue, created here or imported."""

    job_queue_arn: str
    job_queue_name: str

    def check_new_share(self, share_name: str, where: Where) -> None:
        """Refuse a share AWS would refuse on this queue. An imported queue's existing shares are unknown
        here, so it accepts any; ``TrainingJobQueue`` knows its own and refuses a duplicate or one more than
        ``limits.SHARES_PER_QUEUE`` allows."""

    def add_quota_share_name(self, share_name: str) -> None:
        """Record a share built on this queue (``QuotaShare`` does), for ``check_new_share``."""

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Describe the queue, list its shares and read its snapshot (no submit, no update, not other teams'
        jobs: see ``grant_read_account_service_jobs``)."""
        return grants.grant_read(
            grantee,
            scope=self,
            scoped={"batch:ListQuotaShares": [self.job_queue_arn], "batch:GetJobQueueSnapshot": [self.job_queue_arn]},
        )

    def grant_read_account_service_jobs(self, grantee: iam.IGrantable) -> iam.Grant:
        """Opt-in: ``ListServiceJobs``/``DescribeServiceJob`` on every service job of the account (IAM has no
        narrower resource), request payloads of other teams included."""
        return grants.grant_read_account_service_jobs(grantee, scope=self)


#: Per grantee (by identity): the grantee and the ``max_priority`` of its ``submit``/``update`` grants on a share.
PriorityCaps = dict[int, tuple[iam.IGrantable, dict[str, int | None]]]


class QuotaShareBase(Resource):
    """Grants on a share, created here or imported with ``QuotaShare.from_quota_share_arn``."""

    quota_share_arn: str
    quota_share_name: str
    job_queue_arn: str
    job_queue_name: str
    #: The instance types of the share's capacity limits (empty for an imported share: not known here).
    instance_types: tuple[str, ...] = ()
    _caps: PriorityCaps | None = None

    @property
    def share_id(self) -> str:
        """``QUEUE/SHARE``, the value of ``grants.JOB_SHARE_TAG`` on this share's jobs."""
        return m.share_id(self.job_queue_name, self.quota_share_name)

    def _priority_caps(self) -> PriorityCaps:
        """Per grantee (by identity): the ``max_priority`` of its submit and update grants on this share."""
        if self._caps is None:
            self._caps = {}
        return self._caps

    def _record_cap(self, grantee: iam.IGrantable, grant: str, max_priority: int | None) -> int | None:
        """Record a grant's cap; an update grant without one inherits the submit grant's; a higher one is refused.

        Without this a team capped at submission could raise its jobs above the cap with UpdateServiceJob.
        """
        caps = self._priority_caps().setdefault(id(grantee), (grantee, {}))[1]
        if grant == "update" and max_priority is None:
            max_priority = caps.get("submit")
        after = {**caps, grant: max_priority}
        submit = after.get("submit")
        update = after.get("update")
        if submit is not None and "update" in after and (update is None or update > submit):
            field = "max_priority" if grant == "update" else "max_priority of the earlier grant_update_priority"
            Where("QuotaShare", self.quota_share_name, self).fail(
                field, update, f"at most {submit}, the max_priority of this grantee's grant_submit on the "
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
        where = Where("QuotaShare", self.quota_share_name, self)
        if max_priority is not None:
            where.number_ok("max_priority", max_priority, limits.JOB_PRIORITY)
        for key in extra_tag_keys:
            if not isinstance(key, str) or list(tag_problems({key: ""})):
                where.fail("extra_tag_keys", key, f"a tag key AWS accepts ({limits.TAG_KEY_LENGTH.range_text()} "
                           f"characters, not starting with {limits.SYSTEM_TAG_PREFIX!r})")
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
            where = Where("QuotaShare", self.quota_share_name, self)
            where.number_ok("max_priority", max_priority, limits.JOB_PRIORITY)
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
