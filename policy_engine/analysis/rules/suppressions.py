"""Suppressions: findings accepted on purpose, by rule ID and object, with a reason.

A suppression (``suppress:`` in the topology, or ``check_topology(..., suppress=...)`` in Python)
marks the findings it matches; they stay in every output with their reason and no longer fail
``check`` (or ``check --strict`` for warnings) or ``cdk synth``. Warnings may be suppressed, errors
only of rules whose findings AWS still deploys (``suppressible_errors``: the refuted guarantees);
an AWS-limit error can never be, since the deploy would fail anyway. The findings of this family
are about the suppressions themselves and are never suppressed.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import replace

from policy_engine.analysis.rules.base import REGISTRY, Context, RawFinding, rule
from policy_engine.analysis.rules.objects import (
    TOPOLOGY,
    environment_ref,
    queue_ref,
    share_ref,
    suppression_ref,
)
from policy_engine.foundation.diagnostics import ObjectKind, ObjectRef
from policy_engine.foundation.findings import Finding, Severity
from policy_engine.foundation.model import Suppression, Topology

#: The diff-only rules about a share's declared guarantees, whose object is always QUEUE/SHARE (BQ501, BQ502);
#: a deploy hazard's object may be a queue or an environment as ``diff`` names it.
_PROMISE_RULES = ("BQ501", "BQ502")


def matches(topology: Topology, suppression: Suppression, finding: Finding) -> bool:
    """Same rule, and the finding's object, or the share a guarantee finding is about."""
    if suppression.rule != finding.rule:
        return False
    if suppression.object == str(finding.object):
        return True
    return finding.object.kind is ObjectKind.GUARANTEE and finding.object.share_id == suppression.object


def _known_objects(context: Context) -> list[str]:
    """Every object a finding may name, as findings name it (what a suppression's ``object`` matches)."""
    topology = context.topology
    refs = [
        TOPOLOGY, ObjectRef.all_queues(), ObjectRef.all_environments(),
        *(environment_ref(e.name) for e in topology.service_environments),
        *(queue_ref(q) for q in topology.job_queues),
        *(share_ref(q, s) for q, s in topology.shares()),
        *(ref for ref, _ in context.guarantee_shares),
    ]
    return [str(ref) for ref in refs]


def _suppressing(context: Context) -> Iterator[tuple[int, Suppression, list[Finding]]]:
    for index, suppression in enumerate(context.suppressions):
        found = [f for f in context.findings if matches(context.topology, suppression, f)]
        yield index, suppression, found


def _closest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


@rule("BQ002", Severity.ERROR, "A suppression names a rule, an object, a reason, and only what may be suppressed",
      after_findings=True)
def suppression_valid(context: Context) -> Iterator[RawFinding]:
    """Each ``suppress`` entry names a registered rule ID, an object of the topology as findings name it, and a
    non-empty reason; and every finding it matches may be suppressed: a warning, or an error AWS would still
    deploy (a refuted guarantee, BQ4xx). An AWS-limit or structural error cannot be suppressed: the deploy
    would fail (or the topology mean something else) whatever the suppression says."""
    known_rules = sorted(REGISTRY)
    known_objects = _known_objects(context)
    for index, suppression, found in _suppressing(context):
        obj = suppression_ref(index, suppression)
        if not suppression.reason.strip():
            yield RawFinding(obj, "has no reason", "say why the finding is accepted, e.g. reason: \"QS2 grows in Q3\"")
        if suppression.rule not in REGISTRY:
            yield RawFinding(obj, f"rule {suppression.rule!r} does not exist{_closest(suppression.rule, known_rules)}",
                             "use a rule ID from docs/rules.md")
            continue
        if REGISTRY[suppression.rule].diff_only:
            # the share may be gone from HEAD: its promise is what changed
            if suppression.rule in _PROMISE_RULES and "/" not in suppression.object:
                yield RawFinding(obj, f"{suppression.rule} is about a share's declared guarantees: its object is "
                                 f"QUEUE/SHARE, not {suppression.object!r}", "write the share as QUEUE/SHARE")
        elif not found and suppression.object not in known_objects:
            yield RawFinding(obj, f"object {suppression.object!r} names nothing in the topology"
                             f"{_closest(suppression.object, known_objects)}",
                             "write the object as the finding names it, e.g. QUEUE/SHARE or job_queues[QUEUE]")
        checked = REGISTRY[suppression.rule]
        for finding in found:
            if not checked.can_suppress(finding.severity):
                yield RawFinding(obj,
                                 f"cannot suppress the {finding.severity.value} {finding.rule} on {finding.object}: "
                                 "AWS would refuse the deploy (only warnings and refuted guarantees can be suppressed)",
                                 "fix the topology; remove the suppression")
        if checked.after_findings:
            yield RawFinding(obj, f"{suppression.rule} is about suppressions and cannot be suppressed",
                             "fix the suppression instead")


@rule("BQ003", Severity.WARNING, "A suppression matches a finding", after_findings=True)
def suppression_used(context: Context) -> Iterator[RawFinding]:
    """A suppression whose rule finds nothing on its object any more is stale: it would silently accept a future
    finding nobody reviewed. Remove it (or fix its object)."""
    known_objects = set(_known_objects(context))
    for index, suppression, found in _suppressing(context):
        checked = REGISTRY.get(suppression.rule)
        if (not found and checked is not None and not checked.after_findings and not checked.diff_only
                and suppression.object in known_objects):
            yield RawFinding(suppression_ref(index, suppression),
                             f"suppresses nothing: {suppression.rule} finds nothing on {suppression.object}",
                             "remove the suppression")


def apply(context: Context, findings: list[Finding]) -> list[Finding]:
    """``findings`` with those a valid suppression matches marked ``suppressed`` (its reason)."""
    valid = [s for s in context.suppressions if s.reason.strip() and s.rule in REGISTRY]
    if not valid:
        return findings
    out = []
    for finding in findings:
        reason = next((s.reason for s in valid if matches(context.topology, s, finding)
                       and REGISTRY[finding.rule].can_suppress(finding.severity)), None)
        out.append(finding if reason is None else replace(finding, suppressed=reason))
    return out
