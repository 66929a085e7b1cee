"""``diff``'s view: what every format of it says, computed once from the ``ChangeReport``: the verdict, each
section's titles and lines (objects, fields, guarantees, promises), and the replay's impact (its legend, its
bill sentence, the worst jobs, the instance-hours lost per type)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from policy_engine.changes.report import FAIL_ON, ChangeReport, ChangeStatus, FieldChange, GuaranteeChange, ObjectChange
from policy_engine.foundation.diagnostics import ObjectKind
from policy_engine.foundation.units import duration_text, instance_hours_text, money_text
from policy_engine.reports.tables.promise_lines import declared, promise_line

if TYPE_CHECKING:
    from policy_engine.changes.impact import Impact
    from policy_engine.simulation.results.side_by_side import Figure, ShareComparison, ShareRow, TargetComparison
    from policy_engine.simulation.results.worsening import Worsening

__all__ = [
    "FAIL_ON",
    "KIND_TITLES",
    "WORST_JOBS",
    "ChangeReport",
    "GuaranteeChange",
    "Impact",
    "ObjectKind",
    "bill_sentence",
    "comparisons",
    "declared",
    "describe",
    "guarantee_line",
    "harm_headline",
    "harmed",
    "harmed_text",
    "impact_legend",
    "lost_by_type",
    "lost_difference",
    "object_line",
    "preempted_counts",
    "promise_line",
    "samples_sentence",
    "shares_title",
    "shown",
    "verdict",
    "verdict_icon",
    "worst_jobs",
]

#: What a paired difference inside the samples' spread is called, wherever a sentence would give a change.
NO_SIGNIFICANT_CHANGE = "no significant change"


def samples_sentence(impact: Impact) -> str | None:
    """With ``--samples N``: what the replay's figures are across the samples, and which sample the jobs are."""
    if impact.samples <= 1:
        return None
    from policy_engine.simulation.scenarios.samples import seeds_text

    seeds = seeds_text(impact.recorded, impact.samples, impact.seed)
    return (f"across {impact.samples} samples of the workload ({seeds}):"
            " the per-share table gives each figure's median with its p10-p90 and each difference paired (the same "
            f"sample without and with the change), said only when significant, else {NO_SIGNIFICANT_CHANGE}; the "
            "jobs listed and counted, the notes and the targets are sample 1's")


def lost_difference(impact: Impact, instance_type: str) -> str:
    """Instance-hours lost on ``instance_type`` with minus without the change; with samples the paired median, or
    ``no significant change``."""
    from policy_engine.simulation.results.side_by_side import INSTANCE_HOURS_LOST

    row = next(row for row in _lost_rows(impact) if row.instance_type == instance_type)
    if row.samples and not row.significant(1, INSTANCE_HOURS_LOST):
        return NO_SIGNIFICANT_CHANGE
    return instance_hours_text(row.difference(1, INSTANCE_HOURS_LOST))


def _lost_rows(impact: Impact) -> tuple[ShareRow, ...]:
    from policy_engine.changes.impact import lost_comparison

    return lost_comparison(impact).rows


def lost_by_type(impact: Impact) -> dict[str, tuple[str, str]]:
    """Instance type -> instance-hours lost without and with the change, as text (an hour of one type is not worth
    one of another, so they are never added across types); with samples each one's median (p10-p90)."""
    from policy_engine.simulation.results.side_by_side import INSTANCE_HOURS_LOST

    return {row.instance_type: (_figure(row, 0, INSTANCE_HOURS_LOST, instance_hours_text),
                                _figure(row, 1, INSTANCE_HOURS_LOST, instance_hours_text))
            for row in _lost_rows(impact)}


def _figure(row: ShareRow, run: int, figure: Figure, text: Callable[[float], str]) -> str:
    """One run's figure: its value, or with samples its median (p10-p90)."""
    from policy_engine.reports.tables.share_comparison import spread_cell

    found = row.spread(run, figure)
    return text(row.value(run, figure)) if found is None else spread_cell(text, found)


def _change(row: ShareRow, figure: Figure, text: Callable[[float], str]) -> str:
    """The later run minus the first, signed; with samples the paired median when significant, else ``no
    significant change`` (never a change inside the spread)."""
    if row.samples and not row.significant(1, figure):
        return NO_SIGNIFICANT_CHANGE
    value = row.difference(1, figure)
    return ("+" if value >= 0 else "") + text(value) + (", paired" if row.samples else "")

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
    if change.status is ChangeStatus.CHANGED and not change.direct:  # only figures the borrow graph moved
        return f"{change.name} (affected through the borrow graph)"
    return f"{change.name} ({change.status})"


def guarantee_line(change: GuaranteeChange) -> str:
    what = f"{change.share} {change.property}" + (f" {change.instance_type}" if change.instance_type else "")
    label = ("LOST" if change.refuted_now else "REGAINED" if change.regained else "DROPPED" if change.after == "absent"
             else "NEW" if change.before == "absent" else change.after.upper())
    return f"{label:<8} {what}: {change.before} -> {change.after}"


def shares_title(report: ChangeReport) -> str:
    """How many shares changed directly, and how many only through the borrow graph."""
    affected = len(report.affected_shares)
    return (f"Quota shares ({len(report.changed_shares)} changed"
            + (f", {affected} affected through the borrow graph)" if affected else ")"))


#: The verdict names this many harmed shares (the most harmed first); the impact table lists them all.
HARMED_NAMED = 3


