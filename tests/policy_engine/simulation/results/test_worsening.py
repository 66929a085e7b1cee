"""The harm first: shares sorted by the size of their worsening, and the headline names the most harmed."""

from __future__ import annotations

import pytest

from policy_engine.simulation.results.side_by_side import SHARE_FIGURES, ShareComparison, ShareRow
from policy_engine.simulation.results.worsening import by_worsening, most_harmed, worsening


def _row(share: str, before: dict, after: dict | None) -> ShareRow:
    base = {"jobs": 10, "wait_p50": 0, "wait_p95": 0, "preemptions": 0, "own_utilisation": 0.5,
            "instance_hours_lost": 0}
    return ShareRow(share, "ml.p4d.24xlarge", (base | before, None if after is None else base | after))


COMPARISON = ShareComparison(("A", "B"), SHARE_FIGURES, (
    _row("q/search", {}, {}),  # unchanged
    _row("q/llm", {"wait_p95": 3600}, {"wait_p95": 7200 + 60}),  # 2.0x
    _row("q/vision", {"preemptions": 95}, {"preemptions": 239}),  # 2.5x
    _row("q/speech", {"wait_p95": 7200}, {"wait_p95": 60}),  # better
    _row("q/audio", {"own_utilisation": 0.9}, {"own_utilisation": 0.1}),  # utilisation is not harm
    _row("q/new", {}, None),  # missing in B: nothing to judge
))


def test_shares_are_sorted_by_the_size_of_their_worsening_the_rest_in_their_order():
    assert [row.share for row in by_worsening(COMPARISON).rows] == [
        "q/vision", "q/llm", "q/search", "q/speech", "q/audio", "q/new"]


def test_the_headline_names_the_most_harmed_share_and_its_figure():
    worst = most_harmed(COMPARISON)
    assert worst is not None and worst.text() == "q/vision: ml.p4d.24xlarge preemptions 95 -> 239, 2.5x"
    assert worst.to_json()["times"] == pytest.approx(240 / 96)


def test_a_zero_baseline_is_measured_from_the_floor_and_better_is_never_a_worsening():
    row = _row("q/x", {"preemptions": 0}, {"preemptions": 3})
    found = worsening(COMPARISON, row)
    assert found is not None and found.size == pytest.approx(4.0)
    assert worsening(COMPARISON, COMPARISON.rows[3]) is None
    assert most_harmed(ShareComparison(("A", "B"), SHARE_FIGURES, (COMPARISON.rows[3],))) is None
