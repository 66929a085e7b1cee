"""A pull request's compact cells with workload samples: a figure is said once only when every sample has it alike in
every run, and a figure alike in every sample has no spread to show."""

from __future__ import annotations

from policy_engine.reports.tables.share_comparison import compact_cell
from policy_engine.simulation.results.side_by_side import JOBS, WAIT_P95, ShareComparison, ShareRow


def _row(before: list[float], after: list[float], key: str) -> ShareRow:
    samples = tuple(({key: b}, {key: a}) for b, a in zip(before, after, strict=True))
    ordered = sorted(before), sorted(after)
    middle = len(before) // 2
    return ShareRow("q/a", "ml.g5.xlarge", ({key: ordered[0][middle]}, {key: ordered[1][middle]}), samples=samples)


def _comparison(row: ShareRow) -> ShareComparison:
    return ShareComparison(("A", "B"), (JOBS, WAIT_P95), (row,), samples=len(row.samples))


def test_alike_in_every_sample_and_run_is_said_once_with_its_spread():
    row = _row([10, 12, 14, 16, 18], [10, 12, 14, 16, 18], "jobs")
    assert compact_cell(_comparison(row), row, JOBS) == "14 (11-17)"


def test_the_same_medians_but_other_samples_keep_both_runs_and_the_paired_verdict():
    row = _row([10, 12, 14, 16, 18], [18, 16, 14, 12, 10], "jobs")  # same median and spread, samples differ
    shown = compact_cell(_comparison(row), row, JOBS)
    assert "→" in shown and shown.endswith("(n.s.)")


def test_a_figure_alike_in_every_sample_has_no_spread_to_show():
    row = _row([0.0] * 5, [0.0] * 5, "wait_p95")
    assert compact_cell(_comparison(row), row, WAIT_P95) == "0s"


def test_a_listed_row_keeps_each_figures_header_when_the_row_is_named_by_its_first_cell():
    from policy_engine.reports.kit.markdown import listed

    header = ("share", "wait p95", "preemptions")
    row = ("q/sim", "1h 11m (1h 05m-1h 39m) → 35m 27s (30m 10s-54m 09s) (−36m 39s)", "0")
    assert listed(header, row, {1}, names=1) == \
        "- q/sim: **wait p95:** 1h 11m (1h 05m-1h 39m) → 35m 27s (30m 10s-54m 09s) (−36m 39s); **preemptions:** 0"
    assert listed(header, row, {1}).startswith("- q/sim · 0: ")  # without names every short cell names the row
