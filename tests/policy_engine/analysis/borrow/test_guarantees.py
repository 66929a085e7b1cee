"""Proving and refuting guarantees: the reachable minimum, the burst, preemption, and the counterexamples."""

from __future__ import annotations

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.borrow.guarantees import (
    guaranteed_capacity,
    preemption_risks,
    refute,
    refute_burst_capacity,
    refute_min_capacity,
)
from tests.builders import GPU, guarantee, share, topology


def test_min_equals_limit_without_oversubscription(example):
    graph = BorrowGraph(example)
    assert [guaranteed_capacity(graph, f"training/QS{i}", GPU) for i in (1, 2, 3)] == [1, 1, 1]


def test_min_under_oversubscription_is_what_the_others_leave():
    # 10 instances; A 6, B 4, C 3: when B and C hold their limits, A can only get 10 - 7 = 3.
    graph = BorrowGraph(topology(share("A", 6), share("B", 4), share("C", 3), environment=10))
    assert guaranteed_capacity(graph, "training/A", GPU) == 3
    assert guaranteed_capacity(graph, "training/B", GPU) == 1
    assert guaranteed_capacity(graph, "training/C", GPU) == 0


def test_min_counterexample_is_a_feasible_state_that_leaves_too_little():
    graph = BorrowGraph(topology(share("A", 6), share("B", 4), share("C", 3), environment=10))
    (refutation,) = refute_min_capacity(graph, "training/A", {GPU: 5})
    state = refutation.counterexample
    assert state == {"training/B": {GPU: 4}, "training/C": {GPU: 3}, "training/A": {GPU: 3}}
    assert sum(usage[GPU] for usage in state.values()) <= 10  # physically possible
    assert "promised 5 but only 3 is sure" in refutation.message
    assert "training/B uses 4 and training/C uses 3" in refutation.message


def test_min_above_the_share_limit_is_refuted_even_with_room(example):
    (refutation,) = refute_min_capacity(BorrowGraph(example), "training/QS1", {GPU: 2})
    assert "the share's own limit is 1" in refutation.message
    assert refutation.counterexample["training/QS1"] == {GPU: 1}


def test_min_of_a_type_the_environment_lacks_is_zero():
    graph = BorrowGraph(topology(share("A", capacity={GPU: 1, "ml.p5.48xlarge": 1}), environment=1))
    assert guaranteed_capacity(graph, "training/A", "ml.p5.48xlarge") == 0


def test_burst_refutation_names_the_binding_cap():
    lenders = [share(f"L{i}", 2, "LEND") for i in range(2)]
    capped = BorrowGraph(topology(share("B", 1, "LEND_AND_BORROW", borrow_limit=100), *lenders))
    (refutation,) = refute_burst_capacity(capped, "training/B", {GPU: 4})
    assert "reaches 2 (own 1 + borrowed 1 from training/L0)" in refutation.message
    assert "borrow_limit 100% caps it at 2" in refutation.message
    reserve = BorrowGraph(topology(share("R", 1), share("L", 1, "LEND")))
    (refutation,) = refute_burst_capacity(reserve, "training/R", {GPU: 2})
    assert "a RESERVE share never borrows" in refutation.message
    assert refute_burst_capacity(capped, "training/B", {GPU: 2}) == []


def test_never_preempted_holds_for_a_reserve_share_without_in_share_preemption(example):
    assert preemption_risks(BorrowGraph(example), "training/QS3") == []
    assert preemption_risks(BorrowGraph(example), "training/QS2") == []  # LEND: never holds borrowed capacity


def test_never_preempted_in_share_counterexample():
    graph = BorrowGraph(topology(share("A", 2, in_share_preemption=True)))
    (risk,) = preemption_risks(graph, "training/A")
    assert risk.counterexample == {"training/A": {GPU: 2}}
    assert "a priority-2 job of training/A arrives and in-share preemption" in risk.message


def test_never_preempted_borrowing_counterexample(example):
    risks = preemption_risks(BorrowGraph(example), "training/QS1")
    borrowing = next(r for r in risks if "cross-share" in r.message)
    assert borrowing.counterexample == {"training/QS1": {GPU: 2}, "training/QS2": {GPU: 0}}
    assert "its 1 + 1 borrowed from training/QS2" in borrowing.message


def test_a_borrower_with_nothing_to_borrow_is_never_preempted():
    graph = BorrowGraph(topology(share("B", 1, "LEND_AND_BORROW"), share("R", 1)))
    assert preemption_risks(graph, "training/B") == []


def test_refute_combines_the_promises(example):
    promise = guarantee("training/QS1", min_capacity={GPU: 1}, burst_capacity={GPU: 2}, never_preempted=True)
    assert {r.property for r in refute(example, BorrowGraph(example), promise)} == {"never_preempted"}
