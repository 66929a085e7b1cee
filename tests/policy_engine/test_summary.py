"""Per-share summary: guaranteed, max burst, who can preempt whom."""

from __future__ import annotations

from policy_engine.graph import BorrowGraph
from policy_engine.summary import summarize_all
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
    from click.testing import CliRunner

    from policy_engine.cli import main

    path = tmp_path / "two-types.yaml"
    path.write_text("""service_environments:
  - {name: env, capacity: {ml.p4d.24xlarge: 4, ml.g5.12xlarge: 4}}
job_queues:
  - name: q
    service_environment: env
    shares:
      - {name: vision, capacity: {ml.p4d.24xlarge: 2, ml.g5.12xlarge: 2}, strategy: LEND_AND_BORROW}
      - {name: language, capacity: {ml.p4d.24xlarge: 2}, strategy: LEND}
      - {name: speech, capacity: {ml.g5.12xlarge: 2}, strategy: LEND}
""")
    from policy_engine.loading import load_topology

    vision = summarize_all(BorrowGraph(load_topology(path)))["q/vision"]
    assert vision.preempted_by_type == {"ml.p4d.24xlarge": ("q/language",), "ml.g5.12xlarge": ("q/speech",)}
    assert set(vision.preempted_by) == {"q/language", "q/speech"}  # the share over all its types
    lines = CliRunner().invoke(main, ["check", str(path)]).output.splitlines()
    p4d = next(line for line in lines if line.startswith("vision") and "ml.p4d.24xlarge" in line)
    g5 = next(line for line in lines if line.startswith("vision") and "ml.g5.12xlarge" in line)
    assert "language" in p4d and "speech" not in p4d and "speech" in g5 and "language" not in g5
