"""Figures as people read them: durations ``22d 2h``, ``3h 05m``, ``4m 10s``, ``45s``; percentages; instance-hours.

One formatter per kind of figure for every human-facing table (text, markdown, HTML), so a wait reads the
same in every command; JSON keeps seconds (and fractions, instance-hours) as plain numbers. A figure whose
kind is known only at run time (a sweep's objective) carries a ``Unit`` and is written by ``figure_text``.
One parser for durations people type (``history --since``, a topology's targets).
"""

from __future__ import annotations

import math
from enum import Enum

from policy_engine.foundation.bounds import MAX_SECONDS


class Unit(Enum):
    """What a number measures, so a report writes it in the right form (never guessed from its name)."""

    SECONDS = "seconds"  # a duration: ``duration_text``
    FRACTION = "fraction"  # 0..1 of something: a percentage
    COUNT = "count"  # jobs, preemptions: an integer with thousands separators
    INSTANCES = "instances"  # a time-weighted mean number of instances
    INSTANCE_HOURS = "instance-hours"  # a total of capacity over time
    COST = "cost"  # an amount in the prices' currency (instance-hours without prices): ``money_text``

    @property
    def noun(self) -> str:
        """What a figure of this kind is, for a sentence: ``this figure is a count``."""
        return _NOUNS[self]
    NUMBER = "number"  # anything else: ``number_text``


_NOUNS = {Unit.SECONDS: "a duration", Unit.FRACTION: "a fraction (0 to 1, or a percentage)", Unit.COUNT: "a count",
          Unit.INSTANCES: "a number of instances", Unit.INSTANCE_HOURS: "in instance-hours", Unit.COST: "a cost",
          Unit.NUMBER: "a plain number"}


def duration_text(seconds: float | None) -> str:
    """``seconds`` as its two largest units (days and hours, hours and minutes, ...), or ``-`` when unknown.

    Rounded to the smaller unit shown, never cut: 9d 15h 50m reads ``9d 16h``, 23h 59m 40s reads ``1d 0h``.
    """
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if seconds < 0:
        return "-" + duration_text(-seconds)
    if seconds < 59.5:
        return f"{seconds:.1f}s" if 0 < seconds < 9.95 and not float(seconds).is_integer() else f"{round(seconds)}s"
    for larger, big, smaller, small in _DURATION_FORMS:
        total = round(seconds / smaller) * smaller  # rounded to the smaller unit this form shows
        if total >= larger:
            whole, rest = divmod(total, larger)
            return f"{whole}{big} {rest // smaller:{'' if big == 'd' else '02d'}}{small}"
    return f"{round(seconds)}s"  # not reached: from 59.5 s on the last form applies


#: The two-unit forms of a duration, largest first: (larger unit's seconds, its letter, smaller's, its letter).
_DURATION_FORMS = ((86400, "d", 3600, "h"), (3600, "h", 60, "m"), (60, "m", 1, "s"))


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


def points_text(fraction: float) -> str:
    """A difference of two fractions in percentage points: ``0.073`` -> ``7.3 points`` (a margin of a utilisation
    is not a percentage of one)."""
    return f"{fraction * 100:.1f} points"


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
    if unit is Unit.COST:
        return money_text(value) if math.isfinite(value) else "-"
    if unit is Unit.COUNT and float(value).is_integer():
        return f"{int(value):,}"
    if unit is Unit.INSTANCES:
        return f"{value:,.2f}"
    return number_text(round(value, 6) if isinstance(value, float) else value)


#: The unit a chart's duration axis reads in: the largest of which the data spans at least two.
_AXIS_UNITS = ((86400, "days"), (3600, "hours"), (60, "minutes"))


def duration_axis(largest: float) -> tuple[float, str]:
    """``(seconds per unit, unit name)`` for a chart whose largest duration is ``largest`` seconds: days from
    two days up, then hours, minutes, else seconds (a chart's ticks cannot read ``22d 2h``)."""
    for seconds, name in _AXIS_UNITS:
        if math.isfinite(largest) and largest >= 2 * seconds:
            return float(seconds), name
    return 1.0, "seconds"


#: Seconds per unit of a duration people write: ``30d``, ``12h``, ``90m``, ``3600s``.
DURATION_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``3600s`` (or plain seconds) -> seconds; ``ValueError`` otherwise (also for 0,
    and past ``bounds.MAX_SECONDS``)."""
    text = text.strip()
    unit = text[-1:].lower()
    number = text[:-1] if unit in DURATION_UNITS else text
    factor = DURATION_UNITS.get(unit, 1)
    value = float(number)
    if not value > 0 or not math.isfinite(value):
        raise ValueError(text)
    if value * factor > MAX_SECONDS:  # past 9999-12-31 from the epoch: no date could hold it (bounds.py)
        raise ValueError(f"{text} is more than {MAX_SECONDS} seconds")
    return value * factor


def duration_spec(seconds: float) -> str:
    """``seconds`` in the grammar ``parse_duration`` reads, exactly: the largest unit that divides it (``12h``,
    ``90m``, ``3601s``), so a file written back (``tune -o``) reads as a person wrote it and parses to the same."""
    for letter, factor in DURATION_UNITS.items():
        if seconds >= factor and float(seconds / factor).is_integer():
            return f"{int(seconds // factor)}{letter}"
    return f"{number_text(seconds)}s"
