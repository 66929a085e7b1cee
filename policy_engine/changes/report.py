"""What a topology change does, as data: renderers (text, json, markdown) only format it."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from policy_engine.analysis.promise_changes import PromiseChange
from policy_engine.analysis.rules import deploy_hazards
from policy_engine.foundation.diagnostics import ObjectKind, ObjectRef
from policy_engine.foundation.findings import Finding
from policy_engine.foundation.model import Suppression

if TYPE_CHECKING:
    from policy_engine.changes.impact import Impact

#: What makes ``diff`` exit 1 (``--fail-on``); ``never`` turns all off. The default is all of them.
FAIL_ON = ("guarantee", "guarantee-weakened", "guarantee-dropped", "finding", "hazard")
#: A share's own fields: a change to one of them is a direct change; the rest (guaranteed, max burst, who
#: preempts whom) may move through the borrow graph when another share changes.
DIRECT_FIELDS = frozenset({"strategy", "borrow_limit", "in_share_preemption", "state", "tags", "limit", "ceiling"})


class ChangeStatus(StrEnum):
    """What happened to an object between BASE and HEAD."""

    ADDED = "added"
    REMOVED = "removed"
    RENAMED = "renamed"
    CHANGED = "changed"


class HazardKind(StrEnum):
    """What a deploy does beyond updating properties in place."""

    #: CloudFormation deletes and recreates it (a create-only property changed)
    REPLACE = "replace"
    DELETE = "delete"
    #: a share's limit lowered: its jobs above the new limit become preemptible
    LOWERED_LIMIT = "lowered_limit"
    #: an environment's capacity lowered
    CAPACITY_CUT = "capacity_cut"
    #: a share or queue becomes DISABLED
    DISABLED = "disabled"

    @property
    def rule(self) -> str:
        """The rule a reviewer accepts it under (``analysis.rules.deploy_hazards``, BQ701-BQ705)."""
        return _HAZARD_RULES[self].id


_HAZARD_RULES = {HazardKind.REPLACE: deploy_hazards.hazard_replace, HazardKind.DELETE: deploy_hazards.hazard_delete,
                 HazardKind.LOWERED_LIMIT: deploy_hazards.hazard_lowered_limit,
                 HazardKind.CAPACITY_CUT: deploy_hazards.hazard_capacity_cut,
                 HazardKind.DISABLED: deploy_hazards.hazard_disabled}


@dataclass(frozen=True)
class FieldChange:
    """One value before -> after; ``instance_type`` for per-type values (limit, guaranteed, burst, ceiling)."""

    field: str
    before: Any
    after: Any
    instance_type: str | None = None

    @property
    def name(self) -> str:
        return f"{self.field} {self.instance_type}" if self.instance_type else self.field

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "instance_type": self.instance_type, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class ObjectChange:
    """A share, job queue or service environment: added, removed, renamed or changed, with its changes.

    ``name`` is the HEAD name (BASE's when removed); ``renamed_from`` the BASE name of a declared rename.
    """

    kind: ObjectKind  # SHARE, QUEUE or ENVIRONMENT
    name: str
    status: ChangeStatus
    changes: tuple[FieldChange, ...] = ()
    renamed_from: str | None = None

    @property
    def direct(self) -> bool:
        """Added, removed, renamed, or one of its own fields changed (not only figures the borrow graph moves)."""
        return (self.kind != "quota_share" or self.status != "changed"
                or any(change.field in DIRECT_FIELDS for change in self.changes))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "status": self.status, "renamed_from": self.renamed_from,
                "direct": self.direct, "changes": [change.to_dict() for change in self.changes]}


@dataclass(frozen=True)
class GuaranteeChange:
    """One declared promise (share, property, instance type) before -> after: held, refuted or absent."""

    share: str
    property: str
    instance_type: str | None
    before: str  # held | refuted | absent
    after: str
    #: Why it fails after the change (empty when it holds), and the state that shows it.
    message: str = ""
    counterexample: dict[str, Any] | None = None

    @builtins.property  # the field ``property`` shadows the builtin in this class body
    def lost(self) -> bool:
        return self.before == "held" and self.after == "refuted"

    @builtins.property
    def refuted_now(self) -> bool:
        """Refuted in HEAD and not in BASE: lost (held before), or declared anew and refuted."""
        return self.after == "refuted" and self.before != "refuted"

    @builtins.property
    def regained(self) -> bool:
        return self.before == "refuted" and self.after == "held"

    def to_dict(self) -> dict[str, Any]:
        return {"share": self.share, "property": self.property, "instance_type": self.instance_type,
                "before": self.before, "after": self.after, "message": self.message,
                "counterexample": self.counterexample}


@dataclass(frozen=True)
class Hazard:
    """What a deploy does beyond updating properties in place: replace, delete, or put running jobs at risk."""

    kind: HazardKind
    resource_type: str
    object: ObjectRef
    message: str
    #: The create-only properties that changed (``replace`` only).
    properties: tuple[str, ...] = ()
    #: The reason of the suppression in HEAD that accepts it (its kind's rule on its object), else ``None``.
    accepted: str | None = None

    @property
    def name(self) -> str:
        """The object's own name, as CloudFormation's resource has it (``QUEUE/SHARE`` for a share)."""
        return self.object.name

    @property
    def rule(self) -> str:
        return self.kind.rule

    def accepted_by(self, suppressions: Iterable[Suppression]) -> Hazard:
        """This hazard, accepted by the first suppression of its rule naming its object (its own name, or as
        findings name it) with a reason."""
        names = {self.name, str(self.object)}
        reason = next((s.reason for s in suppressions
                       if s.rule == self.rule and s.object in names and s.reason.strip()), None)
        return replace(self, accepted=reason)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "rule": self.rule, "resource_type": self.resource_type, "object": self.name,
                "properties": list(self.properties), "message": self.message, "accepted": self.accepted}


@dataclass(frozen=True)
class ChangeReport:
    """Everything ``batch-quota diff`` says about BASE -> HEAD."""

    base: str
    head: str
    objects: list[ObjectChange]
    guarantees: list[GuaranteeChange]
    new_findings: list[Finding]
    resolved_findings: list[Finding]
    hazards: list[Hazard]
    #: ``diff --scenario S --at T``: the replay's result, else ``None`` (its JSON: ``Impact.to_dict()``).
    impact: Impact | None = field(default=None)
    #: Guarantee declarations that differ (weakened, dropped, added, ...), each with its proof on both sides.
    promises: list[PromiseChange] = field(default_factory=list)

    @property
    def shares(self) -> list[ObjectChange]:
        """Every share that changes, directly or through the borrow graph."""
        return [change for change in self.objects if change.kind is ObjectKind.SHARE]

    @property
    def changed_shares(self) -> list[ObjectChange]:
        """Shares changed directly (their own fields, added, removed, renamed)."""
        return [change for change in self.shares if change.direct]

    @property
    def affected_shares(self) -> list[ObjectChange]:
        """Shares whose own fields are unchanged but whose guaranteed, burst or preemption figures move through
        the borrow graph because another share changed."""
        return [change for change in self.shares if not change.direct]

    @property
    def lost_guarantees(self) -> list[GuaranteeChange]:
        """Promises refuted in HEAD that were not in BASE (held before, or new and refuted)."""
        return [change for change in self.guarantees if change.refuted_now]

    @property
    def failing_hazards(self) -> list[Hazard]:
        """Hazards nobody accepted (``--fail-on hazard`` fails on them)."""
        return [hazard for hazard in self.hazards if hazard.accepted is None]

    def failing_promises(self, which: str) -> list[PromiseChange]:
        """Unaccepted promise changes that ``--fail-on WHICH`` (guarantee-weakened, guarantee-dropped) fails on."""
        return [p for p in self.promises if p.failing and p.kind.fail_on == which]

    def failures(self, fail_on: tuple[str, ...] = FAIL_ON) -> list[str]:
        """Why the diff fails under ``fail_on`` (empty: exit 0), one phrase per reason."""
        reasons = []
        if "guarantee" in fail_on and self.lost_guarantees:
            reasons.append(f"{len(self.lost_guarantees)} guarantee(s) lost")
        for which, phrase in (("guarantee-weakened", "weakened"), ("guarantee-dropped", "dropped")):
            if which in fail_on and (found := self.failing_promises(which)):
                reasons.append(f"{len(found)} declared guarantee(s) {phrase} (accept with a suppression of "
                               f"{found[0].kind.rule} in HEAD)")
        if "finding" in fail_on and self.new_findings:
            reasons.append(f"{len(self.new_findings)} new finding(s)")
        if "hazard" in fail_on and (pending := self.failing_hazards):
            reasons.append(f"{len(pending)} deploy hazard(s) (accept each with a suppression of its rule, "
                           f"{', '.join(sorted({h.rule for h in pending}))}, in HEAD)")
        return reasons

    def with_impact(self, impact: Impact) -> ChangeReport:
        return replace(self, impact=impact)

    def to_dict(self, fail_on: tuple[str, ...] = FAIL_ON) -> dict[str, Any]:
        """The ``--format json`` document (stable keys)."""

        def finding(f: Finding) -> dict[str, Any]:
            return {"rule": f.rule, "severity": f.severity.value, "object": str(f.object), "message": f.message,
                    "hint": f.hint}

        failures = self.failures(fail_on)
        impact = None if self.impact is None else self.impact.to_dict()
        return {
            "base": self.base,
            "head": self.head,
            "ok": not failures,
            "failures": failures,
            "summary": {
                "shares_changed": len(self.changed_shares),
                "shares_affected": len(self.affected_shares),
                "guarantees_lost": len(self.lost_guarantees),
                "guarantees_weakened": sum(1 for p in self.promises if p.kind.fail_on == "guarantee-weakened"),
                "guarantees_dropped": sum(1 for p in self.promises if p.kind.fail_on == "guarantee-dropped"),
                "promise_changes": len(self.promises),
                "guarantees_regained": sum(1 for g in self.guarantees if g.regained),
                "new_findings": len(self.new_findings),
                "resolved_findings": len(self.resolved_findings),
                "hazards": len(self.hazards),
                "hazards_accepted": len(self.hazards) - len(self.failing_hazards),
                # shares the replay (``--scenario``) shows worse off: ``ok`` may be true while this is not 0
                "shares_harmed": 0 if impact is None else len(impact["harmed"]),
            },
            "objects": [change.to_dict() for change in self.objects],
            "guarantees": [change.to_dict() for change in self.guarantees],
            "new_findings": [finding(f) for f in self.new_findings],
            "resolved_findings": [finding(f) for f in self.resolved_findings],
            "hazards": [hazard.to_dict() for hazard in self.hazards],
            "impact": impact,
            "promises": [change.to_dict() for change in self.promises],
        }
