"""``batch-quota diff`` for people: the verdict, then what changes per share, guarantee, finding and hazard."""

from __future__ import annotations

import json
from typing import Any, TextIO

import click

from policy_engine.changes.promises import PromiseChange
from policy_engine.changes.report import FAIL_ON, ChangeReport, ChangeStatus, FieldChange, GuaranteeChange, ObjectChange
from policy_engine.diagnostics import ObjectKind
from policy_engine.reports.subjects import DiffOutput
from policy_engine.units import duration_text, instance_hours_text

KIND_TITLES = {ObjectKind.ENVIRONMENT: "Service environments", ObjectKind.QUEUE: "Job queues",
               ObjectKind.SHARE: "Quota shares"}


def shown(value: Any) -> str:
    """A value as a reviewer reads it: ``-`` for absent, mappings inline, lists joined."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "{}"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "nobody"
    return str(value)


def describe(change: FieldChange, arrow: str = "->") -> str:
    """``limit ml.g5.xlarge: 2 -> 1``; list fields as ``+added -removed``."""
    if change.field in ("preempted_by", "may_preempt"):
        added = [x for x in change.after if x not in change.before]
        removed = [x for x in change.before if x not in change.after]
        parts = [f"+{x}" for x in added] + [f"-{x}" for x in removed]
        return f"{change.field}: {' '.join(parts)}"
    return f"{change.name}: {shown(change.before)} {arrow} {shown(change.after)}"


def object_line(change: ObjectChange) -> str:
    if change.status is ChangeStatus.RENAMED:
        return f"{change.renamed_from} -> {change.name} (renamed)"
    return f"{change.name} ({change.status})"


def guarantee_line(change: GuaranteeChange) -> str:
    what = f"{change.share} {change.property}" + (f" {change.instance_type}" if change.instance_type else "")
    label = ("LOST" if change.refuted_now else "REGAINED" if change.regained else "DROPPED" if change.after == "absent"
             else "NEW" if change.before == "absent" else change.after.upper())
    return f"{label:<8} {what}: {change.before} -> {change.after}"


def declared(value: int | bool | None) -> str:
    """A declared promise's value: ``-`` when not declared."""
    return "-" if value is None else "yes" if value is True else str(value)


def promise_line(change: PromiseChange) -> str:
    """``WEAKENED training/A min_capacity ml.g5.xlarge: 8 -> 6 (proof: held -> held)``, with who accepted it."""
    state = f"proof: {change.proven_before} -> {change.proven_after}"
    accepted = f"; accepted ({change.kind.rule}): {change.accepted}" if change.accepted else (
        f"; needs review ({change.kind.rule})" if change.kind.rule else "")
    return (f"{change.kind.value.upper().replace('_', ' '):<24} {change.label}: {declared(change.before)} -> "
            f"{declared(change.after)} ({state}{accepted})")


def shares_title(report: ChangeReport) -> str:
    """How many shares changed directly, and how many only through the borrow graph."""
    affected = len(report.affected_shares)
    return (f"Quota shares ({len(report.changed_shares)} changed"
            + (f", {affected} affected through the borrow graph)" if affected else ")"))


def verdict(report: ChangeReport, fail_on: tuple[str, ...]) -> str:
    failures = report.failures(fail_on)
    return ("FAIL: " + ", ".join(failures)) if failures else "OK: nothing got worse"


