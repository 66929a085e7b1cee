"""``ReadOnlyQuotaAccess``: the IAM managed policy ``batch-quota import/drift/snapshot/history`` need (Batch, and
CloudTrail's and SageMaker's reads).

The statements come from ``policy_engine.adapters.aws.iam_policy`` (what ``batch-quota iam-policy``
prints), scoped to the stack's account and Region, so a CI role gets exactly that.
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from constructs import Construct

from policy_engine.adapters.aws.iam_policy import COMMAND_OPERATIONS, statements
from quota_constructs.errors import QuotaConstructError
from quota_constructs.grants import STAR_WILDCARD_REASON, acknowledge_wildcard
from quota_constructs.validation import construct_path

#: Why reading every queue and share of the account is the point of this policy (cdk-nag AwsSolutions-IAM5).
ACCOUNT_WIDE_READ_REASON = ("batch-quota import and drift read every job queue and quota share of the account "
                            "to compare it with the topology; the actions are read-only")
#: Why reading every training plan of the account is (the plans are account-wide, not a queue's).
PLAN_READ_REASON = ("batch-quota import, drift and snapshot describe every SageMaker training plan of the account "
                    "(a plan serves every queue); DescribeTrainingPlan is read-only")


class ReadOnlyQuotaAccess(Construct):
    """A managed policy with the read-only Batch actions of ``commands`` (default: every account command)."""

    def __init__(self, scope: Construct, id: str, *, commands: Sequence[str] | None = None,
                 roles: Sequence[iam.IRole] = ()) -> None:
        chosen = tuple(commands) if commands else None
        if chosen is not None:
            unknown = [c for c in chosen if c not in COMMAND_OPERATIONS]
            if unknown:
                raise QuotaConstructError(f"ReadOnlyQuotaAccess: commands {unknown!r} are invalid; "
                                          f"expected some of {', '.join(COMMAND_OPERATIONS)}",
                                          path=construct_path(scope, id), field="commands", value=unknown)
        super().__init__(scope, id)
        self.policy = iam.ManagedPolicy(
            self, "Policy",
            description="Read-only access for batch-quota import, drift, snapshot and history",
            statements=[iam.PolicyStatement.from_json(statement)
                        for statement in statements(chosen, region=Aws.REGION, account=Aws.ACCOUNT_ID,
                                                    partition=Aws.PARTITION)],
            roles=list(roles) or None,
        )
        for statement in statements(chosen, region=Aws.REGION, account=Aws.ACCOUNT_ID, partition=Aws.PARTITION):
            resource = statement["Resource"]
            reason = (STAR_WILDCARD_REASON if resource == "*" else
                      PLAN_READ_REASON if ":training-plan/" in resource else ACCOUNT_WIDE_READ_REASON)
            acknowledge_wildcard(self.policy, self, resource, reason)

    def grant(self, role: iam.IRole) -> None:
        """Attach the policy to ``role`` (e.g. a CI role)."""
        role.add_managed_policy(self.policy)
