"""GitHub-flavoured Markdown for a pull-request comment or ``$GITHUB_STEP_SUMMARY``.

Compact on purpose: a verdict line, then small tables. Cells are escaped so a ``|`` or a
newline in a message cannot break a table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from policy_engine.checks import CheckReport
from policy_engine.findings import Finding
from policy_engine.reports import safe_text
from policy_engine.simulation.numbers import format_seconds


def cell(value: object) -> str:
    """One table cell shown literally (HTML, Markdown and pipes escaped), newlines folded, empty shown as a dash."""
    text = "<br>".join(safe_text.markdown(line) for line in str(value).replace("\r", " ").split("\n"))
    return text if text.strip() else "–"


def _code(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it contains in a row."""
    value = safe_text.visible(text)
    fence = "`" * (1 + max((len(m) for m in re.findall(r"`+", value)), default=0))
    return f"{fence} {value} {fence}" if "`" in value else f"`{value}`"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> list[str]:
    """A GFM table; ``align`` is one letter per column (``l``/``r``), default left."""
    marks = [("---:" if (align[i:i + 1] == "r") else "---") for i in range(len(header))]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _capacity(capacity: dict[str, int]) -> str:
    return ", ".join(f"{t}: {n}" for t, n in capacity.items())


def _severity(finding: Finding) -> str:
    if finding.suppressed is None:
        return finding.severity.value
    return f"{finding.severity.value} (suppressed: {finding.suppressed})"


def render_check(report: CheckReport, *, source: str = "", strict: bool = False) -> str:
    """``check --format markdown``: verdict, findings (errors first, suppressed ones marked), per-share summary."""
    passed = report.passes(strict)
    icon = "✅" if passed else "❌"
    verdict = "passed" if passed else "failed"
    suppressed = f", **{len(report.suppressed)}** suppressed" if report.suppressed else ""
    lines = [f"### {icon} batch-quota check {verdict}" + (f": {_code(source)}" if source else ""), "",
             f"**{len(report.errors)}** error(s), **{len(report.warnings)}** warning(s){suppressed}, "
             f"**{len(report.summaries)}** quota share(s)." + (" Strict: warnings fail." if strict else ""), ""]
    if report.findings:
        lines += table(("severity", "rule", "object", "problem", "fix"),
                       ((_severity(f), f.rule, str(f.object), f.message, f.hint) for f in report.findings))
        lines.append("")
    if report.summaries:
        lines += ["<details><summary>Quota shares</summary>", ""]
        lines += table(("share", "strategy", "limit", "guaranteed", "max burst", "may be preempted by", "may preempt"),
                       ((s.share, s.strategy, _capacity(s.limit), _capacity(s.guaranteed), _capacity(s.max_burst),
                         ", ".join(s.preempted_by) or "nobody", ", ".join(s.may_preempt) or "nobody")
                        for s in report.summaries.values()))
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def render_load_failure(problems: Sequence[str], *, source: str = "") -> str:
    """``check --format markdown`` for a file that cannot be loaded (exit 2): no rule ran, the problems listed."""
    lines = ["### ❌ batch-quota check could not load" + (f": {_code(source)}" if source else ""), "",
             f"**{len(problems)}** load problem(s); no rule ran.", ""]
    lines += [f"- {cell(problem)}" for problem in problems]
    lines.append("")
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{format_seconds(value)} s"


def render_simulation(result, *, source: str = "", calibration=None) -> str:
    """``simulate --format markdown``: headline figures and one row per share and instance type.

    ``calibration`` (rows of ``simulation.calibration``) adds observed vs simulated waits per share.
    """
    summary = result.summary
    statuses = ", ".join(f"{status} {count}" for status, count in summary["by_status"].items()) or "none"
    lines = ["### batch-quota simulate" + (f": {_code(source)}" if source else ""), "",
             *table(("jobs", "by status", "preemptions", "instance-hours lost", "cluster utilisation",
                     "wait p50", "wait p95", "wait max", "simulated time"),
                    [(summary["jobs"], statuses, summary["preemptions"], f"{summary['instance_hours_lost']:.2f}",
                      f"{summary['cluster_utilisation']:.0%}", _seconds(summary["wait_p50"]),
                      _seconds(summary["wait_p95"]), _seconds(summary["wait_max"]), _seconds(result.time))],
                    align="rlrrrrrrr"),
             ""]
    lines += table(("share", "instance type", "strategy", "limit", "jobs", "own use", "mean borrowed", "mean lent",
                    "wait p50", "wait p95", "preemptions", "instance-hours lost"),
                   ((m.share, m.instance_type, m.strategy, m.limit, m.jobs, f"{m.own_utilisation:.0%}",
                     f"{m.mean_borrowed:.2f}", f"{m.mean_lent:.2f}", _seconds(m.wait_p50), _seconds(m.wait_p95),
                     m.preemptions, f"{m.instance_hours_lost:.2f}") for m in result.shares),
                   align="lllrrrrrrrrr")
    lines.append("")
    if calibration:
        lines += ["Observed vs simulated (jobs with an observed start):", ""]
        lines += table(("share", "jobs", "observed wait p50", "simulated wait p50", "observed wait p95",
                        "simulated wait p95", "observed preemptions", "simulated preemptions"),
                       ((c.share, c.jobs, _seconds(c.observed_wait_p50), _seconds(c.simulated_wait_p50),
                         _seconds(c.observed_wait_p95), _seconds(c.simulated_wait_p95), c.observed_preemptions,
                         c.simulated_preemptions) for c in calibration),
                       align="lrrrrrrr")
        lines.append("")
    return "\n".join(lines)
