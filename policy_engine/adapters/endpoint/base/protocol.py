"""AWS Batch's REST-JSON wire protocol, read from the installed botocore ``batch`` model.

Every operation of the model gets a route from its ``http.method`` and ``http.requestUri``,
so a request for an operation batch-quota does not implement is still recognised (and
answered with a ``ClientException`` botocore parses). URI members are read from the *raw*
path: a resource ARN contains ``/``, which botocore percent-encodes inside one segment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import parse_qs, unquote

from botocore.model import OperationModel, ServiceModel, Shape

from policy_engine.adapters.endpoint.base.errors import ApiError, client_error
from policy_engine.adapters.endpoint.base.validation import validate


@cache
def service_model(service: str = "batch") -> ServiceModel:
    """The installed botocore model of ``service`` (``batch``; ``cloudtrail`` for LookupEvents)."""
    import botocore.session

    return botocore.session.get_session().get_service_model(service)


@dataclass(frozen=True)
class Route:
    """An operation whose URI has labels: they are named groups of the pattern, one raw segment each."""

    method: str
    operation: OperationModel
    pattern: re.Pattern[str]


def _route(operation: OperationModel) -> str | Route:
    """The whole path when the URI has no label, else its ``Route``."""
    uri = operation.http["requestUri"].split("?", 1)[0]
    if "{" not in uri:
        return str(uri)
    parts = re.split(r"(\{[^}]+\})", uri)
    regex = "".join(
        (f"(?P<{part[1:-1].rstrip('+')}>.+)" if part.endswith("+}") else f"(?P<{part[1:-1]}>[^/]+)")
        if part.startswith("{") else re.escape(part)
        for part in parts
    )
    return Route(operation.http["method"], operation, re.compile(regex + "$"))


class Router:
    """(method, raw path) -> operation, for every operation of the model."""

    def __init__(self, model: ServiceModel | None = None) -> None:
        self.model = model or service_model()
        self.literal: dict[tuple[str, str], OperationModel] = {}
        self.patterns: list[Route] = []
        for name in self.model.operation_names:
            operation = self.model.operation_model(name)
            route = _route(operation)
            if isinstance(route, Route):
                self.patterns.append(route)
            else:
                self.literal[(operation.http["method"], route)] = operation

    def match(self, method: str, raw_path: str) -> tuple[OperationModel, dict[str, str]] | None:
        operation = self.literal.get((method, raw_path))
        if operation is not None:
            return operation, {}
        for route in self.patterns:
            if route.method != method:
                continue
            found = route.pattern.match(raw_path)
            if found:
                return route.operation, {key: unquote(value) for key, value in found.groupdict().items()}
        return None

    def known_path(self, raw_path: str) -> bool:
        """Whether some operation uses this path (with another method): a 405-like ClientException."""
        return any(path == raw_path for _, path in self.literal) or any(
            route.pattern.match(raw_path) for route in self.patterns)


def json_object(text: str | bytes, subject: str, expected: str,
                error: Callable[[str], ApiError] = client_error) -> dict[str, Any]:
    """``text`` as a JSON object, or the error (``ClientException``; a JSON 1.1 service passes its
    ``SerializationException``) that says what is wrong with ``subject``. Every JSON the endpoint reads comes
    through here."""
    try:
        value = json.loads(text)
    except ValueError as problem:
        raise error(f"{subject} is not valid JSON: {problem}") from None
    except RecursionError:  # the decoder's own bound (Python's recursion limit); the server carries on
        raise error(f"{subject} is nested too deeply to read") from None
    if not isinstance(value, dict):
        raise error(f"{subject} must be a JSON object{expected}")
    return value


def json_11_body(body: bytes) -> dict[str, Any]:
    """A JSON 1.1 request's body (CloudTrail, SageMaker): an object, ``{}`` when empty."""
    if not body.strip():
        return {}
    return json_object(body, "The request body", "", lambda message: ApiError(message, "SerializationException"))


def parse_request(operation: OperationModel, labels: dict[str, str], query: bytes, body: bytes) -> dict[str, Any]:
    """The operation's input as botocore built it: URI labels, query string and JSON body; validated."""
    shape = operation.input_shape
    params = json_object(body, "The request body", "") if body.strip() else {}
    if shape is None:
        return params
    query_values = parse_qs(query.decode("latin-1"), keep_blank_values=True) if query else {}
    for name, member in shape.members.items():
        location = member.serialization.get("location")
        wire = member.serialization.get("name", name)
        if location == "uri" and wire in labels:
            params[name] = labels[wire]
        elif location == "querystring" and wire in query_values:
            values = query_values[wire]
            params[name] = values if member.type_name == "list" else _scalar(member, values[-1])
        elif location in ("header", "headers"):
            continue
    problems = validate(shape, params)
    if problems:
        count = len(problems)
        raise client_error(f"{count} validation error{'s' if count > 1 else ''} detected: " + "; ".join(problems))
    return params


def _scalar(shape: Shape, text: str) -> str | int | bool:
    if shape.type_name in ("integer", "long"):
        try:
            return int(text)
        except ValueError:
            return text
    if shape.type_name == "boolean":
        return text == "true"
    return text