def render(report: ChangeReport, fail_on: tuple[str, ...] = FAIL_ON) -> str:
    lines = [f"batch-quota diff {report.base} -> {report.head}", "", verdict(report, fail_on), ""]
    if not (report.objects or report.guarantees or report.new_findings or report.resolved_findings
            or report.hazards or report.promises):
        lines += ["No change to shares, queues, environments, guarantees or findings.", ""]
    if report.promises:
        lines.append(f"Promises: declared guarantees that change ({len(report.promises)})")
        lines += [f"  {promise_line(change)}" for change in report.promises]
        lines.append("")
    for kind, title in KIND_TITLES.items():
        changes = [c for c in report.objects if c.kind is kind]
        if not changes:
            continue
        lines.append(shares_title(report) if kind == "quota_share" else f"{title} ({len(changes)})")
        for change in changes:
            lines.append(f"  {object_line(change)}")
            lines += [f"      {describe(field)}" for field in change.changes]
        lines.append("")
    if report.guarantees:
        lines.append(f"Guarantees ({len(report.guarantees)})")
        for promise in report.guarantees:
            lines.append(f"  {guarantee_line(promise)}")
            if promise.after == "refuted" and promise.message:
                lines.append(f"           {promise.message}")
                if promise.counterexample:
                    lines.append(f"           counterexample: {json.dumps(promise.counterexample, sort_keys=True)}")
        lines.append("")
    for title, findings in (("New findings", report.new_findings), ("Resolved findings", report.resolved_findings)):
        if findings:
            lines.append(f"{title} ({len(findings)})")
            lines += [f"  {finding.line()}" for finding in findings]
            lines.append("")
    if report.hazards:
        lines.append(f"Deploy hazards ({len(report.hazards)})")
        for hazard in report.hazards:
            lines.append(f"  {hazard.kind} {hazard.resource_type} {hazard.name}")
            lines.append(f"      {hazard.message}")
        lines.append("")
    if report.impact is not None:
        lines += impact_lines(report.impact)
    return "\n".join(lines)


def impact_lines(impact: dict) -> list[str]:
    """The replay's figures: preempted jobs, wait changes per share, instance-hours lost."""
    lines = [f"Impact of applying HEAD at t={duration_text(impact['at'])} to {impact['scenario']}",
             f"  jobs preempted because of the change: {len(impact['preempted'])}",
             f"  instance-hours lost because of the change: {instance_hours_text(impact['instance_hours_lost'])} "
             f"(without {instance_hours_text(impact['instance_hours_lost_before'])}, with "
             f"{instance_hours_text(impact['instance_hours_lost_after'])}"
             + ("; the change saves work)" if impact["instance_hours_lost"] < 0 else ")")]
    for job in impact["preempted"]:
        lines.append(f"    {job['name']} ({job['share']}, {job['instances']} {job['instance_type']}): "
                     f"preempted {job['preemptions_before']} -> {job['preemptions_after']} time(s)")
    if impact.get("shares"):
        lines += comparison_lines(impact)
    if impact["never_finish"]:
        lines.append(f"  jobs that succeed only without the change: {', '.join(impact['never_finish'][:20])}"
                     + (f" ... ({len(impact['never_finish'])} in all)" if len(impact["never_finish"]) > 20 else ""))
    for note in impact.get("notes", []):
        lines.append(f"  note: {note}")
    lines.append("")
    return lines


def comparison_lines(impact: dict) -> list[str]:
    """The per-share and targets tables of the replay, in ``compare``'s cells (``reports.share_comparison``)."""
    from policy_engine.changes.impact import share_comparison, target_comparison
    from policy_engine.reports import share_comparison as sc

    per_share, targets = share_comparison(impact), target_comparison(impact)
    lines = ["  per share, without -> with the change (wait: from submission to the first start; preemptions at "
             "or after the deploy; in parentheses the difference):"]
    headers = sc.share_header(per_share)
    for row in sc.share_rows(per_share):
        lines.append(f"    {row[0]} {row[1]}: " + ", ".join(f"{h} {c}" for h, c in zip(headers[2:], row[2:],
                                                                                     strict=True)))
    if targets.rows:
        lines.append(f"  targets, without -> with the change ({sc.targets_met_line(targets)}):")
        headers = sc.target_header(targets)
        for row in sc.target_rows(targets):
            lines.append(f"    {row[0]} {row[1]} {row[2]}: " + "; ".join(f"{h}: {c}" for h, c in zip(
                headers[3:], row[3:], strict=True)))
    return lines


def write(output: DiffOutput, stream: TextIO) -> None:
    click.echo(render(output.report, output.fail_on), file=stream, nl=False)
