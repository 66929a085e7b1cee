"""``ServiceEnvironment``: the physical SageMaker Training capacity a quota-managed job queue draws on."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import aws_batch as batch
from constructs import Construct

from policy_engine.foundation import limits
from policy_engine.foundation import model as m
from quota_constructs.arns import name_after
from quota_constructs.base import ServiceEnvironmentBase
from quota_constructs.validation import STATES, Where, construct_path

SERVICE_ENVIRONMENT_TYPE = "SAGEMAKER_TRAINING"


class ServiceEnvironment(ServiceEnvironmentBase):
    """A ``SAGEMAKER_TRAINING`` service environment with capacity limits per instance type.

    ``capacity`` maps instance types to instance counts (``limits.ENVIRONMENT_CAPACITY_LIMITS`` types, each
    within ``limits.ENVIRONMENT_MAX_CAPACITY``), e.g. ``{"ml.g5.xlarge": 3}``.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        service_environment_name: str,
        capacity: Mapping[str, int],
        state: m.State = "ENABLED",
        tags: Mapping[str, str] | None = None,
    ) -> None:
        where = Where("ServiceEnvironment", service_environment_name, scope, id)
        where.name_ok("service_environment_name", service_environment_name)
        capacity_limits = where.capacity_ok(
            "capacity", capacity, limits.ENVIRONMENT_CAPACITY_LIMITS, limits.ENVIRONMENT_MAX_CAPACITY
        )
        where.choice_ok("state", state, STATES)
        checked_tags = where.tags_ok(tags)
        super().__init__(scope, id)
        self.resource = batch.CfnServiceEnvironment(
            self,
            "Resource",
            service_environment_name=service_environment_name,
            service_environment_type=SERVICE_ENVIRONMENT_TYPE,
            capacity_limits=[
                batch.CfnServiceEnvironment.CapacityLimitProperty(capacity_unit=unit, max_capacity=count)
                for unit, count in capacity_limits
            ],
            state=state,
            tags=checked_tags,
        )
        self.service_environment_name = service_environment_name
        self.service_environment_arn = self.resource.attr_service_environment_arn

    @classmethod
    def from_model(cls, scope: Construct, id: str, environment: m.ServiceEnvironment) -> ServiceEnvironment:
        """Build from a ``policy_engine`` service environment."""
        return cls(
            scope,
            id,
            service_environment_name=environment.name,
            capacity=environment.capacity,
            state=environment.state,
            tags=environment.tags,
        )

    @classmethod
    def from_service_environment_arn(cls, scope: Construct, id: str, arn: str) -> ServiceEnvironmentBase:
        """Reference an existing service environment, e.g. to build a queue on it in another stack."""
        return _ImportedServiceEnvironment(scope, id, arn)


class _ImportedServiceEnvironment(ServiceEnvironmentBase):
    def __init__(self, scope: Construct, id: str, arn: str) -> None:
        name = name_after(arn, "service-environment/", "ServiceEnvironment.from_service_environment_arn",
                          construct_path(scope, id))
        super().__init__(scope, id, environment_from_arn=arn)
        self.service_environment_arn = arn
        self.service_environment_name = name
