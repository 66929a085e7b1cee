"""The EventBridge patterns for AWS Batch's service-job events, read from ``data/event_patterns.json``.

One source for every consumer (``serve --events``, ``simulate --event-format eventbridge``, the CDK
monitoring construct), so an alerting rule and the events it must match cannot drift apart.
Preemption events carry no queue in their ``detail``: a queue filter applies only to events whose
``queue_field`` is set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class EventKind:
    """One documented event: its key in the data file, its ``detail-type`` and the detail field naming the queue."""

    key: str
    detail_type: str
    queue_field: str | None


@cache
def _data() -> dict[str, Any]:
    text = resources.files("policy_engine").joinpath("data/event_patterns.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def source() -> str:
    """The events' ``source`` (``aws.batch``)."""
    return str(_data()["source"])


def kinds() -> tuple[EventKind, ...]:
    """Every documented service-job event, in the data file's order."""
    return tuple(EventKind(key, entry["detail_type"], entry["queue_field"]) for key, entry in _data()["events"].items())


def kind(key: str) -> EventKind:
    """The event called ``key`` (``preemption_started``, ``queue_blocked``, ...); ``KeyError`` names the known ones."""
    for candidate in kinds():
        if candidate.key == key:
            return candidate
    raise KeyError(f"unknown event {key!r}; known: {', '.join(k.key for k in kinds())}")


def pattern(key: str, queue_arns: Sequence[str] = ()) -> dict[str, Any]:
    """The EventBridge pattern for one event, narrowed to ``queue_arns`` where its detail names the queue."""
    event = kind(key)
    result: dict[str, Any] = {"source": [source()], "detail-type": [event.detail_type]}
    if queue_arns and event.queue_field is not None:
        result["detail"] = {event.queue_field: list(queue_arns)}
    return result


@dataclass(frozen=True)
class DetailSpec:
    """What AWS documents for an event's ``detail``: ``fields``, or the ``like`` response without ``omits``."""

    fields: tuple[str, ...] = ()
    like: str | None = None
    omits: tuple[str, ...] = ()


def detail_spec(key: str) -> DetailSpec:
    """The documented ``detail`` of the event called ``key`` (``KeyError`` as for ``kind``)."""
    kind(key)
    entry = _data()["events"][key]["detail"]
    return DetailSpec(tuple(entry.get("fields", ())), entry.get("like"), tuple(entry.get("omits", ())))
