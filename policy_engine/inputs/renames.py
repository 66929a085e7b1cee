"""Declared renames (``--rename OLD=NEW``): renames are never guessed from similar names.

``QUEUE/SHARE=QUEUE/SHARE`` renames or moves a share; ``NAME=NAME`` renames a job queue (its shares
follow) or, when BASE has no such queue, a service environment. Each bad ``--rename`` is one problem
line, whatever is wrong with it and however many topologies it is checked against (``check_renames``:
``compare``'s later designs).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from policy_engine.foundation.diagnostics import resolve_share
from policy_engine.foundation.model import Topology, share_id
from policy_engine.inputs.loading import LoadError


@dataclass(frozen=True)
class Renames:
    """BASE name -> HEAD name, per kind of object."""

    shares: dict[str, str] = field(default_factory=dict)
    queues: dict[str, str] = field(default_factory=dict)
    environments: dict[str, str] = field(default_factory=dict)

    def share(self, base_id: str) -> str:
        """The HEAD id of a BASE share: declared, else moved along with its renamed queue, else the same."""
        if base_id in self.shares:
            return self.shares[base_id]
        queue, _, name = base_id.partition("/")
        return f"{self.queues[queue]}/{name}" if queue in self.queues else base_id

    def queue(self, name: str) -> str:
        return self.queues.get(name, name)

    def environment(self, name: str) -> str:
        return self.environments.get(name, name)


@dataclass(frozen=True)
class Side:
    """A topology renames are checked against, and how a problem names it (``BASE``, ``design b (b.yaml)``)."""

    name: str
    topology: Topology


@dataclass(frozen=True)
class _Names:
    """The names of one kind of object in a topology: ``name in names``, and the closest to a typo."""

    kind: str
    names: Collection[str]
    shares_by_queue: dict[str, list[str]] | None = None  # shares: matched as ``resolve_share`` matches them

    def __contains__(self, ref: object) -> bool:
        if not isinstance(ref, str):
            return False
        if self.shares_by_queue is None:
            return ref in self.names
        return resolve_share(ref, self.shares_by_queue).share_id == ref

    def closest(self, ref: str) -> str | None:
        """The name ``ref`` most likely misspells; a share's among its queue's (their ``QUEUE/`` would match)."""
        queue, _, name = ref.rpartition("/")
        if self.shares_by_queue is not None and queue in self.shares_by_queue:
            close = difflib.get_close_matches(name, self.shares_by_queue[queue], n=1)
            return f"{queue}/{close[0]}" if close else None
        close = difflib.get_close_matches(ref, list(self.names), n=1)
        return close[0] if close else None

    def lacks(self, side: Side, ref: str) -> str:
        """``design b (b.yaml) has no quota share training/visoin (did you mean training/vision?)``."""
        close = self.closest(ref)
        return f"{side.name} has no {self.kind} {ref}" + (f" (did you mean {close}?)" if close else "")


def _names(topology: Topology, kind: str) -> _Names:
    if kind == "quota share":
        return _Names(kind, [share_id(q, s) for q, s in topology.shares()],
                      {queue.name: [share.name for share in queue.shares] for queue in topology.job_queues})
    if kind == "job queue":
        return _Names(kind, [queue.name for queue in topology.job_queues])
    if kind == "service environment":
        return _Names(kind, [environment.name for environment in topology.service_environments])
    # a NAME that is neither a queue nor an environment of BASE: either would do
    return _Names(kind, [*_names(topology, "job queue").names, *_names(topology, "service environment").names])


def _syntax(value: str) -> str | None:
    """What is wrong with how ``OLD=NEW`` is written, if anything (no topology needed)."""
    old, equals, new = value.partition("=")
    if not equals or not old or not new:
        return "write OLD=NEW (QUEUE/SHARE=QUEUE/SHARE for a share, NAME=NAME for a job queue or service environment)"
    if ("/" in old) != ("/" in new):
        return "both sides must be QUEUE/SHARE (a share) or both NAME (a queue or environment)"
    if old == new:
        return "OLD and NEW are the same"
    return None


def _kind(old: str, base: Topology) -> str:
    if "/" in old:
        return "quota share"
    if base.queue(old) is not None:
        return "job queue"
    if base.environment(old) is not None:
        return "service environment"
    return "job queue or service environment"


def _check(values: Sequence[str], base: Side, head: Side) -> tuple[Renames, list[list[str]]]:
    """The renames from ``base`` to ``head``, and per value (in order) what is wrong with it there."""
    renames = Renames()
    tables = {"quota share": renames.shares, "job queue": renames.queues, "service environment": renames.environments}
    seen_new: set[str] = set()
    problems: list[list[str]] = []
    for value in values:
        syntax = _syntax(value)
        if syntax is not None:
            problems.append([syntax])
            continue
        old, _, new = value.partition("=")
        if new in seen_new:
            problems.append([f"{new} is already the target of another --rename"])
            continue
        kind = _kind(old, base.topology)
        before, after = _names(base.topology, kind), _names(head.topology, kind)
        mine: list[str] = []
        if old not in before:
            mine.append(before.lacks(base, old))
        if new not in after:
            mine.append(after.lacks(head, new))
        elif new in before:
            mine.append(f"{base.name} already has a {kind} {new}, so it cannot be the new name of {old}")
        table = tables.get(kind)
        if table is not None and old in table:
            mine.append(f"{old} is renamed twice")
        if not mine and table is not None:
            table[old] = new
            seen_new.add(new)
        problems.append(mine)
    return renames, problems


def check_renames(values: Sequence[str], base: Side, heads: Sequence[Side]) -> list[Renames]:
    """The renames from ``base`` to each of ``heads``; ``LoadError`` with one line per bad ``--rename``, saying
    everything wrong with it once (a problem of ``base`` is not repeated for each head)."""
    checked = [_check(values, base, head) for head in heads]
    lines = []
    for index, value in enumerate(values):
        parts = list(dict.fromkeys(part for _, problems in checked for part in problems[index]))
        if parts:
            lines.append(f"--rename {value}: " + "; ".join(parts))
    if lines:
        raise LoadError(lines)
    return [renames for renames, _ in checked]


def parse_renames(values: Iterable[str], base: Topology, head: Topology) -> Renames:
    """Check every ``OLD=NEW`` against both topologies; ``LoadError`` lists every bad one, one line each."""
    return check_renames(list(values), Side("BASE", base), [Side("HEAD", head)])[0]
