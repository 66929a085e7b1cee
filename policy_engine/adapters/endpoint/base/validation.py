"""Check a value against a botocore shape: required members, types, enums, min/max.

botocore's client-side validator checks required members and types only; AWS's
service also rejects values outside a shape's ``enum`` and ``min``/``max``, so the
endpoint reads those from the shapes. Messages follow AWS's validation wording:
``Value 'X' at 'a.b' failed to satisfy constraint: Member must ...``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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


#: Scalar shape types: what a value must be, and AWS's name for it.
_SCALARS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "long": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "double": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v), "a number"),
    "float": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v), "a number"),
    "boolean": (lambda v: isinstance(v, bool), "a boolean"),
    "timestamp": (lambda v: isinstance(v, (int, float, str)) and not isinstance(v, bool), "a timestamp"),
}
#: Container shape types: the Python type their value must have, and AWS's name for it.
_CONTAINERS: dict[str, tuple[type, str]] = {
    "structure": (dict, "a structure (object)"), "list": (list, "a list"), "map": (dict, "a map (object)"),
}


def _check(shape: Shape, value: Any, path: str, problems: list[str]) -> None:
    kind = shape.type_name
    if kind in _CONTAINERS:
        expected, what = _CONTAINERS[kind]
        if not isinstance(value, expected):
            problems.append(f"Value at '{path}' failed to satisfy constraint: Member must be {what}")
            return
    elif kind in _SCALARS:
        accepts, what = _SCALARS[kind]
        if not accepts(value):
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: Member must be {what}")
            return
    if kind == "structure":
        for name in shape.required_members:
            if value.get(name) is None:
                problems.append(f"Value null at '{_at(path, name)}' failed to satisfy constraint: "
                                "Member must not be null")
        for name, item in value.items():
            member = shape.members.get(name)
            if member is None:
                problems.append(f"Unknown member '{_at(path, name)}': {shape.name} has no such member")
            elif item is not None:
                _check(member, item, _at(path, name), problems)
    elif kind == "list":
        _bounds(shape, len(value), _show(value), "length", path, problems)
        for index, item in enumerate(value):
            _check(shape.member, item, f"{path}.{index + 1}", problems)
    elif kind == "map":
        _bounds(shape, len(value), _show(value), "length", path, problems)
        for key, item in value.items():
            _check(shape.key, key, f"{path}.key", problems)
            _check(shape.value, item, f"{path}.{key}", problems)
    elif kind == "string":
        enum = shape.enum
        if enum and value not in enum:
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: "
                            f"Member must satisfy enum value set: [{', '.join(enum)}]")
        _bounds(shape, len(value), _show(value), "length", path, problems)
    elif kind in ("integer", "long", "double", "float"):
        if kind == "integer" and not -(2**31) <= value < 2**31:
            problems.append(f"Value {value} at '{path}' failed to satisfy constraint: "
                            "Member must be a 32-bit integer")
        _bounds(shape, value, str(value), "value", path, problems)


def _bounds(shape: Shape, measure: float, shown: str, what: str, path: str, problems: list[str]) -> None:
    """The shape's ``min``/``max`` on a length or a value (``what``), worded as AWS words them."""
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    if low is not None and measure < low:
        problems.append(f"Value {shown} at '{path}' failed to satisfy constraint: "
                        f"Member must have {what} greater than or equal to {low}")
    if high is not None and measure > high:
        problems.append(f"Value {shown} at '{path}' failed to satisfy constraint: "
                        f"Member must have {what} less than or equal to {high}")
