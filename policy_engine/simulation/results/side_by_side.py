"""Per share and instance type, the same figures of several runs side by side, and their differences.

One model for every before/after table: ``compare`` (designs run from time 0) and ``diff --scenario`` (the
replay without and with HEAD deployed mid-run) both build a ``ShareComparison`` and render it with
``reports.tables.share_comparison``. A figure is a ``Figure`` (key, label, unit); a new one (a cost, a per-type
figure) is one more entry in the tuple a builder passes, and every format shows it. Differences are each later
run minus the first; a share a run lacks counts as zero there (``present`` says which runs have it), so every
difference is a number.

With workload samples (``--samples N``, ``combine``) each row also keeps every sample's values (``samples``): a
value is the median over the samples, its ``spread`` the p10, p50 and p90, and a difference is **paired**
(``results.spread.paired``: per sample, the same workload under both runs) with whether it is significant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from policy_engine.foundation.json_data import JsonObject
from policy_engine.foundation.units import Unit
from policy_engine.simulation.results.metrics import ShareMetrics
from policy_engine.simulation.results.spread import PairedDifference, Spread, median, paired, spread
from policy_engine.simulation.results.targets import Criterion, TargetResult


@dataclass(frozen=True)
class Figure:
    key: str  # the JSON key
    label: str  # the column header (its unit said by the renderer)
    unit: Unit
    #: a larger value is better (utilisation); for waits and preemptions smaller is
    higher_is_better: bool = False


JOBS = Figure("jobs", "jobs", Unit.COUNT, higher_is_better=True)
WAIT_P50 = Figure("wait_p50", "wait p50", Unit.SECONDS)
WAIT_P95 = Figure("wait_p95", "wait p95", Unit.SECONDS)
MEAN_WAIT = Figure("mean_wait", "mean wait", Unit.SECONDS)
PREEMPTIONS = Figure("preemptions", "preemptions", Unit.COUNT)
OWN_UTILISATION = Figure("own_utilisation", "own utilisation", Unit.FRACTION, higher_is_better=True)
INSTANCE_HOURS_LOST = Figure("instance_hours_lost", "instance-hours lost", Unit.INSTANCE_HOURS)
#: The share's jobs' waits added up (jobs x mean wait), in hours: measured for the harm a change does
#: (``worsening``), not shown as a column.
WAIT_HOURS = Figure("wait_hours", "wait-hours", Unit.NUMBER)

#: What ``compare`` shows per share and instance type, from ``ShareMetrics`` (and ``diff --scenario`` per share, with
#: ``cost_figure`` after them both).
SHARE_FIGURES = (JOBS, WAIT_P50, WAIT_P95, PREEMPTIONS, OWN_UTILISATION, INSTANCE_HOURS_LOST)


def cost_figure(unit: str) -> Figure:
    """What each share pays on the type (its on-demand spend and its part of the plans' fees), its unit in the
    header (``cost (USD, its bill)``; instance-hours on-demand and on plans without prices)."""
    return Figure("cost", f"cost ({unit}, its bill)", Unit.COST)


@dataclass(frozen=True)
class ShareRow:
    share: str  # as the first run names it
    instance_type: str
    #: per run, figure key -> value; ``None`` where the run has no such share and type
    values: tuple[Mapping[str, float] | None, ...]
    #: per run, the share's name there when it differs (a rename)
    names: tuple[str, ...] = ()
    #: with workload samples: per sample, each run's values as ``values`` holds them (``values`` is their median)
    samples: tuple[tuple[Mapping[str, float] | None, ...], ...] = ()

    def value(self, run: int, figure: Figure) -> float:
        found = self.values[run]
        return float(found.get(figure.key, 0.0)) if found is not None else 0.0

    def sample_values(self, run: int, figure: Figure) -> list[float]:
        """The run's value in each sample (0.0 in a sample without the share, as ``value`` counts it)."""
        return [float(found.get(figure.key, 0.0)) if (found := sample[run]) is not None else 0.0
                for sample in self.samples]

    def spread(self, run: int, figure: Figure) -> Spread | None:
        """The p10, p50 and p90 over the samples; ``None`` without samples or where the run lacks the share."""
        if not self.samples or self.values[run] is None:
            return None
        return spread(self.sample_values(run, figure))

    def paired(self, run: int, figure: Figure) -> PairedDifference | None:
        """Run ``run`` minus the first, sample by sample; ``None`` without samples."""
        if not self.samples:
            return None
        return paired(self.sample_values(0, figure), self.sample_values(run, figure))

    def significant(self, run: int, figure: Figure) -> bool:
        """Whether the difference is a change: without samples any difference is, with them only a significant
        one (its paired p10-p90 excludes 0)."""
        found = self.paired(run, figure)
        return self.difference(run, figure) != 0 if found is None else found.significant

    def difference(self, run: int, figure: Figure) -> float:
        """Run ``run`` minus the first (with samples: the median of the paired differences); 0.0 (never -0.0)
        when equal."""
        if self.samples:
            found = self.paired(run, figure)
            return round(found.value, 9) + 0.0 if found is not None else 0.0
        return round(self.value(run, figure) - self.value(0, figure), 9) + 0.0

    @property
    def present(self) -> tuple[bool, ...]:
        return tuple(values is not None for values in self.values)


@dataclass(frozen=True)
class ShareComparison:
    runs: tuple[str, ...]  # labels, the first is the baseline
    figures: tuple[Figure, ...]
    rows: tuple[ShareRow, ...]
    #: how many workload samples each value is the median of (1: one run per design, no spread)
    samples: int = 1
    #: figures the rows carry to judge a change by (``worsening``'s harm measure) but no table shows
    measured: tuple[Figure, ...] = ()

    def changed(self, row: ShareRow) -> bool:
        """A difference in some figure (with samples: a significant one)."""
        return any(row.significant(run, figure) for run in range(1, len(self.runs)) for figure in self.figures)

    def to_json(self) -> list[JsonObject]:
        """Per row: each run's figures (null where the run lacks the share) and each later run's differences; with
        samples also each figure's ``spread`` per run and each difference's paired spread and ``significant``."""
        out = []
        for row in self.rows:
            sampled: JsonObject = {}
            if row.samples:
                sampled = {
                    "spread": {label: (None if row.values[i] is None else
                                       {f.key: found.to_json() for f in self.figures
                                        if (found := row.spread(i, f)) is not None})
                               for i, label in enumerate(self.runs)},
                    "paired_differences": {label: {f.key: pair.to_json() for f in self.figures
                                                   if (pair := row.paired(i, f)) is not None}
                                           for i, label in enumerate(self.runs) if i > 0}}
            out.append({
                "share": row.share, "instance_type": row.instance_type,
                "runs": {label: (None if row.values[i] is None else
                                 {f.key: row.value(i, f) for f in self.figures})
                         for i, label in enumerate(self.runs)},
                "differences": {label: {f.key: row.difference(i, f) for f in self.figures}
                                for i, label in enumerate(self.runs) if i > 0},
                **({"names": dict(zip(self.runs, row.names, strict=True))} if row.names else {}),
                **sampled,
            })
        return out


def _median_values(found: Sequence[Mapping[str, float] | None], figures: Sequence[Figure]
                   ) -> Mapping[str, float] | None:
    """Each figure's median over the samples that have the share; ``None`` when none has it."""
    present = [values for values in found if values is not None]
    if not present:
        return None
    return {f.key: median([float(values.get(f.key, 0.0)) for values in present]) for f in figures}


def combine(samples: Sequence[ShareComparison]) -> ShareComparison:
    """One comparison of the same runs over several workload samples (the same figures, in sample order): rows in
    the first sample's order (then rows only later samples have), each value the median over the samples and each
    row keeping every sample's values, so spreads and paired differences can be read from it. One sample is
    returned as it is (no spread: the output is a single run's)."""
    if len(samples) == 1:
        return samples[0]
    first = samples[0]
    keyed = [{(row.share, row.instance_type): row for row in comparison.rows} for comparison in samples]
    order = list(dict.fromkeys(key for rows in keyed for key in rows))
    nothing: tuple[None, ...] = (None,) * len(first.runs)
    rows = []
    for key in order:
        found = [rows_of.get(key) for rows_of in keyed]
        per_sample = tuple(row.values if row is not None else nothing for row in found)
        named = next(row for row in found if row is not None)
        rows.append(ShareRow(key[0], key[1], tuple(_median_values([sample[run] for sample in per_sample],
                                                                  (*first.figures, *first.measured))
                                                   for run in range(len(first.runs))),
                             named.names, per_sample))
    return ShareComparison(first.runs, first.figures, tuple(rows), len(samples), first.measured)


def metrics_values(metrics: ShareMetrics, figures: Sequence[Figure]) -> dict[str, float]:
    return {figure.key: float(getattr(metrics, figure.key)) for figure in figures}


def from_metrics(runs: Sequence[str], metrics: Sequence[Sequence[ShareMetrics]],
                 names: Sequence[Mapping[str, str]] = (), figures: tuple[Figure, ...] = SHARE_FIGURES,
                 measured: tuple[Figure, ...] = (WAIT_HOURS,)) -> ShareComparison:
    """Rows in the first run's order, then shares only later runs have; ``names[i]`` maps the first run's share
    names to run ``i``'s (renames); ``measured``: figures carried for the harm measure, not shown."""
    back: list[dict[str, str]] = [{new: old for old, new in (names[i] if i < len(names) else {}).items()}
                                  for i in range(len(runs))]
    keyed: list[dict[tuple[str, str], ShareMetrics]] = [
        {(back[i].get(m.share, m.share), m.instance_type): m for m in run} for i, run in enumerate(metrics)]
    order = list(dict.fromkeys(key for run in keyed for key in run))
    rows = []
    for key in order:
        found = [run.get(key) for run in keyed]
        renamed = tuple(m.share if m is not None else key[0] for m in found)
        rows.append(ShareRow(key[0], key[1], tuple(None if m is None else metrics_values(m, (*figures, *measured))
                                                   for m in found),
                             renamed if any(name != key[0] for name in renamed) else ()))
    return ShareComparison(tuple(runs), figures, tuple(rows), measured=measured)


@dataclass(frozen=True)
class TargetRow:
    """One criterion of a target as each run judged it (``None``: that run's topology does not declare it)."""

    share: str
    instance_type: str | None
    criterion: Criterion
    results: tuple[TargetResult | None, ...]
    #: with workload samples: per sample, each run's actual figure (``None`` where undeclared); ``results`` are
    #: judged on their medians
    samples: tuple[tuple[float | None, ...], ...] = ()

    def paired(self, run: int) -> PairedDifference | None:
        """The later run's figure minus the first's, sample by sample (``None`` without samples, or where either
        run lacks the target in a sample)."""
        pairs = [(sample[0], sample[run]) for sample in self.samples]
        if not pairs or any(first is None or mine is None for first, mine in pairs):
            return None
        return paired([float(first) for first, _ in pairs if first is not None],
                      [float(mine) for _, mine in pairs if mine is not None])

    def significant(self, run: int) -> bool:
        """Whether the difference is a change: with samples only a significant one."""
        found = self.paired(run) if self.samples else None
        difference = self.difference(run)
        return bool(difference) if found is None else found.significant

    def difference(self, run: int) -> float | None:
        """The later run's actual figure minus the first's (with samples: the median paired difference; ``None``
        when either lacks the target)."""
        mine, first = self.results[run], self.results[0]
        if mine is None or first is None:
            return None
        found = self.paired(run) if self.samples else None
        if found is not None:
            return round(found.value, 9) + 0.0
        return round(mine.actual - first.actual, 9) + 0.0


@dataclass(frozen=True)
class TargetComparison:
    runs: tuple[str, ...]
    rows: tuple[TargetRow, ...]

    def met(self, run: int) -> tuple[int, int]:
        """``(met, judged)`` criteria of run ``run``."""
        judged = [row.results[run] for row in self.rows if row.results[run] is not None]
        return sum(1 for result in judged if result is not None and result.met), len(judged)

    def to_json(self) -> list[JsonObject]:
        return [{"share": row.share, "instance_type": row.instance_type, "criterion": row.criterion.value,
                 "runs": {label: (None if result is None else result.to_json())
                          for label, result in zip(self.runs, row.results, strict=True)},
                 "differences": {label: ({"actual": row.difference(i)} if row.difference(i) is not None else None)
                                 for i, label in enumerate(self.runs) if i > 0},
                 **({"paired_differences": {label: (found.to_json() if (found := row.paired(i)) else None)
                                            for i, label in enumerate(self.runs) if i > 0}} if row.samples else {})}
                for row in self.rows]


def compare_targets(runs: Sequence[str], results: Sequence[Sequence[TargetResult]],
                    names: Sequence[Mapping[str, str]] = ()) -> TargetComparison:
    """Criteria lined up by share (as the first run names it), instance type and criterion."""
    back = [{new: old for old, new in (names[i] if i < len(names) else {}).items()} for i in range(len(runs))]
    keyed: list[dict[tuple[str, str | None, Criterion], TargetResult]] = [
        {(back[i].get(r.share, r.share), r.instance_type, r.criterion): r for r in run}
        for i, run in enumerate(results)]
    order = list(dict.fromkeys(key for run in keyed for key in run))
    return TargetComparison(tuple(runs), tuple(TargetRow(*key, tuple(run.get(key) for run in keyed))
                                               for key in order))


def _median_result(found: Sequence[TargetResult | None]) -> TargetResult | None:
    present = [result for result in found if result is not None]
    if not present:
        return None
    return replace(present[0], actual=median([result.actual for result in present]),
                   jobs=round(median([float(result.jobs) for result in present])))


def combine_targets(samples: Sequence[TargetComparison]) -> TargetComparison:
    """Each criterion judged on the median of its figure across the workload samples (as ``combine``'s values)."""
    if len(samples) == 1:
        return samples[0]
    keyed = [{(row.share, row.instance_type, row.criterion): row for row in comparison.rows} for comparison in samples]
    order = list(dict.fromkeys(key for rows in keyed for key in rows))
    runs = len(samples[0].runs)
    rows = []
    for key in order:
        found = [rows_of.get(key) for rows_of in keyed]
        per_sample = tuple(tuple(result.actual if row is not None and (result := row.results[run]) is not None
                                 else None for run in range(runs)) for row in found)
        rows.append(TargetRow(*key, tuple(_median_result([row.results[run] if row is not None else None
                                                          for row in found]) for run in range(runs)), per_sample))
    return TargetComparison(samples[0].runs, tuple(rows))
