"""The account against a topology, per object and field: missing, extra, different.

Compared: what the constructs deploy. ``system_tags`` (``aws:*``, AWS's own) and what is never
deployed (guarantees, ``allow_oversubscription``) are not. A borrow limit is compared by
its effective value (unset and -1 both mean unlimited to AWS). The scope is the
topology's job queues and their environments: shares in those queues that the topology
lacks are ``extra``; other queues of the account are not this topology's business.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from policy_engine.diagnostics import ObjectRef
from policy_engine.model import JobQueue, QuotaShare, ServiceEnvironment, Topology


class DifferenceKind(StrEnum):
    """How an object of the topology and the account differ."""

    #: in the topology, not in the account
    MISSING = "missing"
    #: in the account (a share of one of the topology's queues), not in the topology
    EXTRA = "extra"
    #: in both, a field with another value
    DIFFERENT = "different"


MISSING, EXTRA, DIFFERENT = DifferenceKind.MISSING, DifferenceKind.EXTRA, DifferenceKind.DIFFERENT


@dataclass(frozen=True)
class Difference:
    """One drifted field of an object (``field`` is empty for a whole missing or extra object)."""

    ref: ObjectRef
    field: str
    kind: DifferenceKind
    expected: Any = None
    actual: Any = None

    @property
    def object(self) -> str:
        """The object as reports name it (``job_queues[training]``, ``training/QS1``)."""
        return str(self.ref)

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object, "field": self.field, "kind": self.kind, "expected": self.expected,
                "actual": self.actual}

    def line(self) -> str:
        if self.kind is MISSING:
            return f"{self.object}: missing from the account"
        if self.kind is EXTRA:
            return f"{self.object}: in the account, not in the topology"
        return f"{self.object}.{self.field}: topology {_shown(self.expected)}, account {_shown(self.actual)}"


def _shown(value: Any) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list, tuple)) else repr(value)


def _environment_fields(env: ServiceEnvironment) -> dict[str, Any]:
    return {"capacity": dict(env.capacity), "state": env.state, "tags": dict(env.tags)}


def _queue_fields(queue: JobQueue) -> dict[str, Any]:
    return {"service_environment": queue.service_environment, "priority": queue.priority, "state": queue.state,
            "scheduling_policy": queue.scheduling_policy_name,
            "job_state_time_limit_actions": [a.model_dump() for a in queue.job_state_time_limit_actions],
            "tags": dict(queue.tags)}


def _share_fields(share: QuotaShare) -> dict[str, Any]:
    return {"capacity": dict(share.capacity), "strategy": share.strategy,
            "borrow_limit": share.effective_borrow_limit if share.borrows else share.borrow_limit,
            "in_share_preemption": share.in_share_preemption, "state": share.state, "tags": dict(share.tags)}


def _compare(name: ObjectRef, expected: dict[str, Any], actual: dict[str, Any]) -> list[Difference]:
    return [Difference(name, key, DIFFERENT, expected[key], actual[key]) for key in expected
            if expected[key] != actual[key]]


def drift(desired: Topology, account: Topology) -> list[Difference]:
    """Every difference between ``desired`` and what ``account`` holds for it."""
    found: list[Difference] = []
    for env in desired.service_environments:
        name = ObjectRef.of_environment(env.name)
        actual = account.environment(env.name)
        if actual is None:
            # environments are read through their queues: one whose queues are all missing was not looked at
            if any(q.service_environment == env.name and account.queue(q.name) for q in desired.job_queues):
                found.append(Difference(name, "", MISSING))
            continue
        found += _compare(name, _environment_fields(env), _environment_fields(actual))
    for queue in desired.job_queues:
        name = ObjectRef.of_queue(queue.name)
        actual_queue = account.queue(queue.name)
        if actual_queue is None:
            found.append(Difference(name, "", MISSING))
            continue
        expected_fields = _queue_fields(queue)
        found += _compare(name, expected_fields, _queue_fields(actual_queue))
        for share in queue.shares:
            actual_share = actual_queue.share(share.name)
            if actual_share is None:
                found.append(Difference(ObjectRef.of_share(queue.name, share.name), "", MISSING))
                continue
            found += _compare(ObjectRef.of_share(queue.name, share.name), _share_fields(share),
                              _share_fields(actual_share))
        for share in actual_queue.shares:
            if queue.share(share.name) is None:
                found.append(Difference(ObjectRef.of_share(queue.name, share.name), "", EXTRA, None,
                                        _share_fields(share)))
    return found


def render_text(differences: list[Difference], source: str, region: str, unreadable: int = 0) -> str:
    if not differences and unreadable:
        return (f"incomplete: {unreadable} object(s) could not be read (Region {region}); "
                f"no drift among the objects of {source} that were read\n")
    if not differences:
        return f"no drift: the account (Region {region}) matches {source}\n"
    lines = [f"drift: {len(differences)} difference(s) between {source} and the account (Region {region})"]
    lines += [f"  {d.kind:<9} {d.line()}" for d in differences]
    return "\n".join(lines) + "\n"


def render_json(differences: list[Difference], source: str, region: str, unreadable: Sequence[str] = ()) -> str:
    return json.dumps({"source": source, "region": region, "drift": bool(differences),
                       "differences": [d.to_dict() for d in differences], "unreadable": list(unreadable)},
                      indent=2, default=list) + "\n"


def render_markdown(differences: list[Difference], source: str, region: str, unreadable: int = 0) -> str:
    if not differences and unreadable:
        return (f"### Incomplete\n\n{unreadable} object(s) could not be read (Region `{region}`); "
                f"no drift among the objects of `{source}` that were read.\n")
    if not differences:
        return f"### No drift\n\nThe account (Region `{region}`) matches `{source}`.\n"
    rows = "\n".join(f"| {d.kind} | `{d.object}` | {d.field or '-'} | {_md(d.expected)} | {_md(d.actual)} |"
                     for d in differences)
    return (f"### Drift: {len(differences)} difference(s)\n\n`{source}` against the account (Region `{region}`)\n\n"
            f"| kind | object | field | topology | account |\n|---|---|---|---|---|\n{rows}\n")


def _md(value: Any) -> str:
    return "-" if value is None else f"`{_shown(value)}`".replace("|", "\\|")
