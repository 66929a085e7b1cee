"""``fit``'s view: the table's title and one row per share (what was fitted, as text), one row per share and plan
its jobs ran on, the cycles' legend, the notes (rows not used, the fit's, each share's) and the file written, read
once from ``FitOutput``; the JSON document (per share what was fitted and its plan jobs, seconds as numbers, and the
profile) is built here too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit.subjects import FitOutput
from policy_engine.simulation.profiles.fitting import ALPHA, MIN_DAILY_JOBS, MIN_WEEKLY_JOBS, ShareFit
from policy_engine.simulation.profiles.writing import profile_data

__all__ = ["COLUMNS", "NUMERIC", "PLAN_COLUMNS", "PLAN_NUMERIC", "FitOutput", "FitView", "build", "document"]

COLUMNS = ("share", "jobs", "inst-h / day per type", "size mix", "run time p50", "run time p95", "law", "KS statistic",
           "day cycle", "week cycle", "bursts")
#: The columns aligned right.
NUMERIC = frozenset({"jobs", "inst-h / day per type", "run time p50", "run time p95"})
#: The jobs that name no instance type where the topology cannot tell it, in the per-type cell.
NO_TYPE = "type not given"
#: The plan jobs' table (the ``training_plan`` column of the history), and its columns aligned right.
PLAN_COLUMNS = ("share", "plan", "jobs", "fraction", "timing", "lead p50", "size mix", "run time")
PLAN_NUMERIC = frozenset({"jobs", "fraction", "lead p50"})


@dataclass(frozen=True)
class FitView:
    title: str
    rows: tuple[tuple[str, ...], ...]  # one per share, in ``COLUMNS`` order
    plan_rows: tuple[tuple[str, ...], ...]  # one per share and plan its jobs ran on, in ``PLAN_COLUMNS`` order
    legend: str
    notes: tuple[str, ...]  # ``not used: ...`` then ``note: ...`` lines
    written: str | None


def _mix(weights: dict[int, float]) -> str:
    return ", ".join(f"{size}x {weight:.0%}" for size, weight in sorted(weights.items(), key=lambda kv: -kv[1])[:4])


def _bursts(fit: ShareFit) -> str:
    bursts = fit.profile.bursts
    return "-" if bursts is None else f"{bursts.mean_jobs:.3g} in {duration_text(bursts.spread)}"


def _hours_text(fit: ShareFit) -> str:
    """One line per instance type, ``TYPE HOURS``: instance-hours of different types are never added."""
    return "\n".join(f"{NO_TYPE if instance_type is None else instance_type} {hours:,.1f}"
                     for instance_type, hours in fit.instance_hours_per_day.items()) or "-"


def _plan_rows(share: str, fit: ShareFit) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for plan, jobs in fit.plan_jobs.items():
        use = (fit.profile.training_plans or {}).get(plan)
        if use is None:
            rows.append((share, plan, f"{jobs:,}", "-", "not fitted (see the notes)", "-", "-", "-"))
            continue
        lead = None if use.lead is None else use.lead.quantiles.get(0.5)
        rows.append((share, plan, f"{jobs:,}", f"{use.fraction:.1%}",
                     ", ".join(f"{t.value} {w:.0%}" for t, w in use.timing.items()),
                     "-" if lead is None else duration_text(lead), _mix(use.sizes) if use.sizes else "the share's",
                     "the share's" if use.run_time is None else use.run_time.law.distribution))
    return rows


def _plan_use(fit: ShareFit, plan: str) -> dict[str, object]:
    """What the profile says of the share's jobs on ``plan`` (nothing when no timing could be fitted)."""
    use = (fit.profile.training_plans or {}).get(plan)
    if use is None:
        return {"fraction": None, "timing": None, "lead_p50_seconds": None}
    return {"fraction": use.fraction, "timing": {str(t.value): w for t, w in use.timing.items()},
            "lead_p50_seconds": None if use.lead is None else use.lead.quantiles.get(0.5)}


def build(output: FitOutput) -> FitView:
    result = output.result
    rows = tuple((share, f"{fit.jobs:,}", _hours_text(fit), _mix(fit.sizes),
                  "-" if fit.run_time_p50 is None else duration_text(fit.run_time_p50),
                  "-" if fit.run_time_p95 is None else duration_text(fit.run_time_p95), fit.family,
                  "-" if fit.statistic is None else f"{fit.statistic:.3f} (p={fit.p_value:.2g})",
                  fit.daily, fit.weekly, _bursts(fit)) for share, fit in result.shares.items())
    legend = (f"inst-h / day: per instance type, never added across types ({NO_TYPE}: jobs naming no type where "
              f"the topology cannot tell it); cycles: x = busiest over quietest slot; flat (p) = a chi-square test "
              f"cannot tell it from flat at {ALPHA:g}; few jobs = fewer than {MIN_DAILY_JOBS} (day) or "
              f"{MIN_WEEKLY_JOBS} (week) arrivals")
    notes = (*(f"not used: {count:,} row(s): {reason}" for reason, count in result.unused.items()),
             *(f"note: {note}" for note in result.notes),
             *(f"note: {share}: {note}" for share, fit in result.shares.items() for note in fit.notes))
    plan_rows = tuple(row for share, fit in result.shares.items() for row in _plan_rows(share, fit))
    return FitView(f"Fitted per share ({result.span_days:.1f} day(s), times in {result.timezone})", rows, plan_rows,
                   legend, notes, output.written)


def document(output: FitOutput) -> dict[str, Any]:
    """The JSON document: per share what was fitted (seconds as numbers) and the profile written."""
    result = output.result
    return {
        "timezone": result.timezone,
        "span_days": result.span_days,
        "absolute_times": result.absolute_times,
        "unused": result.unused,
        "notes": result.notes,
        "written": output.written,
        "shares": {share: {
            "jobs": fit.jobs, "completed": fit.completed, "unknown_run_times": fit.unknown_run_times,
            "instance_hours_per_day": {t: h for t, h in fit.instance_hours_per_day.items() if t is not None},
            "instance_hours_per_day_no_type": fit.instance_hours_per_day.get(None, 0.0),
            "sizes": {str(k): v for k, v in fit.sizes.items()},
            "run_time_p50_seconds": fit.run_time_p50, "run_time_p95_seconds": fit.run_time_p95,
            "law": fit.family, "ks_statistic": fit.statistic, "ks_p_value": fit.p_value, "notes": fit.notes,
            "daily_cycle": fit.daily, "weekly_cycle": fit.weekly,
            "training_plans": {plan: {"jobs": jobs, **_plan_use(fit, plan)} for plan, jobs in fit.plan_jobs.items()},
        } for share, fit in result.shares.items()},
        "profile": json.loads(json.dumps(profile_data(result.profile()), default=str)),
    }
