"""``fit --format json``: per share, what was fitted and the profile written (seconds as numbers)."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.reports.kit.subjects import FitOutput
from policy_engine.simulation.profiles.fitting import ShareFit
from policy_engine.simulation.profiles.writing import profile_data


def _plan_use(fit: ShareFit, plan: str) -> dict[str, object]:
    """What the profile says of the share's jobs on ``plan`` (nothing when no timing could be fitted)."""
    use = (fit.profile.training_plans or {}).get(plan)
    if use is None:
        return {"fraction": None, "timing": None, "lead_p50_seconds": None}
    return {"fraction": use.fraction, "timing": {str(t.value): w for t, w in use.timing.items()},
            "lead_p50_seconds": None if use.lead is None else use.lead.quantiles.get(0.5)}


def write(output: FitOutput, stream: TextIO) -> None:
    result = output.result
    document = {
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
            "training_plans": {plan: {"jobs": jobs, **_plan_use(fit, plan)} for plan, jobs in fit.plan_jobs.items()},
        } for share, fit in result.shares.items()},
        "profile": json.loads(json.dumps(profile_data(result.profile()), default=str)),
    }
    json.dump(document, stream, indent=2, allow_nan=False)
    stream.write("\n")
