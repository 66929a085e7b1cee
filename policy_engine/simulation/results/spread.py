"""How a figure varies across workload samples (``--samples N``), and whether a difference between two designs
is more than that variation.

A figure's spread is its 10th, 50th and 90th percentile over the samples (numpy's linear interpolation,
``_percentiles``); its
scalar is the median. A difference between two runs is **paired**: computed per sample (the same workload under
both designs) and then summarised, so the variation the workloads share cancels out. It is *significant* when the
p10-p90 interval of the paired differences excludes 0 (docs/compare.md, "Samples"). The threshold is
``SIGNIFICANCE``, swappable as one object.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from policy_engine.foundation.json_data import JsonObject


@dataclass(frozen=True)
class Spread:
    """The p10, p50 and p90 of one figure over the samples."""

    p10: float
    p50: float
    p90: float

    def to_json(self) -> JsonObject:
        return {"p10": self.p10, "p50": self.p50, "p90": self.p90}


@dataclass(frozen=True)
class Significance:
    """The interval a paired difference must exclude 0 over: its ``low`` and ``high`` percentiles."""

    low: float = 10.0
    high: float = 90.0

    def significant(self, differences: Sequence[float]) -> bool:
        low, high = _percentiles(differences, (self.low, self.high))
        return low > 0 or high < 0


#: The team's choice: the p10-p90 of the paired differences excludes 0.
SIGNIFICANCE = Significance()

#: How every report labels a run without ``--samples`` (one workload, figures to the minute and no spread).
ONE_SAMPLE = "1 sample of the workload (--samples N shows the spread)"


def _percentiles(values: Sequence[float], points: Sequence[float]) -> list[float]:
    """numpy's ``percentile(..., method="linear")``, in plain Python: a report takes tens of thousands of them over
    a handful of samples each, where numpy's call costs a hundred times the arithmetic (tests check it equals
    numpy's)."""
    ordered = sorted(float(value) for value in values)
    last = len(ordered) - 1
    out = []
    for point in points:
        position = last * point / 100.0
        low = math.floor(position)
        high = min(low + 1, last)
        value = ordered[low] + (position - low) * (ordered[high] - ordered[low])
        out.append(round(value, 9) + 0.0)
    return out


def spread(values: Sequence[float]) -> Spread:
    """The p10, p50 and p90 of ``values`` (at least one)."""
    if not values:
        raise ValueError("a spread needs at least one value")
    return Spread(*_percentiles(values, (10.0, 50.0, 90.0)))


def median(values: Sequence[float]) -> float:
    return spread(values).p50


@dataclass(frozen=True)
class PairedDifference:
    """Per sample ``after - before``, summarised: the scalar is the median of the paired differences."""

    spread: Spread
    significant: bool

    @property
    def value(self) -> float:
        return self.spread.p50

    def to_json(self) -> JsonObject:
        return {**self.spread.to_json(), "significant": self.significant}


def paired(before: Sequence[float], after: Sequence[float],
           significance: Significance = SIGNIFICANCE) -> PairedDifference:
    """The differences sample by sample (``before[i]`` and ``after[i]`` ran on the same workload)."""
    if len(before) != len(after) or not before:
        raise ValueError(f"paired samples must match in number: {len(before)} and {len(after)}")
    differences = [a - b for b, a in zip(before, after, strict=True)]
    return PairedDifference(spread(differences), significance.significant(differences))
