"""Durations as people read them: ``22d 2h``, ``3h 05m``, ``4m 10s``, ``45s``, and as they write them.

One formatter for every human-facing table, so a wait reads the same in every command; JSON keeps
seconds as numbers. One parser for durations people type (``history --since``, a topology's targets).
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


#: Seconds per unit of a duration people write: ``30d``, ``12h``, ``90m``, ``3600s``.
DURATION_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``3600s`` (or plain seconds) -> seconds; ``ValueError`` otherwise (also for 0)."""
    text = text.strip()
    unit = text[-1:].lower()
    number = text[:-1] if unit in DURATION_UNITS else text
    factor = DURATION_UNITS.get(unit, 1)
    value = float(number)
    if not value > 0 or not math.isfinite(value):
        raise ValueError(text)
    return value * factor
