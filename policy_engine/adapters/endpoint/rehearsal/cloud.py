"""The rehearsal's account: buckets, parameters, stacks, rules and log groups, and the one entry point that
answers a request of STS, SSM, S3, CloudFormation or CloudWatch Logs.

Which service a request is for is read from its SigV4 credential scope (``Credential=KEY/DATE/REGION/SERVICE/
aws4_request``), as AWS's own endpoints are one per service; signatures are not verified (docs/endpoint.md).
Everything here lives as long as the endpoint's state: ``Service._fresh`` builds a new one, so ``reset``
drops every deployed stack with the rest.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.base.protocol import service_model
from policy_engine.adapters.endpoint.rehearsal import cloudformation, identity, objects, query
from policy_engine.adapters.endpoint.rehearsal.delivery import Deliveries
from policy_engine.adapters.endpoint.rehearsal.providers import (
    BATCH_TYPES,
    BatchCalls,
    BatchProvider,
    Provider,
    StoredProvider,
)
from policy_engine.adapters.endpoint.rehearsal.stacks import Stacks
from policy_engine.changes.resources import create_only_properties

log = logging.getLogger("batch_quota.serve")
#: The services the rehearsal answers, by the name in a request's credential scope.
SERVICES = frozenset({"sts", "ssm", "s3", "cloudformation", "logs"})
_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/,\s]+/([a-z0-9-]+)/aws4_request")
JSON_11 = b"application/x-amz-json-1.1"
Headers = list[tuple[bytes, bytes]]


def scope_service(authorization: str) -> str:
    """The service a SigV4 ``Authorization`` header is scoped to (``""`` when it names none)."""
    match = _SCOPE.search(authorization)
    return match.group(1) if match else ""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    headers: Headers


class Rehearsal:
    """What the CDK CLI deploys to, beside the Batch account the endpoint serves."""

    def __init__(self, batch: BatchCalls, region: str, account: str,
                 rules_changed: Callable[[bool], None] = lambda active: None) -> None:
        self.batch = batch
        self.region = region
        self.account = account
        self.buckets = objects.Buckets(account, region)
        self.parameters = identity.Parameters(region, account)
        self.deliveries = Deliveries(region, account)
        self._rules_changed = rules_changed
        self.stacks = Stacks(region, account, self.provider,
                             {k: list(v) for k, v in create_only_properties().items()}, self.parameters.get,
                             lambda type_name: type_name in BATCH_TYPES)
        #: where a queue URL points (``Ref`` of an ``AWS::SQS::Queue``), as AWS writes it
        self.url = f"https://sqs.{region}.amazonaws.com"

    # --- resources ----------------------------------------------------------------------------

    def provider(self, type_name: str) -> Provider:
        kind = BATCH_TYPES.get(type_name)
        if kind is not None:
            return BatchProvider(self.batch, kind)
        return StoredProvider(type_name, self.region, self.account, self.url, self._stored, self._removed)

    @staticmethod
    def runs(type_name: str) -> bool:
        """Whether the rehearsal runs a type (Batch resources; rules and log groups deliver events; SSM
        parameters are read), or only stores it."""
        return type_name in BATCH_TYPES or type_name in ("AWS::Events::Rule", "AWS::Logs::LogGroup",
                                                         "AWS::SSM::Parameter", "AWS::S3::Bucket")

    def _stored(self, type_name: str, name: str, properties: dict[str, Any]) -> None:
        if type_name == "AWS::Events::Rule":
            self.deliveries.put_rule(name, properties)
            self._rules_changed(bool(self.deliveries.rules))
        elif type_name == "AWS::Logs::LogGroup":
            self.deliveries.put_log_group(name, str(properties["__arn"]).removesuffix(":*"), int(time.time() * 1000))
        elif type_name == "AWS::SSM::Parameter" and "Value" in properties:
            self.parameters.put(name, str(properties["Value"]))
        elif type_name == "AWS::S3::Bucket":
            self.buckets.buckets.setdefault(name, {})

    def _removed(self, type_name: str, name: str, properties: dict[str, Any]) -> None:
        if type_name == "AWS::Events::Rule":
            self.deliveries.rules.pop(name, None)
            self._rules_changed(bool(self.deliveries.rules))
        elif type_name == "AWS::Logs::LogGroup":
            self.deliveries.log_groups.pop(name, None)
        elif type_name == "AWS::SSM::Parameter":
            self.parameters.values.pop(name, None)

    # --- requests -----------------------------------------------------------------------------

    def handle(self, service: str, method: str, path: str, query_bytes: bytes, body: bytes, host: str,
               target: str) -> Answer:
        request_id = str(uuid.uuid4())
        ids: Headers = [(b"x-amzn-requestid", request_id.encode()), (b"x-amz-request-id", request_id.encode())]
        if service == "s3":
            found = objects.handle(self.buckets, method, path, query_bytes, body, host)
            return Answer(found.status, found.body, [*ids, *found.headers])
        if service in ("ssm", "logs"):
            return self._json_11(service, target, body, ids)
        xml = (b"content-type", b"text/xml")
        try:
            operation, params = query.operation_of(service, body)
        except ApiError as error:
            return Answer(error.status, query.error_answer(error, request_id), [*ids, xml])
        try:
            if service == "sts":
                result = identity.sts(operation.name, params, self.region, self.account)
            else:
                result = cloudformation.handle(self.stacks, operation.name, params, self.buckets.read_url,
                                               lambda type_name: not self.runs(type_name))
            return Answer(200, query.answer(operation, result, request_id), [*ids, xml])
        except ApiError as error:
            return Answer(error.status, query.error_answer(error, request_id), [*ids, xml])

    def _json_11(self, service: str, target: str, body: bytes, ids: Headers) -> Answer:
        kind = (b"content-type", JSON_11)
        operation = target.rpartition(".")[2]
        try:
            params = json.loads(body) if body.strip() else {}
            if not isinstance(params, dict):
                raise ApiError("The request body must be a JSON object", "SerializationException", 400)
            model = service_model(service)
            if operation not in model.operation_names:
                raise ApiError(f"Unknown operation {target!r}", "UnknownOperationException", 400)
            shape = model.operation_model(operation).input_shape
            if shape is not None:
                query.checked(shape, params)
            if service == "ssm":
                result = self.parameters.handle(operation, params)
            else:
                result = self.deliveries.handle(operation, params)
            return Answer(200, json.dumps(result, default=str).encode(), [*ids, kind])
        except ValueError:
            error = ApiError("The request body is not JSON", "SerializationException", 400)
        except ApiError as refused:
            error = refused
        payload = json.dumps({"__type": error.code, "message": error.message}).encode()
        return Answer(error.status, payload, [*ids, kind, (b"x-amzn-errortype", error.code.encode())])

    # --- the control API's view ------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """``GET /_batch-quota/stacks``: every stack, its resources (run or only stored) and what rules delivered."""
        return {
            "stacks": [{"name": s.name, "id": s.id, "status": s.status, "resources": [
                {"logicalId": r.logical, "type": r.type_name, "physicalId": r.created.physical,
                 "status": r.status, "run": self.runs(r.type_name)} for r in s.resources.values()]}
                for s in self.stacks.by_name.values()],
            "rules": [{"name": r.name, "targets": list(r.targets), "enabled": r.enabled}
                      for r in self.deliveries.rules.values()],
            "logGroups": {g.name: len(g.events) for g in self.deliveries.log_groups.values()},
            "notRun": dict(self.deliveries.not_run),
        }
