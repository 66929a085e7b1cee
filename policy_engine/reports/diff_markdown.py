"""``batch-quota diff --format markdown``: a pull-request comment that always fits.

A verdict and a summary table first, then each section collapsed in ``<details>``. GitHub
refuses comments over 65,536 characters, so sections are filled in order of importance (lost
guarantees, hazards, new findings, share changes, ...) until a budget is spent; whatever is left
out is counted in a closing note that points at ``--format json`` for everything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TextIO

import click

from policy_engine.changes.report import FAIL_ON, ChangeReport, GuaranteeChange
from policy_engine.reports.diff_text import KIND_TITLES, describe, object_line, verdict
from policy_engine.reports.markdown import cell, code, table
from policy_engine.reports.subjects import DiffLoadFailure, DiffOutput
from policy_engine.simulation.outputs.numbers import format_seconds

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

    def frame(self) -> tuple[list[str], list[str]]:
        head = [f"<details{' open' if self.open else ''}><summary>{self.title} ({len(self.rows)})</summary>", "",
                *table(self.header, [])]
        return head, ["", "</details>", ""]


def _section(title: str, header: tuple[str, ...], rows: list[tuple], what: str, open_: bool = False) -> _Section:
    return _Section(title, header, [table(header, [tuple(_cut(c) for c in row)])[2] for row in rows], what, open_)


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


def render(report: ChangeReport, fail_on: tuple[str, ...] = FAIL_ON, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    failures = report.failures(fail_on)
    icon = "❌" if failures else "✅"
    counts = report.to_dict(fail_on)["summary"]
    lines = [MARKER, f"### {icon} batch-quota diff: {code(report.base)} → {code(report.head)}", "",
             f"**{verdict(report, fail_on)}**", "",
             *table(("shares changed", "guarantees lost", "guarantees regained", "new findings", "resolved findings",
                     "deploy hazards"),
                    [(counts["shares_changed"], counts["guarantees_lost"], counts["guarantees_regained"],
                      counts["new_findings"], counts["resolved_findings"], counts["hazards"])], align="rrrrrr"),
             ""]
    lost = [g for g in report.guarantees if g.lost]
    other = [g for g in report.guarantees if not g.lost]

    def guarantee_rows(changes: list[GuaranteeChange]) -> list[tuple[str, str, str, str]]:
        return [(f"{g.share} {g.property}" + (f" {g.instance_type}" if g.instance_type else ""),
                 f"{g.before} → {g.after}", g.message,
                 json.dumps(g.counterexample, sort_keys=True) if g.counterexample and g.after == "refuted" else "")
                for g in changes]

    sections = [
        _section("Guarantees lost", ("guarantee", "before → after", "why", "counterexample"), guarantee_rows(lost),
                 "lost guarantee(s)", open_=True),
        _section("Deploy hazards", ("hazard", "resource", "object", "what happens"),
                 [(h.kind, h.resource_type, h.object, h.message) for h in report.hazards], "hazard(s)", open_=True),
        _section("New findings", ("severity", "rule", "object", "problem", "fix"),
                 [(f.severity.value, f.rule, str(f.object), f.message, f.hint) for f in report.new_findings],
                 "new finding(s)", open_=True),
    ]
    for kind, title in reversed(KIND_TITLES.items()):
        changes = [c for c in report.objects if c.kind == kind]
        sections.append(_section(title, ("name", "changes"),
                                 [(object_line(c), "<br>".join(describe(f) for f in c.changes)) for c in changes],
                                 f"{title.lower()} change(s)"))
    sections += [
        _section("Other guarantee changes", ("guarantee", "before → after", "why", "counterexample"),
                 guarantee_rows(other), "other guarantee change(s)"),
        _section("Resolved findings", ("severity", "rule", "object", "problem"),
                 [(f.severity.value, f.rule, str(f.object), f.message) for f in report.resolved_findings],
                 "resolved finding(s)"),
    ]
    impact = report.impact
    if impact is not None:
        lines += [f"Replaying `{impact['scenario']}` with HEAD applied at t={format_seconds(impact['at'])} s: "
                  f"**{len(impact['preempted'])}** job(s) preempted because of the change, "
                  f"**{impact['instance_hours_lost']:.3f}** instance-hours lost.", ""]
        sections += [
            _section("Jobs preempted because of the change", ("job", "share", "instances", "preemptions"),
                     [(job["name"], job["share"], job["instances"],
                       f"{job['preemptions_before']} → {job['preemptions_after']}") for job in impact["preempted"]],
                     "preempted job(s)", open_=True),
            _section("Mean wait per share", ("share", "instance type", "jobs", "without (s)", "with the change (s)"),
                     [(w["share"], w["instance_type"], w["jobs"], f"{w['mean_wait_before']:.3f}",
                       f"{w['mean_wait_after']:.3f}") for w in impact["waits"]], "wait row(s)"),
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
