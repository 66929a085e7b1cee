"""``fit --format json``: per share, what was fitted and the profile written (seconds as numbers)."""

from __future__ import annotations

import json
from typing import TextIO

from policy_engine.reports.kit.subjects import FitOutput
from policy_engine.simulation.profiles.writing import profile_data


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
        } for share, fit in result.shares.items()},
        "profile": json.loads(json.dumps(profile_data(result.profile()), default=str)),
    }
    json.dump(document, stream, indent=2, allow_nan=False)
    stream.write("\n")
