"""EventBridge's pattern matching, for the subset of its pattern syntax the shipped patterns and simple alerting
rules use, so that a rule can be tried offline on the events ``serve`` and ``simulate`` write.

Semantics (EventBridge user guide, "Event patterns"): every field of the pattern must match (AND);
a pattern field's value is a list of alternatives (OR); a nested object matches the event's
nested object; a list in the event matches when any of its elements does; a field the event
lacks matches nothing, except ``{"exists": false}``. Matching is exact and case-sensitive.
Supported matchers: plain values (strings, numbers, booleans, ``null``), ``prefix``, ``suffix``,
``anything-but`` (a value, a list of values, or ``{"prefix": ...}``), ``exists``. Anything else
is refused (``PatternError``) rather than guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_MISSING = object()


class PatternError(ValueError):
    """The pattern uses syntax this matcher does not implement, or is not a pattern at all."""


def matches(pattern: Mapping[str, Any], event: Mapping[str, Any]) -> bool:
    """Whether EventBridge would deliver ``event`` to a rule with ``pattern``."""
    if not isinstance(pattern, Mapping) or not pattern:
        raise PatternError("an event pattern is a non-empty JSON object")
    return _object(pattern, event)


def _object(pattern: Mapping[str, Any], value: Any) -> bool:
    for key, expected in pattern.items():
        found = value.get(key, _MISSING) if isinstance(value, Mapping) else _MISSING
        if isinstance(expected, Mapping):
            if found is _MISSING or not any(_object(expected, item) for item in _each(found)):
                return False
        elif isinstance(expected, list):
            if not expected:
                raise PatternError(f"{key}: an empty list matches nothing; EventBridge refuses it")
            if not any(_alternative(alternative, found) for alternative in expected):
                return False
        else:
            raise PatternError(f"{key}: a pattern value is a list of alternatives or an object, got {expected!r}")
    return True


def _each(found: Any) -> list[Any]:
    return found if isinstance(found, list) else [found]


def _alternative(alternative: Any, found: Any) -> bool:
    if isinstance(alternative, Mapping):
        return _matcher(alternative, found)
    if found is _MISSING:
        return False
    return any(_equal(alternative, item) for item in _each(found))


def _equal(expected: Any, item: Any) -> bool:
    if isinstance(expected, bool) or isinstance(item, bool):
        return type(expected) is type(item) and expected == item
    if isinstance(expected, int | float) and isinstance(item, int | float):
        return float(expected) == float(item)
    return type(expected) is type(item) and expected == item


def _matcher(matcher: Mapping[str, Any], found: Any) -> bool:
    if len(matcher) != 1:
        raise PatternError(f"a content filter has one operator, got {sorted(matcher)}")
    ((operator, argument),) = matcher.items()
    if operator == "exists":
        if not isinstance(argument, bool):
            raise PatternError(f"exists takes true or false, got {argument!r}")
        return (found is not _MISSING) is argument
    if found is _MISSING:
        return False
    items = _each(found)
    if operator in ("prefix", "suffix"):
        if not isinstance(argument, str):
            raise PatternError(f"{operator} takes a string, got {argument!r}")
        test = str.startswith if operator == "prefix" else str.endswith
        return any(isinstance(item, str) and test(item, argument) for item in items)
    if operator == "anything-but":
        if isinstance(argument, Mapping):
            if set(argument) != {"prefix"} or not isinstance(argument["prefix"], str):
                raise PatternError(f"anything-but takes a value, a list of values or {{'prefix': ...}}, "
                                   f"got {argument!r}")
            return any(isinstance(item, str) and not item.startswith(argument["prefix"]) for item in items)
        excluded = argument if isinstance(argument, list) else [argument]
        return any(not any(_equal(value, item) for value in excluded) for item in items)
    raise PatternError(f"content filter {operator!r} is not supported here (supported: prefix, suffix, "
                       "anything-but, exists)")
