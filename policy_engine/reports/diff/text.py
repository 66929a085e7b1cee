"""``batch-quota diff`` for people: the verdict, then what changes per share, guarantee, finding and hazard."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

import click

from policy_engine.foundation.units import duration_text
from policy_engine.reports.diff.view import (
    FAIL_ON,
    KIND_TITLES,
    ChangeReport,
    bill_period,
    bill_sentence,
    comparisons,
    describe,
    guarantee_line,
    harm_headline,
    impact_legend,
    lost_by_type,
    lost_difference,
    object_line,
    preempted_counts,
    promise_line,
    samples_sentence,
    shares_title,
    verdict,
    worst_jobs,
)
from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.subjects import DiffOutput

if TYPE_CHECKING:
    from policy_engine.reports.diff.view import Impact


def render(report: ChangeReport, fail_on: tuple[str, ...] = FAIL_ON, width: int | None = None) -> str:
    """The report as text; ``width``, a terminal's: every table fitted to it and every line wrapped at it
    (``None``, a file or a pipe: tables at full width, one line per item)."""
    text = "\n".join(_lines(report, fail_on, width))
    return text if width is None else "\n".join(_wrapped(line, width) for line in text.split("\n"))


def _wrapped(line: str, width: int) -> str:
    """One line of prose wrapped at spaces to ``width``, its continuation indented like it; a table's line (it
    fits already) as it is."""
    import textwrap

    if len(line) <= width:
        return line
    indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
    return "\n".join(textwrap.wrap(line, width, subsequent_indent=indent[:width // 2], break_on_hyphens=False))


def _lines(report: ChangeReport, fail_on: tuple[str, ...], width: int | None) -> list[str]:
    period = bill_period(report.impact)  # the billing period first, as every priced output says it
    lines = [f"batch-quota diff {report.base} -> {report.head}" + (f"; bill for {period}" if period else ""), "",
             verdict(report, fail_on), ""]
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
            accepted = f" (accepted: {hazard.accepted})" if hazard.accepted else ""
            lines.append(f"  {hazard.rule} {hazard.kind} {hazard.resource_type} {hazard.name}{accepted}")
            lines.append(f"      {hazard.message}")
        lines.append("")
    if report.impact is not None:
        lines += impact_lines(report.impact, width)
    return lines


def impact_lines(impact: Impact, width: int | None = None) -> list[str]:
    """The replay's figures: preempted jobs (the worst ``WORST_JOBS``), the per-share and targets tables in
    ``compare``'s cells, instance-hours lost."""
    lines = [f"Impact of applying HEAD at t={duration_text(impact.at)} to {impact.scenario}",
             f"  {harm_headline(impact)}",
             *([f"  {line}"] if (line := samples_sentence(impact)) else []),
             *([f"  {bill}"] if (bill := bill_sentence(impact)) else []),
             f"  jobs preempted because of the change: {preempted_counts(impact)}",
             "  instance-hours lost because of the change (negative: it saves work): " + ("; ".join(
                 f"{instance_type} {lost_difference(impact, instance_type)} (without {before}, with {after})"
                 for instance_type, (before, after) in lost_by_type(impact).items()) or "none")]
    shown, more = worst_jobs(impact)
    for job in shown:
        lines.append(f"    {job['name']} ({job['share']}, {job['instances']} {job['instance_type']}): "
                     f"preempted {job['preemptions_before']} -> {job['preemptions_after']} time(s)")
    if more:
        lines.append(f"    ... and {more} more (the {len(shown)} worst shown; --format json lists them all)")
    if impact.never_finish:
        lines.append(f"  jobs that succeed only without the change: {', '.join(impact.never_finish[:20])}"
                     + (f" ... ({len(impact.never_finish)} in all)" if len(impact.never_finish) > 20 else ""))
    for note in impact.notes:
        lines.append(f"  note: {note}")
    lines.append("")
    if impact.shares:
        lines += comparison_lines(impact, width)
    return lines


def comparison_lines(impact: Impact, width: int | None = None) -> list[str]:
    """The per-share and targets tables of the replay, drawn as ``compare`` draws its own (``share_comparison``)."""
    from policy_engine.reports.tables import share_comparison as sc

    per_share, targets = comparisons(impact)
    text = sc.text_table("Impact per share and instance type: without the change → with HEAD",
                         sc.share_header(per_share), sc.share_rows(per_share), caption=impact_legend(impact),
                         fit_width=width)
    if targets.rows:
        text += sc.text_table(f"Targets, without the change → with HEAD ({sc.targets_met_line(targets)})",
                              sc.target_header(targets), sc.target_rows(targets), fit_width=width)
    return text.splitlines()


def write(output: DiffOutput, stream: TextIO) -> None:
    width = terminal.width() if stream.isatty() else None  # COLUMNS first, as rich reads it
    click.echo(render(output.report, output.fail_on, width), file=stream, nl=False)
