"""Validators for construct props (``Where`` and ``is_token``), in the style of aws-cdk's ``aws-batch``.

A construct checks its own props in ``__init__`` and raises ``QuotaConstructError`` (a ``ValueError``)
naming the construct, the field, the value and the allowed range, and carrying the construct path,
so a mistake points at the line that made it instead of surfacing as a CloudFormation rollback. Bounds come from
``policy_engine.foundation.limits`` (AWS's documented limits) and, where CloudFormation is stricter
than the API, from the resource schema (noted at the constant). Values that are CDK
tokens (unknown until deploy) are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn, get_args

from aws_cdk import Token
from constructs import IConstruct

from policy_engine.foundation import instance_types, limits
from policy_engine.foundation import model as m
from policy_engine.foundation.aws_rules import tag_problems
from quota_constructs.errors import QuotaConstructError

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


def construct_path(scope: IConstruct, id: str | None = None) -> str:
    """The path of construct ``id`` under ``scope``, before it exists (props are validated before
    ``super().__init__``); with ``id`` ``None``, the path of ``scope`` itself."""
    base = scope.node.path
    if id is None:
        return base
    return f"{base}/{id}" if base else id


class Where:
    """``QuotaShare 'team-a'`` at ``Stack/Share``: the construct, the object and the construct path an error is about.

    ``id`` is the id of the construct being built under ``scope``; without it, ``scope`` is the construct
    itself (a ``grant_*`` method). The path is read from the CDK only when an error is raised.
    """

    def __init__(self, construct: str, name: Any, scope: IConstruct, id: str | None = None):
        self.construct = construct
        self.name = name
        self.scope = scope
        self.id = id

    @property
    def path(self) -> str:
        return construct_path(self.scope, self.id)

    def fail(self, field: str, value: Any, expected: str) -> NoReturn:
        """Refuse ``value``: one line naming the construct, the object, the field, the value and what is allowed."""
        raise QuotaConstructError(f"{self.construct} {self.name!r}: {field} = {value!r} is invalid; expected "
                                  f"{expected}", path=self.path, field=field, value=value)

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
            if not is_token(unit) and unit not in instance_types.training_instance_types():
                close = instance_types.suggestion(unit)
                self.fail(f"{field} key", unit, f"{close!r} (did you mean it?)" if close else
                          f"a SageMaker training instance type ({instance_types.SOURCE})")
            self.number_ok(f"{field}[{unit}]", instances, each)
            result.append((unit, instances))
        return result

    def tags_ok(self, tags: Mapping[str, str] | None) -> dict[str, str] | None:
        """AWS's tagging rules, the same the policy engine checks (rule BQ116)."""
        if not tags:
            return None
        for key, value in tags.items():
            if not isinstance(key, str):
                self.fail("tags key", key, "a string")
            if not isinstance(value, str):
                self.fail(f"tags[{key}]", value, "a string")
        for problem in tag_problems(tags):
            self.fail("tags", _shorten(dict(tags)), f"tags AWS accepts: {problem.message} ({problem.hint})")
        return dict(tags)


def _shorten(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
