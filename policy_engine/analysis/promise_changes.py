"""What a change does to the promises themselves: guarantee declarations compared per share and instance type.

A declared guarantee is a promise to a team whether or not the checks can prove it, so lowering
``min_capacity`` 8 -> 6 or deleting a team's guarantees is a change a reviewer must see, beside
whether each promise is proven (held) or refuted on each side. Weakened promises are rule BQ501,
dropped ones BQ502 (``policy_engine.analysis.rules.promises``); a suppression of that rule on the share in
HEAD accepts the change.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from policy_engine.analysis.rules.promises import guarantee_dropped, guarantee_weakened
from policy_engine.foundation.model import Suppression, Topology, share_id

#: ``(share id, property, instance type)``: one promise (``instance_type`` is ``None`` for never_preempted).
PromiseKey = tuple[str, str, str | None]


class PromiseKind(Enum):
    """How one declared promise changes from BASE to HEAD."""

    ADDED = "added"
    REMOVED = "removed"
    WEAKENED = "weakened"
    STRENGTHENED = "strengthened"
    NEVER_PREEMPTED_ADDED = "never_preempted_added"
    NEVER_PREEMPTED_REMOVED = "never_preempted_removed"

    @property
    def rule(self) -> str | None:
        """The rule a reviewer accepts it under (BQ501 weakened, BQ502 dropped); ``None``: nothing to review."""
        if self is PromiseKind.WEAKENED:
            return guarantee_weakened.id
        if self in (PromiseKind.REMOVED, PromiseKind.NEVER_PREEMPTED_REMOVED):
            return guarantee_dropped.id
        return None

    @property
    def fail_on(self) -> str | None:
        """The ``--fail-on`` value that fails on it."""
        if self.rule is None:
            return None
        return "guarantee-weakened" if self is PromiseKind.WEAKENED else "guarantee-dropped"


@dataclass(frozen=True)
class PromiseChange:
    """One promise's declaration before -> after, and whether the checks prove it on each side."""

    share: str  # HEAD id (BASE's, after declared renames, when the share is gone)
    property: str  # min_capacity | burst_capacity | never_preempted
    instance_type: str | None
    kind: PromiseKind
    before: int | bool | None  # the declared value (None: not declared)
    after: int | bool | None
    #: held | refuted | absent, as ``guarantee_states`` proves it on each side.
    proven_before: str
    proven_after: str
    #: The reason of the suppression in HEAD that accepts it (BQ501/BQ502), else ``None``.
    accepted: str | None = None

    @builtins.property  # the field ``property`` shadows the builtin in this class body
    def label(self) -> str:
        return f"{self.share} {self.property}" + (f" {self.instance_type}" if self.instance_type else "")

    @builtins.property
    def failing(self) -> bool:
        """Needs review and nobody accepted it."""
        return self.kind.rule is not None and self.accepted is None

    def to_dict(self) -> dict[str, object]:
        """The change as JSON writes it (``diff``'s and ``tune``'s ``promise_changes``)."""
        return {"share": self.share, "property": self.property, "instance_type": self.instance_type,
                "kind": self.kind.value, "rule": self.kind.rule, "before": self.before, "after": self.after,
                "proven_before": self.proven_before, "proven_after": self.proven_after, "accepted": self.accepted}


def declarations(topology: Topology) -> dict[PromiseKey, int | bool]:
    """Every declared promise; several guarantees on one share and type keep the strongest. A guarantee
    whose share does not resolve to exactly one share promises nothing here (BQ001 reports it)."""
    declared: dict[PromiseKey, int | bool] = {}
    for guarantee in topology.guarantees:
        matches = topology.resolve_share(guarantee.share)
        if len(matches) != 1:
            continue
        node = share_id(*matches[0])
        for prop in ("min_capacity", "burst_capacity"):
            for instance_type, count in (getattr(guarantee, prop) or {}).items():
                key = (node, prop, instance_type)
                declared[key] = max(int(count), int(declared.get(key, 0)))
        if guarantee.never_preempted:
            declared[(node, "never_preempted", None)] = True
    return declared


def _kind(prop: str, before: int | bool | None, after: int | bool | None) -> PromiseKind | None:
    if before == after:
        return None
    if prop == "never_preempted":
        return PromiseKind.NEVER_PREEMPTED_ADDED if after else PromiseKind.NEVER_PREEMPTED_REMOVED
    if before is None:
        return PromiseKind.ADDED
    if after is None:
        return PromiseKind.REMOVED
    return PromiseKind.WEAKENED if after < before else PromiseKind.STRENGTHENED


def _acceptance(suppressions: tuple[Suppression, ...], rule: str | None, share: str) -> str | None:
    if rule is None:
        return None
    return next((s.reason for s in suppressions if s.rule == rule and s.object == share and s.reason.strip()), None)


def compare_promises(base: Topology, head: Topology, renamed: Callable[[str], str],
                     base_states: Mapping[PromiseKey, tuple[Any, ...]],
                     head_states: Mapping[PromiseKey, tuple[Any, ...]]) -> list[PromiseChange]:
    """Each promise declared differently in BASE and HEAD (BASE ids renamed to HEAD's), BASE order first.
    ``*_states`` are ``guarantee_states`` keyed the same way (BASE's already renamed)."""
    before = {(renamed(node), prop, kind): value for (node, prop, kind), value in declarations(base).items()}
    after = declarations(head)
    changes = []
    for key in dict.fromkeys([*before, *after]):
        old, new = before.get(key), after.get(key)
        kind = _kind(key[1], old, new)
        if kind is None:
            continue
        changes.append(PromiseChange(
            key[0], key[1], key[2], kind, old, new,
            base_states.get(key, ("absent",))[0] if old is not None else "absent",
            head_states.get(key, ("absent",))[0] if new is not None else "absent",
            _acceptance(head.suppress, kind.rule, key[0])))
    return changes
