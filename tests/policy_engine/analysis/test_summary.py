"""Per-share summary: guaranteed, max burst, who can preempt whom."""

from __future__ import annotations

from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.summary import summarize_all
from tests.builders import GPU, share, topology


def test_example_summary(example):
    summaries = summarize_all(BorrowGraph(example))
    qs1, qs2, qs3 = (summaries[f"training/QS{i}"] for i in (1, 2, 3))
    assert (qs1.guaranteed, qs1.max_burst) == ({GPU: 1}, {GPU: 2})
    assert qs1.preempted_by == ("training/QS2", "training/QS1")  # QS2 reclaims; in-share preemption
    assert qs1.may_preempt == ("training/QS1",)
    assert (qs2.preempted_by, qs2.may_preempt) == ((), ("training/QS1",))
    assert (qs3.preempted_by, qs3.may_preempt, qs3.max_burst) == ((), (), {GPU: 1})


def test_a_lender_whose_edge_cannot_carry_anything_preempts_nobody():
    # B's borrow limit 0 means nothing can flow from L, so L never reclaims from B.
    summaries = summarize_all(BorrowGraph(topology(share("B", 1, "LEND_AND_BORROW", borrow_limit=0),
                                                   share("L", 1, "LEND"))))
    assert summaries["training/B"].preempted_by == ()
    assert summaries["training/L"].may_preempt == ()


def test_summary_serialises_to_plain_data(example):
    data = summarize_all(BorrowGraph(example))["training/QS1"].to_dict()
    assert data["preempted_by"] == ["training/QS2", "training/QS1"] and data["limit"] == {GPU: 1}


def test_per_type_preemptors_are_only_the_lenders_of_that_type(tmp_path):
    import yaml
    from click.testing import CliRunner

    from policy_engine.cli.app import main

    p4d, g5 = "ml.p4d.24xlarge", "ml.g5.12xlarge"
    two_types = topology(share("vision", capacity={p4d: 2, g5: 2}, strategy="LEND_AND_BORROW"),
                         share("language", 2, "LEND", instance_type=p4d), share("speech", 2, "LEND", instance_type=g5),
                         queue="q")
    vision = summarize_all(BorrowGraph(two_types))["q/vision"]
    assert vision.preempted_by_type == {p4d: ("q/language",), g5: ("q/speech",)}
    assert set(vision.preempted_by) == {"q/language", "q/speech"}  # the share over all its types
    path = tmp_path / "two-types.yaml"
    path.write_text(yaml.safe_dump(two_types.model_dump(mode="json")))
    lines = CliRunner().invoke(main, ["check", str(path)]).output.splitlines()
    p4d_row = next(line for line in lines if line.startswith("vision") and p4d in line)
    g5_row = next(line for line in lines if line.startswith("vision") and g5 in line)
    assert "language" in p4d_row and "speech" not in p4d_row and "speech" in g5_row and "language" not in g5_row
