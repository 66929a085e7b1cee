"""Where a problem is, as data: object references and located problems, rendered to text only at the edge.

Findings, load errors and simulator input errors all say *which object* and *where in which file*.
Keeping that as data (not strings parsed back with regular expressions) lets SARIF find a line,
CDK find a construct and reports group by share, whatever characters the names contain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum


class ObjectKind(StrEnum):
    """What kind of topology object a reference names."""

    TOPOLOGY = "topology"
    ENVIRONMENT = "service_environment"
    QUEUE = "job_queue"
    SHARE = "quota_share"
    GUARANTEE = "guarantee"
    SUPPRESSION = "suppression"


@dataclass(frozen=True, order=True)
class ObjectRef:
    """One topology object: a share is ``queue`` + ``share``; guarantees and suppressions also have ``index``.

    ``str()`` gives the name findings have always shown (``training/QS1``, ``job_queues[training]``,
    ``service_environments[gpu]``, ``guarantees[0] (training/QS1)``); code reads the fields.
    """

    kind: ObjectKind
    environment: str | None = None
    queue: str | None = None
    share: str | None = None
    index: int | None = None

    @classmethod
    def topology(cls) -> ObjectRef:
        return cls(ObjectKind.TOPOLOGY)

    @classmethod
    def of_environment(cls, name: str) -> ObjectRef:
        return cls(ObjectKind.ENVIRONMENT, environment=name)

    @classmethod
    def of_queue(cls, name: str, environment: str | None = None) -> ObjectRef:
        return cls(ObjectKind.QUEUE, environment=environment, queue=name)

    @classmethod
    def of_share(cls, queue: str, share: str, environment: str | None = None) -> ObjectRef:
        return cls(ObjectKind.SHARE, environment=environment, queue=queue, share=share)

    @classmethod
    def of_guarantee(cls, index: int, queue: str | None = None, share: str | None = None,
                     environment: str | None = None) -> ObjectRef:
        """A guarantee; ``queue``/``share`` when its share reference resolves to exactly one share."""
        return cls(ObjectKind.GUARANTEE, environment=environment, queue=queue, share=share, index=index)

    @classmethod
    def of_suppression(cls, index: int) -> ObjectRef:
        return cls(ObjectKind.SUPPRESSION, index=index)

    @property
    def share_id(self) -> str | None:
        """``QUEUE/SHARE`` when the object is (or guarantees) exactly one share."""
        return f"{self.queue}/{self.share}" if self.queue is not None and self.share is not None else None

    def __str__(self) -> str:
        if self.kind is ObjectKind.SHARE:
            return f"{self.queue}/{self.share}"
        if self.kind is ObjectKind.QUEUE:
            return f"job_queues[{self.queue}]"
        if self.kind is ObjectKind.ENVIRONMENT:
            return f"service_environments[{self.environment}]"
        if self.kind is ObjectKind.GUARANTEE:
            about = f" ({self.share_id})" if self.share_id else ""
            return f"guarantees[{self.index}]{about}"
        if self.kind is ObjectKind.SUPPRESSION:
            return f"suppress[{self.index}]"
        return "(topology)"


@dataclass(frozen=True)
class Named:
    """A list item in a data path shown by its name (``job_queues[training]``) but kept with its index."""

    index: int
    name: str


PathPart = str | int | Named
DataPath = tuple[PathPart, ...]


def render_path(path: Iterable[PathPart]) -> str:
    """``job_queues[training].shares[QS1].strategy``; ``(top level)`` for the empty path."""
    out = ""
    for part in path:
        if isinstance(part, Named):
            out += f"[{part.name}]"
        elif isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "(top level)"


@dataclass(frozen=True)
class Problem:
    """One problem in an input file: ``SOURCE[:LINE]: PATH: message`` when rendered."""

    source: str
    line: int | None
    path: DataPath
    message: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {render_path(self.path)}: {self.message}" if self.path else f"{where}: {self.message}"


@dataclass(frozen=True)
class ShareMatch:
    """What a share reference names: ``queue``/``share`` when exactly one, else ``error`` says why not."""

    queue: str | None = None
    share: str | None = None
    error: str | None = None

    @property
    def share_id(self) -> str | None:
        return f"{self.queue}/{self.share}" if self.queue is not None and self.share is not None else None


def resolve_share(ref: str, shares_by_queue: Mapping[str, Iterable[str]]) -> ShareMatch:
    """``QUEUE/SHARE`` names one share; a bare ``SHARE`` must be unique across queues.

    The one place that turns a user's share reference into a share or a helpful error
    (topology guarantees, workload rows, ``explain``, ``generate``, sweep paths).
    """
    if "/" in ref:
        queue, _, share = ref.partition("/")
        if share in set(shares_by_queue.get(queue, ())):
            return ShareMatch(queue, share)
        return ShareMatch(error=f"no quota share {ref!r} (write QUEUE/SHARE or a unique SHARE name)")
    matches = [queue for queue, shares in shares_by_queue.items() if ref in set(shares)]
    if len(matches) == 1:
        return ShareMatch(matches[0], ref)
    if not matches:
        return ShareMatch(error=f"no quota share {ref!r} (write QUEUE/SHARE or a unique SHARE name)")
    listed = ", ".join(f"{queue}/{ref}" for queue in matches)
    return ShareMatch(error=f"share {ref!r} is ambiguous ({listed}); write QUEUE/SHARE")
