"""``QuotaSchedulingPolicy``: the scheduling policy that turns a job queue into a quota-managed one.

AWS allows one idle-resource assignment strategy (``FIFO``), and a quota-share policy can
never become a fair-share policy, so the only choice here is the name.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import aws_batch as batch
from constructs import Construct

from policy_engine.foundation import model as m
from quota_constructs.arns import name_after
from quota_constructs.base import SchedulingPolicyBase
from quota_constructs.validation import Where, construct_path

IDLE_RESOURCE_ASSIGNMENT_STRATEGY = "FIFO"


def default_scheduling_policy_name(job_queue_name: str) -> str:
    """The policy name of a queue that names none: the model's own default, so files and constructs agree."""
    return m.JobQueue(name=job_queue_name, service_environment="").scheduling_policy_name


class QuotaSchedulingPolicy(SchedulingPolicyBase):
    """A scheduling policy with ``quotaSharePolicy.idleResourceAssignmentStrategy = FIFO``."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        scheduling_policy_name: str,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        where = Where("QuotaSchedulingPolicy", scheduling_policy_name, scope, id)
        where.name_ok("scheduling_policy_name", scheduling_policy_name)
        checked_tags = where.tags_ok(tags)
        super().__init__(scope, id)
        self.resource = batch.CfnSchedulingPolicy(
            self,
            "Resource",
            name=scheduling_policy_name,
            quota_share_policy=batch.CfnSchedulingPolicy.QuotaSharePolicyProperty(
                idle_resource_assignment_strategy=IDLE_RESOURCE_ASSIGNMENT_STRATEGY
            ),
            tags=checked_tags,
        )
        self.scheduling_policy_name = scheduling_policy_name
        self.scheduling_policy_arn = self.resource.attr_arn

    @classmethod
    def from_scheduling_policy_arn(cls, scope: Construct, id: str, arn: str) -> SchedulingPolicyBase:
        """Reference an existing quota scheduling policy."""
        return _ImportedSchedulingPolicy(scope, id, arn)


class _ImportedSchedulingPolicy(SchedulingPolicyBase):
    def __init__(self, scope: Construct, id: str, arn: str) -> None:
        name = name_after(arn, "scheduling-policy/", "QuotaSchedulingPolicy.from_scheduling_policy_arn",
                          construct_path(scope, id))
        super().__init__(scope, id, environment_from_arn=arn)
        self.scheduling_policy_arn = arn
        self.scheduling_policy_name = name
