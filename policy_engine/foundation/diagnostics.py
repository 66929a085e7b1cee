"""Where a problem is, as data: object references and located problems, rendered to text only at the edge.

Findings, load errors and simulator input errors all say *which object* and *where in which file*.
Keeping that as data (not strings parsed back with regular expressions) lets SARIF find a line,
CDK find a construct and reports group by share, whatever characters the names contain.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ObjectKind(StrEnum):
    """What kind of topology object a reference names."""

    TOPOLOGY = "topology"
    ENVIRONMENT = "service_environment"
    QUEUE = "job_queue"
    #: The list of every environment or queue (account-wide limits).
    ALL_ENVIRONMENTS = "service_environments"
    ALL_QUEUES = "job_queues"
    SHARE = "quota_share"
    #: a job queue's scheduling policy (``label`` is the policy's name)
    SCHEDULING_POLICY = "scheduling_policy"
    GUARANTEE = "guarantee"
    SUPPRESSION = "suppression"
    #: a ``targets`` entry (``label``: its share reference as written)
    TARGET = "target"
    #: a SageMaker training plan (``label`` is its name; ``index`` where the name is not unique)
    TRAINING_PLAN = "training_plan"


@dataclass(frozen=True, order=True)
class ObjectRef:
    """One topology object: a share is ``queue`` + ``share``; guarantees and suppressions also have ``index``.

    ``str()`` gives the name findings have always shown (``training/QS1``, ``job_queues[training]``,
    ``service_environments[gpu]``, ``guarantees[0] (training/QS1)``); code reads the fields. An
    environment or queue with ``index`` is one whose name is not unique: it is shown by position
    (``job_queues[1]``). ``label`` is what the user wrote for a guarantee (its share reference) or a
    suppression (its rule and object), shown in parentheses.
    """

    kind: ObjectKind
    environment: str | None = None
    queue: str | None = None
    share: str | None = None
    index: int | None = None
    label: str | None = None

    @classmethod
    def topology(cls) -> ObjectRef:
        return cls(ObjectKind.TOPOLOGY)

    @classmethod
    def all_environments(cls) -> ObjectRef:
        return cls(ObjectKind.ALL_ENVIRONMENTS)

    @classmethod
    def all_queues(cls) -> ObjectRef:
        return cls(ObjectKind.ALL_QUEUES)

    @classmethod
    def of_environment(cls, name: str, index: int | None = None) -> ObjectRef:
        """``index``: shown by position, for an environment whose name is not unique."""
        return cls(ObjectKind.ENVIRONMENT, environment=name, index=index)

    @classmethod
    def of_queue(cls, name: str, environment: str | None = None, index: int | None = None) -> ObjectRef:
        """``index``: shown by position, for a queue whose name is not unique."""
        return cls(ObjectKind.QUEUE, environment=environment, queue=name, index=index)

    @classmethod
    def of_share(cls, queue: str, share: str, environment: str | None = None) -> ObjectRef:
        return cls(ObjectKind.SHARE, environment=environment, queue=queue, share=share)

    @classmethod
    def of_scheduling_policy(cls, queue: str, policy: str) -> ObjectRef:
        """The scheduling policy ``policy`` of job queue ``queue``."""
        return cls(ObjectKind.SCHEDULING_POLICY, queue=queue, label=policy)

    @classmethod
    def of_guarantee(cls, index: int, queue: str | None = None, share: str | None = None,
                     environment: str | None = None, ref: str | None = None) -> ObjectRef:
        """A guarantee; ``queue``/``share`` when its share reference resolves to exactly one share,
        ``ref`` the reference as written (shown instead of ``QUEUE/SHARE`` when given)."""
        return cls(ObjectKind.GUARANTEE, environment=environment, queue=queue, share=share, index=index, label=ref)

    @classmethod
    def of_suppression(cls, index: int, rule: str | None = None, object: str | None = None) -> ObjectRef:
        """A ``suppress`` entry; ``rule`` and ``object`` as written, shown after the index."""
        label = f"{rule} {object}" if rule is not None and object is not None else None
        return cls(ObjectKind.SUPPRESSION, index=index, label=label)

    @classmethod
    def of_target(cls, index: int, ref: str | None = None) -> ObjectRef:
        """A ``targets`` entry; ``ref`` its share reference as written, shown after the index."""
        return cls(ObjectKind.TARGET, index=index, label=ref)

    @classmethod
    def of_plan(cls, name: str, index: int | None = None) -> ObjectRef:
        """The training plan ``name``; ``index``: shown by position, for a plan whose name is not unique."""
        return cls(ObjectKind.TRAINING_PLAN, index=index, label=name)

    @property
    def share_id(self) -> str | None:
        """``QUEUE/SHARE`` when the object is (or guarantees) exactly one share."""
        return f"{self.queue}/{self.share}" if self.queue is not None and self.share is not None else None

    @property
    def name(self) -> str:
        """The object's own name as AWS knows it (``QUEUE/SHARE`` for a share); ``str()`` for the others."""
        if self.kind is ObjectKind.SHARE:
            return f"{self.queue}/{self.share}"
        if self.kind is ObjectKind.QUEUE and self.queue is not None:
            return self.queue
        if self.kind is ObjectKind.ENVIRONMENT and self.environment is not None:
            return self.environment
        if self.kind in (ObjectKind.SCHEDULING_POLICY, ObjectKind.TRAINING_PLAN) and self.label is not None:
            return self.label
        return str(self)

    def __str__(self) -> str:
        if self.kind is ObjectKind.SCHEDULING_POLICY:
            return f"job_queues[{self.queue}].scheduling_policy ({self.label})"
        if self.kind is ObjectKind.SHARE:
            return f"{self.queue}/{self.share}"
        if self.kind is ObjectKind.QUEUE:
            return f"job_queues[{self.queue if self.index is None else self.index}]"
        if self.kind is ObjectKind.ENVIRONMENT:
            return f"service_environments[{self.environment if self.index is None else self.index}]"
        if self.kind is ObjectKind.GUARANTEE:
            about = self.label if self.label is not None else self.share_id
            return f"guarantees[{self.index}]" + (f" ({about})" if about else "")
        if self.kind is ObjectKind.TRAINING_PLAN:
            return f"training_plans[{self.label if self.index is None else self.index}]"
        if self.kind is ObjectKind.SUPPRESSION:
            return f"suppress[{self.index}]" + (f" ({self.label})" if self.label else "")
        if self.kind is ObjectKind.TARGET:
            return f"targets[{self.index}]" + (f" ({self.label})" if self.label else "")
        if self.kind in (ObjectKind.ALL_ENVIRONMENTS, ObjectKind.ALL_QUEUES):
            return self.kind.value
        return "(topology)"


