"""``simulate --samples N``: each share's figures over N workload samples, as one ``ShareMetrics`` per share and
instance type whose figures are the medians across the samples and whose ``spread`` holds each figure's p10, p50
and p90 (JSON ``spread.{figure}``; ``results.spread``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.results.metrics import ShareMetrics
from policy_engine.simulation.results.spread import Spread, spread

#: The figures that vary across samples (``strategy`` and ``limit`` are the topology's, the same in every one).
SAMPLED_FIGURES = tuple(f.name for f in fields(ShareMetrics)
                        if f.name not in ("share", "instance_type", "strategy", "limit"))


@dataclass(frozen=True)
class SampledShareMetrics(ShareMetrics):
    """A share's medians across the samples, with each figure's spread."""

    spread: dict[str, Spread] = field(default_factory=dict)
    #: the samples the share had jobs or capacity in (a sample without it counts as zero)
    samples: int = 0

    def to_json(self) -> JsonObject:
        out = {key: value for key, value in asdict(self).items() if key not in ("spread", "samples")}
        out["spread"] = {key: found.to_json() for key, found in self.spread.items()}
        return out


def _number(value: float, integral: bool) -> float | int:
    """A median of counts stays a count when it is one (an odd number of samples)."""
    return int(value) if integral and float(value).is_integer() else value


def sampled_shares(samples: Sequence[Sequence[ShareMetrics]]) -> list[ShareMetrics]:
    """Per share and instance type (in the first sample's order), the medians and spreads over ``samples``."""
    keyed = [{(m.share, m.instance_type): m for m in sample} for sample in samples]
    order = list(dict.fromkeys(key for sample in keyed for key in sample))
    out: list[ShareMetrics] = []
    for key in order:
        found = [sample.get(key) for sample in keyed]
        first = next(m for m in found if m is not None)
        spreads = {name: spread([float(getattr(m, name)) if m is not None else 0.0 for m in found])
                   for name in SAMPLED_FIGURES}
        values: dict[str, Any] = {name: _number(spreads[name].p50, isinstance(getattr(first, name), int))
                  for name in SAMPLED_FIGURES}
        out.append(SampledShareMetrics(share=first.share, instance_type=first.instance_type, strategy=first.strategy,
                                       limit=first.limit, **values, spread=spreads,
                                       samples=sum(1 for m in found if m is not None)))
    return out

