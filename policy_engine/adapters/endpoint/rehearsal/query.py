"""AWS's query protocol (STS, CloudFormation), server side: a form body read into members by the botocore input
shape, an answer written as XML by the output shape (what botocore's ``QueryParser`` and the JavaScript SDK read).

One mechanism for every query operation, driven by the installed models: no template per operation.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import parse_qsl
from xml.sax.saxutils import escape

from botocore.model import ListShape, MapShape, OperationModel, Shape, StructureShape

from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.base.protocol import service_model
from policy_engine.adapters.endpoint.base.validation import validate

Params = dict[str, Any]


def operation_of(service: str, body: bytes) -> tuple[OperationModel, Params]:
    """The operation a form body names (``Action``) and its members; an unknown action is a ``ValidationError``."""
    form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    action = form.pop("Action", "")
    model = service_model(service)
    if action not in model.operation_names:
        raise ApiError(f"Unknown action {action!r} for {service}", "InvalidAction", 400)
    operation = model.operation_model(action)
    form.pop("Version", None)
    shape = operation.input_shape
    if shape is None:
        return operation, {}
    try:
        params = _read_structure(shape, form, "")
    except ValueError as error:
        raise ApiError(f"1 validation error detected: {error}", "ValidationError", 400) from None
    checked(shape, params)
    return operation, params


def checked(shape: Shape, params: Params) -> None:
    """Refuse members that break the botocore input shape (required, types, enums, bounds, patterns), as the
    endpoint's other services do (``validation.validate``)."""
    problems = validate(shape, params)
    if problems:
        count = len(problems)
        raise ApiError(f"{count} validation error{'s' if count > 1 else ''} detected: " + "; ".join(problems),
                       "ValidationError", 400)


def _read(shape: Shape, form: dict[str, str], prefix: str) -> Any:
    if isinstance(shape, StructureShape):
        return _read_structure(shape, form, prefix + ".")
    if isinstance(shape, ListShape):
        found = []
        index = 1
        while any(key == f"{prefix}.member.{index}" or key.startswith(f"{prefix}.member.{index}.") for key in form):
            found.append(_read(shape.member, form, f"{prefix}.member.{index}"))
            index += 1
        return found
    if isinstance(shape, MapShape):
        out = {}
        index = 1
        while f"{prefix}.entry.{index}.key" in form:
            out[form[f"{prefix}.entry.{index}.key"]] = _read(shape.value, form, f"{prefix}.entry.{index}.value")
            index += 1
        return out
    text = form.get(prefix, "")
    if shape.type_name == "boolean":
        return text == "true"
    if shape.type_name in ("integer", "long"):
        return int(text)
    return text


def _read_structure(shape: StructureShape, form: dict[str, str], prefix: str) -> Params:
    out: Params = {}
    for name, member in shape.members.items():
        key = prefix + name
        if isinstance(member, StructureShape | ListShape | MapShape):
            present = any(k == key or k.startswith(key + ".") for k in form)
        else:
            present = key in form
        if present:
            out[name] = _read(member, form, key)
    return out


def _text(shape: Shape, value: Any) -> str:
    if shape.type_name == "boolean":
        return "true" if value else "false"
    if shape.type_name == "timestamp":
        if isinstance(value, int | float):
            value = dt.datetime.fromtimestamp(value, dt.UTC)
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    return escape(str(value))


def _write(shape: Shape, value: Any, out: list[str]) -> None:
    if isinstance(shape, StructureShape):
        for name, member in shape.members.items():
            if name in value and value[name] is not None:
                tag = member.serialization.get("name", name)
                out.append(f"<{tag}>")
                _write(member, value[name], out)
                out.append(f"</{tag}>")
    elif isinstance(shape, ListShape):
        for item in value:
            out.append("<member>")
            _write(shape.member, item, out)
            out.append("</member>")
    elif isinstance(shape, MapShape):
        for key, item in value.items():
            out.append(f"<entry><key>{escape(str(key))}</key><value>")
            _write(shape.value, item, out)
            out.append("</value></entry>")
    else:
        out.append(_text(shape, value))


def answer(operation: OperationModel, result: Params, request_id: str) -> bytes:
    """The XML answer: ``<ActionResponse><ActionResult>...</ActionResult><ResponseMetadata>``."""
    namespace = operation.service_model.metadata.get("xmlNamespace", "")
    name = operation.name
    out = [f'<{name}Response xmlns="{namespace}">']
    shape = operation.output_shape
    if shape is not None:
        out.append(f"<{name}Result>")
        _write(shape, result, out)
        out.append(f"</{name}Result>")
    out.append(f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata></{name}Response>")
    return "".join(out).encode()


def error_answer(error: ApiError, request_id: str) -> bytes:
    kind = "Sender" if error.status < 500 else "Receiver"
    return (f"<ErrorResponse><Error><Type>{kind}</Type><Code>{escape(error.code)}</Code>"
            f"<Message>{escape(error.message)}</Message></Error><RequestId>{request_id}</RequestId>"
            "</ErrorResponse>").encode()
