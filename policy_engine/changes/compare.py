"""BASE -> HEAD: per-share deltas, guarantees held -> refuted, new and resolved findings, deploy hazards.

Both sides are checked once (``check_topology``); every number here comes from those two reports
(the summaries and the borrow graphs), so the diff and ``check`` never disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.guarantees import refute
from policy_engine.analysis.checks import CheckReport, check_topology
from policy_engine.analysis.promise_changes import compare_promises
from policy_engine.analysis.rules.guarantees import PROPERTY_OF_RULE
from policy_engine.changes import hazards
from policy_engine.changes.hazards import PolicyTypes
from policy_engine.changes.report import ChangeReport, ChangeStatus, FieldChange, GuaranteeChange, ObjectChange
from policy_engine.foundation.diagnostics import ObjectKind
from policy_engine.foundation.findings import Finding
from policy_engine.foundation.model import JobQueue, QuotaShare, ServiceEnvironment, Topology, share_id
from policy_engine.inputs.renames import Renames

_SHARE_FIELDS = ("strategy", "borrow_limit", "in_share_preemption", "state", "tags")
_QUEUE_FIELDS = ("service_environment", "priority", "state", "scheduling_policy_name", "tags")


def _values(before: Any, after: Any, names: Iterable[str], renamed: dict[str, Any] | None = None) -> list[FieldChange]:
    changes = []
    for name in names:
        old, new = getattr(before, name), getattr(after, name)
        if renamed and name in renamed:
            old = renamed[name](old)
        if old != new:
            changes.append(FieldChange(name, old, new))
    return changes


def _per_type(field: str, before: dict[str, Any], after: dict[str, Any]) -> list[FieldChange]:
    types = list(dict.fromkeys([*before, *after]))
    return [FieldChange(field, before.get(t), after.get(t), t) for t in types if before.get(t) != after.get(t)]


def _ceilings(share: QuotaShare) -> dict[str, int | str]:
    """The most the share may hold per type: its limit unless it borrows, ``"unlimited"`` without a borrow limit."""
    return {t: "unlimited" if (c := share.ceiling(t)) is None else c for t in share.capacity}


def _share_changes(base_report: CheckReport, head_report: CheckReport, base_id: str, head_id: str,
                   base_share: QuotaShare, head_share: QuotaShare, renames: Renames) -> list[FieldChange]:
    changes = _values(base_share, head_share, _SHARE_FIELDS)
    changes += _per_type("limit", dict(base_share.capacity), dict(head_share.capacity))
    # the most the share may hold: its limit unless it borrows; None = unlimited borrowing
    ceilings = [_ceilings(s) for s in (base_share, head_share)]
    changes += [c for c in _per_type("ceiling", *ceilings) if c.instance_type in base_share.capacity]
    before, after = base_report.summaries[base_id], head_report.summaries[head_id]
    changes += _per_type("guaranteed", before.guaranteed, after.guaranteed)
    changes += _per_type("max_burst", before.max_burst, after.max_burst)
    for name in ("preempted_by", "may_preempt"):
        old = sorted(renames.share(node) for node in getattr(before, name))
        new = sorted(getattr(after, name))
        if old != new:
            changes.append(FieldChange(name, old, new))
    return changes


def _one_side(report: CheckReport, node: str, share: QuotaShare, added: bool) -> tuple[FieldChange, ...]:
    """What an added share brings (``None -> value``) or a removed one takes away (``value -> None``)."""
    summary = report.summaries[node]
    values: list[tuple[str, Any, str | None]] = [(name, getattr(share, name), None) for name in _SHARE_FIELDS[:4]]
    for field, per_type in (("limit", share.capacity), ("ceiling", _ceilings(share)),
                            ("guaranteed", summary.guaranteed), ("max_burst", summary.max_burst)):
        values += [(field, value, t) for t, value in per_type.items()]
    values += [("preempted_by", sorted(summary.preempted_by), None), ("may_preempt", sorted(summary.may_preempt), None)]
    empty: dict[str, list[str]] = {"preempted_by": [], "may_preempt": []}
    return tuple(FieldChange(field, empty.get(field), value, t) if added else
                 FieldChange(field, value, empty.get(field), t)
                 for field, value, t in values if value not in (None, []))


def _shares(base: Topology, head: Topology, base_report: CheckReport, head_report: CheckReport,
            renames: Renames) -> tuple[list[ObjectChange], dict[str, str]]:
    """Share changes, and the BASE id -> HEAD id of every share present on both sides."""
    head_shares = {share_id(q, s): s for q, s in head.shares()}
    matched: dict[str, str] = {}
    changes: list[ObjectChange] = []
    for queue, share in base.shares():
        base_id = share_id(queue, share)
        head_id = renames.share(base_id)
        if head_id not in head_shares:
            changes.append(ObjectChange(ObjectKind.SHARE, base_id, ChangeStatus.REMOVED,
                                        _one_side(base_report, base_id, share, added=False)))
            continue
        matched[base_id] = head_id
        fields = _share_changes(base_report, head_report, base_id, head_id, share, head_shares[head_id], renames)
        if head_id != base_id:
            changes.append(ObjectChange(ObjectKind.SHARE, head_id, ChangeStatus.RENAMED, tuple(fields), base_id))
        elif fields:
            changes.append(ObjectChange(ObjectKind.SHARE, head_id, ChangeStatus.CHANGED, tuple(fields)))
    found = set(matched.values())
    changes += [ObjectChange(ObjectKind.SHARE, head_id, ChangeStatus.ADDED,
                             _one_side(head_report, head_id, head_shares[head_id], added=True))
                for head_id in head_shares if head_id not in found]
    return changes, matched


def _kept(kind: ObjectKind, base_name: str, head_name: str, fields: list[FieldChange]) -> list[ObjectChange]:
    """An object in both: ``renamed`` (with what changed), ``changed``, or nothing to say."""
    if head_name != base_name:
        return [ObjectChange(kind, head_name, ChangeStatus.RENAMED, tuple(fields), base_name)]
    return [ObjectChange(kind, head_name, ChangeStatus.CHANGED, tuple(fields))] if fields else []


Named = TypeVar("Named", JobQueue, ServiceEnvironment)


def _named(kind: ObjectKind, before: Sequence[Named], after: Sequence[Named], renamed: Callable[[str], str],
           fields: Callable[[Named, Named], list[FieldChange]]) -> list[ObjectChange]:
    """Removed, renamed and changed objects in BASE order, then the added ones in HEAD order."""
    changes: list[ObjectChange] = []
    by_name = {item.name: item for item in after}
    seen = set()
    for item in before:
        new_name = renamed(item.name)
        found = by_name.get(new_name)
        if found is None:
            changes.append(ObjectChange(kind, item.name, ChangeStatus.REMOVED))
            continue
        seen.add(new_name)
        changes += _kept(kind, item.name, new_name, fields(item, found))
    return changes + [ObjectChange(kind, item.name, ChangeStatus.ADDED) for item in after if item.name not in seen]


def _queue_fields(renames: Renames) -> Callable[[JobQueue, JobQueue], list[FieldChange]]:
    def fields(queue: JobQueue, after: JobQueue) -> list[FieldChange]:
        found = _values(queue, after, _QUEUE_FIELDS, {"service_environment": renames.environment})
        if queue.job_state_time_limit_actions != after.job_state_time_limit_actions:
            found.append(FieldChange("job_state_time_limit_actions",
                                     [a.model_dump() for a in queue.job_state_time_limit_actions],
                                     [a.model_dump() for a in after.job_state_time_limit_actions]))
        return found

    return fields


def _environment_fields(environment: ServiceEnvironment, after: ServiceEnvironment) -> list[FieldChange]:
    return (_per_type("capacity", dict(environment.capacity), dict(after.capacity))
            + _values(environment, after, ("state", "tags")))


def _queues(base: Topology, head: Topology, renames: Renames) -> list[ObjectChange]:
    return _named(ObjectKind.QUEUE, base.job_queues, head.job_queues, renames.queue, _queue_fields(renames))


def _environments(base: Topology, head: Topology, renames: Renames) -> list[ObjectChange]:
    return _named(ObjectKind.ENVIRONMENT, base.service_environments, head.service_environments,
                  renames.environment, _environment_fields)


GuaranteeKey = tuple[str, str, str | None]


def guarantee_states(topology: Topology,
                     graph: BorrowGraph) -> dict[GuaranteeKey, tuple[str, str, dict[str, Any] | None]]:
    """``(share id, property, instance type) -> (held|refuted, message, counterexample)`` per declared promise."""
    states: dict[GuaranteeKey, tuple[str, str, dict[str, Any] | None]] = {}
    for guarantee in topology.guarantees:
        matches = topology.resolve_share(guarantee.share)
        if len(matches) != 1:
            continue
        node = share_id(*matches[0])
        keys: list[GuaranteeKey] = [(node, "min_capacity", t) for t in guarantee.min_capacity or {}]
        keys += [(node, "burst_capacity", t) for t in guarantee.burst_capacity or {}]
        if guarantee.never_preempted:
            keys.append((node, "never_preempted", None))
        for key in keys:
            states.setdefault(key, ("held", "", None))
        for refutation in refute(topology, graph, guarantee):
            kind = refutation.instance_type if refutation.property != "never_preempted" else None
            key = (node, refutation.property, kind)
            if states.get(key, ("held",))[0] == "held":
                states[key] = ("refuted", refutation.message, refutation.counterexample)
    return states


States = dict[GuaranteeKey, tuple[str, str, dict[str, Any] | None]]


def _guarantees(before: States, after: States) -> list[GuaranteeChange]:
    """Proofs that change (held, refuted, absent); ``before`` keyed by HEAD ids. A promise dropped, or added and
    proven, is a promise change (``promises``) and said there once; one added and refuted is a guarantee lost."""
    changes = []
    for key in dict.fromkeys([*before, *after]):
        old = before.get(key, ("absent", "", None))
        new = after.get(key, ("absent", "", None))
        if new[0] == "absent" or (old[0] == "absent" and new[0] == "held"):
            continue
        if old[0] != new[0] or (new[0] == "refuted" and old[1] != new[1]):
            message, counterexample = (new[1], new[2]) if new[0] == "refuted" else (old[1], old[2])
            changes.append(GuaranteeChange(key[0], key[1], key[2], old[0], new[0], message, counterexample))
    return changes


def _graph(topology: Topology, report: CheckReport) -> BorrowGraph:
    return report.graph if report.graph is not None else BorrowGraph(topology)


def _reported_as_lost(finding: Finding, lost: set[tuple[str, str]]) -> bool:
    """A refutation finding whose promise is listed under guarantees lost already (reported once)."""
    prop = PROPERTY_OF_RULE.get(finding.rule)
    return prop is not None and (finding.object.share_id or "", prop) in lost


def _findings(base_report: CheckReport, head_report: CheckReport,
              renames: Renames) -> tuple[list[Finding], list[Finding]]:
    """New and resolved findings. A finding that stays (same rule on the same object) is neither, even when
    its numbers moved: new means HEAD has more findings of that rule on that object than BASE had."""
    before: dict[tuple[str, str], list[Finding]] = {}
    for finding in base_report.findings:
        before.setdefault((finding.rule, renames.share(str(finding.object))), []).append(finding)
    after: dict[tuple[str, str], list[Finding]] = {}
    for finding in head_report.findings:
        after.setdefault((finding.rule, str(finding.object)), []).append(finding)
    new, resolved = [], []
    for key in dict.fromkeys([*before, *after]):
        old, now = before.get(key, []), after.get(key, [])
        if len(old) == len(now):
            continue
        # the surplus: those whose message has no counterpart on the other side first
        old_messages = Counter(f.message for f in old)
        now_messages = Counter(f.message for f in now)
        if len(now) > len(old):
            unmatched = [f for f in now if now_messages[f.message] > old_messages[f.message]]
            new += (unmatched + [f for f in now if f not in unmatched])[: len(now) - len(old)]
        else:
            unmatched = [f for f in old if old_messages[f.message] > now_messages[f.message]]
            resolved += (unmatched + [f for f in old if f not in unmatched])[: len(old) - len(now)]
    return new, resolved


def compare(base: Topology, head: Topology, renames: Renames | None = None, *, base_label: str = "BASE",
            head_label: str = "HEAD", base_report: CheckReport | None = None,
            head_report: CheckReport | None = None,
            policies: tuple[PolicyTypes, PolicyTypes] | None = None) -> ChangeReport:
    """Everything that changes from ``base`` to ``head`` (each checked once unless its report is given).
    ``policies``: each side's scheduling policies by type, when a side is a CloudFormation template that
    also holds fair-share policies (``sources.Side.policies``)."""
    renames = renames or Renames()
    base_report = base_report or check_topology(base)
    head_report = head_report or check_topology(head)
    share_changes, matched = _shares(base, head, base_report, head_report, renames)
    objects = _environments(base, head, renames) + _queues(base, head, renames) + share_changes
    new, resolved = _findings(base_report, head_report, renames)
    before = {(renames.share(node), prop, kind): state
              for (node, prop, kind), state in guarantee_states(base, _graph(base, base_report)).items()}
    after = guarantee_states(head, _graph(head, head_report))
    guarantees = _guarantees(before, after)
    lost = {(g.share, g.property) for g in guarantees if g.refuted_now}
    found = hazards.find(base, head, renames, matched)
    if policies is not None:
        found += hazards.policy_type_changes(*policies)
    return ChangeReport(
        base=base_label,
        head=head_label,
        objects=objects,
        guarantees=guarantees,
        new_findings=[finding for finding in new if not _reported_as_lost(finding, lost)],
        resolved_findings=resolved,
        hazards=[hazard.accepted_by(head.suppress) for hazard in found],
        promises=compare_promises(base, head, renames.share, before, after),
    )
