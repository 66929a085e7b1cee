"""The per-instance-type rows every simulation report shows (text, markdown, HTML): one row per type, never a sum.

Built from ``summary["instance_types"]`` (``simulation.results.type_usage``), so a result and a sweep
record's JSON read the same way. An all-types utilisation appears only weighted by a price per
instance-hour of each type (``type_usage.weighted_utilisation``); without prices there is none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policy_engine.foundation.units import instance_hours_text, percent_text
from policy_engine.simulation.results.type_usage import TypeUsage, from_summary, weighted_utilisation

TYPE_HEADERS = ("instance type", "instances", "jobs", "utilisation", "used inst-h", "idle inst-h",
                "borrowed inst-h", "lent inst-h", "preemptions", "inst-h lost")


def type_row(figures: TypeUsage) -> tuple[str, ...]:
    return (figures.instance_type, f"{figures.instances:,}", f"{figures.jobs:,}", percent_text(figures.utilisation),
            instance_hours_text(figures.used_instance_hours), instance_hours_text(figures.idle_instance_hours),
            instance_hours_text(figures.borrowed_instance_hours), instance_hours_text(figures.lent_instance_hours),
            f"{figures.preemptions:,}", instance_hours_text(figures.instance_hours_lost))


def type_rows(summary: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """One row of ``TYPE_HEADERS`` per instance type of the run, in topology order."""
    return [type_row(figures) for figures in from_summary(summary)]


def all_types_text(summary: Mapping[str, Any], prices: Mapping[str, float] | None = None) -> str:
    """The all-types utilisation weighted by ``prices`` (per instance-hour of each type), ``-`` without a price
    for every type: the hook a caller with prices (``--prices``) passes them through."""
    weighted = weighted_utilisation(from_summary(summary), prices) if prices else None
    return "-" if weighted is None else percent_text(weighted)


def utilisation_phrase(summary: Mapping[str, Any], prices: Mapping[str, float] | None = None) -> str:
    """``utilisation ml.p4d.24xlarge 93.4%, ml.g5.12xlarge 55.7%``: each type's own figure, side by side (and,
    with a price for every type, the price-weighted figure of all types)."""
    figures = from_summary(summary)
    if not figures:  # a summary written before the per-type figures existed (an old sweep dataset)
        return f"cluster utilisation {percent_text(summary['cluster_utilisation'])} (instance-weighted)"
    weighted = all_types_text(summary, prices)
    return ("utilisation " + ", ".join(f"{f.instance_type} {percent_text(f.utilisation)}" for f in figures)
            + ("" if weighted == "-" else f"; all types {weighted} (price-weighted)"))
