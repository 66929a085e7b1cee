"""Durations as people read them: ``22d 2h``, ``3h 05m``, ``4m 10s``, ``45s``.

One formatter for every human-facing table, so a wait reads the same in every command; JSON keeps
seconds as numbers.
"""

from __future__ import annotations

import math


def duration_text(seconds: float) -> str:
    """``seconds`` as its two largest units (days and hours, hours and minutes, ...), or ``-`` when unknown."""
    if not math.isfinite(seconds):
        return "-"
    if seconds < 0:
        return "-" + duration_text(-seconds)
    if seconds < 60:
        return f"{seconds:.1f}s" if 0 < seconds < 10 and not float(seconds).is_integer() else f"{round(seconds)}s"
    total = round(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s"
