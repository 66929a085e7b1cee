"""``check --format markdown``: verdict, findings (errors first, suppressed ones marked), per-share summary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import click

from policy_engine.analysis.checks import CheckReport
from policy_engine.foundation.findings import Finding
from policy_engine.reports.kit.markdown import cell, code, table
from policy_engine.reports.kit.subjects import CheckLoadFailure, CheckOutput


def _capacity(capacity: dict[str, int]) -> str:
    return ", ".join(f"{t}: {n}" for t, n in capacity.items())


def _severity(finding: Finding) -> str:
    if finding.suppressed is None:
        return finding.severity.value
    return f"{finding.severity.value} (suppressed: {finding.suppressed})"


def _names(names: tuple[str, ...], queue: str) -> str:
    """Shares within ``queue`` by their own names (preemption never crosses a queue), every one of them."""
    prefix = f"{queue}/"
    return ", ".join(name.removeprefix(prefix) for name in names) or "nobody"


def render(report: CheckReport, *, source: str = "", strict: bool = False, declared_guarantees: int = 0) -> str:
    """The report as Markdown; ``strict``: the verdict fails on unsuppressed warnings too (``check --strict``);
    ``declared_guarantees``: how many the topology declares (the verdict says how many were proven)."""
    passed = report.passes(strict)
    icon = "✅" if passed else "❌"
    verdict = "passed" if passed else "failed"
    suppressed = f", **{len(report.suppressed)}** suppressed" if report.suppressed else ""
    suppressed = (f", **{len(report.notes)}** note(s)" if report.notes else "") + suppressed
    proven, declared = report.guarantees_proven(declared_guarantees)
    promises = f", **{proven}** of **{declared}** declared guarantee(s) proven" if declared else ""
    lines = [f"### {icon} batch-quota check {verdict}" + (f": {code(source)}" if source else ""), "",
             f"**{len(report.errors)}** error(s), **{len(report.warnings)}** warning(s){suppressed}, "
             f"**{len(report.summaries)}** quota share(s){promises}." + (" Strict: warnings fail." if strict else ""),
             ""]
    if report.findings:
        lines += table(("severity", "rule", "object", "problem", "fix"),
                       ((_severity(f), f.rule, str(f.object), f.message, f.hint) for f in report.findings))
        lines.append("")
    if report.summaries:
        by_queue: dict[str, list] = {}
        for summary in report.summaries.values():
            by_queue.setdefault(summary.share.partition("/")[0], []).append(summary)
        lines += ["<details><summary>Quota shares</summary>", ""]
        for queue, summaries in by_queue.items():  # the queue named once, in its table's heading
            lines += [f"Job queue {cell(queue)}:", ""]
            lines += table(("share", "strategy", "limit", "guaranteed", "max burst", "may be preempted by",
                            "may preempt"),
                           ((s.share.partition("/")[2], s.strategy, _capacity(s.limit), _capacity(s.guaranteed),
                             _capacity(s.max_burst), _names(s.preempted_by, queue), _names(s.may_preempt, queue))
                            for s in summaries))
            lines.append("")
        lines += ["</details>", ""]
    return "\n".join(lines)


def render_load_failure(problems: Sequence[str], *, source: str = "") -> str:
    """For a file that cannot be loaded (exit 2): no rule ran, the problems listed."""
    lines = ["### ❌ batch-quota check could not load" + (f": {code(source)}" if source else ""), "",
             f"**{len(problems)}** load problem(s); no rule ran.", ""]
    lines += [f"- {cell(problem)}" for problem in problems]
    lines.append("")
    return "\n".join(lines)


def write(output: CheckOutput, stream: TextIO) -> None:
    click.echo(render(output.report, source=output.source, strict=output.strict,
                      declared_guarantees=len(output.topology.guarantees)), file=stream, nl=False)


def write_load_failure(failure: CheckLoadFailure, stream: TextIO) -> None:
    click.echo(render_load_failure(failure.problems, source=failure.source), file=stream, nl=False)
