"""How much worse a share fares in one run than in another: the harm a change does, so reports put it first.

Every table that judges a change (``compare``, ``diff --scenario``, ``tune``'s evidence) sorts its shares by
the size of their worsening, largest first, and its headline names the most harmed share with its figure
(``q/vision: ml.p4d.24xlarge preemptions 95 -> 239, 2.5x``). A worsening is the figure of how the team fares
(``HARM_FIGURES``: waits, preemptions, work lost) that grew most relative to its baseline; both sides are
measured from a floor per unit (one preemption, one minute, one instance-hour), so a baseline of zero is no
division by zero and ``0 -> 3`` preemptions is 4x. Which figures count, and the floors, are this module's
choice (docs/compare.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.units import Unit, figure_text
from policy_engine.simulation.results.side_by_side import Figure, ShareComparison, ShareRow

#: The figures that say how a team fares (its waits, its preemptions, the work it lost): utilisation and cost
#: move with a share's limit and say what its capacity is worth, not what its jobs went through.
HARM_FIGURES = frozenset({"wait_p50", "wait_p95", "mean_wait", "preemptions", "instance_hours_lost"})

#: The smallest baseline a ratio is taken from, per unit: below it, ``0 -> x`` would be infinitely worse.
FLOORS = {Unit.SECONDS: 60.0, Unit.COUNT: 1.0, Unit.INSTANCE_HOURS: 1.0, Unit.FRACTION: 0.01, Unit.COST: 1.0,
          Unit.INSTANCES: 1.0, Unit.NUMBER: 1.0}


@dataclass(frozen=True)
class Worsening:
    """One share and type's worst figure in run ``run`` against the first run."""

    share: str
    instance_type: str
    figure: Figure
    before: float
    after: float

    @property
    def size(self) -> float:
        """How many times worse (1.0: unchanged): ``(after + floor) / (before + floor)``, so ``0 -> 3`` preemptions is
        4x and ``95 -> 239`` is 2.5x."""
        floor = FLOORS.get(self.figure.unit, 1.0)
        better, worse = (self.after, self.before) if self.figure.higher_is_better else (self.before, self.after)
        return (max(worse, 0.0) + floor) / (max(better, 0.0) + floor)

    def text(self) -> str:
        """``q/vision: ml.p4d.24xlarge preemptions 95 -> 239, 2.5x``."""
        unit = self.figure.unit
        return (f"{self.share}: {self.instance_type} {self.figure.label} {figure_text(self.before, unit)} -> "
                f"{figure_text(self.after, unit)}, {self.size:.1f}x")

    def to_json(self) -> JsonObject:
        return {"share": self.share, "instance_type": self.instance_type, "figure": self.figure.key,
                "before": self.before, "after": self.after, "times": round(self.size, 6)}


def worsening(comparison: ShareComparison, row: ShareRow, run: int = 1) -> Worsening | None:
    """The row's worst figure (``HARM_FIGURES``) in ``run`` against the first run, or ``None`` when none is worse."""
    if row.values[0] is None or row.values[run] is None:
        return None
    # with workload samples, a difference within the samples' spread is no change (``ShareRow.significant``)
    found = [Worsening(row.share, row.instance_type, figure, row.value(0, figure), row.value(run, figure))
             for figure in comparison.figures if figure.key in HARM_FIGURES
             and (not row.samples or row.significant(run, figure))]
    worse = [w for w in found if w.size > 1.0 + 1e-9]
    return max(worse, key=lambda w: w.size) if worse else None


def _size(comparison: ShareComparison, row: ShareRow) -> float:
    """The row's worst worsening in any later run (0.0: none)."""
    return max((w.size for run in range(1, len(comparison.runs))
                if (w := worsening(comparison, row, run)) is not None), default=0.0)


def by_worsening(comparison: ShareComparison) -> ShareComparison:
    """The same rows, the most harmed share first (by its worst figure in any later run), then the rest in their
    order."""
    if len(comparison.runs) < 2:
        return comparison
    sizes = {index: _size(comparison, row) for index, row in enumerate(comparison.rows)}
    order = sorted(range(len(comparison.rows)), key=lambda index: (-sizes[index], index))
    return replace(comparison, rows=tuple(comparison.rows[i] for i in order))


def most_harmed(comparison: ShareComparison, run: int = 1) -> Worsening | None:
    """The worst worsening of any share in ``run`` against the first: what a headline names first."""
    found = [w for row in comparison.rows if (w := worsening(comparison, row, run)) is not None]
    return max(found, key=lambda w: w.size) if found else None
