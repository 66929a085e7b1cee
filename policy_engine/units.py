"""Figures as people read them: durations ``22d 2h``, ``3h 05m``, ``4m 10s``, ``45s``; percentages; instance-hours.

One formatter per kind of figure for every human-facing table (text, markdown, HTML), so a wait reads the
same in every command; JSON keeps seconds (and fractions, instance-hours) as plain numbers. A figure whose
kind is known only at run time (a sweep's objective) carries a ``Unit`` and is written by ``figure_text``.
One parser for durations people type (``history --since``, a topology's targets).
"""

from __future__ import annotations

import math
from enum import Enum


class Unit(Enum):
    """What a number measures, so a report writes it in the right form (never guessed from its name)."""

    SECONDS = "seconds"  # a duration: ``duration_text``
    FRACTION = "fraction"  # 0..1 of something: a percentage
    COUNT = "count"  # jobs, preemptions: an integer with thousands separators
    INSTANCES = "instances"  # a time-weighted mean number of instances
    INSTANCE_HOURS = "instance-hours"  # a total of capacity over time
    NUMBER = "number"  # anything else: ``number_text``


def duration_text(seconds: float | None) -> str:
    """``seconds`` as its two largest units (days and hours, hours and minutes, ...), or ``-`` when unknown."""
    if seconds is None or not math.isfinite(seconds):
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


def number_text(value: float) -> str:
    """A plain number as people write it: 1234567 and 0.25, never 1.23457e+06, 1234567.0 or a 6-digit rounding.

    Shown to the millisecond (below one, to the nanosecond), which also hides float noise
    (7117.938999951 -> 7117.939); JSON keeps the full value. Not for durations (``duration_text``).
    """
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value.is_integer():
        return str(int(value))
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    if text in ("0", "-0"):  # below a millisecond: keep what there is rather than print 0
        text = f"{value:.9f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def percent_text(fraction: float) -> str:
    """A fraction as a percentage with one decimal: ``0.651`` -> ``65.1%``."""
    return f"{fraction:.1%}" if math.isfinite(fraction) else "-"


def instance_hours_text(hours: float) -> str:
    """Instance-hours with two decimals and thousands separators: ``1,115.36``."""
    return f"{hours:,.2f}" if math.isfinite(hours) else "-"


def money_text(amount: float) -> str:
    """A cost table's amount (money, or instance-hours without prices) to the cent: ``1,115.36``, never ``-0.00``."""
    return f"{round(amount, 2) + 0.0:,.2f}"  # rounded, then + 0.0: a tiny negative reads 0.00


def figure_text(value: float, unit: Unit) -> str:
    """``value`` written as its ``unit`` reads (a sweep objective, a tune evidence row)."""
    if unit is Unit.SECONDS:
        return duration_text(value)
    if unit is Unit.FRACTION:
        return percent_text(value)
    if unit is Unit.INSTANCE_HOURS:
        return instance_hours_text(value)
    if unit is Unit.COUNT and float(value).is_integer():
        return f"{int(value):,}"
    if unit is Unit.INSTANCES:
        return f"{value:,.2f}"
    return number_text(round(value, 6) if isinstance(value, float) else value)


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
