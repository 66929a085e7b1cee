"""The harm first: shares sorted by one harm measure (added wait-hours plus instance-hours lost), the headline
names the most harmed, and no ratio is said from a zero baseline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from policy_engine.simulation.results.side_by_side import SHARE_FIGURES, WAIT_HOURS, ShareComparison, ShareRow, combine
from policy_engine.simulation.results.worsening import (
    WaitAndWorkLost,
    by_worsening,
    headline,
    most_harmed,
    worsening,
    worsenings,
)

P4D = "ml.p4d.24xlarge"
BASE = {"jobs": 100, "wait_p50": 0, "wait_p95": 0, "preemptions": 0, "own_utilisation": 0.5,
        "instance_hours_lost": 0, "wait_hours": 0}


def _row(share: str, before: dict, after: dict | None) -> ShareRow:
    return ShareRow(share, P4D, (BASE | before, None if after is None else BASE | after))


def _comparison(*rows: ShareRow) -> ShareComparison:
    return ShareComparison(("without", "with"), SHARE_FIGURES, rows, measured=(WAIT_HOURS,))


# the reviewer's month: a large ratio from zero (manipulation) and a few preemptions (research) must not come
# before a share whose waits grew by hours across hundreds of jobs and that lost 67 instance-hours (perception)
REVIEW = _comparison(
    _row("q/unchanged", {}, {}),
    _row("q/research", {}, {"preemptions": 2, "instance_hours_lost": 5.89}),
    _row("q/manipulation", {"preemptions": 1, "instance_hours_lost": 0.17},
         {"wait_p95": 3518, "preemptions": 14, "instance_hours_lost": 11.64, "wait_hours": 20.0}),
    _row("q/perception", {"wait_p95": 3551, "preemptions": 19, "instance_hours_lost": 11.98, "wait_hours": 90.0},
         {"wait_p95": 18900, "preemptions": 61, "instance_hours_lost": 78.71, "wait_hours": 400.0}),
    _row("q/foundation", {"wait_p95": 2.6e6, "preemptions": 20, "instance_hours_lost": 2779.26, "wait_hours": 9e4},
         {"wait_p95": 1.1e6, "preemptions": 30, "instance_hours_lost": 1945.44, "wait_hours": 3e4}),
    _row("q/audio", {"own_utilisation": 0.9}, {"own_utilisation": 0.1}),  # utilisation is not harm
    _row("q/new", {}, None),  # missing in the later run: nothing to judge
)


def test_shares_are_sorted_by_their_harm_not_by_a_ratio():
    assert [row.share for row in by_worsening(REVIEW).rows] == [
        "q/perception", "q/manipulation", "q/research",
        "q/foundation",  # more preemptions, yet 60,000 fewer wait-hours: worse in a figure, last of the worse
        "q/unchanged", "q/audio", "q/new"]
    perception = worsening(REVIEW, REVIEW.rows[3])
    assert perception is not None and perception.harm == pytest.approx(310.0 + 66.73)


def test_the_headline_names_the_most_harmed_share_with_a_ratio_only_from_a_baseline_above_zero():
    assert headline(REVIEW) == (
        "Most harmed in 1 sample of the workload (--samples N shows the spread): q/perception: ml.p4d.24xlarge "
        "preemptions 19 -> 61, 3.2x; wait p95 59m 11s -> 5h 15m, 5.3x; instance-hours lost 11.98 -> 78.71, 6.6x "
        "(harm +376.73 h)")
    manipulation = worsening(REVIEW, REVIEW.rows[2])
    assert manipulation is not None
    assert "wait p95 0s -> 58m 38s (+58m 38s)" in manipulation.text()  # never "59.6x" from a zero base
    assert manipulation.to_json()["figures"][1] == {"figure": "wait_p95", "before": 0.0, "after": 3518.0,
                                                    "times": None}
    research = worsening(REVIEW, REVIEW.rows[1])
    assert research is not None and research.short() == "q/research ml.p4d.24xlarge preemptions 0 -> 2 (+2)"


def test_better_is_never_a_worsening_and_no_harm_says_so():
    better = _comparison(_row("q/speech", {"wait_p95": 7200, "wait_hours": 5}, {"wait_p95": 60, "wait_hours": 1}))
    assert worsening(better, better.rows[0]) is None and most_harmed(better) is None
    assert headline(better) == "No share fares worse in 1 sample of the workload (--samples N shows the spread)"


@dataclass(frozen=True)
class MostPreemptions:
    """Another measure: extra preemptions."""

    key: str = "preemptions"
    unit: str = "preemption(s)"

    def size(self, before: Mapping[str, float], after: Mapping[str, float]) -> float:
        return after.get("preemptions", 0.0) - before.get("preemptions", 0.0)


def test_the_measure_is_swappable():
    assert [w.share for w in worsenings(REVIEW, measure=MostPreemptions())] == [
        "q/perception", "q/manipulation", "q/foundation", "q/research"]
    assert [w.share for w in worsenings(REVIEW, measure=WaitAndWorkLost())][:3] == [
        "q/perception", "q/manipulation", "q/research"]


def test_with_samples_only_a_significant_harm_counts():
    def sample(noise: float, harm: float) -> ShareComparison:
        return _comparison(_row("q/noisy", {"wait_hours": 10 + noise}, {"wait_hours": 10 - noise}),
                           _row("q/hurt", {"wait_hours": 10 + noise}, {"wait_hours": 10 + noise + harm}))

    combined = combine([sample(noise, harm) for noise, harm in ((-3, 4), (0, 5), (3, 6), (1, 5), (-1, 4))])
    assert [w.share for w in worsenings(combined)] == ["q/hurt"]
    assert headline(combined) == "Most harmed across 5 samples: q/hurt: ml.p4d.24xlarge wait-hours 10 -> 15, 1.5x " \
                                 "(harm +5.00 h)"
