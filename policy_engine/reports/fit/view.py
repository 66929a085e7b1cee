"""``fit``'s view: the table's title and one row per share (what was fitted, as text), the cycles' legend, the
notes (rows not used, the fit's, each share's) and the file written, read once from ``FitOutput``; the JSON
document (per share what was fitted, seconds as numbers, and the profile) is built here too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit.subjects import FitOutput
from policy_engine.simulation.profiles.fitting import ALPHA, MIN_DAILY_JOBS, MIN_WEEKLY_JOBS, ShareFit
from policy_engine.simulation.profiles.writing import profile_data

__all__ = ["COLUMNS", "NUMERIC", "FitOutput", "FitView", "build", "document"]

COLUMNS = ("share", "jobs", "inst-h / day", "size mix", "run time p50", "run time p95", "law", "KS statistic",
           "day cycle", "week cycle", "bursts")
#: The columns aligned right.
NUMERIC = frozenset({"jobs", "inst-h / day", "run time p50", "run time p95"})


@dataclass(frozen=True)
class FitView:
    title: str
    rows: tuple[tuple[str, ...], ...]  # one per share, in ``COLUMNS`` order
    legend: str
    notes: tuple[str, ...]  # ``not used: ...`` then ``note: ...`` lines
    written: str | None


def _mix(weights: dict[int, float]) -> str:
    return ", ".join(f"{size}x {weight:.0%}" for size, weight in sorted(weights.items(), key=lambda kv: -kv[1])[:4])


def _bursts(fit: ShareFit) -> str:
    bursts = fit.profile.bursts
    return "-" if bursts is None else f"{bursts.mean_jobs:.3g} in {duration_text(bursts.spread)}"


def build(output: FitOutput) -> FitView:
    result = output.result
    rows = tuple((share, f"{fit.jobs:,}", f"{fit.instance_hours_per_day:,.1f}", _mix(fit.sizes),
                  "-" if fit.run_time_p50 is None else duration_text(fit.run_time_p50),
                  "-" if fit.run_time_p95 is None else duration_text(fit.run_time_p95), fit.family,
                  "-" if fit.statistic is None else f"{fit.statistic:.3f} (p={fit.p_value:.2g})",
                  fit.daily, fit.weekly, _bursts(fit)) for share, fit in result.shares.items())
    legend = (f"cycles: x = busiest over quietest slot; flat (p) = a chi-square test cannot tell it from flat at "
              f"{ALPHA:g}; few jobs = fewer than {MIN_DAILY_JOBS} (day) or {MIN_WEEKLY_JOBS} (week) arrivals")
    notes = (*(f"not used: {count:,} row(s): {reason}" for reason, count in result.unused.items()),
             *(f"note: {note}" for note in result.notes),
             *(f"note: {share}: {note}" for share, fit in result.shares.items() for note in fit.notes))
    return FitView(f"Fitted per share ({result.span_days:.1f} day(s), times in {result.timezone})", rows, legend,
                   notes, output.written)


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
            "instance_hours_per_day": fit.instance_hours_per_day,
            "sizes": {str(k): v for k, v in fit.sizes.items()},
            "run_time_p50_seconds": fit.run_time_p50, "run_time_p95_seconds": fit.run_time_p95,
            "law": fit.family, "ks_statistic": fit.statistic, "ks_p_value": fit.p_value, "notes": fit.notes,
            "daily_cycle": fit.daily, "weekly_cycle": fit.weekly,
        } for share, fit in result.shares.items()},
        "profile": json.loads(json.dumps(profile_data(result.profile()), default=str)),
    }
