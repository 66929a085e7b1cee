"""How much worse a share fares in one run than in another: the harm a change does, so reports put it first.

Every place that judges a change (``diff``'s verdict, headline and table, ``compare``'s headline and table,
``tune``'s evidence) sizes each share's worsening with one **harm measure** (``HarmMeasure``) and sorts by it,
largest first; the headline names the most harmed share with the figures that got worse
(``q/vision: ml.p4d.24xlarge preemptions 95 -> 239, 2.5x; ...``). A ratio is said only from a baseline above
zero: ``0s -> 58m 38s`` is ``+58m 38s``, never ``59.6x``.

The default measure, ``WaitAndWorkLost``, is the hours the change costs the share's jobs: the wait it adds
across them (jobs x the change in mean wait: the change in their summed waits, ``WAIT_HOURS``) plus the
instance-hours of work it throws away (``INSTANCE_HOURS_LOST``). AWS documents nothing of the kind: it is this
module's choice (docs/diff.md), swappable by passing another ``HarmMeasure``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.units import figure_text
from policy_engine.simulation.results.side_by_side import (
    INSTANCE_HOURS_LOST,
    PREEMPTIONS,
    WAIT_HOURS,
    WAIT_P95,
    Figure,
    ShareComparison,
    ShareRow,
)
from policy_engine.simulation.results.spread import ONE_SAMPLE, paired

#: The figures that say how a team fares and that a headline quotes when they get worse (in this order);
#: utilisation and cost move with a share's limit and say what its capacity is worth, not what its jobs went
#: through.
HARM_FIGURES = (PREEMPTIONS, WAIT_P95, INSTANCE_HOURS_LOST, WAIT_HOURS)


class HarmMeasure(Protocol):
    """How big one share's worsening is: a number in some unit, positive when the share fares worse."""

    @property
    def key(self) -> str:
        """The JSON name."""
        ...

    @property
    def unit(self) -> str:
        """What ``size`` is in, for a sentence."""
        ...

    def size(self, before: Mapping[str, float], after: Mapping[str, float]) -> float:
        """``after``'s harm beyond ``before``'s (figure key -> value; a missing key counts as 0)."""
        ...


@dataclass(frozen=True)
class WaitAndWorkLost:
    """Added wait-hours across the share's jobs plus added instance-hours lost to preemption."""

    key: str = "wait_and_work_lost"
    unit: str = "h"

    def size(self, before: Mapping[str, float], after: Mapping[str, float]) -> float:
        return sum(float(after.get(f.key, 0.0)) - float(before.get(f.key, 0.0))
                   for f in (WAIT_HOURS, INSTANCE_HOURS_LOST))


#: The measure every report judges a change by unless it is given another.
HARM: HarmMeasure = WaitAndWorkLost()


@dataclass(frozen=True)
class FigureChange:
    """One figure that got worse: ``preemptions 19 -> 61, 3.2x``; ``wait p95 0s -> 58m 38s (+58m 38s)``."""

    figure: Figure
    before: float
    after: float

    def text(self) -> str:
        unit = self.figure.unit
        head = f"{self.figure.label} {figure_text(self.before, unit)} -> {figure_text(self.after, unit)}"
        if self.before > 0:  # a ratio only from a baseline above zero
            return f"{head}, {self.after / self.before:.1f}x"
        return f"{head} (+{figure_text(self.after - self.before, unit)})"

    def to_json(self) -> JsonObject:
        return {"figure": self.figure.key, "before": self.before, "after": self.after,
                "times": round(self.after / self.before, 6) if self.before > 0 else None}


@dataclass(frozen=True)
class Worsening:
    """One share and type's harm in a later run against the first: its size and the figures that got worse."""

    share: str
    instance_type: str
    harm: float  # the measure's size (with samples: the median of the paired per-sample sizes)
    measure: str
    unit: str
    changes: tuple[FigureChange, ...]

    def text(self) -> str:
        """``q/vision: ml.p4d.24xlarge preemptions 95 -> 239, 2.5x; ... (harm +310.2 h)``."""
        shown = [c for c in self.changes if c.figure.key != WAIT_HOURS.key] or list(self.changes)
        what = "; ".join(change.text() for change in shown)
        return f"{self.share}: {self.instance_type} {what} (harm {self.harm:+,.2f} {self.unit})"

    def short(self) -> str:
        """The share, type and its first figure: for a list of several."""
        first = next((c for c in self.changes if c.figure.key != WAIT_HOURS.key), self.changes[0])
        return f"{self.share} {self.instance_type} {first.text()}"

    def to_json(self) -> JsonObject:
        return {"share": self.share, "instance_type": self.instance_type, "harm": round(self.harm, 6) + 0.0,
                "measure": self.measure, "figures": [change.to_json() for change in self.changes]}


