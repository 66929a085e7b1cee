"""AWS's rules on one value, as pure predicates: the policy rules, the constructs' validation, the endpoint and
the scenario changes all ask here, so a rule is decided in one place; each caller words the answer its own way."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from policy_engine.foundation import limits
from policy_engine.foundation.model import UNLIMITED_BORROW


class SharingProblem(Enum):
    """What is wrong with a share's ``(strategy, borrow_limit)`` pair."""

    #: ``borrowLimit`` is set on a share that cannot borrow: AWS accepts it only with LEND_AND_BORROW.
    NOT_BORROWING = "borrow_limit only with LEND_AND_BORROW"
    #: ``borrowLimit`` is outside ``limits.BORROW_LIMIT`` (-1 = unlimited, else a percent in a signed 32-bit int).
    OUT_OF_RANGE = "borrow_limit out of range"


def sharing_problems(strategy: str, borrow_limit: object) -> tuple[SharingProblem, ...]:
    """Every way ``borrow_limit`` breaks AWS's resource-sharing rules for a share of ``strategy``, the strategy
    rule first. ``None`` (unset) is always fine; a value that is not an integer (a CDK token, a typo) is judged
    on the strategy only: its type is the caller's to word."""
    if borrow_limit is None:
        return ()
    problems = []
    if strategy != "LEND_AND_BORROW":
        problems.append(SharingProblem.NOT_BORROWING)
    if isinstance(borrow_limit, int) and not isinstance(borrow_limit, bool) and not limits.BORROW_LIMIT.allows(
            borrow_limit):
        problems.append(SharingProblem.OUT_OF_RANGE)
    return tuple(problems)


def written_borrow_limit(strategy: str, borrow_limit: int | None) -> int | None:
    """The ``borrowLimit`` everything the project writes gives a share (templates, ``import`` and ``tune -o`` files,
    the endpoint's answers): every LEND_AND_BORROW share's explicitly, unset as -1 (unlimited, what AWS applies
    anyway), so that no reader or client (the SageMaker notebook helper drops ``borrowLimit: 0``) falls back to a
    default; never another share's (``None``: AWS refuses it)."""
    if strategy != "LEND_AND_BORROW":
        return None
    return UNLIMITED_BORROW if borrow_limit is None else borrow_limit


class TagRule(Enum):
    """Which of AWS's tagging rules a tag breaks."""

    COUNT = "tags per resource"
    RESERVED_PREFIX = "reserved key prefix"
    KEY_LENGTH = "tag key length"
    VALUE_LENGTH = "tag value length"


@dataclass(frozen=True)
class TagProblem:
    """One broken tagging rule: ``key`` is the tag (``None`` for the count), ``figure`` the count or length."""

    rule: TagRule
    key: str | None
    figure: int

    @property
    def message(self) -> str:
        key = self.key or ""
        short = f"{key[:40]!r}{'...' if len(key) > 40 else ''}"
        if self.rule is TagRule.COUNT:
            return f"has {self.figure} tags; AWS allows at most {limits.TAG_COUNT.maximum} per resource"
        if self.rule is TagRule.RESERVED_PREFIX:
            return f"tag key {key!r} starts with {limits.SYSTEM_TAG_PREFIX!r}, which AWS reserves for its own tags"
        if self.rule is TagRule.KEY_LENGTH:
            return f"tag key {short} has {self.figure} characters; AWS allows {limits.TAG_KEY_LENGTH.range_text()}"
        return (f"tag {key[:40]!r} has a value of {self.figure} characters; AWS allows "
                f"{limits.TAG_VALUE_LENGTH.range_text()}")

    @property
    def hint(self) -> str:
        if self.rule is TagRule.COUNT:
            return f"remove {limits.TAG_COUNT.excess(self.figure)} tag(s)"
        if self.rule is TagRule.RESERVED_PREFIX:
            return "rename the tag; tags AWS set on existing resources belong under system_tags (never deployed)"
        if self.rule is TagRule.KEY_LENGTH:
            return f"shorten the key to at most {limits.TAG_KEY_LENGTH.maximum} characters"
        return f"shorten the value to at most {limits.TAG_VALUE_LENGTH.maximum} characters"


def tag_problems(tags: Mapping[str, str]) -> Iterator[TagProblem]:
    """Each way ``tags`` breaks AWS's tagging rules: the count, then per tag its key (a reserved prefix, else its
    length) and its value's length."""
    count, key_length, value_length = limits.TAG_COUNT, limits.TAG_KEY_LENGTH, limits.TAG_VALUE_LENGTH
    if not count.allows(len(tags)):
        yield TagProblem(TagRule.COUNT, None, len(tags))
    for key, value in tags.items():
        if key.lower().startswith(limits.SYSTEM_TAG_PREFIX):
            yield TagProblem(TagRule.RESERVED_PREFIX, key, len(key))
        elif not key_length.allows(len(key)):
            yield TagProblem(TagRule.KEY_LENGTH, key, len(key))
        if not value_length.allows(len(value)):
            yield TagProblem(TagRule.VALUE_LENGTH, key, len(value))