def harmed(report: ChangeReport) -> list[Worsening]:
    """The shares the replay shows worse off with the change (with samples: significantly), the most harmed
    first by the harm measure (``worsening.HARM``); empty without ``--scenario``."""
    if report.impact is None:
        return []
    from policy_engine.changes.impact import share_comparison
    from policy_engine.simulation.results.worsening import worsenings

    return worsenings(share_comparison(report.impact))


def harmed_text(found: list[Worsening]) -> str:
    """``the replay harms 3 shares: q/a ml.p4d.24xlarge preemptions 19 -> 61, 3.2x; ...``."""
    named = "; ".join(w.short() for w in found[:HARMED_NAMED])
    more = f"; and {len(found) - HARMED_NAMED} more" if len(found) > HARMED_NAMED else ""
    return f"the replay harms {len(found)} share(s): {named}{more}"


def verdict(report: ChangeReport, fail_on: tuple[str, ...]) -> str:
    """The exit code's verdict (``--fail-on``) in words that never contradict the replay: ``OK: nothing got
    worse`` only when no finding or hazard fails the review and the replay (if any) harms no share."""
    failures = report.failures(fail_on)
    found = harmed(report)
    if failures:
        return "FAIL: " + ", ".join(failures) + (f"; and {harmed_text(found)}" if found else "")
    if found:
        return f"PASS (no finding or hazard fails the review), but {harmed_text(found)}"
    return "OK: nothing got worse"


def verdict_icon(report: ChangeReport, fail_on: tuple[str, ...]) -> str:
    """❌ fails the review, ⚠️ passes it but the replay harms a share, ✅ nothing got worse."""
    return "❌" if report.failures(fail_on) else "⚠️" if harmed(report) else "✅"


#: The per-job list of a replay shows the worst this many (by extra preemptions x instances); JSON has all.
WORST_JOBS = 20


def impact_legend(impact: Impact) -> str:
    """What the per-share impact table's cells mean, said once under it (in text and markdown)."""
    from policy_engine.reports.tables import share_comparison as sc

    samples = f" {sc.samples_legend(impact.samples)}." if impact.samples > 1 else ""
    return ("runs: the replay without the change, then with HEAD deployed at "
            f"t = {duration_text(impact.at)}; {sc.CELLS}; wait: a job's time RUNNABLE, from submission to "
            "placement plus every requeue to the next (to the end of the replay for a job never placed); "
            "p95: 95 % of the share's jobs waited at most this "
            "long; preemptions: the share's jobs preempted at or after the deploy (the replays are the same before "
            "it); own utilisation, instance-hours lost and cost: over the whole replay; cost: what the share pays "
            "on the type (its jobs' on-demand RUNNING time x rate and its part of the plans' fees; instance-hours "
            "without --prices), over the billing period (docs/costs.md)." + samples)


def bill_period(impact: Impact | None) -> str | None:
    """What the replays' bills cover (``--period``), for the first line; ``None`` when nothing was priced."""
    before = impact.costs.get("before") if impact is not None else None
    if not before or before.get("currency") is None:
        return None
    from policy_engine.simulation.results.billable import Period, period_text

    return period_text(Period.from_json(before.get("period")))


def bill_sentence(impact: Impact) -> str | None:
    """The replays' bills, without -> with the change, and their waste (``impact.costs``); ``None`` when unpriced."""
    costs = impact.costs
    before, after = costs.get("before"), costs.get("after")
    if not before or not after or before.get("currency") is None:
        return None
    from policy_engine.changes.impact import BILL, WASTE, bill_comparison
    from policy_engine.reports.tables.cost_tables import period_text
    from policy_engine.simulation.results.billable import Period

    period = period_text(Period.from_json(before.get("period")))
    found = bill_comparison(impact)
    if found is None:
        return None
    row = found.rows[0]
    across = f", across {impact.samples} samples" if impact.samples > 1 else ""
    bill, waste = ((_figure(row, 0, figure, money_text), _figure(row, 1, figure, money_text),
                    _change(row, figure, money_text)) for figure in (BILL, WASTE))
    return (f"bill for {period}{across}: {bill[0]} → {bill[1]} {before['currency']} ({bill[2]}); waste {waste[0]} → "
            f"{waste[1]} ({waste[2]}; preempted attempts and plan idle)")


def harm_headline(impact: Impact) -> str:
    """The most harmed share first (``worsening.headline``, as ``compare`` says it):
    ``Most harmed: q/vision: ml.p4d.24xlarge preemptions 95 -> 239, 2.5x; ... (harm +310.2 h)``."""
    from policy_engine.changes.impact import share_comparison
    from policy_engine.simulation.results.worsening import headline

    return headline(share_comparison(impact))


def preempted_counts(impact: Impact) -> str:
    """Net: ``355 more often, 280 less often (net +75)``."""
    more, less = len(impact.preempted), impact.preempted_less_often
    return (f"{more} more often, {less} less often (net {more - less:+d})"
            + (f" in sample 1 of {impact.samples}" if impact.samples > 1 else ""))


def worst_jobs(impact: Impact) -> tuple[list[dict[str, Any]], int]:
    """The jobs preempted more often because of the change that a report lists (the worst first), and how many more
    there are (``--format json`` has every one)."""
    shown = impact.preempted[:WORST_JOBS]
    return shown, len(impact.preempted) - len(shown)


def comparisons(impact: Impact) -> tuple[ShareComparison, TargetComparison]:
    """The replay per share and instance type, and its targets, side by side as ``compare`` shows its designs."""
    from policy_engine.changes.impact import share_comparison, target_comparison

    return share_comparison(impact), target_comparison(impact)
