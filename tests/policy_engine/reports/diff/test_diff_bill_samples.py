"""``diff --scenario --samples``: the bill sentence gives each replay's bill as a median with its p10-p90 and the
paired difference only when significant (never a change inside the samples' spread)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.changes.impact import Impact, bill_comparison
from policy_engine.foundation.units import money_text
from policy_engine.reports.diff.view import NO_SIGNIFICANT_CHANGE, bill_sentence
from policy_engine.simulation.results.billable import Period

# whole dollars: a p10 of cents could land on a half cent, where numpy and the plain-Python percentile (equal to
# 1e-12) round to different cents
amounts = st.integers(min_value=0, max_value=1_000_000).map(float)


def _costs(total: float, waste: float) -> dict:
    return {"currency": "USD", "period": Period().to_json(), "bill": {"on_demand": total, "plans": 0, "total": total},
            "waste": {"preempted_attempts": waste, "plan_idle": 0}}


def _impact(bills: list[tuple[float, float]]) -> Impact:
    costs = tuple({"before": _costs(before, 1.0), "after": _costs(after, 1.0)} for before, after in bills)
    return Impact("month.yaml", 0.0, [], [], 0.0, 0.0, costs=costs[0],
                  sample_shares=tuple([] for _ in bills) if len(bills) > 1 else (), sample_costs=costs
                  if len(bills) > 1 else ())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(amounts, amounts), min_size=2, max_size=9))
def test_a_bill_difference_inside_the_spread_is_never_a_change(bills):
    sentence = bill_sentence(_impact(bills))
    differences = [after - before for before, after in bills]
    low, high = np.percentile(differences, [10, 90])
    significant = low > 1e-6 or high < -1e-6
    head = sentence.split("; waste")[0]
    assert f"across {len(bills)} samples" in head
    low_before, before_median, high_before = (float(v) for v in np.percentile([b for b, _ in bills], [10, 50, 90]))
    shown = head.split(": ", 1)[1]
    if money_text(low_before) == money_text(high_before):  # alike in every sample: its one value
        assert shown.startswith(money_text(before_median) + " →")
    else:  # median (p10-p90)
        assert shown.startswith(f"{money_text(before_median)} ({money_text(low_before)}-{money_text(high_before)})")
    if not (abs(low) < 1e-6 or abs(high) < 1e-6):  # away from the bound, where rounding could tip it
        assert (NO_SIGNIFICANT_CHANGE in head) is not significant
    row = bill_comparison(_impact(bills)).to_json()[0]
    assert row["paired_differences"]["with HEAD"]["total"]["significant"] is (NO_SIGNIFICANT_CHANGE not in head)


def test_one_sample_gives_the_two_bills_and_their_difference():
    sentence = bill_sentence(_impact([(100.0, 130.5)]))
    assert sentence.startswith("bill for the whole workload")
    assert "100.00 → 130.50 USD (+30.50); waste 1.00 → 1.00 (+0.00" in sentence
