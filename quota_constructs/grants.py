"""Least-privilege IAM for quota shares and queues, from the Service Authorization Reference for AWS Batch.

What IAM can express (Service Authorization Reference, "Actions, resources, and condition
keys for AWS Batch"):

- ``batch:SubmitServiceJob`` authorizes against the ``job-queue`` (required), the
  ``quota-share`` named in the request, and ``service-job`` (required, ``service-job/*`` at
  submission). Allowing one share's ARN therefore denies a request that names another
  share of the same queue. Condition keys: ``batch:SchedulingPriority``, ``aws:RequestTag``,
  ``aws:TagKeys``, ``aws:ResourceTag``. There is no condition key for the share name.
- ``batch:UpdateServiceJob`` authorizes only against ``service-job`` (IDs unknown before
  submission) with ``batch:SchedulingPriority`` and ``aws:ResourceTag``: it can be confined to
  a share's jobs only through a tag those jobs carry (``JOB_SHARE_TAG``).
- Tagging on submission needs ``batch:TagResource`` on ``service-job/*``. Batch has no
  create-action condition key (EC2's ``ec2:CreateAction`` has no Batch counterpart; TagResource
  takes only ``aws:RequestTag``, ``aws:TagKeys`` and the job's ``aws:ResourceTag``), so the grant
  requires ``JOB_SHARE_TAG`` to be absent from the job (``Null``): a job submitted with another
  share's tag cannot be re-tagged, but a job submitted *without* the tag still can. ``aws:TagKeys``
  limits the keys it may add to ``JOB_SHARE_TAG`` (plus the keys a caller allows).
- The job tag is required by default, so that ``grant_update_priority`` confined to a share's
  jobs works out of the box.
- ``DescribeQuotaShare`` takes the share ARN, ``ListQuotaShares``/``GetJobQueueSnapshot`` the
  queue ARN; ``DescribeJobQueues``, ``DescribeServiceEnvironments`` and
  ``DescribeSchedulingPolicies`` accept only ``*``. So do ``ListServiceJobs`` and
  ``DescribeServiceJob``, which return every team's jobs and request payloads: they are a
  separate opt-in (``grant_read_account_service_jobs``), never part of ``grant_read``.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, ArnFormat, Stack, Validations
from aws_cdk import aws_iam as iam
from constructs import Construct, IConstruct

SUBMIT = "batch:SubmitServiceJob"
UPDATE = "batch:UpdateServiceJob"
TAG = "batch:TagResource"
#: Tag that ``require_job_tag`` puts on every job a share's grantee submits (value ``QUEUE/SHARE``).
JOB_SHARE_TAG = "batch-quota:quota-share"
PRIORITY_KEY = "batch:SchedulingPriority"

#: Read actions that accept only ``Resource: *`` (no resource-level permissions exist for them).
READ_ANY = (
    "batch:DescribeJobQueues",
    "batch:DescribeServiceEnvironments",
    "batch:DescribeSchedulingPolicies",
)
#: Every service job of the account, with its SageMaker request payload: only ``*`` exists, so an explicit opt-in.
READ_SERVICE_JOBS = (
    "batch:ListServiceJobs",
    "batch:DescribeServiceJob",
)


def service_jobs_arn(scope: IConstruct) -> str:
    """``arn:...:service-job/*``: the job resource ``SubmitServiceJob``/``UpdateServiceJob`` require."""
    return Stack.of(scope).format_arn(
        service="batch", resource="service-job", resource_name="*", arn_format=ArnFormat.SLASH_RESOURCE_NAME
    )


#: Why the two wildcards cdk-nag's AwsSolutions-IAM5 reports are what AWS forces (acknowledged on the grantee).
SERVICE_JOBS_WILDCARD_REASON = (
    "batch:SubmitServiceJob, UpdateServiceJob and TagResource authorize against the service job, whose ID does not "
    "exist before submission: AWS accepts only service-job/* here. Submission is confined by the queue and quota "
    "share ARNs, updates and tagging by the job's batch-quota:quota-share tag."
)
STAR_WILDCARD_REASON = (
    "DescribeJobQueues, DescribeServiceEnvironments, DescribeSchedulingPolicies, ListServiceJobs and "
    "DescribeServiceJob have no resource-level permissions: AWS accepts only Resource '*' for them."
)


def _nag_text(value: Any) -> str:
    """A resolved ARN as cdk-nag writes it in finding IDs: pseudo parameters as ``<AWS::Region>``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Ref" in value:
        return f"<{value['Ref']}>"
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(_nag_text(part) for part in parts)
    return str(value)


def acknowledge_wildcard(grantee: iam.IGrantable, scope: IConstruct, resource: str, reason: str) -> None:
    """Acknowledge cdk-nag's ``AwsSolutions-IAM5`` finding for ``resource`` on the grantee's policies.

    Only the wildcard named is acknowledged (CDK's ``Validations`` API, which cdk-nag 3 reads); a grantee
    that is not a construct (an imported principal) gets no policy here, so there is nothing to acknowledge.
    """
    if not isinstance(grantee, Construct):
        return
    text = _nag_text(Stack.of(scope).resolve(resource))
    Validations.of(grantee).acknowledge(Acknowledgment(id=f"AwsSolutions::AwsSolutions-IAM5[Resource::{text}]",
                                                       reason=reason))


def _merge(*conditions: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]] | None:
    merged: dict[str, dict[str, Any]] = {}
    for condition in conditions:
        for operator, pairs in (condition or {}).items():
            merged.setdefault(operator, {}).update(pairs)
    return merged or None


def _priority_at_most(max_priority: int | None, if_exists: bool) -> dict[str, dict[str, Any]] | None:
    if max_priority is None:
        return None
    operator = "NumericLessThanEqualsIfExists" if if_exists else "NumericLessThanEquals"
    return {operator: {PRIORITY_KEY: max_priority}}


def grant_submit(
    grantee: iam.IGrantable,
    *,
    scope: IConstruct,
    queue_arn: str,
    share_arn: str,
    share_id: str,
    max_priority: int | None = None,
    require_job_tag: bool = True,
    execution_role: iam.IRole | None = None,
    extra_tag_keys: tuple[str, ...] = (),
) -> iam.Grant:
    """Submit SageMaker Training jobs to one quota share of one queue (see the module docstring).

    ``extra_tag_keys``: other tag keys the grantee may put on its jobs besides ``JOB_SHARE_TAG``.
    """
    jobs = service_jobs_arn(scope)
    acknowledge_wildcard(grantee, scope, jobs, SERVICE_JOBS_WILDCARD_REASON)
    tag_condition = {"StringEquals": {f"aws:RequestTag/{JOB_SHARE_TAG}": share_id}} if require_job_tag else None
    grant = iam.Grant.add_to_principal(
        grantee=grantee,
        actions=[SUBMIT],
        resource_arns=[queue_arn, share_arn, jobs],
        conditions=_merge(_priority_at_most(max_priority, if_exists=True), tag_condition),
    )
    if require_job_tag:
        # Only jobs not yet carrying a share tag: else a team could re-tag another team's job as its own.
        untagged = {"Null": {f"aws:ResourceTag/{JOB_SHARE_TAG}": "true"}}
        only_keys = {"ForAllValues:StringEquals": {"aws:TagKeys": [JOB_SHARE_TAG, *extra_tag_keys]}}
        grant = grant.combine(
            iam.Grant.add_to_principal(
                grantee=grantee, actions=[TAG], resource_arns=[jobs],
                conditions=_merge(tag_condition, untagged, only_keys),
            )
        )
    if execution_role is not None:
        grant = grant.combine(
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=["iam:PassRole"],
                resource_arns=[execution_role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
            )
        )
    return grant


def grant_update_priority(
    grantee: iam.IGrantable,
    *,
    scope: IConstruct,
    share_id: str | None,
    max_priority: int | None = None,
) -> iam.Grant:
    """``UpdateServiceJob`` (change a job's scheduling priority).

    With ``share_id`` only jobs tagged ``JOB_SHARE_TAG = share_id`` qualify (``grant_submit`` tags them
    by default); without it, any service job of the account.
    """
    tag = {"StringEquals": {f"aws:ResourceTag/{JOB_SHARE_TAG}": share_id}} if share_id is not None else None
    jobs = service_jobs_arn(scope)
    acknowledge_wildcard(grantee, scope, jobs, SERVICE_JOBS_WILDCARD_REASON)
    return iam.Grant.add_to_principal(
        grantee=grantee,
        actions=[UPDATE],
        resource_arns=[jobs],
        conditions=_merge(_priority_at_most(max_priority, if_exists=False), tag),
    )


def grant_read_account_service_jobs(grantee: iam.IGrantable, *, scope: IConstruct) -> iam.Grant:
    """``ListServiceJobs`` and ``DescribeServiceJob`` on ``*``: every team's jobs and request payloads (opt-in)."""
    acknowledge_wildcard(grantee, scope, "*", STAR_WILDCARD_REASON)
    return iam.Grant.add_to_principal(grantee=grantee, actions=list(READ_SERVICE_JOBS), resource_arns=["*"])


def grant_read(grantee: iam.IGrantable, *, scope: IConstruct, scoped: dict[str, list[str]]) -> iam.Grant:
    """Read-only: ``scoped`` maps each resource-level action to its ARNs; ``READ_ANY`` goes on ``*``.

    Never the account's service jobs (``READ_SERVICE_JOBS``): see ``grant_read_account_service_jobs``.
    """
    acknowledge_wildcard(grantee, scope, "*", STAR_WILDCARD_REASON)
    grant = iam.Grant.add_to_principal(grantee=grantee, actions=list(READ_ANY), resource_arns=["*"])
    by_arns: dict[tuple[str, ...], list[str]] = {}
    for action, arns in scoped.items():
        by_arns.setdefault(tuple(arns), []).append(action)
    for same_arns, actions in by_arns.items():
        grant = grant.combine(
            iam.Grant.add_to_principal(grantee=grantee, actions=actions, resource_arns=list(same_arns))
        )
    return grant
