"""Check a value against a botocore shape: required members, types, enums, min/max.

botocore's client-side validator checks required members and types only; AWS's
service also rejects values outside a shape's ``enum`` and ``min``/``max``, so the
endpoint reads those from the shapes. Messages follow AWS's validation wording:
``Value 'X' at 'a.b' failed to satisfy constraint: Member must ...``.
"""

from __future__ import annotations

import math
from typing import Any

from botocore.model import Shape


def validate(shape: Shape, value: Any, path: str = "") -> list[str]:
    """Every problem of ``value`` against ``shape``; ``[]`` when it conforms."""
    problems: list[str] = []
    _check(shape, value, path, problems)
    return problems


def _at(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _show(value: Any) -> str:
    """A value as AWS quotes it: strings in single quotes, long values cut."""
    text = repr(value) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 60 else text[:57] + "..."


def _check(shape: Shape, value: Any, path: str, problems: list[str]) -> None:
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            problems.append(f"Value at '{path}' failed to satisfy constraint: Member must be a structure (object)")
            return
        members = shape.members
        for name in shape.required_members:
            if value.get(name) is None:
                problems.append(f"Value null at '{_at(path, name)}' failed to satisfy constraint: "
                                "Member must not be null")
        for name, item in value.items():
            member = members.get(name)
            if member is None:
                problems.append(f"Unknown member '{_at(path, name)}': {shape.name} has no such member")
            elif item is not None:
                _check(member, item, _at(path, name), problems)
        return
    if kind == "list":
        if not isinstance(value, list):
            problems.append(f"Value at '{path}' failed to satisfy constraint: Member must be a list")
            return
        _length(shape, value, len(value), path, problems)
        for index, item in enumerate(value):
            _check(shape.member, item, f"{path}.{index + 1}", problems)
        return
    if kind == "map":
        if not isinstance(value, dict):
            problems.append(f"Value at '{path}' failed to satisfy constraint: Member must be a map (object)")
            return
        _length(shape, value, len(value), path, problems)
        for key, item in value.items():
            _check(shape.key, key, f"{path}.key", problems)
            _check(shape.value, item, f"{path}.{key}", problems)
        return
    if kind == "string":
        if not isinstance(value, str):
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: Member must be a string")
            return
        enum = shape.enum
        if enum and value not in enum:
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: "
                            f"Member must satisfy enum value set: [{', '.join(enum)}]")
        _length(shape, value, len(value), path, problems)
        return
    if kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: Member must be an integer")
            return
        if kind == "integer" and not -(2**31) <= value < 2**31:
            problems.append(f"Value {value} at '{path}' failed to satisfy constraint: "
                            "Member must be a 32-bit integer")
        _range(shape, value, path, problems)
        return
    if kind in ("double", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: Member must be a number")
            return
        _range(shape, value, path, problems)
        return
    if kind == "boolean":
        if not isinstance(value, bool):
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: Member must be a boolean")
        return
    if kind == "timestamp" and (isinstance(value, bool) or not isinstance(value, (int, float, str))):
        problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: Member must be a timestamp")


def _length(shape: Shape, value: Any, length: int, path: str, problems: list[str]) -> None:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and length < low:
        problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: "
                        f"Member must have length greater than or equal to {low}")
    if high is not None and length > high:
        problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: "
                        f"Member must have length less than or equal to {high}")


def _range(shape: Shape, value: float, path: str, problems: list[str]) -> None:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and value < low:
        problems.append(f"Value {value} at '{path}' failed to satisfy constraint: "
                        f"Member must have value greater than or equal to {low}")
    if high is not None and value > high:
        problems.append(f"Value {value} at '{path}' failed to satisfy constraint: "
                        f"Member must have value less than or equal to {high}")
