"""Figures as people read them: the documented import path, kept for users;
the code is in ``foundation/units.py``.

Nothing inside ``policy_engine`` imports this module (CONTRIBUTING.md, "Where things live").
"""

from __future__ import annotations

from policy_engine.foundation.units import (
    DURATION_UNITS,
    Unit,
    duration_axis,
    duration_spec,
    duration_text,
    figure_text,
    instance_hours_text,
    money_text,
    number_text,
    parse_duration,
    percent_text,
    points_text,
)

__all__ = [
    "DURATION_UNITS",
    "Unit",
    "duration_axis",
    "duration_spec",
    "duration_text",
    "figure_text",
    "instance_hours_text",
    "money_text",
    "number_text",
    "parse_duration",
    "percent_text",
    "points_text",
]