def _values(row: ShareRow, run: int) -> Mapping[str, float]:
    return row.values[run] or {}


def harm(comparison: ShareComparison, row: ShareRow, run: int = 1, measure: HarmMeasure = HARM
         ) -> tuple[float, bool]:
    """The row's harm in ``run`` against the first and whether it counts: without samples any non-zero harm does,
    with them only a significant one (paired, sample by sample: its p10-p90 excludes 0)."""
    if not row.samples:
        size = measure.size(_values(row, 0), _values(row, run))
        return round(size, 9) + 0.0, abs(size) > 1e-9
    sizes = [measure.size(sample[0] or {}, sample[run] or {}) for sample in row.samples]
    found = paired([0.0] * len(sizes), sizes)
    return round(found.value, 9) + 0.0, found.significant


def worsening(comparison: ShareComparison, row: ShareRow, run: int = 1, measure: HarmMeasure = HARM
              ) -> Worsening | None:
    """The row's worsening in ``run`` against the first, or ``None`` when no figure that says how the team fares
    got worse (with samples: significantly) and its harm is not positive."""
    if row.values[0] is None or row.values[run] is None:
        return None
    carried = {f.key for f in (*comparison.figures, *comparison.measured)}
    changes = tuple(FigureChange(f, row.value(0, f), row.value(run, f)) for f in HARM_FIGURES
                    if f.key in carried and row.value(run, f) > row.value(0, f) + 1e-9
                    and (not row.samples or row.significant(run, f)))
    size, counts = harm(comparison, row, run, measure)
    if not changes and not (counts and size > 0):
        return None
    return Worsening(row.share, row.instance_type, size if counts else 0.0, measure.key, measure.unit, changes
                     or (FigureChange(INSTANCE_HOURS_LOST, row.value(0, INSTANCE_HOURS_LOST),
                                      row.value(run, INSTANCE_HOURS_LOST)),))


def worsenings(comparison: ShareComparison, run: int = 1, measure: HarmMeasure = HARM) -> list[Worsening]:
    """Every share worse off in ``run`` than in the first, the most harmed first (ties: in the table's order)."""
    found = [w for row in comparison.rows if (w := worsening(comparison, row, run, measure)) is not None]
    return sorted(found, key=lambda w: -w.harm)


def _size(comparison: ShareComparison, row: ShareRow, measure: HarmMeasure) -> float | None:
    """The row's largest harm in any later run (``None``: worse in none)."""
    return max((w.harm for run in range(1, len(comparison.runs))
                if (w := worsening(comparison, row, run, measure)) is not None), default=None)


def by_worsening(comparison: ShareComparison, measure: HarmMeasure = HARM) -> ShareComparison:
    """The same rows, the most harmed share first (by its largest harm in any later run), then the rest in their
    order."""
    if len(comparison.runs) < 2:
        return comparison
    sizes = {index: _size(comparison, row, measure) for index, row in enumerate(comparison.rows)}
    order = sorted(range(len(comparison.rows)),
                   key=lambda index: (sizes[index] is None, -(sizes[index] or 0.0), index))
    return replace(comparison, rows=tuple(comparison.rows[i] for i in order))


def most_harmed(comparison: ShareComparison, run: int = 1, measure: HarmMeasure = HARM) -> Worsening | None:
    """The largest worsening of any share in ``run`` against the first: what a headline names first."""
    found = worsenings(comparison, run, measure)
    return found[0] if found else None


def headline(comparison: ShareComparison, run: int = 1, measure: HarmMeasure = HARM) -> str:
    """What every report that judges a change says first (``diff``, ``compare``): ``Most harmed: q/vision:
    ml.p4d.24xlarge preemptions 95 -> 239, 2.5x; ... (harm +310.2 h)``, or that no share fares worse; with
    samples only a significant worsening counts, and the line says so."""
    # one run per side is said too, so a reader knows the figures carry no spread
    sampled = comparison.samples > 1
    across = f" across {comparison.samples} samples" if sampled else f" in {ONE_SAMPLE}"
    worst = most_harmed(comparison, run, measure)
    if worst is None:
        return f"No share fares {'significantly ' if sampled else ''}worse{across}"
    return f"Most harmed{across}: {worst.text()}"