@dataclass(frozen=True)
class Named:
    """A list item in a data path shown by its name (``job_queues[training]``) but kept with its index."""

    index: int
    name: str


PathPart = str | int | Named
DataPath = tuple[PathPart, ...]

#: A path part naming the document itself (``(top level): expected a mapping``); an empty path names nothing.
TOP_LEVEL = "(top level)"


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
    """One problem in an input file: ``SOURCE[:LINE]: PATH: message`` when rendered (no ``PATH`` when empty)."""

    source: str
    line: int | None
    path: DataPath
    message: str

    @property
    def detail(self) -> str:
        """``PATH: message`` (or the message): the problem without its file, for a report that names the file."""
        return f"{render_path(self.path)}: {self.message}" if self.path else self.message

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.detail}"


@dataclass(frozen=True)
class ShareMatch:
    """What a share reference names: ``queue``/``share`` when exactly one, else ``error`` says why not
    (``candidates``: the ``QUEUE/SHARE`` of every share an ambiguous reference could mean)."""

    queue: str | None = None
    share: str | None = None
    error: str | None = None
    candidates: tuple[tuple[str, str], ...] = ()

    @property
    def share_id(self) -> str | None:
        return f"{self.queue}/{self.share}" if self.queue is not None and self.share is not None else None


def resolve_share(ref: str, shares_by_queue: Mapping[str, Collection[str]]) -> ShareMatch:
    """``QUEUE/SHARE`` names one share; a bare ``SHARE`` must be unique across queues.

    The one place that turns a user's share reference into a share or a helpful error
    (topology guarantees, workload rows, ``explain``, ``generate``, sweep paths). ``QUEUE/SHARE``
    is matched whole, so a queue or share whose name holds ``/`` is still found.
    """
    matches = []
    for at, character in enumerate(ref):
        if character == "/" and ref[at + 1:] in shares_by_queue.get(ref[:at], ()):
            matches.append((ref[:at], ref[at + 1:]))
    if not matches:
        matches = [(queue, ref) for queue, shares in shares_by_queue.items() if ref in shares]
    if len(matches) == 1:
        return ShareMatch(*matches[0])
    if not matches:
        return ShareMatch(error=f"no quota share {ref!r} (write QUEUE/SHARE or a unique SHARE name)")
    listed = ", ".join(f"{queue}/{share}" for queue, share in matches)
    return ShareMatch(error=f"share {ref!r} is ambiguous ({listed}); write QUEUE/SHARE", candidates=tuple(matches))


class LoadError(Exception):
    """The input cannot be turned into what was asked for; one problem per line.

    ``located`` keeps each problem as given: a ``Problem`` (source, line, data path, message) where the
    reader knows where it is, else its text. ``problems`` renders them, one line each.
    """

    def __init__(self, problems: Iterable[Problem | str]):
        self.located: list[Problem | str] = list(problems)
        self.problems: list[str] = [str(problem) for problem in self.located]
        super().__init__("\n".join(self.problems))


def plain_path(path: Iterable[PathPart]) -> tuple[str | int, ...]:
    """A data path with named list items back to their indexes, as line tables key them."""
    return tuple(part.index if isinstance(part, Named) else part for part in path)


def line_of(lines: Mapping[tuple[Any, ...], int], path: Iterable[PathPart]) -> int | None:
    """The line of ``path`` in a file, or of its nearest ancestor that has one (``None`` without lines)."""
    plain = plain_path(path)
    return next((lines[plain[:n]] for n in range(len(plain), -1, -1) if plain[:n] in lines), None)
