"""``explain``'s sentences: what a team reads about its share, derived from the check's summary and graph."""

from __future__ import annotations

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.model import JobQueue, ServiceEnvironment, Topology
from policy_engine.reports.explain.view import explain_share
from tests.builders import GPU, share, topology


def said(t: Topology, node: str) -> dict[str, str]:
    """``topic -> all sentences of that topic joined``."""
    out: dict[str, str] = {}
    for topic, sentence in explain_share(t, node, check_topology(t)):
        out[topic] = (out.get(topic, "") + " " + sentence).strip()
    return out


def test_qs1_bursts_from_qs2_and_can_be_preempted_by_qs2_and_itself(example):
    qs1 = said(example, "training/QS1")
    assert "guaranteed its 1 ml.g5.xlarge" in qs1["guaranteed"]
    # own 1 + QS2's 1 (QS3 is RESERVE, so it never lends): 2 in total.
    assert "burst to 2 ml.g5.xlarge: its own 1 plus 1 from training/QS2" in qs1["burst"]
    assert "training/QS2 can take capacity back" in qs1["taken back"]
    assert "In-share preemption is on" in qs1["preemption"]
    assert "preempted: by training/QS2 (reclaim) and by a higher-priority job of its own" in qs1["preemption"]
    assert "BQ302" in qs1["findings"]


def test_qs2_lends_to_qs1_and_is_never_preempted(example):
    qs2 = said(example, "training/QS2")
    assert "never borrows" in qs2["burst"]
    assert "may be lent to training/QS1" in qs2["lends"]
    assert qs2["preemption"].endswith("So its jobs are never preempted.")
    assert "findings" not in qs2


def test_reserve_never_lends(example):
    qs3 = said(example, "training/QS3")
    assert "It never lends" in qs3["lends"] and "nobody else can ever use them" in qs3["guaranteed"]
    assert "No other share can take capacity back" in qs3["taken back"]


def test_orphan_borrower_is_told_why_it_cannot_burst():
    t = topology(share("A", 2, "LEND_AND_BORROW"), share("B", 2, "RESERVE"))
    a = said(t, "training/A")
    assert "cannot burst above its own 2 ml.g5.xlarge: no other share of its job queue lends" in a["burst"]
    assert "BQ301" in a["findings"]


def test_oversubscribed_share_is_guaranteed_less_than_its_limit():
    t = topology(share("A", 2, "LEND"), share("B", 2, "LEND"), environment=3, allow_oversubscription=True)
    assert "guaranteed only 1 ml.g5.xlarge of its limit of 2" in said(t, "training/A")["guaranteed"]


def test_instance_type_the_environment_lacks_can_never_run_and_is_not_lent():
    t = topology(share("A", 1, "LEND", capacity={GPU: 1, "ml.g4dn.xlarge": 1}), share("B", 1, "LEND_AND_BORROW"),
                 environment={GPU: 2}, allow_oversubscription=True)
    a = said(t, "training/A")
    assert "gpu-env has no ml.g4dn.xlarge, so jobs of training/A that need ml.g4dn.xlarge can never run" in a[
        "guaranteed"]
    assert "ml.g4dn.xlarge" not in a["lends"] and "ml.g4dn.xlarge" not in a["burst"]
    assert "guaranteed only 0 ml.g4dn.xlarge" not in a["guaranteed"]
    assert "BQ202" in a["findings"]


def test_disabled_job_queue_is_said_to_reject_every_job():
    t = Topology(service_environments=(ServiceEnvironment(name="gpu-env", capacity={GPU: 1}),),
                 job_queues=(JobQueue(name="training", service_environment="gpu-env", state="DISABLED",
                                      shares=(share("A", 1, "LEND"),)),))
    assert "Its job queue training is DISABLED: every job submitted to training/A is rejected." in said(
        t, "training/A")["what"]
    assert "DISABLED" not in said(topology(share("A", 1, "LEND")), "training/A")["what"]
