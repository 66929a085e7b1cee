"""Check a value against a botocore shape: required members, types, enums, min/max, patterns.

botocore's client-side validator checks required members and types only; AWS's
service also rejects values outside a shape's ``enum``, ``min``/``max`` and ``pattern``, so the
endpoint reads those from the shapes. Messages follow AWS's validation wording:
``Value 'X' at 'a.b' failed to satisfy constraint: Member must ...``.

This is the one place a request's members are checked before any handler reads them, for every
operation of every service the endpoint serves: after it, a member is absent or of its shape's type
(a member sent as JSON ``null`` is refused, as botocore never sends one), a number is finite, and a
timestamp is a date between year 1 and ``bounds.MAX_INSTANT``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any

from botocore.model import Shape

from policy_engine.foundation.bounds import MAX_INSTANT, MAX_INSTANT_SECONDS

#: The earliest timestamp accepted (epoch seconds of 0001-01-01T00:00:00Z, the first instant Python's dates hold).
MIN_TIMESTAMP = -62_135_596_800


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
    "timestamp": (lambda v: _is_timestamp(v), f"a timestamp between 0001-01-01 and {MAX_INSTANT:%Y-%m-%dT%H:%M:%SZ}"),
}
def _is_timestamp(value: Any) -> bool:
    """Epoch seconds (how botocore sends a JSON timestamp) or ISO 8601 text, naming an instant a date can hold."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except (ValueError, OverflowError):
            return False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return MIN_TIMESTAMP <= value <= MAX_INSTANT_SECONDS  # NaN compares false: refused


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


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
            if name not in value:
                problems.append(f"Value null at '{_at(path, name)}' failed to satisfy constraint: "
                                "Member must not be null")
        for name, item in value.items():
            member = shape.members.get(name)
            if member is None:
                problems.append(f"Unknown member '{_at(path, name)}': {shape.name} has no such member")
            elif item is None:  # botocore never sends null; a handler would read it as a value of the shape
                problems.append(f"Value null at '{_at(path, name)}' failed to satisfy constraint: "
                                "Member must not be null")
            else:
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
        pattern = shape.metadata.get("pattern")
        if pattern and not _pattern(pattern).fullmatch(value):
            problems.append(f"Value {_show(value)} at '{path}' failed to satisfy constraint: "
                            f"Member must satisfy regular expression pattern: {pattern}")
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
