"""Eager prop validation shared by the constructs, in the style of aws-cdk's ``aws-batch``.

A construct checks its own props in ``__init__`` and raises ``ValueError`` naming the
construct, the field, the value and the allowed range, so a mistake points at the line
that made it instead of surfacing as a CloudFormation rollback. Bounds come from
``policy_engine.limits`` (AWS's documented limits) and, where CloudFormation is stricter
than the API, from the resource schema (noted at the constant). Values that are CDK
tokens (unknown until deploy) are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from aws_cdk import Token

from policy_engine import limits
from policy_engine import model as m

#: The model's choices, so constructs and files accept the same values.
STATES: tuple[str, ...] = get_args(m.State)
STRATEGIES: tuple[str, ...] = get_args(m.Strategy)


def is_token(value: Any) -> bool:
    """A CDK token (unknown until deploy)? Decided in Python: a kernel round trip per prop is slow at 1,000 shares.

    String tokens are encoded as ``${Token[...]}``; number tokens are special floats; ints never are.
    """
    if isinstance(value, str):
        return "${Token[" in value
    return isinstance(value, float) and Token.is_unresolved(value)


class Where:
    """``QuotaShare 'team-a'``: the construct and object an error is about."""

    def __init__(self, construct: str, name: Any):
        self.construct = construct
        self.name = name

    def fail(self, field: str, value: Any, expected: str) -> None:
        raise ValueError(f"{self.construct} {self.name!r}: {field} = {value!r} is invalid; expected {expected}")

    def name_ok(self, field: str, value: str) -> str:
        if is_token(value):
            return value
        if not isinstance(value, str) or not limits.NAME_LENGTH.allows(len(value)):
            self.fail(field, value, f"a string of {limits.NAME_LENGTH.range_text()} characters")
        if not limits.NAME_CHARACTERS.fullmatch(value):
            self.fail(field, value, "only letters, digits, '-' and '_'")
        return value

    def number_ok(self, field: str, value: Any, limit: limits.Limit) -> int:
        if is_token(value):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, value, f"an integer, {limit.range_text()} ({limit.what})")
        if not limit.allows(value):
            self.fail(field, value, f"{limit.range_text()} ({limit.what})")
        return value

    def choice_ok(self, field: str, value: Any, allowed: tuple[str, ...]) -> str:
        if value not in allowed:
            self.fail(field, value, "one of " + ", ".join(allowed))
        return value

    def capacity_ok(self, field: str, capacity: Mapping[str, int], count: limits.Limit,
                    each: limits.Limit) -> list[tuple[str, int]]:
        """``{instance type: instances}`` -> ``[(capacity unit, max capacity)]``, in the given order."""
        if not isinstance(capacity, Mapping):
            self.fail(field, capacity, "a mapping of instance type to instance count")
        if not count.allows(len(capacity)):
            self.fail(field, dict(capacity), f"{count.range_text()} instance types ({count.what})")
        result = []
        for unit, instances in capacity.items():
            if not isinstance(unit, str) or not unit:
                self.fail(f"{field} key", unit, "an instance type such as 'ml.g5.xlarge'")
            self.number_ok(f"{field}[{unit}]", instances, each)
            result.append((unit, instances))
        return result

    def tags_ok(self, tags: Mapping[str, str] | None) -> dict[str, str] | None:
        if not tags:
            return None
        if not limits.TAG_COUNT.allows(len(tags)):
            self.fail("tags", f"{len(tags)} tags", f"{limits.TAG_COUNT.range_text()} ({limits.TAG_COUNT.what})")
        for key, value in tags.items():
            if not isinstance(key, str) or not limits.TAG_KEY_LENGTH.allows(len(key)) or key.lower().startswith("aws:"):
                self.fail("tags key", key, f"{limits.TAG_KEY_LENGTH.range_text()} characters, not starting with 'aws:'")
            if not isinstance(value, str) or not limits.TAG_VALUE_LENGTH.allows(len(value)):
                self.fail(f"tags[{key}]", value, f"a string of {limits.TAG_VALUE_LENGTH.range_text()} characters")
        return dict(tags)
