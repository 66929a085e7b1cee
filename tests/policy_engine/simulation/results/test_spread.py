"""Spreads across workload samples and paired differences: p10 <= p50 <= p90, the scalar is the median, and a
difference is judged sample by sample (``results.spread``, ``side_by_side.combine``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.reports.tables import share_comparison as sc
from policy_engine.simulation.results.metrics import ShareMetrics
from policy_engine.simulation.results.sampled_shares import SampledShareMetrics, sampled_shares
from policy_engine.simulation.results.side_by_side import WAIT_P95, combine, from_metrics
from policy_engine.simulation.results.spread import paired, spread
from policy_engine.simulation.results.worsening import most_harmed

values = st.lists(st.floats(min_value=0, max_value=1e7, allow_nan=False), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(values)
def test_a_spread_is_ordered_and_its_middle_is_the_median(found):
    result = spread(found)
    assert result.p10 <= result.p50 <= result.p90
    assert abs(result.p50 - float(np.median(found))) <= 1e-6 * max(1.0, abs(result.p50))
    expected = np.percentile(np.asarray(found, dtype=np.float64), [10, 50, 90], method="linear")
    for mine, numpys in zip((result.p10, result.p50, result.p90), expected, strict=True):
        assert abs(mine - float(numpys)) <= 1e-6 * max(1.0, abs(float(numpys)))
    assert min(found) - 1e-6 <= result.p10 and result.p90 <= max(found) + 1e-6


def metrics(share: str, wait_p95: float) -> ShareMetrics:
    return ShareMetrics(share, "ml.p4d.24xlarge", "LEND", 2, 0, 3, 0.5, 0.0, 0.0, 0.0, 0.0, wait_p95, wait_p95,
                        0, 0.0)


def sampled(before: list[float], after: list[float]):
    """One share's wait p95 under two designs, one comparison per sample, combined."""
    return combine([from_metrics(("A", "B"), [[metrics("q/s", b)], [metrics("q/s", a)]])
                    for b, a in zip(before, after, strict=True)])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e6), st.floats(0, 1e6)), min_size=2, max_size=12))
def test_combined_values_are_medians_and_differences_are_paired(pairs):
    before, after = [b for b, _ in pairs], [a for _, a in pairs]
    row = sampled(before, after).rows[0]
    assert row.value(0, WAIT_P95) == spread(before).p50 and row.value(1, WAIT_P95) == spread(after).p50
    spread_a = row.spread(0, WAIT_P95)
    assert spread_a is not None and spread_a.p10 <= spread_a.p50 <= spread_a.p90
    differences = [a - b for b, a in pairs]
    assert row.difference(1, WAIT_P95) == round(spread(differences).p50, 9) + 0.0
    low, high = (round(float(value), 9) for value in np.percentile(differences, [10, 90]))  # to the nanosecond
    assert row.significant(1, WAIT_P95) == bool(low > 0 or high < 0)


def test_paired_finds_a_change_the_unpaired_spreads_hide():
    # the workloads differ a lot from sample to sample; B is 10 minutes slower on every one of them
    before = [3_600.0, 36_000.0, 7_200.0, 72_000.0, 18_000.0]
    after = [value + 600 for value in before]
    row = sampled(before, after).rows[0]
    a, b = row.spread(0, WAIT_P95), row.spread(1, WAIT_P95)
    assert a is not None and b is not None and b.p10 < a.p90  # unpaired: the intervals overlap, no change seen
    assert row.significant(1, WAIT_P95) and row.difference(1, WAIT_P95) == 600  # paired: every sample is worse
    assert most_harmed(sampled(before, after)) is not None


def test_paired_refuses_a_change_the_medians_suggest():
    # the medians differ by an hour, but B is better on some samples and worse on others
    before = [3_600.0, 7_200.0, 10_800.0, 14_400.0, 18_000.0]
    after = [18_000.0, 3_600.0, 14_400.0, 7_200.0, 21_600.0]
    comparison = sampled(before, after)
    row = comparison.rows[0]
    assert row.value(1, WAIT_P95) - row.value(0, WAIT_P95) == 3_600  # unpaired: "+1h"
    assert not row.significant(1, WAIT_P95) and not comparison.changed(row)
    cell = sc.cell(comparison, row, WAIT_P95)
    assert cell.endswith(f"({sc.NOT_SIGNIFICANT})") and "+" not in cell
    assert cell == "3h 00m (1h 24m-4h 36m) → 4h 00m (1h 24m-5h 36m) (n.s.)"
    assert most_harmed(comparison) is None  # a difference inside the spread never heads a report
    data = comparison.to_json()[0]
    assert data["paired_differences"]["B"]["wait_p95"]["significant"] is False
    assert data["spread"]["A"]["wait_p95"] == {"p10": 5_040.0, "p50": 10_800.0, "p90": 16_560.0}


def test_one_sample_is_returned_as_it_is():
    one = from_metrics(("A", "B"), [[metrics("q/s", 60)], [metrics("q/s", 120)]])
    assert combine([one]) is one and "spread" not in one.to_json()[0]
    assert paired([1.0], [2.0]).spread.p50 == 1.0


def test_simulate_shares_hold_medians_and_spreads():
    samples = [[metrics("q/s", wait)] for wait in (60.0, 600.0, 6000.0)]
    share = sampled_shares(samples)[0]
    assert isinstance(share, SampledShareMetrics)
    assert share.wait_p95 == 600.0 and share.jobs == 3 and isinstance(share.jobs, int)
    data = share.to_json()
    assert data["spread"]["wait_p95"] == {"p10": 168.0, "p50": 600.0, "p90": 4920.0}
    assert set(data["spread"]) >= {"wait_p50", "wait_p95", "preemptions", "own_utilisation", "jobs"}


def test_targets_are_judged_on_medians_and_their_differences_paired():
    from policy_engine.simulation.results.side_by_side import combine_targets, compare_targets
    from policy_engine.simulation.results.targets import Criterion, TargetResult

    def judged(a: float, b: float):
        return compare_targets(("A", "B"), [[TargetResult(0, "q/s", None, Criterion.WAIT_P95, 3600.0, a, 10)],
                                            [TargetResult(0, "q/s", None, Criterion.WAIT_P95, 3600.0, b, 10)]])

    noisy = combine_targets([judged(b, a) for b, a in zip([3_600.0, 7_200.0, 10_800.0, 14_400.0, 18_000.0],
                                                          [18_000.0, 3_600.0, 14_400.0, 7_200.0, 21_600.0],
                                                          strict=True)])
    row = noisy.rows[0]
    assert row.results[0] is not None and row.results[0].actual == 10_800.0 and not row.results[0].met
    assert not row.significant(1) and sc.target_rows(noisy)[0][-1] == sc.NOT_SIGNIFICANT
    assert noisy.to_json()[0]["paired_differences"]["B"]["significant"] is False
    steady = combine_targets([judged(wait, wait - 1_800) for wait in (3_600.0, 36_000.0, 7_200.0)])
    assert steady.rows[0].significant(1) and steady.rows[0].difference(1) == -1_800
    assert sc.target_rows(steady)[0][-1] == "−30m 00s"
