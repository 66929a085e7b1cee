"""``fit --format text``: one row per share (what was fitted), then every note, for people."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table

from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.subjects import FitOutput
from policy_engine.simulation.profiles.fitting import ALPHA, MIN_DAILY_JOBS, MIN_WEEKLY_JOBS, ShareFit


def _mix(weights: dict[int, float]) -> str:
    return ", ".join(f"{size}x {weight:.0%}" for size, weight in sorted(weights.items(), key=lambda kv: -kv[1])[:4])


def _bursts(fit: ShareFit) -> str:
    bursts = fit.profile.bursts
    return "-" if bursts is None else f"{bursts.mean_jobs:.3g} in {duration_text(bursts.spread)}"


def write(output: FitOutput, stream: TextIO) -> None:
    result = output.result
    console: Console = (terminal.console(file=stream, width=200) if not stream.isatty()
                        else terminal.console(file=stream))
    table = Table(title=f"Fitted per share ({result.span_days:.1f} day(s), times in {result.timezone})")
    for column in ("share", "jobs", "inst-h / day", "size mix", "run time p50", "run time p95", "law",
                   "KS statistic", "day cycle", "week cycle", "bursts"):
        table.add_column(column, justify="right" if column in ("jobs", "inst-h / day", "run time p50",
                                                               "run time p95") else "left")
    for share, fit in result.shares.items():
        table.add_row(share, f"{fit.jobs:,}", f"{fit.instance_hours_per_day:,.1f}", _mix(fit.sizes),
                      "-" if fit.run_time_p50 is None else duration_text(fit.run_time_p50),
                      "-" if fit.run_time_p95 is None else duration_text(fit.run_time_p95), fit.family,
                      "-" if fit.statistic is None else f"{fit.statistic:.3f} (p={fit.p_value:.2g})",
                      fit.daily, fit.weekly, _bursts(fit))
    console.print(table)
    planned = [(share, fit) for share, fit in result.shares.items() if fit.plan_jobs]
    if planned:
        plans = Table(title="Plan jobs per share (training_plan column)")
        for column in ("share", "plan", "jobs", "fraction", "timing", "lead p50", "size mix", "run time"):
            plans.add_column(column, justify="right" if column in ("jobs", "fraction", "lead p50") else "left")
        for share, fit in planned:
            for plan, jobs in fit.plan_jobs.items():
                use = (fit.profile.training_plans or {}).get(plan)
                if use is None:
                    plans.add_row(share, plan, f"{jobs:,}", "-", "not fitted (see the notes)", "-", "-", "-")
                    continue
                lead = None if use.lead is None else use.lead.quantiles.get(0.5)
                plans.add_row(share, plan, f"{jobs:,}", f"{use.fraction:.1%}",
                              ", ".join(f"{t.value} {w:.0%}" for t, w in use.timing.items()),
                              "-" if lead is None else duration_text(lead),
                              _mix(use.sizes) if use.sizes else "the share's",
                              "the share's" if use.run_time is None else use.run_time.law.distribution)
        console.print(plans)
    console.print(f"cycles: x = busiest over quietest slot; flat (p) = a chi-square test cannot tell it from flat at "
                  f"{ALPHA:g}; few jobs = fewer than {MIN_DAILY_JOBS} (day) or {MIN_WEEKLY_JOBS} (week) arrivals",
                  markup=False, style="dim")
    for reason, count in result.unused.items():
        console.print(f"not used: {count:,} row(s): {reason}", markup=False)
    for note in result.notes:
        console.print(f"note: {note}", markup=False)
    for share, fit in result.shares.items():
        for note in fit.notes:
            console.print(f"note: {share}: {note}", markup=False)
    if output.written:
        console.print(f"wrote {output.written}", markup=False)
