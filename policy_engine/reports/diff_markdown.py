"""``batch-quota diff --format markdown``: a pull-request comment that always fits.

A verdict and a summary table first, then each section collapsed in ``<details>``. GitHub
refuses comments over 65,536 characters, so sections are filled in order of importance (lost
guarantees, hazards, new findings, share changes, ...) until a budget is spent; whatever is left
out is counted in a closing note that points at ``--format json`` for everything.
"""

from __future__ import annotations

import json

from policy_engine.changes.report import FAIL_ON, ChangeReport
from policy_engine.reports.diff_text import KIND_TITLES, describe, object_line, verdict
from policy_engine.reports.markdown import cell, table
from policy_engine.simulation.numbers import format_seconds

#: GitHub's limit on an issue or pull-request comment, in characters.
GITHUB_COMMENT_LIMIT = 65_536
#: A hidden marker so that a workflow finds and updates its own (sticky) comment.
MARKER = "<!-- batch-quota-diff -->"
_RESERVE = 2_000  # for the closing note and the last section's closing tags


class _Budget:
    def __init__(self, limit: int):
        self.left = limit
        self.omitted: list[str] = []

    def take(self, text: str) -> bool:
        if len(text) + 1 > self.left:
            return False
        self.left -= len(text) + 1
        return True


def _section(budget: _Budget, title: str, header: tuple[str, ...], rows: list[tuple], what: str,
             open_: bool = False) -> list[str]:
    """A collapsed table; rows beyond the budget are counted in ``budget.omitted``."""
    if not rows:
        return []
    head = [f"<details{' open' if open_ else ''}><summary>{title} ({len(rows)})</summary>", "", *table(header, [])]
    tail = ["", "</details>", ""]
    if not budget.take("\n".join(head + tail)):
        budget.omitted.append(f"{len(rows)} {what}")
        return []
    lines = list(head)
    for index, row in enumerate(rows):
        line = table(header, [row])[2]
        if not budget.take(line):
            budget.omitted.append(f"{len(rows) - index} of {len(rows)} {what}")
            break
        lines.append(line)
    return lines + tail


def render(report: ChangeReport, fail_on: tuple[str, ...] = FAIL_ON, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    failures = report.failures(fail_on)
    icon = "❌" if failures else "✅"
    counts = report.to_dict(fail_on)["summary"]
    lines = [MARKER, f"### {icon} batch-quota diff: `{report.base}` → `{report.head}`", "",
             f"**{verdict(report, fail_on)}**", "",
             *table(("shares changed", "guarantees lost", "guarantees regained", "new findings", "resolved findings",
                     "deploy hazards"),
                    [(counts["shares_changed"], counts["guarantees_lost"], counts["guarantees_regained"],
                      counts["new_findings"], counts["resolved_findings"], counts["hazards"])], align="rrrrrr"),
             ""]
    budget = _Budget(limit - _RESERVE - len("\n".join(lines)))
    lost = [g for g in report.guarantees if g.lost]
    other = [g for g in report.guarantees if not g.lost]

    def guarantee_rows(changes):
        return [(f"{g.share} {g.property}" + (f" {g.instance_type}" if g.instance_type else ""),
                 f"{g.before} → {g.after}", g.message,
                 json.dumps(g.counterexample, sort_keys=True) if g.counterexample and g.after == "refuted" else "")
                for g in changes]

    lines += _section(budget, "Guarantees lost", ("guarantee", "before → after", "why", "counterexample"),
                      guarantee_rows(lost), "lost guarantee(s)", open_=True)
    lines += _section(budget, "Deploy hazards", ("hazard", "resource", "object", "what happens"),
                      [(h.kind, h.resource_type, h.object, h.message) for h in report.hazards], "hazard(s)",
                      open_=True)
    lines += _section(budget, "New findings", ("severity", "rule", "object", "problem", "fix"),
                      [(f.severity.value, f.rule, f.object, f.message, f.hint) for f in report.new_findings],
                      "new finding(s)", open_=True)
    for kind, title in reversed(KIND_TITLES.items()):
        changes = [c for c in report.objects if c.kind == kind]
        lines += _section(budget, title, ("name", "changes"),
                          [(object_line(c), "<br>".join(describe(f) for f in c.changes)) for c in changes],
                          f"{title.lower()} change(s)")
    lines += _section(budget, "Other guarantee changes", ("guarantee", "before → after", "why", "counterexample"),
                      guarantee_rows(other), "other guarantee change(s)")
    lines += _section(budget, "Resolved findings", ("severity", "rule", "object", "problem"),
                      [(f.severity.value, f.rule, f.object, f.message) for f in report.resolved_findings],
                      "resolved finding(s)")
    if report.impact is not None:
        impact = report.impact
        rows = [(job["name"], job["share"], job["instances"], f"{job['preemptions_before']} → "
                 f"{job['preemptions_after']}") for job in impact["preempted"]]
        intro = (f"Replaying `{impact['scenario']}` with HEAD applied at t={format_seconds(impact['at'])} s: "
                 f"**{len(impact['preempted'])}** job(s) preempted because of the change, "
                 f"**{impact['instance_hours_lost']:.2f}** instance-hours lost.")
        if budget.take(intro):
            lines += [intro, ""]
        lines += _section(budget, "Jobs preempted because of the change", ("job", "share", "instances",
                                                                            "preemptions"), rows, "preempted job(s)")
        lines += _section(budget, "Mean wait per share", ("share", "instance type", "jobs", "without (s)",
                                                           "with the change (s)"),
                          [(w["share"], w["instance_type"], w["jobs"], f"{w['mean_wait_before']:.3f}",
                            f"{w['mean_wait_after']:.3f}") for w in impact["waits"]], "wait row(s)")
    if budget.omitted:
        lines += [f"> **Left out to fit GitHub's {GITHUB_COMMENT_LIMIT:,}-character comment limit:** "
                  f"{cell('; '.join(budget.omitted))}. Run `batch-quota diff --format json` for everything.", ""]
    return "\n".join(lines)
