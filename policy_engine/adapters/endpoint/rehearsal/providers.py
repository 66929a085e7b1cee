"""What a template's resources become: the Batch types through the endpoint's own operations (the same
handlers and validation as an API call), every other type stored with the ids and ARNs AWS would give it.

A Batch resource is created, updated and deleted as CloudFormation's Batch handlers do it: create, update
in place with the members its update operation takes, and delete after ``state: DISABLED``. Each reaches its
final status (VALID, or gone) before the next step, whatever ``--speed`` and ``--transition-seconds``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.base.protocol import service_model
from policy_engine.adapters.endpoint.base.validation import validate

Params = dict[str, Any]


class Provider(Protocol):
    def create(self, stack: str, logical: str, properties: Params) -> Created: ...

    def update(self, current: Created, before: Params, after: Params) -> Created: ...

    def delete(self, current: Created, properties: Params) -> None: ...


class BatchCalls(Protocol):
    """What the rehearsal asks of the endpoint: one Batch operation as an API call runs it, and the end of a
    resource's transition (CREATING, UPDATING, DELETING) now."""

    def call(self, name: str, params: Params) -> Params: ...

    def finish_transition(self, arn: str) -> None: ...


@dataclass(frozen=True)
class Created:
    """A resource as CloudFormation knows it: ``Ref``'s value and ``Fn::GetAtt``'s attributes."""

    physical: str
    attributes: dict[str, Any]


@dataclass(frozen=True)
class BatchType:
    """An ``AWS::Batch::*`` type: its operations, the member naming the resource in update and delete, the
    attribute holding its ARN, and whether it is disabled before deletion."""

    create: str
    update: str
    delete: str
    arn_attribute: str
    id_member: str
    name_property: str
    has_state: bool = True


BATCH_TYPES: dict[str, BatchType] = {
    "AWS::Batch::ServiceEnvironment": BatchType("CreateServiceEnvironment", "UpdateServiceEnvironment",
                                                "DeleteServiceEnvironment", "ServiceEnvironmentArn",
                                                "serviceEnvironment", "ServiceEnvironmentName"),
    "AWS::Batch::SchedulingPolicy": BatchType("CreateSchedulingPolicy", "UpdateSchedulingPolicy",
                                              "DeleteSchedulingPolicy", "Arn", "arn", "Name", has_state=False),
    "AWS::Batch::JobQueue": BatchType("CreateJobQueue", "UpdateJobQueue", "DeleteJobQueue", "JobQueueArn",
                                      "jobQueue", "JobQueueName"),
    "AWS::Batch::QuotaShare": BatchType("CreateQuotaShare", "UpdateQuotaShare", "DeleteQuotaShare",
                                        "QuotaShareArn", "quotaShareArn", "QuotaShareName"),
}


def _camel(value: Any, key: str = "") -> Any:
    """CloudFormation's property names as the API's members (``CapacityLimits`` -> ``capacityLimits``); tags
    are a map either way (a ``[{Key, Value}]`` list is read as one)."""
    if key == "Tags":
        if isinstance(value, list):
            return {item["Key"]: item["Value"] for item in value}
        return value
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: _camel(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(item) for item in value]
    return value


@cache
def _members(operation: str) -> frozenset[str]:
    shape = service_model("batch").operation_model(operation).input_shape
    return frozenset(shape.members) if shape is not None else frozenset()


def _checked(operation: str, params: Params) -> Params:
    """The members the operation takes, checked against its botocore input shape as a request is."""
    shape = service_model("batch").operation_model(operation).input_shape
    unknown = sorted(set(params) - set(shape.members))
    if unknown:
        raise ApiError(f"Properties {unknown} are not members of {operation}", "ValidationError", 400)
    problems = validate(shape, params)
    if problems:
        raise ApiError(f"{len(problems)} validation error{'s' if len(problems) > 1 else ''} detected: "
                       + "; ".join(problems))
    return params


def generated_name(stack: str, logical: str, limit: int = 128) -> str:
    """CloudFormation's name for a resource whose template names none: ``STACK-LOGICAL-SUFFIX``."""
    suffix = uuid.uuid4().hex[:12].upper()
    head = f"{stack}-{logical}"[: limit - len(suffix) - 1]
    return f"{head}-{suffix}"


class BatchProvider:
    """An ``AWS::Batch::*`` resource through the endpoint's operations."""

    def __init__(self, batch: BatchCalls, kind: BatchType) -> None:
        self.batch = batch
        self.kind = kind

    def create(self, stack: str, logical: str, properties: Params) -> Created:
        kind = self.kind
        params = _camel(properties)
        name_member = kind.name_property[:1].lower() + kind.name_property[1:]
        if name_member not in params:
            params[name_member] = generated_name(stack, logical)
        result = self.batch.call(kind.create, _checked(kind.create, params))
        arn = str(result.get("arn") or result.get(kind.id_member) or
                  next(v for k, v in result.items() if k.endswith("Arn")))
        self.batch.finish_transition(arn)
        return Created(arn, {kind.arn_attribute: arn})

    def update(self, current: Created, before: Params, after: Params) -> Created:
        kind = self.kind
        physical = current.physical
        old, new = _camel(before), _camel(after)
        allowed = _members(kind.update) - {kind.id_member}
        changed = {k: v for k, v in new.items() if k in allowed and old.get(k) != v}
        if changed:
            self.batch.call(kind.update, _checked(kind.update, {kind.id_member: physical, **changed}))
            self.batch.finish_transition(physical)
        old_tags, new_tags = old.get("tags") or {}, new.get("tags") or {}
        gone = sorted(set(old_tags) - set(new_tags))
        if gone:
            self.batch.call("UntagResource", {"resourceArn": physical, "tagKeys": gone})
        if new_tags and new_tags != old_tags:
            self.batch.call("TagResource", {"resourceArn": physical, "tags": new_tags})
        return Created(physical, {kind.arn_attribute: physical})

    def delete(self, current: Created, properties: Params) -> None:
        kind = self.kind
        physical = current.physical
        try:
            if kind.has_state:
                self.batch.call(kind.update, {kind.id_member: physical, "state": "DISABLED"})
                self.batch.finish_transition(physical)
            self.batch.call(kind.delete, {kind.id_member: physical})
        except ApiError as error:
            if "does not exist" not in error.message:  # gone already: deleted, as CloudFormation counts it
                raise
        self.batch.finish_transition(physical)


