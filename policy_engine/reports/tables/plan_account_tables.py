"""A run's plans accounted for, for every format: why each window sat idle, what preemption threw away, the quota
held the night before and who waited for it. Rows, JSON (merged into ``training_plans``), Markdown and text.

The figures are ``results.plan_account``'s; the sentences ``results.plan_advice``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from policy_engine.foundation.units import duration_text
from policy_engine.simulation.results.numbers import as_number
from policy_engine.simulation.results.plan_advice import hazard_sentences, idle_sentence
from policy_engine.simulation.results.plan_idle import IdleCause

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.results.plan_account import PlanAccount

_HOUR = 3600.0

#: each cause's column heading
CAUSE_HEADINGS = {
    IdleCause.LAST_30_MINUTES: "last 30 min",
    IdleCause.NO_PLAN_JOB_WAITING: "no plan job waiting",
    IdleCause.SHARE_QUOTA: "share quota",
    IdleCause.BEHIND_OTHER_HEAD: "behind non-plan head",
    IdleCause.LARGER_THAN_FREE: "larger than free",
    IdleCause.BATCH_CAPACITY: "Batch capacity",
}


def _hours(seconds: float) -> str:
    return f"{seconds / _HOUR:,.2f}"


class IdleRow(NamedTuple):
    plan: str
    window: int
    idle: float  # instance-seconds
    paid: float
    by_cause: dict[IdleCause, float]
    #: ``share quota: q/A 8.00`` and the like: who each share-naming cause held
    named: str
    #: the plan jobs that waited while the window was Active, longest first (name and seconds)
    waited: list[tuple[str, float]]


def idle_rows(plans: PlanAccount) -> list[IdleRow]:
    rows = []
    for plan, windows in plans.idle.items():
        for window in windows:
            named = "; ".join(f"{CAUSE_HEADINGS[cause]}: " + ", ".join(f"{share} {_hours(seconds)}"
                                                                        for share, seconds in shares.items())
                              for cause, shares in window.by_share.items() if shares)
            rows.append(IdleRow(plan, window.index, window.idle, window.paid, window.by_cause, named,
                                [(name, seconds) for name, (_, seconds) in window.waited.items()]))
    return rows


IDLE_HEADER = ("plan", "window", "idle inst-h", "idle", *CAUSE_HEADINGS.values(), "shares held", "plan jobs waited")


def _waited_text(waited: list[tuple[str, float]], most: int = 5) -> str:
    if not waited:
        return "-"
    shown = ", ".join(f"{name} {duration_text(seconds)}" for name, seconds in waited[:most])
    return shown + (f" (+{len(waited) - most} more)" if len(waited) > most else "")


def idle_cells(row: IdleRow) -> tuple[str, ...]:
    share = f"{row.idle / row.paid:.0%}" if row.paid > 0 else "-"
    return (row.plan, str(row.window), _hours(row.idle), share,
            *(_hours(row.by_cause.get(cause, 0.0)) for cause in CAUSE_HEADINGS), row.named or "-",
            _waited_text(row.waited))


PREEMPTION_HEADER = ("plan", "share", "lost to in-share preemption inst-h", "in-share preemptions",
                     "lost to reclaim inst-h", "reclaims", "jobs preempted most")
HELD_HEADER = ("plan", "share", "quota held SCHEDULED inst-h", "plan jobs held", "plan_hold_seconds (sum)",
               "jobs waited meanwhile", "their wait", "longest")


def preemption_cells(plans: PlanAccount) -> list[tuple[str, ...]]:
    return [(loss.plan, loss.share, _hours(loss.in_share), f"{loss.in_share_preemptions:,}", _hours(loss.reclaim),
             f"{loss.reclaim_preemptions:,}", ", ".join(f"{name} x{count}" for name, count in
                                                        list(loss.jobs.items())[:3]))
            for loss in plans.hazards.preemption]


def held_cells(plans: PlanAccount) -> list[tuple[str, ...]]:
    return [(held.plan, held.share, _hours(held.quota_seconds), f"{held.jobs_held:,}",
             duration_text(held.hold_seconds), f"{held.waited_jobs:,}", duration_text(held.waited_seconds),
             _waited_text(list(held.waited.items()), 3)) for held in plans.hazards.held]


def notes(topology: Topology, plans: PlanAccount) -> list[str]:
    """One sentence per plan (why it sat idle), then one per hazard that cost something."""
    return [idle_sentence(topology, plans, plan) for plan in plans.idle] + hazard_sentences(plans)


def add_to_json(training_plans: list[dict[str, Any]], plans: PlanAccount) -> None:
    """``training_plans[]``: per window ``idle_by_cause`` (every cause, instance-hours, adding up to
    ``idle_instance_hours``), ``idle_by_share`` and ``waited_jobs``; per plan ``idle_attribution`` (the order),
    ``preemption_lost`` and, per ``scheduled_quota_held`` entry, the hold and the jobs that waited meanwhile."""
    for entry in training_plans:
        name = entry["name"]
        entry["idle_attribution"] = plans.order
        for window_json, window in zip(entry["windows"], plans.idle[name], strict=True):
            window_json["idle_by_cause"] = {cause.value: as_number(window.by_cause.get(cause, 0.0) / _HOUR)
                                            for cause in IdleCause}
            window_json["idle_by_share"] = {cause.value: {share: as_number(seconds / _HOUR)
                                                          for share, seconds in shares.items()}
                                            for cause, shares in window.by_share.items()}
            # "seconds", not "wait_seconds": RUNNABLE or SCHEDULED within the window, not a job's wait (time RUNNABLE)
            window_json["waited_jobs"] = [{"name": job, "share": share, "seconds": as_number(seconds)}
                                          for job, (share, seconds) in window.waited.items()]
        entry["preemption_lost"] = [
            {"share": loss.share, "in_share_instance_hours": as_number(loss.in_share / _HOUR),
             "in_share_preemptions": loss.in_share_preemptions,
             "reclaim_instance_hours": as_number(loss.reclaim / _HOUR), "reclaim_preemptions": loss.reclaim_preemptions,
             "jobs": loss.jobs} for loss in plans.hazards.preemption if loss.plan == name]
        held = {item.share: item for item in plans.hazards.held if item.plan == name}
        for row in entry["scheduled_quota_held"]:
            item = held.get(row["share"])
            if item is None:
                continue
            row.update({"plan_jobs": item.jobs_held, "plan_hold_seconds": as_number(item.hold_seconds),
                        "waited_jobs": item.waited_jobs, "waited_seconds": as_number(item.waited_seconds),
                        "longest_waits": [{"name": job, "seconds": as_number(seconds)}
                                          for job, seconds in item.waited.items()]})


def markdown_lines(topology: Topology, plans: PlanAccount) -> list[str]:
    """Why the plans were idle, and the hazards' cost, as Markdown (``simulate --format markdown``)."""
    from policy_engine.reports.kit import safe_text
    from policy_engine.reports.kit.markdown import table

    lines = [f"Why the plans were idle (reserved instance-hours by cause, attribution {plans.order}; "
             "docs/training_plans.md):", ""]
    lines += table(IDLE_HEADER, map(idle_cells, idle_rows(plans)), align="lrrr" + "r" * len(CAUSE_HEADINGS) + "ll")
    lines.append("")
    preemption = preemption_cells(plans)
    if preemption:
        lines += ["Reserved instance-hours lost to preemption of plan jobs:", ""]
        lines += table(PREEMPTION_HEADER, preemption, align="llrrrrl")
        lines.append("")
    held = held_cells(plans)
    if held:
        lines += ["Quota held by SCHEDULED plan jobs before their window, and the share's jobs that waited "
                  "meanwhile:", ""]
        lines += table(HELD_HEADER, held, align="llrrrrrl")
        lines.append("")
    lines += [f"- {safe_text.markdown(sentence)}" for sentence in notes(topology, plans)]
    lines.append("")
    return lines


def text_tables(topology: Topology, plans: PlanAccount) -> list[Any]:
    """The same as rich ``Table``s, then the sentences (``simulate``'s text report)."""
    from rich.table import Table

    from policy_engine.reports.kit.safe_text import rich_text

    out: list[Any] = []
    for title, header, cells in (
            (f"Why the plans were idle (reserved instance-hours by cause, {plans.order})", IDLE_HEADER,
             list(map(idle_cells, idle_rows(plans)))),
            ("Reserved instance-hours lost to preemption of plan jobs", PREEMPTION_HEADER, preemption_cells(plans)),
            ("Quota held by SCHEDULED plan jobs before their window, and who waited", HELD_HEADER,
             held_cells(plans))):
        if not cells:
            continue
        table = Table(title=title)
        for index, column in enumerate(header):
            table.add_column(column, overflow="fold", justify="left" if index in (0, 1) or column in (
                "shares held", "plan jobs waited", "jobs preempted most", "longest") else "right")
        for row in cells:
            table.add_row(*map(rich_text, row))
        out.append(table)
    out += [rich_text(sentence) for sentence in notes(topology, plans)]
    return out
