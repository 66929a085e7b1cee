"""``simulate --samples N``: each instance type's figures over N workload samples, as the median of each figure
with its p10, p50 and p90 (``results.spread``), so the per-type table reads the same samples as the shares' one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.results.spread import Spread, spread
from policy_engine.simulation.results.type_usage import TypeUsage, from_summary

#: The per-type figures that vary across samples (all but the type's name).
TYPE_FIGURES = tuple(f.name for f in fields(TypeUsage) if f.name != "instance_type")


@dataclass(frozen=True)
class SampledTypeUsage:
    """One instance type across the samples: each figure's spread (its median is ``spread[name].p50``)."""

    instance_type: str
    spread: Mapping[str, Spread]

    def median(self, name: str) -> float:
        return self.spread[name].p50

    def to_json(self) -> JsonObject:
        return {"instance_type": self.instance_type,
                **{name: self.spread[name].p50 for name in TYPE_FIGURES},
                "spread": {name: self.spread[name].to_json() for name in TYPE_FIGURES}}


def sampled_types(summaries: Sequence[Mapping[str, Any]]) -> tuple[SampledTypeUsage, ...]:
    """Per instance type (in the first sample's order), each figure's spread over the samples' ``summary``s; a
    sample without the type counts as zero."""
    keyed = [{usage.instance_type: usage for usage in from_summary(summary)} for summary in summaries]
    order = list(dict.fromkeys(name for sample in keyed for name in sample))
    return tuple(SampledTypeUsage(name, {figure: spread([float(getattr(sample[name], figure)) if name in sample
                                                          else 0.0 for sample in keyed])
                                         for figure in TYPE_FIGURES})
                 for name in order)