#: Types the rehearsal stores and does not run: how ``Ref`` and ``Fn::GetAtt`` read, from the name.
#: type -> (name property, Ref gives, ARN pattern); ``{name}``, ``{region}``, ``{account}``.
STORED: dict[str, tuple[str | None, str, str]] = {
    "AWS::Lambda::Function": ("FunctionName", "name", "arn:aws:lambda:{region}:{account}:function:{name}"),
    "AWS::Logs::LogGroup": ("LogGroupName", "name", "arn:aws:logs:{region}:{account}:log-group:{name}:*"),
    "AWS::SNS::Topic": ("TopicName", "arn", "arn:aws:sns:{region}:{account}:{name}"),
    "AWS::SQS::Queue": ("QueueName", "url", "arn:aws:sqs:{region}:{account}:{name}"),
    "AWS::Events::Rule": ("Name", "name", "arn:aws:events:{region}:{account}:rule/{name}"),
    "AWS::CloudWatch::Alarm": ("AlarmName", "name", "arn:aws:cloudwatch:{region}:{account}:alarm:{name}"),
    "AWS::CloudWatch::Dashboard": ("DashboardName", "name",
                                   "arn:aws:cloudwatch::{account}:dashboard/{name}"),
    "AWS::IAM::Role": ("RoleName", "name", "arn:aws:iam::{account}:role/{name}"),
    "AWS::IAM::ManagedPolicy": ("ManagedPolicyName", "arn", "arn:aws:iam::{account}:policy/{name}"),
    "AWS::KMS::Key": (None, "id", "arn:aws:kms:{region}:{account}:key/{name}"),
    "AWS::KMS::Alias": ("AliasName", "name", "arn:aws:kms:{region}:{account}:{name}"),
    "AWS::S3::Bucket": ("BucketName", "name", "arn:aws:s3:::{name}"),
    "AWS::ECR::Repository": ("RepositoryName", "name", "arn:aws:ecr:{region}:{account}:repository/{name}"),
    "AWS::SSM::Parameter": ("Name", "name", "arn:aws:ssm:{region}:{account}:parameter/{name}"),
}


class StoredProvider:
    """Any other type: accepted and kept with AWS's id and ARN shapes; nothing runs it. SSM parameters are put
    in the served parameter store (``Fn::GetAtt``/``{{resolve:ssm}}`` read them) and log groups are kept as
    readable targets (``put_log_group``)."""

    def __init__(self, type_name: str, region: str, account: str, queue_urls: str,
                 on_create: Callable[[str, str, Params], None], on_delete: Callable[[str, str, Params], None]) -> None:
        self.type_name = type_name
        self.region = region
        self.account = account
        self.queue_urls = queue_urls
        self.on_create = on_create
        self.on_delete = on_delete

    def _names(self, stack: str, logical: str, properties: Params) -> tuple[str, Created]:
        name_property, ref, pattern = STORED.get(self.type_name, (None, "name", ""))
        name = properties.get(name_property) if name_property else None
        if not isinstance(name, str) or not name:
            name = str(uuid.uuid4()) if self.type_name == "AWS::KMS::Key" else generated_name(stack, logical, 64)
        service = self.type_name.split("::")[1].lower()
        arn = pattern.format(region=self.region, account=self.account, name=name) if pattern else (
            f"arn:aws:{service}:{self.region}:{self.account}:{self.type_name.split('::')[2].lower()}/{name}")
        url = f"{self.queue_urls}/{self.account}/{name}"
        physical = {"name": name, "arn": arn, "url": url, "id": name}[ref]
        attributes: dict[str, Any] = {"Arn": arn, "Name": name}
        if self.type_name == "AWS::SNS::Topic":
            attributes.update(TopicArn=arn, TopicName=name)
        elif self.type_name == "AWS::SQS::Queue":
            attributes.update(QueueName=name, QueueUrl=url)
        elif self.type_name == "AWS::KMS::Key":
            attributes.update(KeyId=name)
        elif self.type_name == "AWS::IAM::Role":
            attributes.update(RoleId=f"AROA{uuid.uuid4().hex[:17].upper()}")
        elif self.type_name == "AWS::S3::Bucket":
            attributes.update(DomainName=f"{name}.s3.amazonaws.com",
                              RegionalDomainName=f"{name}.s3.{self.region}.amazonaws.com")
        elif self.type_name == "AWS::SSM::Parameter":
            attributes.update(Type=properties.get("Type", "String"), Value=properties.get("Value", ""))
        return name, Created(physical, attributes)

    def create(self, stack: str, logical: str, properties: Params) -> Created:
        name, created = self._names(stack, logical, properties)
        self.on_create(self.type_name, name, {**properties, "__arn": created.attributes["Arn"]})
        return created

    def update(self, current: Created, before: Params, after: Params) -> Created:
        name = str(current.attributes["Name"])
        self.on_create(self.type_name, name, {**after, "__arn": current.attributes["Arn"]})
        return current

    def delete(self, current: Created, properties: Params) -> None:
        self.on_delete(self.type_name, str(current.attributes["Name"]), properties)


def shown(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
