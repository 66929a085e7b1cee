"""``batch-quota diff --format markdown``: a pull-request comment that decides, and always fits.

A verdict and a summary table first, then in this order: the promise changes (declared guarantees
weakened, dropped, added, and guarantees lost), the deploy hazards and, with ``--scenario``, the
impact per share before -> after, each open; then new findings, object changes and the rest in
collapsed ``<details>``, the replay's per-job list last (the worst ``WORST_JOBS``; JSON has them all).
Cells hold plain text (lists joined with ``;``, never HTML). GitHub refuses comments over 65,536
characters, so sections share a budget; whatever is left out is counted in a closing note that
points at ``--format json`` for everything.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

import click

from policy_engine.foundation.units import duration_text
from policy_engine.reports.diff.view import (
    FAIL_ON,
    KIND_TITLES,
    ChangeReport,
    GuaranteeChange,
    ObjectKind,
    bill_period,
    bill_sentence,
    comparisons,
    declared,
    describe,
    harm_headline,
    impact_legend,
    lost_by_type,
    lost_difference,
    object_line,
    preempted_counts,
    samples_sentence,
    verdict,
    worst_jobs,
)
from policy_engine.reports.kit.markdown import cell, code, listed, long_columns, table
from policy_engine.reports.kit.subjects import DiffLoadFailure, DiffOutput

if TYPE_CHECKING:
    from policy_engine.reports.diff.view import Impact

#: GitHub's limit on an issue or pull-request comment, in characters.
GITHUB_COMMENT_LIMIT = 65_536
#: A hidden marker so that a workflow finds and updates its own (sticky) comment.
MARKER = "<!-- batch-quota-diff -->"
_RESERVE = 2_000  # for the closing note and the last section's closing tags


#: A cell longer than this is cut (the JSON output has it whole), so one huge counterexample cannot crowd out the rest.
MAX_CELL = 600


def _cut(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


@dataclass
class _Section:
    title: str
    header: tuple[str, ...]
    rows: list[str]  # rendered table rows
    what: str
    open: bool = False
    #: A line under the table saying what its figures mean.
    note: str = ""
    #: one letter per column (``l``/``r``, ``markdown.table``): the before/after tables align as ``compare``'s
    align: str = ""
    #: the rows are list items, not a table's (a column of long text: ``markdown.listed``)
    items: bool = False

    def frame(self) -> tuple[list[str], list[str]]:
        # the summary's text is HTML: escaped here, as a table cell is
        head = [f"<details{' open' if self.open else ''}><summary>{html.escape(self.title, quote=False)} "
                f"({len(self.rows)})</summary>", "", *([] if self.items else table(self.header, [], self.align))]
        return head, ["", *([self.note, ""] if self.note else []), "</details>", ""]


def _section(title: str, header: tuple[str, ...], rows: Sequence[Sequence[object]], what: str, open_: bool = False,
             note: str = "", align: str = "", names: int | None = None) -> _Section:
    """A table, or, when a column holds text longer than ``markdown.LONG_CELL`` (a hazard's or a finding's message,
    a share's changes), a list: GitHub would wrap such cells over many lines. ``names``: how many leading columns
    name a row (the rest are figures, listed after their headers); default every short column."""
    cut = [tuple(_cut(c) for c in row) for row in rows]
    if long := long_columns(header, cut):
        return _Section(title, header, [listed(header, row, long, names) for row in cut], what, open_, note,
                        items=True)
    return _Section(title, header, [table(header, [row])[2] for row in cut], what, open_, note, align)


def _allocate(sections: list[_Section], budget: int) -> list[int]:
    """How many rows of each section fit: the budget is shared out evenly (water-filling), so a long section
    never crowds out the others, and what a short section does not need goes to the long ones."""
    overhead = [len("\n".join([*head, *tail])) + 1 for head, tail in (s.frame() for s in sections)]
    sizes = [sum(len(row) + 1 for row in s.rows) for s in sections]
    left = budget - sum(overhead)
    grants = [0] * len(sections)
    pending = sorted(range(len(sections)), key=lambda i: sizes[i])
    while pending and left > 0:
        share = left // len(pending)
        index = pending[0]
        grant = min(sizes[index], share)
        grants[index] = grant
        left -= grant
        pending.pop(0)
    counts = []
    for section, grant in zip(sections, grants, strict=True):
        used, count = 0, 0
        for row in section.rows:
            if used + len(row) + 1 > grant:
                break
            used += len(row) + 1
            count += 1
        counts.append(count)
    return counts


def _promise_rows(report: ChangeReport) -> list[tuple[str, ...]]:
    return [(p.share, p.property + (f" {p.instance_type}" if p.instance_type else ""),
             p.kind.value.replace("_", " "), f"{declared(p.before)} → {declared(p.after)}",
             f"{p.proven_before} → {p.proven_after}",
             f"accepted ({p.kind.rule}): {p.accepted}" if p.accepted else
             f"needs review: suppress {p.kind.rule} on {p.share} in HEAD" if p.kind.rule else "–")
            for p in report.promises]


def _guarantee_rows(changes: list[GuaranteeChange]) -> list[tuple[str, str, str, str]]:
    return [(f"{g.share} {g.property}" + (f" {g.instance_type}" if g.instance_type else ""),
             f"{g.before} → {g.after}", g.message,
             json.dumps(g.counterexample, sort_keys=True) if g.counterexample and g.after == "refuted" else "")
            for g in changes]


def _impact_sections(impact: Impact) -> list[_Section]:
    from policy_engine.reports.tables import share_comparison as sc

    per_share, targets = comparisons(impact)
    worst, more = worst_jobs(impact)
    jobs = _section(f"Jobs preempted because of the change (the {len(worst)} worst"
                    + (f"; {more} more in `--format json`)" if more else ")"),
                    ("job", "share", "instances", "preemptions without → with the change"),
                    [(job["name"], job["share"], f"{job['instances']} {job['instance_type']}",
                      f"{job['preemptions_before']} → {job['preemptions_after']}") for job in worst],
                    "preempted job(s)")
    sections = [_section(f"Impact per share on {title}", head, rows, f"{title.split(',')[0]} impact row(s)",
                         open_=True, align=sc.align(head, 1), names=1)
                for title, head, rows in sc.markdown_parts(per_share)]  # one type per table, the most harmed first
    if sections:  # the legend once, under the last of them
        sections[-1].note = f"_{cell(impact_legend(impact))} {sc.COMPACT}_"
    if targets.rows:
        head = sc.target_header(targets)
        sections.append(_section(f"Targets, before → after ({sc.targets_met_line(targets)})", head,
                                 sc.target_rows(targets), "target row(s)", open_=True, align=sc.align(head, 3)))
    return [*sections, jobs]


def render(report: ChangeReport, fail_on: tuple[str, ...] = FAIL_ON, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """Verdict, then promise changes, deploy hazards and the impact per share (open), then the rest collapsed."""
    failures = report.failures(fail_on)
    icon = "❌" if failures else "✅"
    counts = report.to_dict(fail_on)["summary"]
    period = bill_period(report.impact)  # the billing period in the heading, as every priced output says it first
    lines = [MARKER, f"### {icon} batch-quota diff: {code(report.base)} → {code(report.head)}"
             + (f" · bill for {cell(period)}" if period else ""), "",
             f"**{verdict(report, fail_on)}**", "",
             *table(("shares changed", "shares affected through borrowing", "guarantees lost",
                     "declared guarantees weakened", "declared guarantees dropped", "new findings",
                     "resolved findings", "deploy hazards"),
                    [(counts["shares_changed"], counts["shares_affected"], counts["guarantees_lost"],
                      counts["guarantees_weakened"], counts["guarantees_dropped"], counts["new_findings"],
                      counts["resolved_findings"], counts["hazards"])], align="rrrrrrrr"),
             ""]
    impact = report.impact
    if impact is not None:
        lost = "; ".join(f"**{lost_difference(impact, instance_type)}** of {instance_type} (without {before}, "
                         f"with {after})" for instance_type, (before, after) in lost_by_type(impact).items()) or "none"
        lines += [f"**{cell(harm_headline(impact))}**", "",
                  *([f"_{cell(line[0].upper() + line[1:])}._", ""] if (line := samples_sentence(impact)) else []),
                  f"Replaying `{impact.scenario}` with HEAD deployed at t = {duration_text(impact.at)}: "
                  f"jobs preempted because of the change: **{preempted_counts(impact)}**; "
                  "instance-hours lost (work thrown away by the preemptions the change causes; negative means the "
                  f"change saves work), per instance type: {lost}.", ""]
        if (bill := bill_sentence(impact)) is not None:
            lines += [f"The {cell(bill)}.", ""]
        notes = impact.notes
        lines += [*(f"- {cell(note)}" for note in notes), *([""] if notes else [])]
    lost_guarantees = [g for g in report.guarantees if g.refuted_now]
    other = [g for g in report.guarantees if not g.refuted_now]
    sections = [
        _section("Promise changes: declared guarantees", ("share", "promise", "change", "declared before → after",
                                                          "proof before → after", "review"),
                 _promise_rows(report), "promise change(s)", open_=True),
        _section("Guarantees lost", ("guarantee", "proof before → after", "why", "counterexample"),
                 _guarantee_rows(lost_guarantees), "lost guarantee(s)", open_=True),
        _section("Deploy hazards", ("rule", "hazard", "resource", "object", "what happens"),
                 [(h.rule, h.kind, h.resource_type, h.name,
                   h.message + (f" (accepted: {h.accepted})" if h.accepted else "")) for h in report.hazards],
                 "hazard(s)", open_=True),
    ]
    impact_sections = _impact_sections(impact) if impact is not None else []
    sections += impact_sections[:-1]
    sections.append(_section("New findings", ("severity", "rule", "object", "problem", "fix"),
                             [(f.severity.value, f.rule, str(f.object), f.message, f.hint)
                              for f in report.new_findings], "new finding(s)", open_=True))
    for kind, title in reversed(KIND_TITLES.items()):
        changes = [c for c in report.objects if c.kind is kind]
        note = (f"{len(report.changed_shares)} changed directly; {len(report.affected_shares)} affected through "
                f"the borrow graph only (their guaranteed, burst or preemption figures move with another share)"
                if kind is ObjectKind.SHARE and report.affected_shares else "")
        sections.append(_section(title, ("name", "changes"),
                                 [(object_line(c), "; ".join(describe(f, "→") for f in c.changes)) for c in changes],
                                 f"{title.lower()} change(s)", note=note))
    sections += [
        _section("Other guarantee changes", ("guarantee", "proof before → after", "why", "counterexample"),
                 _guarantee_rows(other), "other guarantee change(s)"),
        _section("Resolved findings", ("severity", "rule", "object", "problem"),
                 [(f.severity.value, f.rule, str(f.object), f.message) for f in report.resolved_findings],
                 "resolved finding(s)"),
        *impact_sections[-1:],
    ]
    sections = [section for section in sections if section.rows]
    omitted = []
    for section, count in zip(sections, _allocate(sections, limit - _RESERVE - len("\n".join(lines))), strict=True):
        if count == 0:
            omitted.append(f"{len(section.rows)} {section.what}")
            continue
        if count < len(section.rows):
            omitted.append(f"{len(section.rows) - count} of {len(section.rows)} {section.what}")
        head, tail = section.frame()
        lines += head + section.rows[:count] + tail
    if omitted:
        lines += [f"> **Left out to fit GitHub's {GITHUB_COMMENT_LIMIT:,}-character comment limit:** "
                  f"{cell('; '.join(omitted))}. Run `batch-quota diff --format json` for everything.", ""]
    return "\n".join(lines)


def write(output: DiffOutput, stream: TextIO) -> None:
    click.echo(render(output.report, output.fail_on), file=stream)


def render_load_failure(failure: DiffLoadFailure) -> str:
    """For inputs that cannot be loaded (exit 2): the marker (so the sticky comment is updated), the problems."""
    return "\n".join([MARKER, f"### ❌ batch-quota diff could not load: {code(failure.base)} → {code(failure.head)}",
                      "", *[f"- {cell(problem)}" for problem in failure.problems], ""])


def write_load_failure(failure: DiffLoadFailure, stream: TextIO) -> None:
    click.echo(render_load_failure(failure), file=stream)
