"""Declared renames (``--rename OLD=NEW``): renames are never guessed from similar names.

``QUEUE/SHARE=QUEUE/SHARE`` renames or moves a share; ``NAME=NAME`` renames a job queue (its shares
follow) or, when BASE has no such queue, a service environment.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass, field

from policy_engine.diagnostics import resolve_share
from policy_engine.loading import LoadError
from policy_engine.model import JobQueue, ServiceEnvironment, Topology


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


def _names(objects: Iterable[JobQueue | ServiceEnvironment]) -> Container[str]:
    return {item.name for item in objects}


def _share_names(topology: Topology) -> dict[str, list[str]]:
    return {queue.name: [share.name for share in queue.shares] for queue in topology.job_queues}


@dataclass(frozen=True)
class _ShareNames:
    """``QUEUE/SHARE in names``: whether the reference names one share of a topology."""

    shares_by_queue: dict[str, list[str]]

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, str) and resolve_share(ref, self.shares_by_queue).share_id == ref


def parse_renames(values: Iterable[str], base: Topology, head: Topology) -> Renames:
    """Check every ``OLD=NEW`` against both topologies; ``LoadError`` lists every bad one."""
    problems: list[str] = []
    renames = Renames()
    base_shares = _share_names(base)
    head_shares = _share_names(head)
    seen_new: set[str] = set()
    before: Container[str]
    after: Container[str]
    for value in values:
        old, equals, new = value.partition("=")
        where = f"--rename {value}"
        if not equals or not old or not new:
            problems.append(f"{where}: write OLD=NEW (QUEUE/SHARE=QUEUE/SHARE for a share, NAME=NAME for a job "
                            f"queue or service environment)")
            continue
        if ("/" in old) != ("/" in new):
            problems.append(f"{where}: both sides must be QUEUE/SHARE (a share) or both NAME (a queue or environment)")
            continue
        if old == new:
            problems.append(f"{where}: OLD and NEW are the same")
            continue
        if new in seen_new:
            problems.append(f"{where}: {new} is already the target of another --rename")
            continue
        if "/" in old:
            kind, table = "quota share", renames.shares
            before, after = _ShareNames(base_shares), _ShareNames(head_shares)
        elif base.queue(old) is not None:
            kind, table = "job queue", renames.queues
            before, after = _names(base.job_queues), _names(head.job_queues)
        else:
            kind, table = "service environment", renames.environments
            before, after = _names(base.service_environments), _names(head.service_environments)
        bad = False
        if old not in before:
            problems.append(f"{where}: BASE has no {kind} {old}")
            bad = True
        if new not in after:
            problems.append(f"{where}: HEAD has no {kind} {new}")
            bad = True
        elif new in before:
            problems.append(f"{where}: BASE already has a {kind} {new}, so it cannot be the new name of {old}")
            bad = True
        if old in table:
            problems.append(f"{where}: {old} is renamed twice")
            bad = True
        if not bad:
            table[old] = new
            seen_new.add(new)
    if problems:
        raise LoadError(problems)
    return renames
